-- :checkhealth agentls
local compat = require('agentls.compat')

local M = {}

function M.check()
  local h = compat.health()
  local agentls = require('agentls')
  h.start('agentls')

  local v = vim.version()
  if compat.has('0.7') then
    h.ok(string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch))
  else
    h.error('Neovim 0.7 or newer is needed')
  end
  if not compat.has('0.9') then
    h.info('this Neovim answers server requests synchronously: asynchronous vim.ui providers cannot answer agentls questions (0.9+ can)')
  end

  local cfg, err = agentls.config, nil
  if not cfg then
    cfg, err = require('agentls.config').resolve({})
    h.info('setup() has not been called: using the defaults')
  end
  if not cfg then
    h.error('configuration: ' .. err)
    return
  end

  local bin = vim.fn.exepath(cfg.cmd)
  if bin == '' then
    h.error(string.format('agentls binary %q not found', cfg.cmd), {
      'go install ./cmd/agentls in an agentls checkout (the binary goes to $(go env GOPATH)/bin: put it on $PATH)',
      'or set cmd = "/path/to/agentls" in require("agentls").setup()',
    })
  else
    local out = vim.fn.system({ bin, 'version' })
    if vim.v.shell_error == 0 then
      h.ok(string.format('%s (%s)', vim.trim(out), bin))
    else
      h.error(string.format('%s version failed: %s', bin, vim.trim(out)))
    end
  end

  local model, from = cfg.model, 'setup({ model = … })'
  if not model and vim.env.AGENTLS_MODEL and vim.env.AGENTLS_MODEL ~= '' then
    model, from = vim.env.AGENTLS_MODEL, '$AGENTLS_MODEL'
  end
  if not model and (vim.env.ANTHROPIC_API_KEY or '') ~= '' then
    model, from = 'anthropic:<default>', '$ANTHROPIC_API_KEY'
  end
  if not model and (vim.env.OPENAI_API_KEY or '') ~= '' then
    model, from = 'openai:<default>', '$OPENAI_API_KEY'
  end
  if not model then
    h.error('no model configured', {
      'set model = "provider:model" in setup(), or $AGENTLS_MODEL',
      'or export ANTHROPIC_API_KEY / OPENAI_API_KEY',
      'offline demo: model = "script:/abs/path/to/script.json"',
    })
  else
    h.ok(string.format('model %s (from %s)', model, from))
    local path = model:match('^script:(.*)$')
    if path and vim.loop.fs_stat(path) == nil then
      h.error('the script ' .. path .. ' does not exist')
    end
  end

  local running = agentls.client.all()
  if #running == 0 then
    h.info('no agentls client is running')
  end
  for _, ws in ipairs(running) do
    local info = ws.server_info or {}
    h.ok(string.format('client %d for %s: %s %s', ws.client_id, ws.root, info.name or 'agentls', info.version or '(initializing)'))
  end
end

return M
