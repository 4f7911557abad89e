-- Workspace trust (docs/SECURITY.md, "Workspace trust"): the
-- workspace_trust option, vim.secure's trust database read without a
-- prompt, workspaceTrust as agentls is sent it at start and on change, and
-- what :checkhealth says; against the real binary with a scripted model.
local R = require('agentls_test')
local agentls = require('agentls')
local config = require('agentls.config')
local trust = require('agentls.trust')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local bin = assert(os.getenv('AGENTLS_BIN'), 'AGENTLS_BIN is not set')

test('workspace_trust: trusted when nothing says otherwise, a value as it is, a function\'s yes', function()
  R.eq({ 'trusted', 'default' }, { trust.of(nil, '/w') }, 'unset')
  R.eq({ 'untrusted', 'setup' }, { trust.of('untrusted', '/w') }, 'a value')
  R.eq({ 'trusted', 'setup' }, { trust.of('trusted', '/w') }, 'a value')
  local asked
  R.eq({ 'trusted', 'function' }, { trust.of(function(root)
    asked = root
    return true
  end, '/w') }, 'true')
  R.eq('/w', asked, 'the function is asked with the root')
  R.eq({ 'trusted', 'function' }, { trust.of(function() return 'trusted' end, '/w') }, '\'trusted\'')
  R.eq({ 'untrusted', 'function' }, { trust.of(function() return false end, '/w') }, 'false')
  R.eq({ 'untrusted', 'function' }, { trust.of(function() end, '/w') }, 'no answer is no yes')
  local value, source, err = trust.of(function() error('boom') end, '/w')
  R.eq({ 'untrusted', 'function' }, { value, source }, 'a function that fails')
  R.contains({ err }, 'workspace_trust("/w") failed:', 'says why')
  R.contains({ err }, 'boom', 'with the error')
end)

test('workspace_trust: a bad value is refused naming the option, and workspaceTrust goes out as given', function()
  local _, err = config.resolve({ workspace_trust = 'yes' })
  R.contains({ err }, 'workspace_trust must be \'trusted\', \'untrusted\' or a function', 'a string')
  _, err = config.resolve({ workspace_trust = true })
  R.contains({ err }, 'workspace_trust must be', 'a boolean')
  local c = assert(config.resolve({ workspace_trust = function() return true end }))
  R.eq('{"workspaceTrust":"untrusted"}', vim.json.encode(config.init_options(c, 'untrusted')), 'on the wire')
end)

-- A trust database as vim.secure writes it: "<sha256> <path>", "directory
-- <path>", "! <path>".
local function database(entries)
  local dir = R.tmpdir()
  local lines = {}
  for path, hash in pairs(entries) do
    table.insert(lines, hash .. ' ' .. path)
  end
  R.write(dir .. '/trust', table.concat(lines, '\n') .. '\n')
  return dir .. '/trust'
end

test('vim_secure: the root directory allowed, or an exrc file of it trusted as it is now; never a prompt', function()
  local root = R.tmpdir()
  local rc = root .. '/.nvim.lua'
  R.write(rc, 'vim.opt.tabstop = 4\n')
  local hash = vim.fn.sha256('vim.opt.tabstop = 4\n')
  local rec = R.stub_ui({})
  R.eq(true, trust.vim_secure(root, database({ [root] = 'directory' })), 'the directory allowed')
  R.eq(true, trust.vim_secure(root, database({ [rc] = hash })), '.nvim.lua trusted')
  R.eq(false, trust.vim_secure(root, database({ [rc] = vim.fn.sha256('other') })), '.nvim.lua changed since')
  R.eq(false, trust.vim_secure(root, database({ [root] = '!', [rc] = hash })), 'the directory denied')
  R.eq(false, trust.vim_secure(root, database({ [root] = 'directory', [rc] = '!' })), '.nvim.lua denied')
  R.eq(false, trust.vim_secure(root, database({ [R.tmpdir()] = 'directory' })), 'another directory')
  R.eq(false, trust.vim_secure(root, database({})), 'nothing')
  R.eq(false, trust.vim_secure(root, root .. '/no-such-database'), 'no database')
  R.eq({ {}, {} }, { rec.input, rec.select }, 'nothing asked')
  if vim.secure == nil then
    R.eq(nil, trust.database(), 'no vim.secure: no database')
    R.eq(false, trust.vim_secure(root), 'no vim.secure: untrusted')
  else
    R.eq(vim.fn.stdpath('state') .. '/trust', trust.database(), 'vim.secure\'s database')
  end
end)

local function call(name, args)
  return { name = name, arguments = args }
end

-- Two tasks, each running one command.
local script = {
  agents = {
    coordinator = { { text = 'One step.' } },
    ['1'] = {
      { toolCalls = { call('run_command', { command = 'echo first > first.txt' }) } },
      { toolCalls = { call('finish', { summary = 'first' }) } },
    },
    ['2:coordinator'] = { { text = 'One step.' } },
    ['2:1'] = {
      { toolCalls = { call('run_command', { command = 'echo second > second.txt' }) } },
      { toolCalls = { call('finish', { summary = 'second' }) } },
    },
  },
}

local function run(ws, prompt)
  local done, result, err = false, nil, nil
  agentls.run(prompt, { workspace = ws, on_done = function(r, e)
    done, result, err = true, r, e
  end })
  R.wait_for(function()
    return done
  end, 'the task "' .. prompt .. '" to end', 20000)
  if err then
    error('agent/run failed: ' .. err, 2)
  end
  return result
end

test('untrusted, agentls asks before a command under commands = allow, saying why; trusted again, it does not', function()
  agentls.restart()
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/.git', 'p')
  R.write(root .. '/.script.json', vim.json.encode(script))
  local trusted = false
  local opts = { cmd = bin, model = 'script:' .. root .. '/.script.json', commands = 'allow',
    workspace_trust = function(r)
      return r == root and trusted
    end }
  assert(agentls.setup(opts))
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  local ws = assert(agentls.workspace())
  R.eq('untrusted', ws.trust, 'sent at start')

  local rec = R.stub_ui({ 'Run' })
  R.eq('done', run(ws, 'First check').state, 'state')
  R.eq(1, #rec.select, 'one question')
  R.contains({ rec.select[1].opts.prompt }, 'This workspace is not trusted. agentls wants to run `echo first > first.txt`', 'why it asks')
  R.eq('first\n', R.read(root .. '/first.txt'), 'ran after the yes')

  -- The person trusts it now (say, :trust): the next task is told first.
  trusted = true
  R.eq('done', run(ws, 'Second check').state, 'state')
  R.eq('second\n', R.read(root .. '/second.txt'), 'ran')
  R.eq(1, #rec.select, 'no question this time')
  R.eq('trusted', ws.trust, 'sent on change')
  R.contains(vim.tbl_map(function(n)
    return n.msg
  end, R.notes), 'agentls: ' .. root .. ' is trusted now', 'the change is told')
  agentls.restart()
end)

test('setup() with another workspace_trust reaches a running agentls at once', function()
  agentls.restart()
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/.git', 'p')
  R.write(root .. '/.script.json', vim.json.encode(script))
  assert(agentls.setup({ cmd = bin, model = 'script:' .. root .. '/.script.json', commands = 'allow' }))
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  local ws = assert(agentls.workspace())
  R.eq('trusted', ws.trust, 'nothing says otherwise')
  assert(agentls.setup({ cmd = bin, model = 'script:' .. root .. '/.script.json', commands = 'allow', workspace_trust = 'untrusted' }))
  R.wait_for(function()
    return ws.trust == 'untrusted'
  end, 'the change to be sent')
  local rec = R.stub_ui({ 'Deny' })
  local res = run(ws, 'First check')
  R.eq(1, #rec.select, 'asked')
  R.contains({ rec.select[1].opts.prompt }, 'This workspace is not trusted.', 'why')
  R.eq(nil, R.read(root .. '/first.txt'), 'denied: nothing ran')
  R.truthy(res, 'the task ended')
  agentls.restart()
end)

test(':checkhealth agentls says whether the workspace is trusted, and where that comes from', function()
  local health = require('agentls.health')
  R.eq({ { level = 'info', text = '/w: untrusted (workspace_trust in setup()): agentls asks before it runs any command, starts an MCP server or runs a subtask on an engine' } },
    health.trust_report({ root = '/w', trust = 'untrusted', trust_source = 'setup' }, {}), 'untrusted')
  R.eq({ { level = 'ok', text = '/w: trusted (the workspace_trust function of setup())' } },
    health.trust_report({ root = '/w', trust = 'trusted', trust_source = 'function' }, {}), 'a function')
  R.contains({ health.trust_report({ root = '/w', trust = 'trusted', trust_source = 'default' }, {})[1].text },
    '/w: trusted (nothing says otherwise: set workspace_trust in setup()', 'the default')
  local lines = health.trust_report({ root = '/w', trust = 'untrusted', trust_source = 'function' }, { workspace_trust = trust.vim_secure })
  if vim.secure == nil then
    R.eq({ level = 'warn', text = 'workspace_trust is vim_secure, but this Neovim has no vim.secure (0.9+): every workspace is untrusted' }, lines[2], 'no vim.secure')
  else
    R.eq(1, #lines, 'vim.secure is there')
  end

  agentls.restart()
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/.git', 'p')
  assert(agentls.setup({ cmd = bin, model = 'script:/no/such/script.json', workspace_trust = 'untrusted' }))
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  assert(agentls.workspace())
  vim.cmd('checkhealth agentls')
  local text = table.concat(R.buf_lines(0), '\n')
  R.contains(text, 'agentls: workspace trust', 'section')
  R.contains(text, root .. ': untrusted (workspace_trust in setup())', 'the workspace')
  agentls.restart()
end)

T.teardown = function()
  agentls.restart()
end

return T
