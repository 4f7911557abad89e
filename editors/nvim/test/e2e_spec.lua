-- End to end: real Neovim, the plugin, the real agentls binary and a
-- scripted model (docs/MODELS.md, scripted model), in a fresh workspace per test.
local R = require('agentls_test')
local agentls = require('agentls')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local bin = assert(os.getenv('AGENTLS_BIN'), 'AGENTLS_BIN is not set')

-- The end of a task is told on one line cut to fit the command line (a
-- terminal test holds it to that): a wide screen keeps the notes whole.
vim.o.columns = 200

local function call(name, args)
  return { name = name, arguments = args }
end

-- workspace makes a temp workspace with files, a script, and a running
-- client configured with opts; it returns the root and the workspace.
local function workspace(files, script, opts)
  agentls.restart()
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/.git', 'p')
  for name, text in pairs(files or {}) do
    R.write(root .. '/' .. name, text)
  end
  R.write(root .. '/.script.json', vim.json.encode(script))
  local o = vim.tbl_extend('force', { cmd = bin, model = 'script:' .. root .. '/.script.json', edit_mode = 'apply' }, opts or {})
  if o.model == false then
    o.model = nil -- no model at all
  end
  assert(agentls.setup(o))
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  local ws = assert(agentls.workspace())
  R.eq(root, ws.root, 'workspace root')
  -- Record every agent/taskUpdate as it arrives.
  ws.updates = {}
  local apply = ws.state.task_update
  ws.state.task_update = function(self, p)
    table.insert(ws.updates, p)
    return apply(self, p)
  end
  return root, ws
end

local function start(ws, prompt, opts)
  local done, result, err = false, nil, nil
  opts = vim.tbl_extend('force', { workspace = ws }, opts or {})
  opts.on_done = function(r, e)
    done, result, err = true, r, e
  end
  local _, id = agentls.run(prompt, opts)
  R.truthy(id, 'task id')
  local function wait(ms)
    R.wait_for(function()
      return done
    end, 'the task "' .. prompt .. '" to end', ms or 20000)
    if err then
      error('agent/run failed: ' .. err, 2)
    end
    return result
  end
  return id, wait
end

local function events(ws, kind)
  local out = {}
  for _, u in ipairs(ws.updates) do
    if u.event and u.event.kind == kind then
      table.insert(out, u.event)
    end
  end
  return out
end

test('a task reads an open buffer with unsaved edits and its edit lands in that buffer', function()
  local root, ws = workspace({ ['main.txt'] = 'hello from disk\n' }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('read_file', { path = 'main.txt' }) } },
        { toolCalls = { call('edit_file', { path = 'main.txt', old_string = 'hello unsaved', new_string = 'hello edited' }) } },
        { toolCalls = { call('finish', { summary = 'edited the unsaved line' }) } },
      },
    },
  })
  vim.cmd('edit ' .. root .. '/main.txt')
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, -1, false, { 'hello unsaved', 'second line' })
  local _, wait = start(ws, 'Edit the greeting')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq({ 'hello edited', 'second line' }, R.buf_lines(b), 'the edit is in the buffer, over the unsaved text')
  R.eq(true, vim.bo[b].modified, 'the buffer keeps the person\'s unsaved edits unsaved')
  R.eq('hello from disk\n', R.read(root .. '/main.txt'), 'the disk is untouched')
  R.eq(1, #res.changes, 'changes')
  R.eq({ 'main.txt', 'update', true }, { res.changes[1].path, res.changes[1].operation, res.changes[1].applied }, 'change')
  R.contains(res.changes[1].diff, '+hello edited', 'diff')
  R.contains(res.changes[1].diff, '-hello unsaved', 'the model edited the unsaved text')
  vim.cmd('silent undo')
  R.eq({ 'hello unsaved', 'second line' }, R.buf_lines(b), 'one undo takes the agent\'s edit back')
end)

test('a task creates a file in a new directory and deletes a file', function()
  local root, ws = workspace({ ['old.txt'] = 'bye\n' }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('write_file', { path = 'new/dir/fresh.txt', content = 'fresh\n' }) } },
        { toolCalls = { call('read_file', { path = 'old.txt' }) } },
        { toolCalls = { call('delete_file', { path = 'old.txt' }) } },
        { toolCalls = { call('finish', { summary = 'moved' }) } },
      },
    },
  })
  vim.cmd('edit ' .. root .. '/old.txt')
  local old = vim.api.nvim_get_current_buf()
  local _, wait = start(ws, 'Move old.txt')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq({ { 'new/dir/fresh.txt', 'create', true }, { 'old.txt', 'delete', true } }, vim.tbl_map(function(c)
    return { c.path, c.operation, c.applied }
  end, res.changes), 'changes')
  R.eq('fresh\n', R.read(root .. '/new/dir/fresh.txt'), 'the new file, in its new directory, saved')
  R.eq(nil, vim.loop.fs_stat(root .. '/old.txt'), 'old.txt is gone from disk')
  R.eq(false, vim.api.nvim_buf_is_valid(old), 'its buffer is gone')
end)

test('creating a file that exists is refused, and the file is kept', function()
  local reverse = require('agentls.reverse')
  local root = R.tmpdir()
  R.write(root .. '/taken.txt', 'mine\n')
  local uri = vim.uri_from_fname(root .. '/taken.txt')
  local res = reverse.apply_edit({ edit = { documentChanges = {
    { kind = 'create', uri = uri },
    { textDocument = { uri = uri, version = vim.NIL }, edits = {
      { range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } }, newText = 'agent\n' } } },
  } } }, { root = root })
  R.eq(false, res.applied, 'applied')
  R.contains({ res.failureReason }, 'already exists', 'reason')
  R.eq('mine\n', R.read(root .. '/taken.txt'), 'the file is as it was')
end)

test('deleting a file whose buffer has unsaved changes is refused, and both are kept', function()
  local reverse = require('agentls.reverse')
  local root = R.tmpdir()
  R.write(root .. '/keep.txt', 'keep\n')
  vim.cmd('edit ' .. root .. '/keep.txt')
  local b = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(b, 0, 0, false, { 'mine' })
  local res = reverse.apply_edit({ edit = { documentChanges = {
    { kind = 'delete', uri = vim.uri_from_fname(root .. '/keep.txt') },
  } } }, { root = root })
  R.eq(false, res.applied, 'applied')
  R.contains({ res.failureReason }, 'unsaved changes', 'reason')
  R.eq('keep\n', R.read(root .. '/keep.txt'), 'the file is on disk')
  R.eq({ 'mine', 'keep' }, R.buf_lines(b), 'the buffer keeps its text')
  vim.bo[b].modified = false
end)

test('a question is answered through vim.ui.input and the answer reaches the task', function()
  local root, ws = workspace({}, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('ask_human', { question = 'What should the file be called?' }) } },
        { toolCalls = { call('write_file', { path = 'named.txt', content = 'named\n' }) } },
        { toolCalls = { call('finish', { summary = 'file named' }) } },
      },
    },
  })
  local rec = R.stub_ui({ 'named.txt' })
  local _, wait = start(ws, 'Name a file')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq(1, #rec.input, 'one question')
  R.contains({ rec.input[1].prompt }, 'What should the file be called?', 'prompt')
  local answered = events(ws, 'answered')
  R.eq(1, #answered, 'answered events')
  R.eq('named.txt', answered[1].answer, 'the answer reached the task')
  R.eq('named\n', R.read(root .. '/named.txt'), 'the file written after the answer, saved')
end)

local function keys(s)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(s, true, false, true), 't', false)
end

test('a command approval goes through vim.ui.select and a proposed edit through the diff review', function()
  local root, ws = workspace({ ['notes.txt'] = 'draft\n' }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('run_command', { command = 'echo ran > ran.txt' }) } },
        { toolCalls = { call('edit_file', { path = 'notes.txt', old_string = 'draft', new_string = 'final' }) } },
        { toolCalls = { call('finish', { summary = 'ran and edited' }) } },
      },
    },
  }, { edit_mode = 'propose', commands = 'ask' })
  local rec = R.stub_ui({ 'Run' })
  keys('y<CR>')
  local _, wait = start(ws, 'Run and edit')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq(1, #rec.select, 'one approval through vim.ui.select')
  R.contains({ rec.select[1].opts.prompt }, 'echo ran > ran.txt', 'the command approval names the command')
  R.eq({ 'Run', 'Always allow', 'Deny' }, vim.tbl_map(function(a)
    return a.title
  end, rec.select[1].items), 'command actions')
  local shown = require('agentls.review').last.lines
  R.eq('agentls proposes: update notes.txt', shown[1], 'the review names the change once')
  R.contains(shown, '-draft', 'the review shows the old line')
  R.contains(shown, '+final', 'and the new one')
  R.eq('ran\n', R.read(root .. '/ran.txt'), 'the command ran (in the sidecar)')
  R.eq('final\n', R.read(root .. '/notes.txt'), 'the approved edit is applied and saved')
  R.eq(0, vim.fn.getchar(1), 'keys left unread')
end)

test('per-hunk review: the accepted hunk lands and the server records only it', function()
  local before = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n'
  local root, ws = workspace({ ['n.txt'] = before }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('read_file', { path = 'n.txt' }) } },
        { toolCalls = { call('write_file', { path = 'n.txt', content = 'ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n' }) } },
        { toolCalls = { call('finish', { summary = 'edited' }) } },
      },
    },
  }, { edit_mode = 'propose' })
  keys('ny<CR>')
  local _, wait = start(ws, 'Shout the ends')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq('one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n', R.read(root .. '/n.txt'), 'only the second hunk, saved')
  R.eq(1, #res.changes, 'changes')
  R.eq(true, res.changes[1].applied, 'applied (in part)')
  R.contains(res.changes[1].diff, '+TEN', 'the recorded diff has the accepted hunk')
  R.not_contains(vim.split(res.changes[1].diff, '\n'), '+ONE', 'and not the rejected one')
  local applied = events(ws, 'changeApplied')
  R.eq(1, #applied, 'changeApplied events')
  R.contains({ applied[1].reason }, 'applied in part', 'the event says so')
  R.eq(0, vim.fn.getchar(1), 'keys left unread')
end)

test('a rejected edit is applied nowhere and the task is told', function()
  local root, ws = workspace({ ['notes.txt'] = 'draft\n' }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('edit_file', { path = 'notes.txt', old_string = 'draft', new_string = 'final' }) } },
        { toolCalls = { call('finish', { summary = 'tried' }) } },
      },
    },
  }, { edit_mode = 'propose' })
  keys('q')
  local _, wait = start(ws, 'Edit but get rejected')
  local res = wait()
  R.eq('draft\n', R.read(root .. '/notes.txt'), 'disk')
  local results = events(ws, 'toolResult')
  local rejected = false
  for _, e in ipairs(results) do
    if e.tool == 'edit_file' and e.ok == false then
      rejected = true
    end
  end
  R.truthy(rejected, 'edit_file reported as failed to the model')
  for _, c in ipairs(res.changes or {}) do
    R.eq(false, c.applied, 'change ' .. c.path .. ' applied')
  end
  R.eq({ 0, 1 }, { res.applied, res.rejected }, 'the counts of the result')
  local said = vim.tbl_map(function(n)
    return n.msg
  end, R.notes)
  R.contains(said, 'done: tried (1 of 1 subtask done; 0 applied, 1 rejected)', 'the end of the task says the change was rejected, not made')
  R.not_contains(said, '1 change', 'a rejected change is not counted as a change')
  R.eq(0, vim.fn.getchar(1), 'keys left unread')
end)

-- Go files that reference each other: main.go calls greet (greet.go) twice,
-- greet.go uses prefix (prefix.go).
local go_files = {
  ['go.mod'] = 'module example.com/hello\n\ngo 1.21\n',
  ['main.go'] = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(greet("a"))\n\tfmt.Println(greet("b"))\n}\n',
  ['greet.go'] = 'package main\n\nfunc greet(name string) string {\n\treturn prefix + name\n}\n',
  ['prefix.go'] = 'package main\n\nconst prefix = "hello, "\n',
  ['notes.txt'] = 'not code\n',
}

local function cursor_on(b, needle, skip_first)
  for i, l in ipairs(R.buf_lines(b)) do
    if i > (skip_first or 0) and l:find(needle, 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return i
    end
  end
  error('no line with ' .. needle .. ' in\n' .. table.concat(R.buf_lines(b), '\n'), 2)
end

test(':AgentHeat shows a file\'s neighbours from the code graph; they open, and a file outside the graph says so', function()
  local root, ws = workspace(go_files, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('read_file', { path = 'greet.go' }) } },
        { toolCalls = { call('read_file', { path = 'notes.txt' }) } },
        { toolCalls = { call('finish', { summary = 'read' }) } },
      },
    },
  })
  local _, wait = start(ws, 'Read greet.go and the notes')
  R.eq('done', wait().state, 'state')
  vim.cmd('AgentHeat')
  local hb = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    local text = table.concat(R.buf_lines(hb), '\n')
    return text:find('greet.go', 1, true) and text:find('notes.txt', 1, true)
  end, ':AgentHeat to list greet.go and notes.txt')
  cursor_on(hb, 'greet.go', 1)
  vim.api.nvim_feedkeys('n', 'x', false)
  local nb = vim.api.nvim_get_current_buf()
  R.eq('agentls://neighbours/' .. root, vim.api.nvim_buf_get_name(nb), 'n opened the neighbours view')
  R.wait_for(function()
    return table.concat(R.buf_lines(nb), '\n'):find('Referenced by', 1, true)
  end, 'the neighbours of greet.go')
  local text = table.concat(R.buf_lines(nb), '\n')
  R.truthy(text:find('uses, references each):\n     1  prefix.go  (resolved by the graph)\n', 1, true), 'greet.go uses prefix.go once: ' .. text)
  R.truthy(vim.endswith(text, 'that use greet.go, references each):\n     2  main.go  (resolved by the graph)'), 'main.go uses greet.go twice: ' .. text)
  -- n on main.go: its own neighbours.
  cursor_on(nb, 'main.go', 2)
  vim.api.nvim_feedkeys('n', 'x', false)
  R.wait_for(function()
    local t = table.concat(R.buf_lines(nb), '\n')
    return t:find('agentls neighbours  main.go', 1, true) and t:find('Referenced by', 1, true)
  end, 'the neighbours of main.go')
  text = table.concat(R.buf_lines(nb), '\n')
  R.truthy(text:find('uses, references each):\n     2  greet.go  (resolved by the graph)\n', 1, true), 'main.go uses greet.go: ' .. text)
  R.not_contains(R.buf_lines(nb), 'prefix.go', 'depth 1: prefix.go is two files away')
  -- Enter opens the neighbour in a window of its own, the views stay.
  cursor_on(nb, 'greet.go', 2)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  R.eq(root .. '/greet.go', vim.loop.fs_realpath(vim.api.nvim_buf_get_name(0)), 'Enter opened greet.go')
  R.truthy(vim.fn.bufwinid(hb) ~= -1 and vim.fn.bufwinid(nb) ~= -1, 'the heat and neighbours views are still shown')
  -- A file the graph does not hold: the view says so.
  vim.cmd('AgentHeat')
  cursor_on(hb, 'notes.txt', 1)
  vim.api.nvim_feedkeys('n', 'x', false)
  R.wait_for(function()
    return table.concat(R.buf_lines(nb), '\n'):find('notes.txt is not a file of the code graph', 1, true)
  end, 'the neighbours view to say notes.txt is not in the graph')
  R.contains(R.buf_lines(nb), 'not a file of a language the graph reads', 'with the server\'s reason')
end)

test(':AgentTasks shows the subtasks and their final states; :AgentHeat lists the touched files', function()
  local root, ws = workspace({ ['a.txt'] = 'alpha\n', ['b.txt'] = 'beta\n' }, {
    agents = {
      coordinator = { { toolCalls = { call('plan', { subtasks = {
        { id = 'read', content = 'Read a.txt' },
        { id = 'write', content = 'Rewrite b.txt', dependsOn = { 'read' } },
      } }) } } },
      read = {
        { toolCalls = { call('read_file', { path = 'a.txt' }) }, usage = { inputTokens = 100, outputTokens = 20 } },
        { toolCalls = { call('finish', { summary = 'a read' }) }, usage = { inputTokens = 50, outputTokens = 5 } },
      },
      write = {
        { toolCalls = { call('read_file', { path = 'b.txt' }) } },
        { toolCalls = { call('write_file', { path = 'b.txt', content = 'BETA\n' }) } },
        { toolCalls = { call('finish', { summary = 'b rewritten' }) } },
      },
    },
  })
  local progress = {}
  vim.api.nvim_create_autocmd('User', {
    pattern = 'LspProgressUpdate',
    callback = function()
      if vim.lsp.util.get_progress_messages then
        for _, m in ipairs(vim.lsp.util.get_progress_messages()) do
          table.insert(progress, m.title)
        end
      end
    end,
  })
  vim.cmd('AgentTasks')
  local tb = vim.api.nvim_get_current_buf()
  local _, wait = start(ws, 'Read a then rewrite b')
  R.wait_for(function()
    return table.concat(R.buf_lines(tb), '\n'):find('Read a.txt', 1, true)
  end, 'the plan in :AgentTasks')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.wait_for(function()
    return table.concat(R.buf_lines(tb), '\n'):find('[done · 2/2]', 1, true)
  end, ':AgentTasks to show the final state, both subtasks done')
  local lines = R.buf_lines(tb)
  R.contains(lines, '✓ done     read  Read a.txt', 'first subtask')
  R.contains(lines, '✓ done     write  Rewrite b.txt  (after read)', 'second subtask')
  R.contains(lines, 'summary:', 'summary')
  R.contains(lines, 'tokens 150 in / 25 out', 'tokens')
  R.contains(lines, 'update b.txt', 'change')
  R.eq('BETA\n', R.read(root .. '/b.txt'), 'b.txt')
  if vim.lsp.util.get_progress_messages then
    R.contains(progress, 'Read a then rewrite b', '$/progress titled with the prompt')
  end

  vim.cmd('AgentHeat')
  local hb = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    local text = table.concat(R.buf_lines(hb), '\n')
    return text:find('a.txt', 1, true) and text:find('b.txt', 1, true)
  end, ':AgentHeat to list a.txt and b.txt')
  -- Enter on a file opens it.
  for i, l in ipairs(R.buf_lines(hb)) do
    if l:find('a.txt', 1, true) then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      break
    end
  end
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<CR>', true, false, true), 'x', false)
  R.eq(root .. '/a.txt', vim.loop.fs_realpath(vim.api.nvim_buf_get_name(0)), 'Enter opened the file')
end)

test(':AgentStop ends a running task', function()
  local _, ws = workspace({}, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = { { delayMs = 60000, text = 'thinking for a long time' } },
    },
  })
  local id, wait = start(ws, 'Take forever')
  R.wait_for(function()
    local t = ws.state:task(id)
    return t and t.state == 'running'
  end, 'the task to run')
  vim.cmd('AgentStop')
  local res = wait(10000)
  R.eq('stopped', res.state, 'state')
  R.eq('stopped', ws.state:task(id).state, 'state in the view')
end)

test(':AgentSessions lists the session of a run and :AgentRun! continues it', function()
  local _, ws = workspace({}, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = { { toolCalls = { call('finish', { summary = 'first' }) } } },
      ['2:coordinator'] = { { text = 'One more.' } },
      ['2:1'] = { { toolCalls = { call('finish', { summary = 'second' }) } } },
    },
  })
  local _, wait = start(ws, 'First prompt')
  local first = wait()
  R.eq('done', first.state, 'first state')
  vim.cmd('AgentRun! Second prompt')
  R.wait_for(function()
    local t = ws.state:list()[1]
    return t and t.prompt == 'Second prompt' and t.result
  end, 'the second task to end')
  R.eq(first.sessionId, ws.state:list()[1].result.sessionId, 'the same session')
  vim.cmd('AgentSessions')
  local b
  R.wait_for(function()
    b = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(b):find('agentls://sessions', 1, true)
  end, 'the sessions view')
  local lines = R.buf_lines(b)
  R.contains(lines, first.sessionId, 'session id')
  R.contains(lines, '[done] First prompt', 'first task')
  R.contains(lines, '[done] Second prompt', 'second task')
end)

test(':AgentTrace shows the agent change of the line under the cursor', function()
  local root, ws = workspace({ ['t.txt'] = 'one\ntwo\nthree\n' }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('edit_file', { path = 't.txt', old_string = 'two', new_string = 'TWO' }) } },
        { toolCalls = { call('finish', { summary = 'traced' }) } },
      },
    },
  }, { trace = true })
  local _, wait = start(ws, 'Change line two')
  R.eq('done', wait().state, 'state')
  vim.cmd('edit ' .. root .. '/t.txt')
  R.eq({ 'one', 'TWO', 'three' }, R.buf_lines(0), 'the file')
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  agentls.last_trace = nil
  vim.cmd('AgentTrace')
  R.wait_for(function()
    return agentls.last_trace ~= nil
  end, 'the trace')
  R.eq(1, #agentls.last_trace.entries, 'entries of line 2')
  R.eq(ws.state:list()[1].id, agentls.last_trace.entries[1].taskId, 'the task')
  R.contains(R.buf_lines(agentls.last_trace.buf), 'lines 2-2', 'the float shows the span')
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  agentls.last_trace = nil
  vim.cmd('AgentTrace')
  R.wait_for(function()
    return agentls.last_trace ~= nil
  end, 'the trace of line 1')
  R.eq(0, #agentls.last_trace.entries, 'line 1 was not changed by the agent')
end)

test('a request sent right after start waits for initialize, and the client answers', function()
  local _, ws = workspace({}, { agents = {} })
  -- vim.lsp.start_client (0.7) returns before initialize is answered.
  local res, err = agentls.client.request_sync(ws, 'agent/ping', { data = { n = 42 } }, 5000)
  R.eq(nil, err, 'error')
  R.eq({ data = { n = 42 } }, res, 'ping echoes its data')
  R.eq('agentls', ws.server_info.name, 'serverInfo')
end)

test('a run without a model fails with a message that says how to configure one', function()
  local _, ws = workspace({}, { agents = {} }, { model = false, env = { AGENTLS_MODEL = '', ANTHROPIC_API_KEY = '', OPENAI_API_KEY = '' } })
  local done, err
  agentls.run('Anything', { workspace = ws, on_done = function(_, e)
    done, err = true, e
  end })
  R.wait_for(function()
    return done
  end, 'the run to fail')
  R.contains({ err }, 'script:', 'the message names the script demo')
  R.eq('failed', ws.state:list()[1].state, 'task state')
end)

local function notes()
  return vim.tbl_map(function(n)
    return n.msg
  end, R.notes)
end

local function wait_note(needle, what)
  R.wait_for(function()
    for _, m in ipairs(notes()) do
      if m:find(needle, 1, true) then
        return true
      end
    end
  end, function()
    return (what or needle) .. '; notifications: ' .. vim.inspect(notes())
  end)
end

-- choose stubs vim.ui.select: it records the items and their labels as
-- shown (before the choice changes them) and picks the item at index.
local function choose(index)
  local rec = {}
  vim.ui.select = function(items, opts, on_choice)
    rec.items = items
    rec.labels = vim.tbl_map(opts.format_item or tostring, items)
    on_choice(items[index], index)
  end
  return rec
end

local function subtask_states(t)
  local out = {}
  for _, s in ipairs(t.subtasks or {}) do
    out[s.id] = s.state
  end
  return out
end

test(':AgentAdd, :AgentRemove and :AgentSkip change the plan of the running task', function()
  local _, ws = workspace({}, {
    agents = {
      coordinator = { { toolCalls = { call('plan', { subtasks = {
        { id = '1', content = 'Think for a long time' },
        { id = '2', content = 'Write it down', dependsOn = { '1' } },
      } }) } } },
      ['1'] = { { delayMs = 60000, text = 'thinking' } },
      ['2'] = { { toolCalls = { call('finish', { summary = 'written' }) } } },
    },
  })
  local id, wait = start(ws, 'Think then write')
  R.wait_for(function()
    return subtask_states(ws.state:task(id))['1'] == 'running'
  end, 'subtask 1 to run')
  vim.cmd('AgentAdd after=1 Update the README')
  wait_note('subtask 3 added to task ' .. id .. ' after 1')
  R.wait_for(function()
    return subtask_states(ws.state:task(id))['3'] == 'pending'
  end, 'subtask 3 in the plan')
  -- A running subtask cannot be removed: the server says why.
  vim.cmd('AgentRemove 1')
  wait_note('only a pending subtask can be removed')
  vim.cmd('AgentRemove 3')
  wait_note('subtask 3 of task ' .. id .. ' removed')
  vim.cmd('AgentSkip ' .. id .. ' 1')
  local res = wait()
  R.eq('done', res.state, 'the task goes on after the skip')
  R.eq({ ['1'] = 'skipped', ['2'] = 'done' }, subtask_states(res), 'subtask 1 skipped, 2 ran as if it were done, 3 gone')
  -- One of three subtasks was done: never "all done", in the result, the
  -- notification, the tasks view and the transcript.
  R.eq({ done = 1, skipped = 1, removed = 1, failed = 0, blocked = 0, notRun = 0 }, res.counts, 'how each subtask ended, the removed one too')
  wait_note('task ' .. id .. ' done: 1 of 3 subtasks done, 1 skipped, 1 removed; no change', 'the end in one line, with the counts')
  R.contains(require('agentls.views').task_lines(ws.state), '[done · 1/3 (1 skipped, 1 removed)]', 'the tasks view')
  R.contains(ws.state:task(id).transcript.lines, '── task done: 1 of 3 subtasks done, 1 skipped, 1 removed · no change ──', 'the transcript')
  local kinds = {}
  for _, u in ipairs(ws.updates) do
    kinds[u.event.kind] = true
  end
  R.truthy(kinds.subtaskAdded and kinds.subtaskRemoved and kinds.subtaskSkipped, 'the events of the three controls')
  vim.cmd('AgentSkip ' .. id .. ' 2')
  wait_note('is done', 'a control on a task that ended is refused')
end)

test(':AgentFollowUp continues a finished task in its session', function()
  local _, ws = workspace({}, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = { { toolCalls = { call('finish', { summary = 'first' }) } } },
      ['2:coordinator'] = { { text = 'One more.' } },
      ['2:1'] = { { toolCalls = { call('finish', { summary = 'second' }) } } },
    },
  })
  local first_id, wait = start(ws, 'First prompt')
  local first = wait()
  vim.cmd('AgentFollowUp ' .. first_id .. ' And a follow-up')
  local second
  R.wait_for(function()
    second = ws.state:list()[1]
    return second.id ~= first_id and second.result
  end, 'the follow-up to end')
  R.eq('And a follow-up', second.prompt, 'prompt')
  R.eq('done', second.result.state, 'state')
  R.eq(first.sessionId, second.result.sessionId, 'the same session')
  R.eq('second', second.result.summary, 'the follow-up ran')
  local continued = false
  for _, u in ipairs(ws.updates) do
    if u.taskId == second.id and u.event.kind == 'sessionContinued' then
      continued = u.event.text == first.sessionId
    end
  end
  R.truthy(continued, 'the server says the session continues')
end)

test(':AgentIntent offers the intents that are not completed and the next task works under the choice', function()
  local root, ws = workspace({
    ['notes.txt'] = 'draft\n',
    ['.orchestration/active_intents.yaml'] = table.concat({
      'active_intents:',
      '  - id: INT-001',
      '    name: Notes',
      '    status: IN_PROGRESS',
      '    owned_scope: ["notes.txt"]',
      '  - id: INT-000',
      '    name: Setup',
      '    status: COMPLETED',
      '    owned_scope: ["go.mod"]',
      '',
    }, '\n'),
  }, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('edit_file', { path = 'notes.txt', old_string = 'draft', new_string = 'final' }) } },
        { toolCalls = { call('finish', { summary = 'noted' }) } },
      },
    },
  })
  local rec = choose(2)
  vim.cmd('AgentIntent')
  R.wait_for(function()
    return ws.intent_id == 'INT-001'
  end, 'the intent chosen')
  R.eq({ 'none', 'INT-001' }, vim.tbl_map(function(i)
    return i.id
  end, rec.items), 'the completed intent is not offered')
  R.eq({ '● none: each worker selects the intent of its subtask', '  INT-001  Notes  (IN_PROGRESS; notes.txt)' }, rec.labels,
    'the current choice marked')
  local _, wait = start(ws, 'Finish the notes')
  R.eq('done', wait().state, 'state')
  R.contains(R.read(root .. '/.orchestration/agent_trace.jsonl'), '"intentId":"INT-001"', 'the change is traced to the intent')
  vim.cmd('AgentIntent INT-000')
  wait_note('is COMPLETED: a completed intent cannot be selected')
  R.eq('INT-001', ws.intent_id, 'the choice is kept')
  vim.cmd('AgentIntent none')
  R.eq(nil, ws.intent_id, 'cleared')
end)

test(':AgentModel picks the model of the next tasks, checks it, and the next run uses it', function()
  local root, ws = workspace({}, {
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = { { toolCalls = { call('finish', { summary = 'by the setting' }) } } },
    },
  })
  R.write(root .. '/other.json', vim.json.encode({ agents = {
    coordinator = { { text = 'One step.' } },
    ['1'] = { { toolCalls = { call('finish', { summary = 'by the other model' }) } } },
  } }))
  local setting = 'script:' .. root .. '/.script.json'
  local rec = choose(2)
  vim.cmd('AgentModel')
  R.wait_for(function()
    return ws.model ~= nil
  end, 'a model chosen', 30000)
  local labels = rec.labels
  R.eq('● default: the model setting (' .. setting .. ')', labels[1], 'the setting, marked as the next run\'s')
  R.contains(labels, '  ' .. setting .. '  (the setting)', 'the listed model')
  R.eq(setting, ws.model, 'chosen')
  wait_note('the script loads', 'the choice is checked')
  vim.cmd('AgentModel script:' .. root .. '/other.json')
  R.eq('script:' .. root .. '/other.json', ws.model, 'chosen by id')
  local _, wait = start(ws, 'Use the other model')
  R.eq('by the other model', wait().summary, 'the next run uses it')
  vim.cmd('AgentCheckModel script:' .. root .. '/missing.json')
  wait_note('missing.json', 'a model that cannot work is said so')
  vim.cmd('AgentModel default')
  R.eq(nil, ws.model, 'back to the setting')
end)

test(':AgentTranscript follows the stream of a running task to its end', function()
  local _, ws = workspace({ ['a.txt'] = 'alpha\n' }, {
    agents = {
      coordinator = { { text = 'Two steps.', toolCalls = { call('plan', { subtasks = {
        { id = '1', content = 'Read a' },
        { id = '2', content = 'Write b', dependsOn = { '1' } },
      } }) } } },
      ['1'] = {
        { text = 'Reading a.txt first.', toolCalls = { call('read_file', { path = 'a.txt' }) } },
        { toolCalls = { call('finish', { summary = 'a read' }) } },
      },
      ['2'] = {
        { delayMs = 300, text = 'Now writing\nb.txt.', toolCalls = { call('write_file', { path = 'b.txt', content = 'beta\n' }) } },
        { toolCalls = { call('finish', { summary = 'b written' }) } },
      },
    },
  })
  local id, wait = start(ws, 'Read a then write b')
  vim.cmd('AgentTranscript')
  local b = vim.api.nvim_get_current_buf()
  R.eq('agentls://transcript/' .. id, vim.api.nvim_buf_get_name(b), 'the running task\'s transcript')
  R.wait_for(function()
    return table.concat(R.buf_lines(b), '\n'):find('Reading a.txt first.', 1, true)
  end, 'the first subtask\'s text while the task runs')
  local res = wait()
  R.eq('done', res.state, 'state')
  R.wait_for(function()
    return table.concat(R.buf_lines(b), '\n'):find('  ✓ create b.txt', 1, true)
  end, 'the changes at the end of the transcript')
  local lines = R.buf_lines(b)
  for _, want in ipairs({ '── task ──', 'Two steps.', '── 1 · Read a ──', 'Reading a.txt first.', '  ✓ read_file a.txt  → alpha',
    '── 2 · Write b ──', 'Now writing', 'b.txt.', '  ✓ write_file b.txt', '  ✎ changed b.txt',
    '── task done: 2 of 2 subtasks done · 1 applied, 0 rejected ──', 'changes:' }) do
    R.contains(lines, want, 'the transcript')
  end
  R.eq(vim.api.nvim_buf_line_count(b), vim.api.nvim_win_get_cursor(0)[1], 'it followed the end')
  for i, l in ipairs(lines) do
    if l:find('write_file b.txt', 1, true) then
      R.eq(i, vim.fn.foldclosed(i + 1), 'the call\'s arguments are folded under it')
      R.eq('        beta', lines[i + 2], 'the content, line by line')
    end
  end
end)

test(':AgentUndo refuses a task whose file the person changed since, ! undoes what can be, and a subtask alone', function()
  local root, ws = workspace({ ['a.txt'] = 'one\n', ['b.txt'] = 'two\n' }, {
    agents = {
      coordinator = { { toolCalls = { call('plan', { subtasks = {
        { id = '1', content = 'Shout a' },
        { id = '2', content = 'Shout b and add c', dependsOn = { '1' } },
      } }) } } },
      ['1'] = {
        { toolCalls = { call('edit_file', { path = 'a.txt', old_string = 'one', new_string = 'ONE' }) } },
        { toolCalls = { call('finish', { summary = 'a shouted' }) } },
      },
      ['2'] = {
        { toolCalls = { call('edit_file', { path = 'b.txt', old_string = 'two', new_string = 'TWO' }) } },
        { toolCalls = { call('write_file', { path = 'c.txt', content = 'three\n' }) } },
        { toolCalls = { call('finish', { summary = 'b shouted, c added' }) } },
      },
    },
  })
  local id, wait = start(ws, 'Shout')
  R.eq('done', wait().state, 'state')
  R.eq({ 'ONE\n', 'TWO\n', 'three\n' }, { R.read(root .. '/a.txt'), R.read(root .. '/b.txt'), R.read(root .. '/c.txt') }, 'the task\'s changes')
  local commands = require('agentls.commands')
  local orig = commands.current_ws
  commands.current_ws = function()
    return ws
  end
  R.eq({ id }, commands.complete_undo('', 'AgentUndo ', 10), 'the tasks that ended')
  R.eq({ '1', '2' }, commands.complete_undo('', 'AgentUndo ' .. id .. ' ', 11 + #id), 'then their subtasks')
  commands.current_ws = orig
  -- The person changes what subtask 1 wrote (the agent's edit left a.txt
  -- in a buffer): the undo of the whole task is refused, and changes
  -- nothing.
  vim.cmd('edit ' .. root .. '/a.txt')
  local a = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(a, 0, -1, false, { 'ONE, mine' })
  vim.cmd('silent write')
  vim.cmd('AgentUndo ' .. id)
  wait_note('task ' .. id .. ' not undone: a.txt: line 1 changed since the task wrote it;')
  wait_note('(:AgentUndo! undoes the files that can be)')
  R.eq({ 'TWO\n', 'three\n' }, { R.read(root .. '/b.txt'), R.read(root .. '/c.txt') }, 'nothing undone')
  -- ! undoes the files that can be.
  vim.cmd('AgentUndo! ' .. id)
  wait_note('task ' .. id .. ' not undone: a.txt: line 1 changed since the task wrote it; restored b.txt, deleted c.txt')
  R.eq({ 'ONE, mine' }, R.buf_lines(a), 'the person\'s line is kept')
  R.eq('two\n', R.read(root .. '/b.txt'), 'b.txt restored')
  R.eq(nil, vim.loop.fs_stat(root .. '/c.txt'), 'the file the task created is gone')
  -- The person takes their line back: subtask 1 alone can be undone.
  vim.api.nvim_buf_set_lines(a, 0, -1, false, { 'ONE' })
  vim.cmd('silent write')
  vim.cmd('AgentUndo ' .. id .. ' 1')
  wait_note('undid subtask 1 of task ' .. id .. ': restored a.txt')
  R.eq({ 'one' }, R.buf_lines(a), 'a.txt is as before the task, in its buffer')
  R.eq('one\n', R.read(root .. '/a.txt'), 'and on disk')
end)

test('attachments, todos, folded thinking and usage with its cost: :AgentAttach, :AgentTasks, :AgentTranscript, :AgentSessions', function()
  -- A PNG of one pixel.
  local pixel = '\137\80\78\71\13\10\26\10\0\0\0\13\73\72\68\82\0\0\0\1\0\0\0\1\8\6\0\0\0\31\21\196\137\0\0\0\13\73\68\65\84\120\218\99\252\207\192\80\15\0\4\133\1\128\132\169\140\33\0\0\0\0\73\69\78\68\174\66\96\130'
  local steps = function(a, b)
    return { todos = { { content = 'Read the selection', status = a }, { content = 'Finish', status = b } } }
  end
  local root, ws = workspace({ ['main.txt'] = 'one\ntwo\nthree\n' }, {
    agents = {
      coordinator = { { thinking = 'One step will do.', text = 'One step.' } },
      ['1'] = {
        { thinking = 'First a checklist,\nthen the work.', toolCalls = { call('todo', steps('in_progress', 'pending')) }, usage = { inputTokens = 1000, outputTokens = 100 } },
        { toolCalls = { call('todo', steps('done', 'in_progress')) } },
        { toolCalls = { call('finish', { summary = 'read it' }) } },
      },
    },
  }, { thinking = true })
  -- The price of the scripted model, so that the cost shows.
  R.write(root .. '/shot.png', pixel)
  agentls.restart()
  assert(agentls.setup({ cmd = bin, model = 'script:' .. root .. '/.script.json', edit_mode = 'apply', thinking = true,
    prices = { ['script:' .. root .. '/.script.json'] = { input = 3, output = 15, contextWindow = 200000 } } }))
  ws = assert(agentls.workspace())
  ws.updates = {}
  local apply = ws.state.task_update
  ws.state.task_update = function(self, p)
    table.insert(ws.updates, p)
    return apply(self, p)
  end

  vim.cmd('edit ' .. root .. '/main.txt')
  vim.cmd('2,3AgentAttach')
  vim.cmd('AgentAttach shot.png')
  R.eq({ 'main.txt:2-3', 'shot.png (image)' }, vim.tbl_map(function(a)
    return agentls.describe(a, root)
  end, agentls.attachments(ws)), 'the attachments of the next task')
  local id, wait = start(ws, 'Read what I attached')
  R.eq({}, agentls.attachments(ws), 'the run took them')
  local res = wait()
  R.eq('done', res.state, 'state')

  local session
  require('agentls.client').request(ws, 'agent/session', { sessionId = res.sessionId }, function(err, r)
    session = r or { error = err }
  end)
  R.wait_for(function()
    return session
  end, 'agent/session')
  R.eq('Read what I attached\n\nAttached: main.txt (lines 2-3), shot.png (image/png, 70 bytes)', session.messages[1].text, 'the server got the selection and the image')

  R.truthy(#events(ws, 'thinking') > 0, 'thinking events')
  R.eq(2, #events(ws, 'todos'), 'todos events')

  vim.cmd('AgentTasks')
  local tb = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    return table.concat(R.buf_lines(tb), '\n'):find('[done · 1/1]', 1, true)
  end, ':AgentTasks to show the end')
  local lines = R.buf_lines(tb)
  R.contains(lines, 'tokens 1000 in / 100 out, $0.0045', 'the task\'s usage and cost')
  R.contains(lines, '      tokens 1000 in / 100 out, $0.0045, context 1000 of 200000 (0%)', 'the subtask\'s usage, cost and context')
  R.contains(lines, '      [x] Read the selection', 'a todo done, under its subtask')
  R.contains(lines, '      [>] Finish', 'a todo in progress')

  vim.cmd('AgentTranscript ' .. id)
  local b = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    return table.concat(R.buf_lines(b), '\n'):find('── task done', 1, true)
  end, 'the transcript to end')
  lines = R.buf_lines(b)
  R.contains(lines, '  ∴ thought (17 characters): One step will do.', 'the coordinator\'s thinking, on one line')
  R.contains(lines, '  ☐ todos: 1 of 2 done', 'the second checklist')
  for i, l in ipairs(lines) do
    if l:find('∴ thought (33 characters): First a checklist, then the work.', 1, true) then
      R.eq(i, vim.fn.foldclosed(i + 1), 'the thinking is folded under its line')
      R.eq('      First a checklist,', lines[i + 1], 'its text, line by line')
      R.eq('      then the work.', lines[i + 2], 'its second line')
    end
  end
  R.contains(lines, '∴ thought (33 characters): First a checklist, then the work.', 'the worker\'s thinking')

  vim.cmd('AgentSessions')
  local sb
  R.wait_for(function()
    sb = vim.api.nvim_get_current_buf()
    return vim.api.nvim_buf_get_name(sb):find('agentls://sessions', 1, true)
  end, 'the sessions view')
  R.contains(R.buf_lines(sb), 'tokens 1000 in / 100 out, $0.0045', 'the session\'s usage and cost')
end)

local fake_agent = os.getenv('AGENTLS_FAKE_AGENT_BIN')

-- fake_engines is the engines setting with the fake ACP agent of
-- engines/enginestest playing steps as engine "fake", in the workspace.
local function fake_engines(steps)
  return { fake = { command = { fake_agent }, env = { AGENTLS_FAKE_AGENT = vim.json.encode(steps) }, isolate = false } }
end

test('engines: a run forced onto one shows it in :AgentTasks, the transcript and :checkhealth; :AgentRun completes engine=', function()
  R.truthy(fake_agent and fake_agent ~= '', 'AGENTLS_FAKE_AGENT_BIN (test/run.sh builds it)')
  local root, ws = workspace({ ['main.txt'] = 'main\n' }, {
    agents = {
      coordinator = { { toolCalls = { call('plan', { subtasks = { { id = '1', content = 'Work on main.txt' } } }) } } },
    },
  }, {
    engines = fake_engines({
      { plan = { 'read main.txt', 'write out.txt' } },
      { read = 'main.txt' },
      { write = 'out.txt', content = 'from the engine\n' },
      { say = 'The engine is done.' },
    }),
  })
  vim.cmd('edit ' .. root .. '/main.txt')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'unsaved in the editor' })

  -- :AgentRun's completion asks the running server for its engines.
  R.eq({ 'engine=agentls', 'engine=fake' }, vim.fn.getcompletion('AgentRun engine=', 'cmdline'), 'engine= completes from agent/engines')
  R.eq({ 'engine=fake' }, vim.fn.getcompletion('AgentRun engine=f', 'cmdline'), 'engine=f completes to the fake engine')
  R.eq({}, vim.fn.getcompletion('AgentRun engine=fake Do', 'cmdline'), 'nothing completes in the prompt')

  local id, wait = start(ws, 'Work on main.txt', { engine = 'fake' })
  local res = wait()
  R.eq('done', res.state, 'state')
  R.eq('fake', res.subtasks[1].engine, 'the subtask ran on the engine forced')
  R.eq('from the engine\n', R.read(root .. '/out.txt'), 'the engine\'s write went through the editor')
  R.eq(1, #events(ws, 'engineStarted'), 'engineStarted events')
  R.eq(1, #events(ws, 'steps'), 'steps events')

  vim.cmd('AgentTasks')
  local tb = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    return table.concat(R.buf_lines(tb), '\n'):find('[done · 1/1]', 1, true)
  end, ':AgentTasks to show the end')
  local lines = R.buf_lines(tb)
  R.contains(lines, '1  Work on main.txt  [fake]', 'the engine after the subtask\'s content')
  R.contains(lines, '      [>] read main.txt', 'the engine\'s steps under its subtask')
  R.contains(lines, '      [ ] write out.txt', 'its second step')

  vim.cmd('AgentTranscript ' .. id)
  local b = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    return table.concat(R.buf_lines(b), '\n'):find('── task done', 1, true)
  end, 'the transcript to end')
  lines = R.buf_lines(b)
  R.contains(lines, '  ▶ on fake: started in ', 'the engine\'s start, on one line')
  R.contains(lines, '  ☰ steps: 0 of 2 done', 'its steps, on one line')
  R.contains(lines, '      [>] read main.txt', 'each step under it')
  R.contains(lines, 'read: unsaved in the editor', 'the engine read the buffer, unsaved text included')

  local report = require('agentls.health').engines_report(agentls.client.request_sync(ws, 'agent/engines', vim.empty_dict(), 10000))
  local fake
  for _, l in ipairs(report) do
    if l.text:find('engine fake', 1, true) then
      fake = l
    end
  end
  R.truthy(fake, ':checkhealth lists the fake engine')
  R.eq('ok', fake.level, 'it is usable')
  R.contains({ fake.text }, 'engine fake: usable (' .. fake_agent .. ', from settings)', 'with its command and where it comes from')
  R.contains(vim.tbl_map(function(l)
    return l.text
  end, report), 'engine claude', 'the built-in engines are listed too')

  vim.cmd('checkhealth agentls')
  R.contains(R.buf_lines(0), 'engine fake: usable', ':checkhealth agentls shows the engines')
end)

test('engines: a run on an engine that cannot be used fails with the server\'s reason', function()
  local _, ws = workspace({}, { agents = { coordinator = { { text = 'One step.' } } } }, {
    engines = { broken = { command = { '/no/such/agent' } } },
  })
  local done, err
  agentls.run('Work', { workspace = ws, engine = 'broken', on_done = function(_, e)
    done, err = true, e
  end })
  R.wait_for(function()
    return done
  end, 'the run to be refused')
  R.contains({ err }, 'engine "broken" cannot be used', 'the error says why')
end)

T.teardown = function()
  agentls.restart()
end

return T
