-- Unit tests: configuration, root detection, the reverse-call handlers
-- called directly, the task and heat state, and the views' text.
local R = require('agentls_test')
local config = require('agentls.config')
local client = require('agentls.client')
local reverse = require('agentls.reverse')
local state = require('agentls.state')
local views = require('agentls.views')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

test('setup options become initializationOptions with unset keys left out', function()
  local c = assert(config.resolve({ model = 'script:/tmp/s.json', edit_mode = 'apply', max_workers = 2, zones = { deny = {} } }))
  local o = config.init_options(c)
  R.eq('script:/tmp/s.json', o.model, 'model')
  R.eq('apply', o.editMode, 'editMode')
  R.eq(2, o.maxWorkers, 'maxWorkers')
  R.eq(nil, o.commands, 'commands')
  R.eq({ editMode = 'apply', maxWorkers = 2, model = 'script:/tmp/s.json', zones = { deny = {} } },
    vim.json.decode(vim.json.encode(o)), 'on the wire')
  R.eq('{}', vim.json.encode(config.init_options(assert(config.resolve({})))), 'nothing set: an empty object')
end)

test('MCP servers go out as the objects the server reads, empty env and headers included', function()
  local c = assert(config.resolve({
    mcp_servers = {
      everything = { command = 'npx', args = { '-y', '@modelcontextprotocol/server-everything' }, env = {} },
      docs = { url = 'https://mcp.example.com/mcp', headers = {} },
    },
    allow_mcp_tools = { 'mcp__docs' },
  }))
  local wire = vim.json.encode(config.init_options(c))
  R.contains(wire, '"env":{}', 'env stays an object')
  R.contains(wire, '"headers":{}', 'headers stay an object')
  local o = vim.json.decode(wire)
  R.eq({ '-y', '@modelcontextprotocol/server-everything' }, o.mcpServers.everything.args, 'args')
  R.eq({ 'mcp__docs' }, o.allowMcpTools, 'allowMcpTools')
  R.eq('{"mcpServers":{}}', vim.json.encode(config.init_options(assert(config.resolve({ mcp_servers = {} })))), 'no servers: an object')
  for _, case in ipairs({
    { { mcp_servers = { 'npx' } }, 'mcp_servers must be a table of server name' },
    { { mcp_servers = { a = { command = 'x', url = 'http://h/mcp' } } }, 'mcp_servers.a needs command' },
    { { mcp_servers = { a = { command = 'x', args = 'y' } } }, 'mcp_servers.a.args must be a list of strings' },
  }) do
    local _, err = config.resolve(case[1])
    R.contains(err or '', case[2], vim.inspect(case[1]))
  end
end)

test('the MCP servers of :checkhealth say each state, the tools and the errors', function()
  local health = require('agentls.health')
  local lines = health.mcp_report({ servers = {
    { name = 'everything', transport = 'stdio', command = 'npx', args = { '-y', 'pkg' }, state = 'ready', restarts = 0, toolCount = 2,
      tools = { { name = 'mcp__everything__echo', tool = 'echo' }, { name = 'mcp__everything__get-sum', tool = 'get-sum' } } },
    { name = 'docs', transport = 'http', url = 'https://mcp.example.com/mcp', state = 'notStarted', restarts = 0, toolCount = 0, tools = {} },
    { name = 'broken', transport = 'stdio', command = '/no/such', args = vim.NIL, state = 'failed', restarts = 0, toolCount = 0, tools = vim.NIL,
      error = 'MCP server "broken" failed to start: cannot run' },
    { name = 'again', transport = 'stdio', command = 'srv', state = 'restarted', restarts = 1, toolCount = 1, tools = { { name = 'mcp__again__x', tool = 'x' } } },
  } })
  R.eq({ level = 'ok', text = 'MCP server everything: ready, 2 tools (npx -y pkg): echo, get-sum' }, lines[1], 'ready')
  R.eq({ level = 'info', text = 'MCP server docs: not started (https://mcp.example.com/mcp)' }, lines[2], 'not started')
  R.eq({ level = 'error', text = 'MCP server broken: failed (/no/such): MCP server "broken" failed to start: cannot run' }, lines[3], 'failed')
  R.eq({ level = 'ok', text = 'MCP server again: restarted after a crash, 1 tool (srv): x' }, lines[4], 'restarted')
  R.eq({ { level = 'info', text = 'no MCP server configured (mcp_servers in setup())' } }, health.mcp_report({ servers = {} }), 'none')
end)

test('engines go out as the objects the server reads; a bad entry is refused naming it', function()
  local c = assert(config.resolve({ engines = { goose = { command = { 'goose', 'acp' }, env = {}, isolate = true }, codex = { disabled = true } } }))
  local wire = vim.json.encode(config.init_options(c))
  R.contains(wire, '"env":{}', 'env stays an object')
  local o = vim.json.decode(wire)
  R.eq({ 'goose', 'acp' }, o.engines.goose.command, 'command')
  R.eq(true, o.engines.codex.disabled, 'disabled')
  for _, case in ipairs({
    { { engines = { 'goose' } }, 'engines must be a table of engine name' },
    { { engines = { goose = { command = 'goose acp' } } }, 'engines.goose.command must be a list of strings' },
    { { engines = { goose = { command = {} } } }, 'engines.goose.command must be a list of strings' },
    { { engines = { goose = { command = { 'goose' }, env = 'X=1' } } }, 'engines.goose.env must be a table' },
  }) do
    local _, err = config.resolve(case[1])
    R.contains(err or '', case[2], vim.inspect(case[1]))
  end
end)

test('diagnostics go out as the server reads them; a bad one is refused naming it', function()
  local o = vim.json.decode(vim.json.encode(config.init_options(assert(config.resolve({
    diagnostics = { wait_ms = 500, commands = { go = 'go vet ./...' } } })))))
  R.eq({ waitMs = 500, commands = { go = 'go vet ./...' } }, o.diagnostics, 'diagnostics')
  R.contains(vim.json.encode(config.init_options(assert(config.resolve({ diagnostics = { commands = {} } })))),
    '"diagnostics":{"commands":{}}', 'no commands: an object')
  for _, case in ipairs({
    { { diagnostics = 2000 }, 'diagnostics must be { wait_ms = n' },
    { { diagnostics = { wait_ms = -1 } }, 'diagnostics.wait_ms must be a whole number' },
    { { diagnostics = { commands = { 'go vet' } } }, 'diagnostics.commands must be a table of language to command' },
    { { diagnostics = { commands = { go = { 'go', 'vet' } } } }, 'diagnostics.commands.go must be a command line' },
  }) do
    local _, err = config.resolve(case[1])
    R.contains(err or '', case[2], vim.inspect(case[1]))
  end
end)

test('the engines of :checkhealth say each version and command, or why it cannot be used', function()
  local health = require('agentls.health')
  local lines = health.engines_report({ engines = {
    { name = 'claude', builtin = true, command = { '/usr/bin/claude-agent-acp' }, source = 'path', version = '0.23.1', isolated = true, usable = true },
    { name = 'codex', builtin = true, command = {}, isolated = true, usable = false, reason = 'codex-acp is not on PATH' },
    { name = 'goose', builtin = false, command = { 'goose', 'acp' }, source = 'settings', isolated = false, usable = true },
  } })
  R.eq({
    { level = 'ok', text = 'engine claude 0.23.1: usable, isolated (/usr/bin/claude-agent-acp, from path)' },
    { level = 'info', text = 'engine codex: cannot be used: codex-acp is not on PATH' },
    { level = 'ok', text = 'engine goose: usable (goose acp, from settings)' },
  }, lines, 'the lines')
end)

test(':AgentRun reads engine= before the prompt', function()
  local commands = require('agentls.commands')
  R.eq({ 'Add greet', 'claude' }, { commands.run_args('engine=claude Add greet') }, 'engine and prompt')
  R.eq({ 'Add greet', nil }, { commands.run_args('Add greet') }, 'no engine')
  R.eq({ 'Add engine=x', nil }, { commands.run_args('Add engine=x') }, 'engine= only first')
end)

test('a subtask on an engine shows it after its content, and its steps under it', function()
  local st = state.new('/ws')
  st:task_update({ taskId = 't1', seq = 1, state = 'running', subtasks = {
    { id = '1', content = 'add greet', state = 'running', dependsOn = {}, engine = 'claude',
      steps = { { content = 'read main.go', status = 'completed' }, { content = 'write greet', status = 'in_progress' } } },
    { id = '2', content = 'notes', state = 'pending', dependsOn = {} },
  }, event = { kind = 'steps', subtaskId = '1' } })
  local lines = views.task_lines(st)
  R.contains(lines, '1  add greet  [claude]', 'the engine')
  R.contains(lines, '      [x] read main.go', 'a step done')
  R.contains(lines, '      [>] write greet', 'a step in progress')
  R.not_contains(lines, 'notes  [', 'no engine for the built-in worker')
end)

test('bad options are refused with a message naming the option', function()
  for _, case in ipairs({
    { { edit_mode = 'yolo' }, 'edit_mode must be one of apply, branch, propose' },
    { { model = 'gpt4' }, 'model must be provider:model' },
    { { max_workers = 0 }, 'max_workers' },
    { { commands = 'sometimes' }, 'commands must be one of' },
    { { zones = { allow = 'src/**' } }, 'zones.allow' },
    { { timeouts = { humanMs = -1 } }, 'timeouts.humanMs' },
    { { cmd = '' }, 'cmd must be' },
  }) do
    local c, err = config.resolve(case[1])
    R.eq(nil, c, vim.inspect(case[1]))
    R.contains({ err }, case[2], vim.inspect(case[1]))
  end
end)

test('setup reports a bad option instead of raising', function()
  R.eq(false, require('agentls').setup({ edit_mode = 'nope' }), 'setup result')
  R.contains({ R.notes[1].msg }, 'edit_mode', 'notification')
  R.eq(true, require('agentls').setup({}), 'setup result')
end)

test('the workspace root is the nearest folder with a marker, else the current directory', function()
  local d = R.tmpdir()
  R.write(d .. '/proj/.git/HEAD', 'ref: refs/heads/main\n')
  R.write(d .. '/proj/src/deep/a.go', 'package a\n')
  R.eq(d .. '/proj', client.find_root(d .. '/proj/src/deep/a.go', { '.git' }), 'from a file')
  R.eq(d .. '/proj', client.find_root(d .. '/proj/src', { '.git' }), 'from a folder')
  R.eq(nil, client.find_root(d .. '/proj/src/deep/a.go', { 'no-such-marker' }), 'no marker')
  vim.cmd('cd ' .. d .. '/proj/src')
  vim.cmd('enew')
  R.eq(d .. '/proj', client.root_for_buf(0, { '.git' }), 'unnamed buffer: the current directory\'s root')
end)

test('capabilities advertise readFile, ask, references, definition and diagnostics, not runCommand, and edit annotations', function()
  local caps = client.capabilities()
  R.eq({ readFile = true, runCommand = false, ask = true, references = true, definition = true, diagnostics = true },
    caps.experimental.agent, 'experimental.agent')
  R.eq(true, caps.workspace.applyEdit, 'applyEdit')
  R.eq(true, caps.workspace.workspaceEdit.documentChanges, 'documentChanges')
  R.truthy(caps.workspace.workspaceEdit.changeAnnotationSupport, 'changeAnnotationSupport')
  R.eq(true, caps.window.workDoneProgress, 'workDoneProgress')
end)

test('readFile answers a loaded buffer with its unsaved edits', function()
  local d = R.tmpdir()
  R.write(d .. '/a.txt', 'on disk\n')
  vim.cmd('edit ' .. d .. '/a.txt')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'unsaved', 'text' })
  local res = reverse.read_file({ path = 'a.txt', uri = vim.uri_from_fname(d .. '/a.txt') }, d)
  R.eq({ content = 'unsaved\ntext\n' }, res, 'result')
  vim.bo.eol = false
  vim.bo.fixeol = false
  R.eq('unsaved\ntext', reverse.read_file({ path = 'a.txt' }, d).content, 'without a final newline')
end)

test('readFile answers the disk when no buffer holds the file, and an error when it is missing', function()
  local d = R.tmpdir()
  R.write(d .. '/b.txt', 'line 1\r\nline 2')
  R.eq({ content = 'line 1\r\nline 2' }, reverse.read_file({ path = 'b.txt', uri = vim.uri_from_fname(d .. '/b.txt') }, d), 'disk')
  local res, err = reverse.read_file({ path = 'missing.txt', uri = vim.uri_from_fname(d .. '/missing.txt') }, d)
  R.eq(nil, res, 'result')
  R.eq(vim.lsp.protocol.ErrorCodes.InvalidParams, err.code, 'code')
  R.contains({ err.message }, 'cannot read missing.txt', 'message')
  local _, err2 = reverse.read_file({}, d)
  R.contains({ err2.message }, 'neither uri nor path', 'message')
end)

test('ask uses vim.ui.input for a free answer and returns null when dismissed', function()
  local rec = R.stub_ui({ 'blue', vim.NIL })
  R.eq({ answer = 'blue' }, reverse.ask({ question = 'Which colour?' }), 'answered')
  R.contains({ rec.input[1].prompt }, 'Which colour?', 'prompt')
  local res = reverse.ask({ question = 'Again?' })
  R.eq(vim.NIL, res.answer, 'dismissed answer is vim.NIL, never nil')
  R.eq('{"answer":null}', vim.json.encode(res), 'wire')
end)

test('ask uses vim.ui.select when the question has options', function()
  local rec = R.stub_ui({ 'tabs' })
  R.eq({ answer = 'tabs' }, reverse.ask({ question = 'Indent?', options = { 'spaces', 'tabs' } }), 'answer')
  R.eq({ 'spaces', 'tabs' }, rec.select[1].items, 'items')
  R.eq(0, #rec.input, 'no input prompt')
end)

test('ask waits for an asynchronous vim.ui provider when the handler runs in a coroutine (0.9+)', function()
  local pending
  vim.ui.input = function(_, on_confirm)
    pending = on_confirm -- answered later, as a floating prompt would
  end
  local result
  local co = coroutine.create(function()
    result = reverse.ask({ question = 'Name?' })
  end)
  assert(coroutine.resume(co))
  R.eq('suspended', coroutine.status(co), 'the handler yields while the person answers')
  pending('Ada')
  R.wait_for(function()
    return result ~= nil
  end, 'the handler to resume')
  R.eq({ answer = 'Ada' }, result, 'result')
end)

test('ask treats an asynchronous provider as dismissed where handlers cannot wait (before 0.9)', function()
  vim.ui.input = function() end -- never answers at once
  local res = reverse.ask({ question = 'Name?' })
  R.eq(vim.NIL, res.answer, 'answer')
  R.contains({ R.notes[1].msg }, 'answers server requests synchronously', 'warning')
end)

test('showMessageRequest picks an action through vim.ui.select and returns null when dismissed', function()
  local rec = R.stub_ui({ 'Always allow', vim.NIL })
  local params = { type = 3, message = 'Run `go test ./...`?', actions = { { title = 'Run' }, { title = 'Always allow' }, { title = 'Deny' } } }
  R.eq({ title = 'Always allow' }, reverse.show_message_request(params), 'choice')
  R.contains({ rec.select[1].opts.prompt }, 'go test', 'prompt')
  R.eq(vim.NIL, reverse.show_message_request(params), 'dismissed')
end)

local function text_edit(d, name, version, annotation)
  return {
    textDocument = { uri = vim.uri_from_fname(d .. '/' .. name), version = version },
    edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 5 } }, newText = 'HELLO', annotationId = annotation } },
  }
end

test('applyEdit lands in an open modified buffer, undoably, and leaves it unsaved', function()
  local d = R.tmpdir()
  R.write(d .. '/m.txt', 'hello world\n')
  vim.cmd('edit ' .. d .. '/m.txt')
  vim.api.nvim_buf_set_lines(0, 1, 1, false, { 'user line' })
  local res = reverse.apply_edit({ edit = { documentChanges = { text_edit(d, 'm.txt') } } }, { root = d, save_edits = true })
  R.eq({ applied = true }, res, 'result')
  R.eq({ 'HELLO world', 'user line' }, R.buf_lines(0), 'buffer')
  R.eq(true, vim.bo.modified, 'still modified: the user\'s edits are not written for them')
  R.eq('hello world\n', R.read(d .. '/m.txt'), 'disk untouched')
  vim.cmd('silent undo')
  R.eq({ 'hello world', 'user line' }, R.buf_lines(0), 'after undo')
end)

test('applyEdit writes a buffer the user had not modified, and creates files', function()
  local d = R.tmpdir()
  R.write(d .. '/c.txt', 'hello there\n')
  local edit = {
    documentChanges = {
      text_edit(d, 'c.txt'),
      { kind = 'create', uri = vim.uri_from_fname(d .. '/new.txt') },
      {
        textDocument = { uri = vim.uri_from_fname(d .. '/new.txt') },
        edits = { { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, newText = 'fresh\n' } },
      },
    },
  }
  R.eq({ applied = true }, reverse.apply_edit({ edit = edit }, { root = d, save_edits = true }), 'result')
  R.eq('HELLO there\n', R.read(d .. '/c.txt'), 'written')
  R.eq('fresh\n', R.read(d .. '/new.txt'), 'created')
  local b = reverse.loaded_buffer(d .. '/c.txt')
  R.truthy(b, 'the edit went through a buffer')
  R.eq(false, vim.bo[b].modified, 'saved')
end)

test('applyEdit with save_edits off leaves the edit in the buffer only', function()
  local d = R.tmpdir()
  R.write(d .. '/k.txt', 'hello\n')
  R.eq({ applied = true }, reverse.apply_edit({ edit = { documentChanges = { text_edit(d, 'k.txt') } } }, { root = d, save_edits = false }), 'result')
  R.eq('hello\n', R.read(d .. '/k.txt'), 'disk')
  R.eq({ 'HELLO' }, R.buf_lines(reverse.loaded_buffer(d .. '/k.txt')), 'buffer')
end)

test('applyEdit shows an edit that needs confirmation as a diff first, and a rejection applies nothing', function()
  local d = R.tmpdir()
  R.write(d .. '/p.txt', 'hello\n')
  local params = {
    label = 'agentls: update p.txt',
    edit = {
      documentChanges = { text_edit(d, 'p.txt', nil, 'a1') },
      changeAnnotations = { a1 = { label = 'agentls: update p.txt', needsConfirmation = true, description = '+1 -1 lines' } },
    },
  }
  vim.api.nvim_feedkeys('q', 't', false)
  R.eq({ applied = false, failureReason = 'rejected by the user' }, reverse.apply_edit(params, { root = d, save_edits = true }), 'rejected')
  R.eq('hello\n', R.read(d .. '/p.txt'), 'disk after rejection')
  local shown = require('agentls.review').last.lines
  R.contains(shown, 'update p.txt', 'the review names the file')
  R.contains(shown, '-hello', 'and shows the change')
  R.contains(shown, '+HELLO', 'both sides')
  vim.api.nvim_feedkeys('y\r', 't', false)
  R.eq({ applied = true }, reverse.apply_edit(params, { root = d, save_edits = true }), 'accepted')
  R.eq('HELLO\n', R.read(d .. '/p.txt'), 'disk after acceptance')
end)

test('applyEdit refuses an edit made for an older version of the buffer', function()
  local d = R.tmpdir()
  R.write(d .. '/v.txt', 'hello\n')
  vim.cmd('edit ' .. d .. '/v.txt')
  local b = vim.api.nvim_get_current_buf()
  vim.lsp.util.buf_versions[b] = 7
  local res = reverse.apply_edit({ edit = { documentChanges = { text_edit(d, 'v.txt', 6) } } }, { root = d })
  vim.lsp.util.buf_versions[b] = nil
  R.eq(false, res.applied, 'applied')
  R.contains({ res.failureReason }, 'changed since', 'reason')
  R.eq({ 'hello' }, R.buf_lines(b), 'buffer untouched')
end)

test('applyEdit reports a failing edit as not applied', function()
  local res = reverse.apply_edit({ edit = { documentChanges = { { kind = 'frobnicate', uri = 'file:///x' } } } }, { root = '/' })
  R.eq(false, res.applied, 'applied')
  R.contains({ res.failureReason }, 'Unsupported change', 'reason')
end)

test('task updates apply in seq order and the run result is final', function()
  local st = state.new('/w')
  st:task_started('t1', 'Add greet')
  local subs = { { id = '1', content = 'Write greet', state = 'running', dependsOn = {} } }
  st:task_update({ taskId = 't1', seq = 2, state = 'running', subtasks = subs, event = { kind = 'toolCall', subtaskId = '1', tool = 'read_file', arguments = { path = 'main.go' } } })
  st:task_update({ taskId = 't1', seq = 1, state = 'planning', subtasks = {}, event = { kind = 'planned' } })
  st:task_update({ taskId = 't1', seq = 3, state = 'running', subtasks = subs, event = { kind = 'usage', inputTokens = 6, outputTokens = 1 } })
  st:task_update({ taskId = 't1', seq = 4, state = 'running', subtasks = subs, event = { kind = 'usage', inputTokens = 10, outputTokens = 4 } })
  local t = st:task('t1')
  R.eq('running', t.state, 'a stale update is ignored')
  R.eq({ subtaskId = '1', tool = 'read_file', arguments = '{"path":"main.go"}' }, t.last_tool, 'last tool')
  R.eq({ inputTokens = 10, outputTokens = 4 }, t.usage, 'tokens: the running total')
  local lines = views.task_lines(st)
  R.contains(lines, 'Task t1  [running]  Add greet', 'task line')
  R.contains(lines, 'running  1  Write greet', 'subtask line')
  R.contains(lines, 'last tool: read_file {"path":"main.go"}', 'tool line')
  st:run_result('t1', { taskId = 't1', sessionId = 's1', state = 'done', summary = 'greet added',
    subtasks = { { id = '1', content = 'Write greet', state = 'done', dependsOn = {} } },
    changes = { { path = 'main.go', operation = 'update', applied = true, diff = '' } }, usage = { inputTokens = 20, outputTokens = 8 } })
  st:task_update({ taskId = 't1', seq = 9, state = 'running', subtasks = subs, event = { kind = 'message', text = 'late' } })
  lines = views.task_lines(st)
  R.contains(lines, '[done]', 'final state')
  R.contains(lines, 'done     1  Write greet', 'final subtask state')
  R.contains(lines, 'summary: greet added', 'summary')
  R.contains(lines, 'update main.go', 'change')
  R.contains(lines, 'tokens 20 in / 8 out', 'tokens from the result')
  R.eq(nil, st:running(), 'nothing running')
end)

test('heat updates apply over a snapshot by seq and list the hottest first', function()
  local st = state.new('/w')
  st:heat_snapshot(nil, { seq = 4, nodes = { { path = 'a.go', heat = 0.5, inContext = true, lastAction = 'read', turn = 1 } } })
  st:heat_update({ seq = 3, updates = { { path = 'old.go', heat = 1, lastAction = 'read' } }, removed = {} })
  st:heat_update({ seq = 5, updates = { { path = 'b.go', heat = 0.9, inContext = true, lastAction = 'write', turn = 2 } }, removed = {} })
  st:heat_update({ taskId = 't1', seq = 1, updates = { { path = 'task-only.go', heat = 1, lastAction = 'read' } }, removed = {} })
  local lines = views.heat_lines(st)
  R.eq(' 0.90  write        * b.go', lines[3], 'hottest first')
  R.eq(' 0.50  read         * a.go', lines[4], 'then')
  R.not_contains(lines, 'old.go', 'an update older than the snapshot')
  R.not_contains(lines, 'task-only.go', 'a task view')
  st:heat_update({ seq = 6, updates = {}, removed = { 'b.go' } })
  R.not_contains(views.heat_lines(st), 'b.go', 'removed')
end)

test('a file\'s neighbours list the files it uses and those that use it, by count, from file-to-file edges only', function()
  local res = {
    nodes = {
      { id = 'greet.go', kind = 'file', path = 'greet.go', language = 'go' },
      { id = 'greet.go#greet', kind = 'function', path = 'greet.go', name = 'greet' },
      { id = 'main.go', kind = 'file', path = 'main.go', language = 'go' },
      { id = 'prefix.go', kind = 'file', path = 'prefix.go', language = 'go' },
      { id = 'util.go', kind = 'file', path = 'util.go', language = 'go' },
      { id = 'far.go', kind = 'file', path = 'far.go', language = 'go' },
    },
    edges = {
      { from = 'greet.go', to = 'greet.go#greet', kind = 'defines' },
      { from = 'greet.go', to = 'prefix.go', kind = 'references', count = 1, provenance = 'name' },
      { from = 'greet.go', to = 'util.go', kind = 'references', count = 4, provenance = 'resolved' },
      { from = 'main.go', to = 'greet.go', kind = 'references', count = 2, provenance = 'lsp' },
      { from = 'main.go', to = 'greet.go#greet', kind = 'references' },
      { from = 'greet.go', to = 'util.go', kind = 'imports' },
      { from = 'far.go', to = 'main.go', kind = 'references', count = 7 },
    },
  }
  local lines, map = views.neighbour_lines('/w', { path = 'greet.go', res = res })
  R.contains(lines, 'agentls neighbours  greet.go', 'title')
  local text = table.concat(lines, '\n')
  R.truthy(text:find('uses, references each):\n     4  util.go  (resolved by the graph)\n     1  prefix.go  (by name: a guess)\n', 1, true),
    'the files greet.go uses, most references first, and how each was found: ' .. text)
  R.truthy(vim.endswith(text, 'that use greet.go, references each):\n     2  main.go  (language server)'), 'the files that use greet.go: ' .. text)
  R.not_contains(lines, 'far.go', 'an edge between two other files')
  local opened = {}
  for _, p in pairs(map) do
    table.insert(opened, p)
  end
  table.sort(opened)
  R.eq({ 'main.go', 'prefix.go', 'util.go' }, opened, 'the neighbours\' lines open their files')
  local none = views.neighbour_lines('/w', { path = 'lone.go', res = { nodes = {}, edges = {} } })
  R.eq(2, #vim.tbl_filter(function(l)
    return l == '  none'
  end, none), 'a file without neighbours says so in both lists')
  R.contains(views.neighbour_lines('/w', { path = 'x.go', res = { nodes = {}, edges = {}, truncated = true } }), 'not every neighbour is listed', 'a cut answer')
end)

test('agent/references and agent/definition answer null for a file no language client serves, and refuse bad params', function()
  local reverse = require('agentls.reverse')
  local root = R.tmpdir()
  R.write(root .. '/a.txt', 'no language here\n')
  local h = reverse.handlers(function()
    return nil
  end)
  for _, method in ipairs({ 'agent/references', 'agent/definition' }) do
    local params = { textDocument = { uri = vim.uri_from_fname(root .. '/a.txt') }, position = { line = 0, character = 1 },
      context = { includeDeclaration = true } }
    R.eq(vim.NIL, h[method](nil, params, {}), method .. ' of a file no client serves')
    params.textDocument.uri = vim.uri_from_fname(root .. '/missing.go')
    R.eq(vim.NIL, h[method](nil, params, {}), method .. ' of a file that does not exist')
    local res, err = h[method](nil, { position = { line = 0, character = 0 } }, {})
    R.eq(nil, res, method .. ' without a document')
    R.truthy(err and tostring(err.message):find('textDocument.uri', 1, true), method .. ' names what is missing: ' .. vim.inspect(err))
  end
  R.eq(nil, reverse.loaded_buffer(root .. '/missing.go'), 'no buffer for a file that does not exist')
end)

test('agent/diagnostics answers vim.diagnostic\'s, characters in UTF-16, of the files asked or of the workspace', function()
  local reverse = require('agentls.reverse')
  local root = R.tmpdir()
  R.write(root .. '/a.go', 'package a\n\nvar s = "héllo" + x\n')
  R.write(root .. '/b.go', 'package a\n')
  local h = reverse.handlers(function()
    return { root = root }
  end)
  local a_uri = vim.uri_from_fname(root .. '/a.go')
  R.eq(vim.NIL, h['agent/diagnostics'](nil, { uris = { a_uri } }, {}), 'none yet: null')
  vim.cmd('edit ' .. vim.fn.fnameescape(root .. '/a.go'))
  local a = vim.api.nvim_get_current_buf()
  local ns = vim.api.nvim_create_namespace('agentls-test-diagnostics')
  -- x is after é, two bytes and one UTF-16 unit
  local col = select(2, vim.api.nvim_buf_get_lines(a, 2, 3, false)[1]:find('x', 1, true)) - 1
  vim.diagnostic.set(ns, a, {
    { lnum = 2, col = col, end_lnum = 2, end_col = col + 1, severity = vim.diagnostic.severity.ERROR, message = 'undefined: x',
      source = 'compiler', user_data = { lsp = { code = 'UndeclaredName' } } },
    { lnum = 0, col = 0, severity = vim.diagnostic.severity.HINT, message = 'a hint' },
  })
  local want = { items = { { uri = a_uri, diagnostics = {
    { range = { start = { line = 2, character = 18 }, ['end'] = { line = 2, character = 19 } }, severity = 1, message = 'undefined: x',
      source = 'compiler', code = 'UndeclaredName' },
    { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, severity = 4, message = 'a hint' },
  } } } }
  R.eq(want, h['agent/diagnostics'](nil, { uris = { a_uri, vim.uri_from_fname(root .. '/b.go') } }, {}), 'the files asked: b.go has none')
  R.eq(want, h['agent/diagnostics'](nil, vim.empty_dict(), {}), 'the workspace\'s')
  local res, err = h['agent/diagnostics'](nil, { uris = 'a.go' }, {})
  R.eq(nil, res, 'uris that are not a list')
  R.truthy(err and tostring(err.message):find('uris', 1, true), 'names what is wrong: ' .. vim.inspect(err))
  vim.diagnostic.reset(ns, a)
end)

test('the neighbours view says the graph is being asked, then shows its answer or why there is none', function()
  local calls = {}
  local fetch = function(p, done)
    table.insert(calls, { path = p, done = done })
  end
  local opened = {}
  local actions = {
    open = function(_, p)
      table.insert(opened, p)
    end,
  }
  local ws = { root = '/w' }
  local b = views.neighbours(ws, 'greet.go', actions, fetch)
  R.eq('greet.go', calls[1].path, 'asked for the file')
  R.contains(R.buf_lines(b), 'Asking the code graph', 'while the graph is built')
  calls[1].done(nil, { nodes = {}, edges = { { from = 'main.go', to = 'greet.go', kind = 'references', count = 2 } } })
  R.contains(R.buf_lines(b), '     2  main.go', 'the answer')
  -- n on a neighbour asks for its neighbours; a late answer for the file
  -- shown before is dropped.
  local lines = R.buf_lines(b)
  for i, l in ipairs(lines) do
    if l:find('main.go', 1, true) and not l:find('neighbours', 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
    end
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  R.eq({ 'main.go' }, opened, 'Enter opens the neighbour')
  vim.api.nvim_set_current_buf(b)
  vim.api.nvim_feedkeys('n', 'x', false)
  R.eq('main.go', calls[2].path, 'n asked for the neighbour\'s neighbours')
  calls[1].done(nil, { nodes = {}, edges = { { from = 'stale.go', to = 'greet.go', kind = 'references', count = 1 } } })
  R.not_contains(R.buf_lines(b), 'stale.go', 'an answer for a file no longer shown')
  calls[2].done('invalid params: main.go is not a file the graph holds', nil, -32602)
  R.contains(R.buf_lines(b), 'main.go is not a file of the code graph of /w:', 'a file the graph does not hold')
  R.contains(R.buf_lines(b), '  invalid params: main.go is not a file the graph holds', 'with the server\'s reason')
  vim.api.nvim_feedkeys('r', 'x', false)
  calls[3].done('agent/codeGraph: the code graph is unavailable: no root', nil, -32603)
  R.contains(R.buf_lines(b), 'The code graph could not answer: agent/codeGraph: the code graph is unavailable: no root', 'another error')
  vim.cmd('bwipeout! ' .. b)
end)

test('trace entries render with intent, task, lines and hash', function()
  local lines = views.trace_lines('main.go', 3, {
    { id = 'e1', time = '2025-01-01T00:00:00Z', intentId = vim.NIL, sessionId = 's1', taskId = 't1', subtaskId = '1', model = 'script:x', path = 'main.go', operation = 'update', ranges = { { startLine = 2, endLine = 4, contentHash = 'sha256:ab' } }, fileHash = 'sha256:cd' },
  })
  R.contains(lines, 'agentls trace  main.go:3', 'title')
  R.contains(lines, 'intent -  session s1  task t1  subtask 1', 'ids')
  R.contains(lines, 'lines 2-4', 'ranges')
  R.contains(views.trace_lines('x.go', nil, {}), 'No agent change recorded here.', 'empty')
end)

test(':checkhealth agentls reports the binary, its version and the model', function()
  local bin = os.getenv('AGENTLS_BIN')
  -- The version is whatever this build stamped (a tag, a pseudo-version
  -- from git, or "dev"): ask the binary, as a user would.
  local version = vim.trim(vim.fn.system({ bin, 'version' }))
  R.eq(0, vim.v.shell_error, bin .. ' version exit status')
  R.truthy(version:match('^agentls %S+$'), 'agentls version printed ' .. vim.inspect(version))
  require('agentls').setup({ cmd = bin, model = 'script:/no/such/script.json' })
  vim.cmd('checkhealth agentls')
  local text = table.concat(R.buf_lines(0), '\n')
  R.contains(text, version .. ' (' .. vim.fn.exepath(bin) .. ')', 'version line')
  R.contains(text, 'model script:/no/such/script.json', 'model')
  R.contains(text, 'does not exist', 'missing script')
  R.contains(text, 'agentls: model check', 'the server\'s check')
  R.contains(text, '[config]', 'the server says the script cannot work')
  require('agentls').setup({ cmd = 'agentls-not-installed' })
  vim.cmd('checkhealth agentls')
  R.contains(R.buf_lines(0), 'not found', 'missing binary')
end)

test(':checkhealth agentls starts the MCP servers and shows why one failed', function()
  local bin = os.getenv('AGENTLS_BIN')
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/.git', 'p')
  require('agentls').restart()
  require('agentls').setup({ cmd = bin, model = 'script:/no/such/script.json',
    mcp_servers = { missing = { command = root .. '/no-such-mcp-server', env = {} } } })
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  assert(require('agentls').workspace())
  vim.cmd('checkhealth agentls')
  local text = table.concat(R.buf_lines(0), '\n')
  R.contains(text, 'agentls: MCP servers', 'section')
  R.contains(text, 'MCP server missing: failed (' .. root .. '/no-such-mcp-server)', 'the failed server')
  R.contains(text, 'cannot run', 'why')
  require('agentls').restart()
end)

test('a run result counts the changes applied and rejected, not the changes', function()
  R.eq({ applied = 1, rejected = 1 }, state.counts({ applied = 1, rejected = 1, changes = { {}, {} } }), 'from the result')
  R.eq({ applied = 1, rejected = 2 }, state.counts({ changes = { { applied = true }, { applied = false }, { applied = false } } }),
    'counted from changes when the server sends no counts')
  local transcript = require('agentls.transcript')
  R.eq('2 applied, 1 rejected', transcript.counts(2, 1), 'words')
  R.eq('0 applied, 1 rejected', transcript.counts(0, 1), 'a rejection is no change')
  R.eq('no change', transcript.counts(0, 0), 'none')
  local st = state.new('/w')
  st:task_started('t1', 'Edit')
  st:task_update({ taskId = 't1', seq = 1, state = 'done', subtasks = {}, event = { kind = 'stateChanged', state = 'done', summary = 'ok', applied = 0, rejected = 1 } })
  R.contains(views.task_lines(st), 'changes: 0 applied, 1 rejected', 'the tasks view says it before the reply')
end)

test('an ended task says how its subtasks ended from the server\'s counts, the skipped and removed ones too', function()
  local transcript = require('agentls.transcript')
  local c = { done = 1, skipped = 1, removed = 1, failed = 0, blocked = 0, notRun = 0 }
  R.eq('1 of 3 subtasks done, 1 skipped, 1 removed', transcript.subtask_counts(c), 'in words')
  R.eq('1/3 (1 skipped, 1 removed)', transcript.progress(c), 'short')
  R.eq('2/2', transcript.progress({ done = 2, skipped = 0, removed = 0, failed = 0, blocked = 0, notRun = 0 }), 'all done')
  R.eq('0 of 1 subtask done, 1 not run', transcript.subtask_counts({ done = 0, skipped = 0, removed = 0, failed = 0, blocked = 0, notRun = 1 }), 'one')
  R.eq(nil, transcript.subtask_counts(nil), 'an older server sends none')
  R.eq(nil, transcript.subtask_counts({ done = 0, skipped = 0, removed = 0, failed = 0, blocked = 0, notRun = 0 }), 'a failed plan had no subtask')
  -- Two subtasks left in the list, both settled: the counts say one was done.
  local st = state.new('/w')
  st:task_started('t1', 'Steer')
  local left = { { id = '1', content = 'a', state = 'skipped' }, { id = '3', content = 'c', state = 'done' } }
  st:task_update({ taskId = 't1', seq = 1, state = 'done', subtasks = left,
    event = { kind = 'stateChanged', state = 'done', summary = '1 of 3 subtasks done, 1 skipped, 1 removed.', applied = 0, rejected = 0, counts = c } })
  R.contains(views.task_lines(st), 'Task t1  [done · 1/3 (1 skipped, 1 removed)]  Steer', 'the tasks view')
  R.contains(st:task('t1').transcript.lines, '── task done: 1 of 3 subtasks done, 1 skipped, 1 removed · no change ──', 'the transcript')
end)

test('the end of a run is told on one line that fits, the counts from the server', function()
  local agentls = require('agentls')
  local c = { done = 1, skipped = 1, removed = 1, failed = 0, blocked = 0, notRun = 0 }
  R.eq('task t1 done: 1 of 3 subtasks done, 1 skipped, 1 removed; 1 applied, 0 rejected',
    agentls.end_message('t1', { state = 'done', summary = '1 of 3 subtasks done, 1 skipped, 1 removed.\n- 1 (a): skipped', applied = 1, rejected = 0, counts = c }),
    'the counts said once')
  R.eq('task t1 done: greet added (1 of 1 subtask done; 1 applied, 0 rejected)',
    agentls.end_message('t1', { state = 'done', summary = 'greet added', applied = 1, rejected = 0,
      counts = { done = 1, skipped = 0, removed = 0, failed = 0, blocked = 0, notRun = 0 } }), 'one subtask\'s result')
end)

test('the server\'s settings are named as setup() takes them', function()
  R.eq('no model configured: set the model option of setup() (e.g. "anthropic:x"), or AGENTLS_MODEL',
    config.words('no model configured: set initializationOptions.model (editor setting "model", e.g. "anthropic:x"), or AGENTLS_MODEL'), 'the model')
  R.eq('invalid params: the max_workers option of setup(): must be a number', config.words('invalid params: initializationOptions.maxWorkers: must be a number'), 'another')
  R.eq('model "x:y" (from the model chosen with :AgentModel) is unknown', config.words('model "x:y" (from agent/run model) is unknown'), 'a run\'s own model')
end)

test('the tasks view maps each subtask line to its task and subtask', function()
  local st = state.new('/w')
  st:task_started('t1', 'Plan')
  st:task_update({ taskId = 't1', seq = 1, state = 'running', subtasks = {
    { id = '1', content = 'first', state = 'running', dependsOn = {} },
    { id = '2', content = 'second', state = 'pending', dependsOn = { '1' } },
  }, event = { kind = 'planned' } })
  local lines, map, subs = views.task_lines(st)
  local seen = {}
  for i, l in ipairs(lines) do
    if l:find('first', 1, true) or l:find('second', 1, true) then
      seen[subs[i]] = map[i]
    end
  end
  R.eq({ ['1'] = 't1', ['2'] = 't1' }, seen, 'subtask lines')
  R.contains(lines, 'x skip the subtask', 'the keys are shown')
end)

test('the transcript streams text per subtask, folds tool calls and lists the changes', function()
  local st = state.new('/w')
  st:task_started('t1', 'Add greet')
  local subs = { { id = '1', content = 'Add a greet function', state = 'running', dependsOn = {} },
    { id = '2', content = 'Test it', state = 'running', dependsOn = {} } }
  local seq = 0
  local function ev(e)
    seq = seq + 1
    st:task_update({ taskId = 't1', seq = seq, state = 'running', subtasks = subs, event = e })
  end
  ev({ kind = 'messageDelta', text = 'Planning ' })
  ev({ kind = 'messageDelta', text = 'the work.' })
  ev({ kind = 'message', text = 'Planning the work.' })
  ev({ kind = 'planned', text = '1. Add a greet function\n2. Test it' })
  ev({ kind = 'subtaskStarted', subtaskId = '1', text = 'Add a greet function' })
  ev({ kind = 'messageDelta', subtaskId = '1', text = 'Reading main' })
  ev({ kind = 'messageDelta', subtaskId = '2', text = 'Writing a test.' })
  ev({ kind = 'messageDelta', subtaskId = '1', text = '.go first.\nThen edit.' })
  ev({ kind = 'message', subtaskId = '1', text = 'Reading main.go first.\nThen edit.' })
  ev({ kind = 'toolCall', subtaskId = '1', tool = 'write_file', arguments = { path = 'main.go', content = 'package main\n\nfunc greet() {}\n' } })
  ev({ kind = 'toolCall', subtaskId = '2', tool = 'run_command', arguments = { command = 'go test ./...' } })
  ev({ kind = 'toolResult', subtaskId = '1', tool = 'write_file', ok = true, path = 'main.go', summary = 'wrote main.go' })
  ev({ kind = 'toolResult', subtaskId = '2', tool = 'run_command', ok = false, summary = 'exit code 1' })
  ev({ kind = 'changeApplied', subtaskId = '1', path = 'main.go' })
  ev({ kind = 'changeRejected', subtaskId = '2', path = 'x_test.go', reason = 'rejected by the user' })
  ev({ kind = 'message', subtaskId = '2', text = 'Not streamed.' })
  local doc = st:task('t1').transcript
  local text = table.concat(doc.lines, '\n')
  R.contains(doc.lines, '── task ──', 'the planner\'s block')
  R.contains(doc.lines, 'Planning the work.', 'streamed text, once although a message repeats it')
  R.eq(1, select(2, text:gsub('Planning the work', '')), 'the planner\'s text appears once')
  R.contains(doc.lines, '── 1 · Add a greet function ──', 'a subtask\'s header')
  R.contains(doc.lines, 'Reading main', 'the text until another subtask spoke')
  R.contains(doc.lines, '── 2 · Test it ──', 'the other subtask\'s header')
  R.contains(doc.lines, '.go first.', 'the first subtask\'s text goes on under a new header')
  R.contains(doc.lines, 'Then edit.', 'a newline in a delta starts a line')
  R.contains(doc.lines, 'Not streamed.', 'a message without deltas is shown')
  local write_line, run_line
  for i, l in ipairs(doc.lines) do
    if l:find('write_file main.go', 1, true) then
      write_line = i
    elseif l:find('run_command go test', 1, true) then
      run_line = i
    end
  end
  R.eq('  ✓ write_file main.go  → wrote main.go', doc.lines[write_line], 'the call\'s line gets its result')
  R.eq('  ✗ run_command go test ./...  → exit code 1', doc.lines[run_line], 'a failed call')
  R.eq('>1', doc.levels[write_line], 'a tool call starts a fold')
  R.eq({ '      content:', '        package main', '        ', '        func greet() {}', '      path: "main.go"' },
    { doc.lines[write_line + 1], doc.lines[write_line + 2], doc.lines[write_line + 3], doc.lines[write_line + 4], doc.lines[write_line + 5] },
    'its arguments under it, a file\'s content line by line')
  R.eq('1', doc.levels[write_line + 1], 'folded')
  R.contains(doc.lines, '  ✎ changed main.go', 'an applied change')
  R.contains(doc.lines, '  ✗ not changed x_test.go: rejected by the user', 'a rejected one')
  st:run_result('t1', { taskId = 't1', state = 'done', summary = 'All done.', applied = 1, rejected = 1, subtasks = subs,
    changes = { { path = 'main.go', operation = 'update', applied = true, diff = '--- a/main.go\n+++ b/main.go\n@@ -1 +1 @@\n-a\n+b\n' },
      { path = 'x_test.go', operation = 'create', applied = false, diff = '' } } })
  R.contains(doc.lines, '── task done: 1 applied, 1 rejected ──', 'the end with its counts (an older server: no subtask counts)')
  R.contains(doc.lines, '  ✓ update main.go', 'the changes listed')
  R.contains(doc.lines, '  ✗ create x_test.go  (not applied)', 'with the rejected one')
  R.contains(doc.lines, '      +b', 'and their diffs, folded')
  local n = #doc.lines
  st:task_update({ taskId = 't1', seq = 99, state = 'running', subtasks = subs, event = { kind = 'messageDelta', subtaskId = '1', text = 'late' } })
  R.eq(n, #doc.lines, 'nothing after the result')
end)

test('the task view and the transcript show the instructions, each compaction and what the cache read', function()
  local st = state.new('/w')
  st:task_started('t1', 'Add greet')
  local subs = { { id = '1', content = 'Add a greet function', state = 'running', dependsOn = {} } }
  st:task_update({ taskId = 't1', seq = 1, state = 'planning', subtasks = {}, event = { kind = 'instructions',
    instructions = { { path = 'AGENTS.md', tokens = 9 }, { path = 'pkg/AGENTS.md', tokens = 30, cut = true }, { path = 'web/CLAUDE.md', tokens = 0, cut = true } } } })
  st:task_update({ taskId = 't1', seq = 2, state = 'running', subtasks = subs, event = { kind = 'compacted', subtaskId = '1',
    tokensBefore = 160000, tokensAfter = 42000, text = 'Compacted the context: dropped 12 old tool outputs.' } })
  st:task_update({ taskId = 't1', seq = 3, state = 'running', subtasks = subs, event = { kind = 'usage',
    inputTokens = 12000, outputTokens = 300, cacheReadTokens = 9500 } })
  local lines = views.task_lines(st)
  R.contains(lines, '  instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 30 tokens), web/CLAUDE.md (left out)', 'the instruction files')
  R.contains(lines, 'tokens 12000 in (9500 cached) / 300 out', 'what the cache read')
  local doc = st:task('t1').transcript
  R.contains(doc.lines, '  ⓘ instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 30 tokens), web/CLAUDE.md (left out)', 'in the task\'s block')
  R.contains(doc.lines, '  ⇣ context compacted: 160000 → 42000 tokens', 'in the subtask\'s block')
  R.contains(doc.lines, '      Compacted the context: dropped 12 old tool outputs.', 'what was done, folded under it')
end)

test('the transcript buffer keeps up with a fast stream: many events, one write', function()
  local transcript = require('agentls.transcript')
  local st = state.new('/w')
  local ws = { root = '/w', state = st }
  st:task_started('t1', 'Stream')
  local b, w = views.transcript(ws, st:task('t1'))
  local v = transcript.view(b)
  local writes = v.flushes
  local subs = { { id = '1', content = 'Talk', state = 'running', dependsOn = {} } }
  local words = {}
  for i = 1, 5000 do
    words[i] = 'w' .. i .. (i % 100 == 0 and '\n' or ' ')
    st:task_update({ taskId = 't1', seq = i, state = 'running', subtasks = subs, event = { kind = 'messageDelta', subtaskId = '1', text = words[i] } })
  end
  R.wait_for(function()
    return v.flushes > writes and not v.pending
  end, 'the transcript to be written')
  R.eq(writes + 1, v.flushes, 'one write for 5000 deltas')
  R.eq(st:task('t1').transcript.lines, R.buf_lines(b), 'the buffer holds the document')
  R.contains(R.buf_lines(b), 'w4901 w4902', 'the last lines')
  R.eq(vim.api.nvim_buf_line_count(b), vim.api.nvim_win_get_cursor(w)[1], 'the window followed the end')
  -- The person moves up to read: the window stays there.
  vim.api.nvim_win_set_cursor(w, { 3, 0 })
  st:task_update({ taskId = 't1', seq = 5001, state = 'running', subtasks = subs, event = { kind = 'toolCall', subtaskId = '1', tool = 'read_file', arguments = { path = 'a.txt' } } })
  R.wait_for(function()
    return not v.pending and R.buf_lines(b)[vim.api.nvim_buf_line_count(b) - 1]:find('read_file a.txt', 1, true)
  end, 'the tool call')
  R.eq(3, vim.api.nvim_win_get_cursor(w)[1], 'the cursor stays where the person put it')
  R.eq(vim.api.nvim_buf_line_count(b) - 1, vim.fn.foldclosed(vim.api.nvim_buf_line_count(b)), 'the call is a closed fold')
  -- Back at the end, it follows again.
  vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(b), 0 })
  st:task_update({ taskId = 't1', seq = 5002, state = 'running', subtasks = subs, event = { kind = 'toolResult', subtaskId = '1', tool = 'read_file', ok = true, summary = '1 line' } })
  st:task_update({ taskId = 't1', seq = 5003, state = 'running', subtasks = subs, event = { kind = 'messageDelta', subtaskId = '1', text = 'after the read' } })
  R.wait_for(function()
    return not v.pending and R.buf_lines(b)[vim.api.nvim_buf_line_count(b)] == 'after the read'
  end, 'the text after the call')
  R.contains(R.buf_lines(b), '  ✓ read_file a.txt  → 1 line', 'the call\'s line was rewritten in place')
  R.eq(vim.api.nvim_buf_line_count(b), vim.api.nvim_win_get_cursor(w)[1], 'following again')
  R.eq(false, vim.bo[b].modifiable, 'read-only')
end)

test('steering commands read their arguments and complete ids from the live task', function()
  local commands = require('agentls.commands')
  local st = state.new('/w')
  local ws = { root = '/w', state = st }
  st:task_started('nvim-a', 'Running one')
  st:task_update({ taskId = 'nvim-a', seq = 1, state = 'running', subtasks = {
    { id = '1', content = 'a', state = 'running', dependsOn = {} },
    { id = '2', content = 'b', state = 'pending', dependsOn = { '1' } },
    { id = '3', content = 'c', state = 'done', dependsOn = {} },
  }, event = { kind = 'planned' } })
  st:task_started('nvim-old', 'Ended one')
  st:run_result('nvim-old', { state = 'done', sessionId = 's1', subtasks = {}, changes = {} })
  R.eq({ nil, '2' }, { commands.target(ws, { '2' }) }, 'a subtask of the newest running task')
  R.eq({ 'nvim-a', nil }, { commands.target(ws, { 'nvim-a' }) }, 'a task: its subtask is asked for')
  R.eq({ 'nvim-a', '1' }, { commands.target(ws, { 'nvim-a', '1' }) }, 'both')
  R.eq({ task_id = 't', depends_on = { '1', '2' }, content = 'Update the README' },
    commands.add_args(' task=t after=1,2  Update the README'), 'add')
  R.eq({ content = 'a=b is content' }, commands.add_args('a=b is content'), 'only task= and after= are read')
  R.eq({ 'nvim-old', 'and then' }, { commands.follow_up_args(ws, 'nvim-old and then') }, 'follow up on a task')
  R.eq({ nil, 'nvim-z and then' }, { commands.follow_up_args(ws, 'nvim-z and then') }, 'a word that is no task is the prompt')
  local orig = commands.current_ws
  commands.current_ws = function()
    return ws
  end
  local ok, err = pcall(function()
    R.eq({ '1', '2', 'nvim-a' }, commands.complete_subtask({ 'pending', 'running' })('', 'AgentSkip ', 10), 'skip: the running task\'s subtasks, then the tasks')
    R.eq({ '2' }, commands.complete_subtask({ 'pending' })('', 'AgentRemove nvim-a ', 19), 'remove: the pending subtasks of the task named')
    R.eq({ 'nvim-a' }, commands.complete_subtask({ 'pending' })('nv', 'AgentRemove nv', 14), 'by prefix')
    R.eq({ 'after=1,2', 'after=1,3' }, commands.complete_add('after=1,', 'AgentAdd after=1,', 17), 'after= completes ids after the comma')
    R.eq({ 'task=nvim-a' }, commands.complete_add('task=', 'AgentAdd task=', 14), 'task= completes running tasks')
    R.eq({}, commands.complete_add('', 'AgentAdd Update the ', 20), 'nothing once the content began')
    R.eq({ 'nvim-old' }, commands.complete_follow_up('', 'AgentFollowUp ', 14), 'follow up: the tasks that ended')
  end)
  commands.current_ws = orig
  assert(ok, err)
end)

test('the model check of :checkhealth says the verdict and what is wrong, the setting named as setup() takes it', function()
  local health = require('agentls.health')
  R.eq({ { level = 'ok', text = '/w: model script:/s.json (from the model option of setup()): the script loads' } },
    health.model_report({ root = '/w' }, { model = 'script:/s.json', source = 'initializationOptions.model', ok = true, message = 'the script loads' }), 'ok')
  R.eq({ { level = 'error', text = '/w: model openai:gpt-4.1-mimi (from the model checked): [unknownModel] offers no model' } },
    health.model_report({ root = '/w' }, { model = 'openai:gpt-4.1-mimi', source = 'agent/checkModel model', ok = false, problem = 'unknownModel', message = 'offers no model' }), 'a problem')
  R.eq('warn', health.model_report({ root = '/w' }, nil, 'method not found')[1].level, 'an error')
end)

test('the help page builds its tags and every command has one', function()
  local d = R.tmpdir()
  vim.fn.mkdir(d .. '/doc', 'p')
  local help = debug.getinfo(1, 'S').source:sub(2):gsub('test/unit_spec.lua$', 'doc/agentls.txt')
  R.write(d .. '/doc/agentls.txt', assert(R.read(help), help))
  vim.cmd('helptags ' .. d .. '/doc')
  local tags = R.read(d .. '/doc/tags')
  for _, cmd in ipairs(vim.tbl_keys(vim.api.nvim_get_commands({}))) do
    if cmd:match('^Agent') then
      R.contains(tags, ':' .. cmd .. '\t', 'help tag of :' .. cmd)
    end
  end
  R.contains(tags, 'agentls.setup()', 'setup tag')
end)

return T
