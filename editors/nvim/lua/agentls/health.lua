-- :checkhealth agentls
local compat = require('agentls.compat')
local config = require('agentls.config')

local M = {}

local state_words = {
  notStarted = 'not started',
  starting = 'starting',
  ready = 'ready',
  failed = 'failed',
  restarted = 'restarted after a crash',
}

-- mcp_report turns agent/mcpServers into the health lines of its servers:
-- a list of { level = 'ok' | 'info' | 'error', text = … }.
function M.mcp_report(res)
  local out = {}
  local servers = (res and res.servers) or {}
  if servers == vim.NIL or #servers == 0 then
    table.insert(out, { level = 'info', text = 'no MCP server configured (mcp_servers in setup())' })
    return out
  end
  for _, s in ipairs(servers) do
    local where = s.url
    if s.transport ~= 'http' then
      where = table.concat(vim.list_extend({ s.command or '' }, (s.args ~= vim.NIL and s.args) or {}), ' ')
    end
    local text = string.format('MCP server %s: %s', s.name, state_words[s.state] or s.state)
    local level = 'info'
    if s.state == 'ready' or s.state == 'restarted' then
      level = 'ok'
      local names = {}
      for _, t in ipairs((s.tools ~= vim.NIL and s.tools) or {}) do
        table.insert(names, t.tool)
      end
      text = string.format('%s, %d tool%s (%s): %s', text, s.toolCount, s.toolCount == 1 and '' or 's', where, table.concat(names, ', '))
    elseif s.state == 'failed' then
      level = 'error'
      text = string.format('%s (%s): %s', text, where, s.error or '')
    else
      text = string.format('%s (%s)', text, where)
    end
    table.insert(out, { level = level, text = text })
  end
  return out
end

-- engines_report turns agent/engines into the health lines of the engines
-- (docs/ENGINES.md): each usable one with its version and command, each
-- other with why it cannot be used. Engines are optional: one that is not
-- installed is information, not an error.
function M.engines_report(res)
  local out = {}
  local list = (res and res.engines) or {}
  if list == vim.NIL or #list == 0 then
    table.insert(out, { level = 'info', text = 'no engine: subtasks run on agentls\'s own workers' })
    return out
  end
  for _, e in ipairs(list) do
    local head = 'engine ' .. e.name
    if type(e.version) == 'string' and e.version ~= '' then
      head = head .. ' ' .. e.version
    end
    if e.usable then
      local command = type(e.command) == 'table' and table.concat(e.command, ' ') or ''
      local from = (type(e.source) == 'string' and e.source ~= '') and (', from ' .. e.source) or ''
      table.insert(out, { level = 'ok', text = string.format('%s: usable%s (%s%s)', head, e.isolated and ', isolated' or '', command, from) })
    else
      table.insert(out, { level = 'info', text = string.format('%s: cannot be used: %s', head, e.reason or '?') })
    end
  end
  return out
end

-- model_report turns an agent/checkModel answer (or its error) into health
-- lines: a list of { level, text }.
function M.model_report(ws, res, err)
  if err then
    return { { level = 'warn', text = string.format('%s: agent/checkModel: %s', ws.root, err) } }
  end
  local model = res.model ~= '' and res.model or '(none)'
  local from = (res.source and res.source ~= '') and (' (from ' .. config.words(res.source) .. ')') or ''
  local head = string.format('%s: model %s%s', ws.root, model, from)
  if res.ok then
    return { { level = 'ok', text = head .. ': ' .. config.words(res.message or 'ready') } }
  end
  return { { level = 'error', text = string.format('%s: %s%s', head, res.problem and ('[' .. res.problem .. '] ') or '', config.words(res.message or '')) } }
end

local trust_sources = {
  default = 'nothing says otherwise: set workspace_trust in setup(), e.g. require(\'agentls.trust\').vim_secure on Neovim 0.9+',
  setup = 'workspace_trust in setup()',
  ['function'] = 'the workspace_trust function of setup()',
}

-- trust_report turns a workspace's trust (ws.trust, as agentls has it, and
-- ws.trust_source) into health lines; cfg is the setup() in force.
function M.trust_report(ws, cfg)
  local trust = require('agentls.trust')
  local out = {}
  local from = trust_sources[ws.trust_source] or tostring(ws.trust_source)
  if ws.trust == trust.UNTRUSTED then
    table.insert(out, { level = 'info', text = string.format(
      '%s: untrusted (%s): agentls asks before it runs any command, starts an MCP server or runs a subtask on an engine', ws.root, from) })
  else
    table.insert(out, { level = ws.trust_source == 'default' and 'info' or 'ok', text = string.format('%s: trusted (%s)', ws.root, from) })
  end
  if cfg and cfg.workspace_trust == trust.vim_secure and trust.database() == nil then
    table.insert(out, { level = 'warn', text = 'workspace_trust is vim_secure, but this Neovim has no vim.secure (0.9+): every workspace is untrusted' })
  end
  return out
end

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
  if #running == 0 and bin ~= '' then
    -- The server's own check is the one that counts: start the client of
    -- the current directory to ask it.
    local ws = agentls.client.ensure(agentls.client.root_for_buf(0, cfg.root_markers), cfg)
    if ws then
      h.info('started the client of ' .. ws.root .. ' to check the model')
      running = { ws }
    end
  end
  if #running == 0 then
    h.info('no agentls client is running')
  end
  for _, ws in ipairs(running) do
    local _, err = agentls.client.request_sync(ws, 'agent/ping', vim.empty_dict(), 10000)
    local info = ws.server_info or {}
    if err then
      h.error(string.format('client for %s: %s', ws.root, err))
    else
      h.ok(string.format('client %d for %s: %s %s', ws.client_id, ws.root, info.name or 'agentls', info.version or '(initializing)'))
    end
  end

  h.start('agentls: workspace trust')
  if #running == 0 then
    h.info('no agentls client is running: its trust is shown once one is')
  end
  for _, ws in ipairs(running) do
    -- Asked again, as the next task would: a change is sent to agentls.
    agentls.client.refresh_trust(ws, cfg)
    for _, line in ipairs(M.trust_report(ws, cfg)) do
      h[line.level](line.text)
    end
  end

  h.start('agentls: model check')
  for _, ws in ipairs(running) do
    -- agent/checkModel answers within 30 s: a model that cannot work is a
    -- result with ok false and a message saying what to do.
    local res, err = agentls.client.request_sync(ws, 'agent/checkModel', ws.model and { model = ws.model } or vim.empty_dict(), 35000)
    for _, line in ipairs(M.model_report(ws, res, err)) do
      h[line.level](line.text)
    end
  end

  h.start('agentls: engines')
  if #running == 0 then
    h.info('no agentls client is running: the engines are shown once one is')
  end
  for _, ws in ipairs(running) do
    local res, err = agentls.client.request_sync(ws, 'agent/engines', vim.empty_dict(), 10000)
    if err then
      h.warn(string.format('%s: agent/engines: %s', ws.root, err))
    else
      ws.engines_cache = res
      for _, line in ipairs(M.engines_report(res)) do
        h[line.level](line.text)
      end
    end
  end

  h.start('agentls: MCP servers')
  if #running == 0 then
    h.info('no agentls client is running: the MCP servers are shown once one is')
  end
  for _, ws in ipairs(running) do
    -- Starting them shows whether each one works (a start is bounded by
    -- timeouts.mcpMs on the server's side).
    local res, err = agentls.client.request_sync(ws, 'agent/mcpServers', { start = true }, 70000)
    if err then
      h.warn(string.format('%s: agent/mcpServers: %s', ws.root, err))
    else
      for _, line in ipairs(M.mcp_report(res)) do
        h[line.level](line.text)
      end
    end
  end
end

return M
