-- Scratch buffers that show a workspace's tasks, heat map, sessions and
-- trace. Each view is one buffer per workspace, redrawn from its state when
-- the state changes (while the buffer exists).
local state_mod = require('agentls.state')
local transcript = require('agentls.transcript')

local M = {}

local ns = vim.api.nvim_create_namespace('agentls')

-- scratch returns the buffer named name, creating it as a scratch buffer.
local function scratch(name, filetype)
  local b = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\/.*$^~[]') .. '$')
  if b == -1 or not vim.api.nvim_buf_is_valid(b) then
    b = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(b, name)
    vim.bo[b].buftype = 'nofile'
    vim.bo[b].bufhidden = 'hide'
    vim.bo[b].swapfile = false
    vim.bo[b].filetype = filetype
    vim.keymap.set('n', 'q', '<cmd>close<cr>', { buffer = b, nowait = true, desc = 'close' })
  end
  return b
end

-- on_line maps key in buffer b to fn(item) for the item that items() (the
-- view's line map as it is now) holds for the cursor's line; a line without
-- one does nothing.
local function on_line(b, items, key, desc, fn)
  vim.keymap.set('n', key, function()
    local item = items()[vim.api.nvim_win_get_cursor(0)[1]]
    if item then
      fn(item)
    end
  end, { buffer = b, nowait = true, desc = desc })
end

local function set_lines(b, lines)
  vim.bo[b].modifiable = true
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  vim.bo[b].modified = false
end

-- show puts b in a window: the one already showing it, else a new split.
local function show(b, height)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == b then
      vim.api.nvim_set_current_win(w)
      return w
    end
  end
  vim.cmd('botright ' .. tostring(height or 15) .. 'split')
  local w = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(w, b)
  vim.wo[w].number = false
  vim.wo[w].relativenumber = false
  vim.wo[w].wrap = false
  return w
end

-- follow redraws b with render() now and on every change of kind, until b
-- is wiped out.
local function follow(ws, b, kind, render)
  local key = 'agentls_unsubscribe_' .. kind
  local ok, old = pcall(vim.api.nvim_buf_get_var, b, key)
  if ok and type(old) == 'number' and M._unsubscribers[old] then
    M._unsubscribers[old]()
    M._unsubscribers[old] = nil
  end
  local pending = false
  local unsubscribe = ws.state:subscribe(function(k)
    if k ~= kind or pending then
      return
    end
    pending = true
    vim.schedule(function()
      pending = false
      if vim.api.nvim_buf_is_valid(b) then
        render()
      end
    end)
  end)
  M._next = (M._next or 0) + 1
  M._unsubscribers[M._next] = unsubscribe
  vim.api.nvim_buf_set_var(b, key, M._next)
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = b,
    once = true,
    callback = function()
      unsubscribe()
    end,
  })
  render()
end
M._unsubscribers = {}

local marks = {
  pending = '○',
  running = '▶',
  done = '✓',
  failed = '✗',
  skipped = '↷',
  blocked = '⊘',
}

-- task_lines renders the tasks of a workspace; lines[i] -> taskId in the
-- returned map, and -> the subtask id in the third value for the lines of
-- a subtask.
function M.task_lines(st)
  local lines, map, subs = {}, {}, {}
  local function add(s, task_id, sub_id)
    table.insert(lines, s)
    map[#lines] = task_id
    subs[#lines] = sub_id
  end
  add('agentls tasks  ' .. st.root)
  add('  <CR> transcript, s stop, x skip the subtask, D remove it, a add a subtask after it, f follow up, u undo, q close')
  local tasks = st:list()
  if #tasks == 0 then
    add('')
    add('No task yet: :AgentRun {prompt}')
    return lines, map, subs
  end
  for _, t in ipairs(tasks) do
    add('')
    -- An ended task says how its subtasks ended, from the server's counts:
    -- [done · 1/3 (1 skipped, 1 removed)].
    local progress = state_mod.ended(t.state) and transcript.progress(t.subtask_counts)
    add(
      string.format(
        'Task %s  [%s%s]  %s    tokens %s',
        t.id,
        t.state,
        progress and (' · ' .. progress) or '',
        state_mod.compact(t.prompt or ''),
        state_mod.usage_text(t.usage or {})
      ),
      t.id
    )
    if type(t.instructions) == 'table' and #t.instructions > 0 then
      add('  instructions: ' .. state_mod.instructions_text(t.instructions), t.id)
    end
    if t.thinking and t.thinking[''] then
      add('  coordinator thinking…', t.id)
    end
    if t.progress and t.progress.kind ~= 'end' and (t.progress.message or t.progress.percentage) then
      add(string.format('  progress %s%% %s', tostring(t.progress.percentage or 0), t.progress.message or ''), t.id)
    end
    for _, s in ipairs(t.subtasks or {}) do
      local deps = ''
      if type(s.dependsOn) == 'table' and #s.dependsOn > 0 then
        deps = '  (after ' .. table.concat(s.dependsOn, ', ') .. ')'
      end
      -- A subtask run on an engine names it after its content.
      local engine = (type(s.engine) == 'string' and s.engine ~= '') and ('  [' .. s.engine .. ']') or ''
      add(
        string.format('  %s %-8s %s  %s%s%s', marks[s.state] or '?', s.state or '', s.id, state_mod.compact(s.content), engine, deps),
        t.id,
        s.id
      )
      if type(s.usage) == 'table' then
        add('      tokens ' .. state_mod.usage_text(s.usage), t.id, s.id)
      end
      if type(s.todos) == 'table' then
        for _, td in ipairs(s.todos) do
          add('      ' .. state_mod.todo_line(td), t.id, s.id)
        end
      end
      if type(s.steps) == 'table' then
        for _, st in ipairs(s.steps) do
          add('      ' .. state_mod.step_line(st), t.id, s.id)
        end
      end
      if s.state == 'running' and t.thinking and t.thinking[s.id] then
        add('      thinking…', t.id, s.id)
      end
      if s.state == 'running' and t.last_tool and t.last_tool.subtaskId == s.id then
        add(string.format('      last tool: %s %s', t.last_tool.tool or '', t.last_tool.arguments or ''), t.id, s.id)
      end
      if s.error and s.error ~= '' then
        add('      error: ' .. state_mod.compact(s.error), t.id, s.id)
      elseif s.state == 'done' and s.result and s.result ~= '' then
        add('      result: ' .. state_mod.compact(s.result), t.id, s.id)
      end
    end
    if t.question then
      add('  waiting for you: ' .. state_mod.compact(t.question), t.id)
    end
    if not state_mod.ended(t.state) and t.last_tool then
      add(string.format('  last tool call: %s %s', t.last_tool.tool or '', t.last_tool.arguments or ''), t.id)
    end
    local r = t.result
    if r then
      if r.summary and r.summary ~= '' then
        add('  summary: ' .. state_mod.compact(r.summary), t.id)
      end
      for _, c in ipairs(r.changes or {}) do
        add(string.format('  %s %s%s', c.operation or '?', c.path or '?', c.applied and '' or '  (not applied)'), t.id)
      end
    end
    if t.counts then
      add('  changes: ' .. transcript.counts(t.counts.applied, t.counts.rejected), t.id)
    end
    if t.error then
      add('  error: ' .. state_mod.compact(t.error), t.id)
    end
  end
  return lines, map, subs
end

-- tasks opens the live task tree of ws.
function M.tasks(ws, actions)
  local b = scratch('agentls://tasks/' .. ws.root, 'agentls-tasks')
  local map, subs = {}, {}
  local function key(lhs, desc, fn)
    vim.keymap.set('n', lhs, function()
      local line = vim.api.nvim_win_get_cursor(0)[1]
      local id = map[line]
      if id then
        fn(id, subs[line])
      end
    end, { buffer = b, nowait = true, desc = desc })
  end
  key('s', 'stop the task under the cursor', function(id)
    actions.stop(ws, id)
  end)
  key('x', 'skip the subtask under the cursor', function(id, sub)
    actions.skip(ws, id, sub)
  end)
  key('D', 'remove the subtask under the cursor', function(id, sub)
    actions.remove(ws, id, sub)
  end)
  key('a', 'add a subtask to the task, after the subtask under the cursor', function(id, sub)
    actions.add(ws, id, sub)
  end)
  key('f', 'follow up on the task under the cursor', function(id)
    actions.follow_up(ws, id)
  end)
  key('<CR>', 'the transcript of the task under the cursor', function(id)
    actions.transcript(ws, id)
  end)
  key('u', 'undo what the task (or the subtask) under the cursor changed', function(id, sub)
    actions.undo(ws, id, sub)
  end)
  show(b)
  follow(ws, b, 'tasks', function()
    local lines
    lines, map, subs = M.task_lines(ws.state)
    set_lines(b, lines)
  end)
  return b
end

-- transcript shows the live transcript of task t: a scratch buffer that
-- the task's events append to (see agentls.transcript).
function M.transcript(ws, t)
  local name = 'agentls://transcript/' .. t.id
  local b = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\/.*$^~[]') .. '$')
  local fresh = b == -1 or not vim.api.nvim_buf_is_valid(b)
  b = scratch(name, 'agentls-transcript')
  if fresh or not transcript.view(b) then
    transcript.attach(b, t.transcript)
    local unsubscribe = ws.state:subscribe(function(kind, id)
      if kind == 'transcript' and id == t.id then
        transcript.changed(b)
      end
    end)
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = b,
      once = true,
      callback = function()
        unsubscribe()
      end,
    })
    -- Folds are options of a window: every window that shows it gets them.
    vim.api.nvim_create_autocmd('BufWinEnter', {
      buffer = b,
      callback = function()
        transcript.window_options(vim.api.nvim_get_current_win())
      end,
    })
  end
  local w = show(b, 20)
  transcript.window_options(w)
  vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(b), 0 })
  return b, w
end

-- heat_lines renders the hottest files; lines[i] -> path in the map.
function M.heat_lines(st, limit)
  local lines, map = { 'agentls heat  ' .. st.root .. '    (<CR> opens the file, n its neighbours, r refreshes, q closes)', '' }, {}
  local nodes = st:hottest(nil, limit)
  if #nodes == 0 then
    table.insert(lines, 'No file touched yet.')
  end
  for _, n in ipairs(nodes) do
    table.insert(
      lines,
      string.format('%5.2f  %-12s %s %s', n.heat or 0, n.lastAction or '', n.inContext and '*' or ' ', n.path)
    )
    map[#lines] = n.path
  end
  return lines, map
end

-- heat opens the hottest files of ws, refreshed from agent/heatUpdate.
function M.heat(ws, actions, limit)
  local b = scratch('agentls://heat/' .. ws.root, 'agentls-heat')
  local map = {}
  vim.keymap.set('n', '<CR>', function()
    local path = map[vim.api.nvim_win_get_cursor(0)[1]]
    if path then
      actions.open(ws, path)
    end
  end, { buffer = b, nowait = true, desc = 'open the file' })
  vim.keymap.set('n', 'n', function()
    local path = map[vim.api.nvim_win_get_cursor(0)[1]]
    if path then
      actions.neighbours(ws, path)
    end
  end, { buffer = b, nowait = true, desc = 'the files this file references and those that reference it' })
  vim.keymap.set('n', 'r', function()
    actions.heat_refresh(ws)
  end, { buffer = b, nowait = true, desc = 'refresh' })
  show(b)
  follow(ws, b, 'heat', function()
    local lines
    lines, map = M.heat_lines(ws.state, limit)
    set_lines(b, lines)
  end)
  return b
end

-- neighbour_lists returns the files path references and the files that
-- reference it, from an agent/codeGraph answer: lists of { path, count,
-- provenance }, most references first.
function M.neighbour_lists(path, res)
  local uses, used_by = {}, {}
  for _, e in ipairs(res and res.edges or {}) do
    -- File-to-file references edges: a definition's id holds '#'.
    if e.kind == 'references' and not e.from:find('#', 1, true) and not e.to:find('#', 1, true) then
      if e.from == path and e.to ~= path then
        table.insert(uses, { path = e.to, count = e.count or 1, provenance = e.provenance })
      elseif e.to == path and e.from ~= path then
        table.insert(used_by, { path = e.from, count = e.count or 1, provenance = e.provenance })
      end
    end
  end
  local function order(a, b)
    if a.count ~= b.count then
      return a.count > b.count
    end
    return a.path < b.path
  end
  table.sort(uses, order)
  table.sort(used_by, order)
  return uses, used_by
end

-- neighbour_lines renders a file's neighbours; lines[i] -> path in the
-- map. view is { path, res } once the answer came, { path, err, code }
-- after an error, { path } while agent/codeGraph has not answered (the
-- server answers once the graph is built).
function M.neighbour_lines(root, view)
  local lines, map = {
    'agentls neighbours  ' .. view.path .. '    (<CR> opens the file, n its neighbours, r refreshes, q closes)',
    '',
  }, {}
  if view.err then
    if view.code == -32602 then
      table.insert(lines, view.path .. ' is not a file of the code graph of ' .. root .. ':')
      table.insert(lines, '  ' .. view.err)
    else
      table.insert(lines, 'The code graph could not answer: ' .. view.err)
    end
    return lines, map
  end
  if not view.res then
    table.insert(lines, 'Asking the code graph… (it answers once it is built: on a large workspace, after a while)')
    return lines, map
  end
  local uses, used_by = M.neighbour_lists(view.path, view.res)
  local function section(title, list)
    table.insert(lines, title)
    if #list == 0 then
      table.insert(lines, '  none')
    end
    for _, n in ipairs(list) do
      local how = M.provenance_words[n.provenance]
      table.insert(lines, string.format('  %4d  %s', n.count, n.path) .. (how and ('  (' .. how .. ')') or ''))
      map[#lines] = n.path
    end
  end
  section('References (the files ' .. view.path .. ' uses, references each):', uses)
  table.insert(lines, '')
  section('Referenced by (the files that use ' .. view.path .. ', references each):', used_by)
  if view.res.truncated then
    table.insert(lines, '')
    table.insert(lines, '(the graph cut its answer short: not every neighbour is listed)')
  end
  return lines, map
end

-- provenance_words say how the references of an edge were found
-- (docs/PROTOCOL.md §3, agent/codeGraph).
M.provenance_words = {
  lsp = 'language server',
  resolved = 'resolved by the graph',
  name = 'by name: a guess',
}

-- neighbours shows the neighbours of a file of ws; fetch(path, done) asks
-- agent/codeGraph and calls done(err, res, code). The buffer shows one file
-- at a time: an answer for a file no longer shown is dropped.
function M.neighbours(ws, path, actions, fetch)
  local b = scratch('agentls://neighbours/' .. ws.root, 'agentls-neighbours')
  local map = {}
  local function render()
    local view = M._neighbours[b]
    if view and vim.api.nvim_buf_is_valid(b) then
      local lines
      lines, map = M.neighbour_lines(ws.root, view)
      set_lines(b, lines)
    end
  end
  local function load(p)
    local this = { path = p }
    M._neighbours[b] = this
    render()
    fetch(p, function(err, res, code)
      if M._neighbours[b] ~= this then
        return
      end
      this.err, this.res, this.code = err, res, code
      render()
    end)
  end
  local function lines_map()
    return map
  end
  on_line(b, lines_map, '<CR>', 'open the file', function(p)
    actions.open(ws, p)
  end)
  on_line(b, lines_map, 'n', 'the neighbours of the file under the cursor', function(p)
    load(p)
  end)
  vim.keymap.set('n', 'r', function()
    load(M._neighbours[b].path)
  end, { buffer = b, nowait = true, desc = 'ask the code graph again' })
  if not M._neighbours[b] then
    vim.api.nvim_create_autocmd('BufWipeout', {
      buffer = b,
      once = true,
      callback = function()
        M._neighbours[b] = nil
      end,
    })
  end
  show(b)
  load(path)
  return b
end
-- The file each neighbours buffer shows, and its answer.
M._neighbours = {}

-- sessions lists sessions (newest first): <CR> shows one, c continues it,
-- d deletes it.
function M.sessions(ws, sessions, actions)
  local b = scratch('agentls://sessions/' .. ws.root, 'agentls-sessions')
  local lines, map = { 'agentls sessions  ' .. ws.root .. '    (<CR> show, c continue, d delete, q close)', '' }, {}
  if #sessions == 0 then
    table.insert(lines, 'No session yet.')
  end
  for _, s in ipairs(sessions) do
    table.insert(lines, string.format('%s  %s  %s    tokens %s', s.updatedAt or '', s.sessionId, state_mod.compact(s.title or ''), state_mod.usage_text(s.usage or {})))
    map[#lines] = s.sessionId
    for _, t in ipairs(s.tasks or {}) do
      table.insert(lines, string.format('    [%s] %s    tokens %s', t.state or '', state_mod.compact(t.prompt or ''), state_mod.usage_text(t.usage or {})))
      map[#lines] = s.sessionId
    end
  end
  set_lines(b, lines)
  local function lines_map()
    return map
  end
  on_line(b, lines_map, '<CR>', 'show the session', function(id)
    actions.session(ws, id)
  end)
  on_line(b, lines_map, 'c', 'continue the session', function(id)
    actions.continue(ws, id)
  end)
  on_line(b, lines_map, 'd', 'delete the session', function(id)
    actions.delete(ws, id)
  end)
  show(b)
  return b
end

-- session shows one session's messages.
function M.session(ws, s)
  local b = scratch('agentls://session/' .. s.sessionId, 'agentls-session')
  local lines = { 'agentls session ' .. s.sessionId .. '  ' .. (s.title or ''), '' }
  for _, m in ipairs(s.messages or {}) do
    local who = m.role .. (m.subtaskId and m.subtaskId ~= '' and (' [' .. m.subtaskId .. ']') or '')
    table.insert(lines, string.format('%s  %s  (task %s)', m.time or '', who, m.taskId or ''))
    for _, l in ipairs(vim.split(m.text or '', '\n', { plain = true })) do
      table.insert(lines, '    ' .. l)
    end
  end
  set_lines(b, lines)
  show(b)
  return b
end

-- trace_lines renders agent/trace entries.
function M.trace_lines(path, line, entries)
  local lines = { string.format('agentls trace  %s%s', path, line and (':' .. line) or '') }
  if #entries == 0 then
    table.insert(lines, 'No agent change recorded here.')
  end
  for _, e in ipairs(entries) do
    table.insert(lines, '')
    local intent = (e.intentId and e.intentId ~= vim.NIL) and e.intentId or '-'
    table.insert(lines, string.format('%s  %s  %s', e.time or '', e.operation or '', e.model or ''))
    table.insert(lines, string.format('  intent %s  session %s  task %s  subtask %s', intent, e.sessionId or '', e.taskId or '', e.subtaskId or ''))
    local spans = {}
    for _, r in ipairs(e.ranges or {}) do
      table.insert(spans, string.format('%d-%d', r.startLine or 0, r.endLine or 0))
    end
    if #spans > 0 then
      table.insert(lines, '  lines ' .. table.concat(spans, ', '))
    end
    table.insert(lines, '  entry ' .. (e.id or '') .. '  ' .. (e.fileHash or ''))
  end
  return lines
end

-- trace shows entries in a floating window by the cursor; it returns the
-- float's buffer and window.
function M.trace(path, line, entries)
  local lines = M.trace_lines(path, line, entries)
  local b, w = vim.lsp.util.open_floating_preview(lines, 'text', { border = 'single', focus_id = 'agentls-trace' })
  if b then
    vim.api.nvim_buf_add_highlight(b, ns, 'Title', 0, 0, -1)
  end
  return b, w
end

return M
