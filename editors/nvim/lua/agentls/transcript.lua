-- The transcript of a task: what the model streamed (messageDelta), each
-- tool call on one line with its arguments folded under it, the changes,
-- questions, commands and the end. A document (lines and fold levels) is
-- built from every agent/taskUpdate of the task, whether a buffer shows it
-- or not; :AgentTranscript shows it in a scratch buffer that follows the
-- stream.
--
-- Fast streams: a document only appends to its last lines (and rewrites the
-- line of a tool call when its result comes); the buffer is written at most
-- once per flush interval, with only what changed since the last flush.
local M = {}

-- Milliseconds between two writes of a transcript buffer: events that
-- arrive meanwhile are written together.
M.interval = 30

-- Most lines of one argument shown under a tool call (a file's content).
M.max_detail_lines = 200

local Doc = {}
Doc.__index = Doc

local function one_line(v, max)
  v = tostring(v or ''):gsub('%s+', ' ')
  max = max or 100
  if #v > max then
    v = v:sub(1, max - 3) .. '...'
  end
  return v
end

-- new returns the document of a task. subtasks gives the content of a
-- subtask by id, for the headers (it is called when a header is written).
function M.new(task_id, prompt)
  local self = setmetatable({
    task_id = task_id,
    lines = {},
    levels = {},
    speaker = nil, -- the subtask id of the last block ('' for the task)
    open = false, -- the last line is text of the speaker, to append to
    streamed = {}, -- speaker -> text streamed since its last message event
    thinking = {}, -- speaker -> its thinking streamed so far, shown folded when it ends
    tools = {}, -- speaker -> FIFO of { line, tool } waiting for their result
    contents = {}, -- subtask id -> content
    steps = {}, -- subtask id -> its engine's own plan, as the update's subtasks give it
    dirty = nil, -- line index -> true, rewritten since the last flush (nil: not tracked)
    ended = false,
  }, Doc)
  self:push('')
  self:retitle(prompt)
  self:push('(q close, zo/zc open/close a tool call, zR/zM all; the view follows the end while the cursor is on the last line)')
  return self
end

function Doc:retitle(prompt)
  self.lines[1] = string.format('agentls transcript  task %s  %s', self.task_id, one_line(prompt, 80))
  self:touch(1)
end

function Doc:push(line, level)
  local n = #self.lines + 1
  self.lines[n] = line
  self.levels[n] = level or '0'
end

-- touch marks line i as changed after it was written.
function Doc:touch(i)
  if self.dirty then
    self.dirty[i] = true
  end
end

function Doc:close_text()
  self.open = false
end

function Doc:header(speaker)
  if speaker == '' then
    return '── task ──'
  end
  local content = self.contents[speaker]
  if content and content ~= '' then
    return string.format('── %s · %s ──', speaker, one_line(content, 80))
  end
  return string.format('── %s ──', speaker)
end

-- block makes speaker's block the current one: a blank line and a header
-- when another speaker wrote last.
function Doc:block(speaker)
  if self.speaker == speaker then
    return
  end
  self:close_text()
  self.speaker = speaker
  self:push('')
  self:push(self:header(speaker))
end

-- text appends streamed text to speaker's block.
function Doc:text(speaker, s)
  if s == nil or s == '' then
    return
  end
  self:block(speaker)
  if not self.open then
    self:push('')
    self.open = true
  end
  local parts = vim.split(s, '\n', { plain = true })
  local n = #self.lines
  self.lines[n] = self.lines[n] .. parts[1]
  self:touch(n)
  for i = 2, #parts do
    self:push(parts[i])
  end
end

-- line appends a line of its own (an event) to speaker's block.
function Doc:line(speaker, s, level)
  self:block(speaker)
  self:close_text()
  self:push(s, level)
end

-- details appends the folded lines under a tool call or a change.
function Doc:details(lines)
  for i, l in ipairs(lines) do
    if i > M.max_detail_lines then
      self:push(string.format('        … %d more lines', #lines - M.max_detail_lines), '1')
      return
    end
    self:push(l, '1')
  end
end

local function decode(v)
  if type(v) == 'string' then
    local ok, d = pcall(vim.json.decode, v)
    if ok then
      return d
    end
  end
  return v
end

-- brief says what a tool call does, in a few words.
local function brief(tool, args)
  if type(args) ~= 'table' then
    return tool
  end
  local key = ({
    read_file = 'path', write_file = 'path', edit_file = 'path', delete_file = 'path',
    list_files = 'pattern', search_files = 'regex', run_command = 'command',
    ask_human = 'question', select_intent = 'intentId', finish = 'summary',
  })[tool]
  local v = key and args[key]
  if type(v) == 'string' then
    return tool .. ' ' .. one_line(v, 80)
  end
  local ok, s = pcall(vim.json.encode, args)
  return tool .. ' ' .. one_line(ok and s or '', 80)
end

-- argument_lines are a tool call's arguments, one per line, long text
-- (a file's content) on lines of its own.
local function argument_lines(args)
  local out = {}
  if type(args) ~= 'table' then
    return out
  end
  local keys = vim.tbl_keys(args)
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(keys) do
    local v = args[k]
    if type(v) == 'string' and v:find('\n', 1, true) then
      table.insert(out, '      ' .. tostring(k) .. ':')
      for _, l in ipairs(vim.split(v:gsub('\n$', ''), '\n', { plain = true })) do
        table.insert(out, '        ' .. l)
      end
    else
      local ok, s = pcall(vim.json.encode, v)
      table.insert(out, '      ' .. tostring(k) .. ': ' .. (ok and s or tostring(v)))
    end
  end
  return out
end

-- think ends speaker's block of thinking: one line, folded over its text.
function Doc:think(speaker)
  local text = self.thinking[speaker]
  self.thinking[speaker] = nil
  if not text or vim.trim(text) == '' then
    return
  end
  self:line(speaker, string.format('  ∴ thought (%d characters): %s', vim.fn.strchars(text), one_line(text, 100)), '>1')
  local lines = {}
  for _, l in ipairs(vim.split(vim.trim(text), '\n', { plain = true })) do
    table.insert(lines, '      ' .. l)
  end
  self:details(lines)
end

-- event applies one agent/taskUpdate event; subtasks is the update's list.
function Doc:event(e, subtasks)
  if type(subtasks) == 'table' then
    for _, s in ipairs(subtasks) do
      if type(s) == 'table' and s.id then
        self.contents[s.id] = s.content
        self.steps[s.id] = s.steps
      end
    end
  end
  if type(e) ~= 'table' or self.ended then
    return
  end
  local sub = type(e.subtaskId) == 'string' and e.subtaskId or ''
  local k = e.kind
  if k == 'thinking' then
    if type(e.text) == 'string' then
      self.thinking[sub] = (self.thinking[sub] or '') .. e.text
    end
    return
  end
  -- A block of thinking ends at its agent's next text or tool call, or
  -- when the agent or the task ends.
  if k == 'messageDelta' or k == 'message' or k == 'toolCall' or k == 'subtaskFinished' then
    self:think(sub)
  elseif k == 'stateChanged' and (e.state == 'done' or e.state == 'failed' or e.state == 'stopped') then
    for _, speaker in ipairs(vim.tbl_keys(self.thinking)) do
      self:think(speaker)
    end
  end
  if k == 'todos' then
    local todos = type(e.todos) == 'table' and e.todos or {}
    local done = 0
    local lines = {}
    for _, td in ipairs(todos) do
      done = done + (td.status == 'done' and 1 or 0)
      table.insert(lines, '      ' .. require('agentls.state').todo_line(td))
    end
    if #todos == 0 then
      self:line(sub, '  ☐ todos cleared')
    else
      self:line(sub, string.format('  ☐ todos: %d of %d done', done, #todos), '>1')
      self:details(lines)
    end
  elseif k == 'engineStarted' then
    self:line(sub, string.format('  ▶ on %s: %s', tostring(e.text), e.summary or 'started'))
  elseif k == 'instructions' then
    self:line(sub, '  ⓘ instructions: ' .. require('agentls.state').instructions_text(e.instructions))
  elseif k == 'compacted' then
    self:line(
      sub,
      string.format('  ⇣ context compacted: %d → %d tokens', tonumber(e.tokensBefore) or 0, tonumber(e.tokensAfter) or 0),
      '>1'
    )
    if type(e.text) == 'string' and e.text ~= '' then
      self:details({ '      ' .. e.text })
    end
  elseif k == 'steps' then
    -- The engine's own plan is the update's subtask's steps.
    local steps = type(self.steps[sub]) == 'table' and self.steps[sub] or {}
    local done = 0
    local lines = {}
    for _, st in ipairs(steps) do
      done = done + (st.status == 'completed' and 1 or 0)
      table.insert(lines, '      ' .. require('agentls.state').step_line(st))
    end
    if #steps == 0 then
      self:line(sub, '  ☰ steps cleared')
    else
      self:line(sub, string.format('  ☰ steps: %d of %d done', done, #steps), '>1')
      self:details(lines)
    end
  elseif k == 'messageDelta' then
    if type(e.text) == 'string' then
      self.streamed[sub] = (self.streamed[sub] or '') .. e.text
      self:text(sub, e.text)
    end
  elseif k == 'message' then
    -- The whole text of a turn whose deltas came before: shown already.
    -- Text that was not streamed (a server without deltas, a note of the
    -- server's own) is shown now.
    local streamed = self.streamed[sub] or ''
    self.streamed[sub] = nil
    local text = type(e.text) == 'string' and e.text or ''
    if text ~= '' and streamed:sub(-#text) ~= text then
      self:close_text()
      self:text(sub, text)
    end
    self:close_text()
  elseif k == 'planned' then
    self:line('', '  plan:')
    for _, l in ipairs(vim.split(e.text or '', '\n', { plain = true })) do
      if l ~= '' then
        self:push('    ' .. l)
      end
    end
  elseif k == 'subtaskStarted' then
    self.contents[sub] = e.text or self.contents[sub]
    self:block(sub)
  elseif k == 'toolCall' then
    local args = decode(e.arguments)
    self:line(sub, '  ⚙ ' .. brief(e.tool or '?', args), '>1')
    self.tools[sub] = self.tools[sub] or {}
    table.insert(self.tools[sub], { line = #self.lines, tool = e.tool })
    self:details(argument_lines(args))
  elseif k == 'toolResult' then
    local queue = self.tools[sub] or {}
    for i, t in ipairs(queue) do
      if t.tool == e.tool then
        table.remove(queue, i)
        local mark = e.ok == false and '✗' or '✓'
        local l = self.lines[t.line]:gsub('^  ⚙', '  ' .. mark, 1)
        if type(e.summary) == 'string' and e.summary ~= '' then
          l = l .. '  → ' .. one_line(e.summary, 100)
        end
        self.lines[t.line] = l
        self:touch(t.line)
        return
      end
    end
  elseif k == 'ask' then
    local opts = ''
    if type(e.options) == 'table' and #e.options > 0 then
      opts = '  [' .. table.concat(e.options, ' / ') .. ']'
    end
    self:line(sub, '  ? ' .. one_line(e.question or e.text, 200) .. opts)
  elseif k == 'answered' then
    local a = (e.answer == nil or e.answer == vim.NIL) and '(no answer)' or tostring(e.answer)
    self:line(sub, '  ↳ ' .. one_line(a, 200))
  elseif k == 'blocked' then
    self:line(sub, string.format('  ⊘ blocked %s: %s', e.path or '', one_line(e.reason, 160)))
  elseif k == 'changeApplied' then
    local why = (type(e.reason) == 'string' and e.reason ~= '') and ('  (' .. one_line(e.reason, 120) .. ')') or ''
    self:line(sub, '  ✎ changed ' .. tostring(e.path) .. why)
  elseif k == 'changeHeld' then
    self:line(sub, '  ⏸ held ' .. tostring(e.path) .. ' for the review at the end')
  elseif k == 'changeRejected' then
    self:line(sub, string.format('  ✗ not changed %s: %s', tostring(e.path), one_line(e.reason, 160)))
  elseif k == 'commandStarted' then
    self:line(sub, '  $ ' .. one_line(e.text, 160))
  elseif k == 'commandFinished' then
    self:line(sub, string.format('  $ %s → %s', one_line(e.text, 120), e.summary or (e.ok and 'ok' or 'failed')))
  elseif k == 'subtaskFinished' then
    local state, detail = e.state, e.reason or e.summary
    for _, s in ipairs(type(subtasks) == 'table' and subtasks or {}) do
      if s.id == sub then
        state = state or s.state
        detail = detail or s.error or s.result
      end
    end
    local mark = ({ done = '✓', failed = '✗', skipped = '↷', blocked = '⊘' })[state] or '•'
    self:line(sub, string.format('  %s %s%s', mark, state or 'finished', detail and (': ' .. one_line(detail, 160)) or ''))
  elseif k == 'subtaskAdded' then
    self.contents[sub] = e.text or self.contents[sub]
    self:line('', string.format('  + subtask %s added: %s', sub, one_line(e.text, 120)))
  elseif k == 'subtaskRemoved' then
    self:line('', string.format('  − subtask %s removed', sub))
  elseif k == 'subtaskSkipped' then
    self:line('', string.format('  ↷ subtask %s skipped', sub))
  elseif k == 'intentSelected' then
    self:line(sub, '  intent ' .. tostring(e.text))
  elseif k == 'sessionContinued' then
    self:line('', '  continues session ' .. tostring(e.text))
  elseif k == 'stateChanged' and (e.state == 'done' or e.state == 'failed' or e.state == 'stopped') then
    self:finish({ state = e.state, summary = e.summary, applied = e.applied, rejected = e.rejected, counts = e.counts })
  end
end

-- subtask_counts says how an ended task's subtasks ended, from the
-- server's counts (every subtask it had, the removed ones too): "1 of 3
-- subtasks done, 1 skipped, 1 removed"; nil without counts (an older
-- server) or without a subtask (planning failed).
function M.subtask_counts(c)
  local total = M.subtask_total(c)
  if total == 0 then
    return nil
  end
  local function n(k)
    return tonumber(c[k]) or 0
  end
  local parts = { string.format('%d of %d %s done', n('done'), total, total == 1 and 'subtask' or 'subtasks') }
  for _, kw in ipairs({ { 'skipped', 'skipped' }, { 'removed', 'removed' }, { 'failed', 'failed' }, { 'blocked', 'blocked' }, { 'notRun', 'not run' } }) do
    if n(kw[1]) > 0 then
      table.insert(parts, string.format('%d %s', n(kw[1]), kw[2]))
    end
  end
  return table.concat(parts, ', ')
end

-- subtask_total is how many subtasks the counts c count (0 without c).
function M.subtask_total(c)
  if type(c) ~= 'table' then
    return 0
  end
  local total = 0
  for _, k in ipairs({ 'done', 'skipped', 'removed', 'failed', 'blocked', 'notRun' }) do
    total = total + (tonumber(c[k]) or 0)
  end
  return total
end

-- progress says the same in a few characters: "1/3 (1 skipped, 1 removed)".
function M.progress(c)
  local words = M.subtask_counts(c)
  if not words then
    return nil
  end
  local done, total, rest = words:match('^(%d+) of (%d+) %a+ done,? ?(.*)$')
  return string.format('%s/%s', done, total) .. (rest ~= '' and (' (' .. rest .. ')') or '')
end

-- counts says how many changes were applied and rejected.
function M.counts(applied, rejected)
  applied, rejected = tonumber(applied) or 0, tonumber(rejected) or 0
  if applied == 0 and rejected == 0 then
    return 'no change'
  end
  return string.format('%d applied, %d rejected', applied, rejected)
end

-- finish ends the transcript with the task's end (the last stateChanged,
-- or the run's result, whichever comes first) and, from the result, the
-- changes with their diffs folded.
function Doc:finish(r)
  if not self.finished_state then
    self.finished_state = r.state
    self:close_text()
    self.speaker = nil
    self:push('')
    local ended = M.subtask_counts(r.counts)
    self:push(string.format('── task %s: %s%s ──', tostring(r.state), ended and (ended .. ' · ') or '', M.counts(r.applied, r.rejected)))
    for _, l in ipairs(vim.split(r.summary or '', '\n', { plain = true })) do
      if l ~= '' then
        self:push('  ' .. l)
      end
    end
  end
  if type(r.changes) == 'table' and not self.changes_listed then
    self.changes_listed = true
    if #r.changes > 0 then
      self:push('')
      self:push('changes:')
    end
    for _, c in ipairs(r.changes) do
      self:push(string.format('  %s %s %s%s', c.applied and '✓' or '✗', c.operation or '?', c.path or '?', c.applied and '' or '  (not applied)'), '>1')
      local diff = {}
      for _, l in ipairs(vim.split((c.diff or ''):gsub('\n$', ''), '\n', { plain = true })) do
        table.insert(diff, '      ' .. l)
      end
      self:details(diff)
    end
    self.ended = true
  end
end

-- result applies the reply to agent/run.
function Doc:result(res)
  if type(res) ~= 'table' then
    return
  end
  local applied, rejected = res.applied, res.rejected
  if applied == nil and type(res.changes) == 'table' then
    applied, rejected = 0, 0
    for _, c in ipairs(res.changes) do
      if c.applied then
        applied = applied + 1
      else
        rejected = rejected + 1
      end
    end
  end
  self:finish({ state = res.state, summary = res.summary, applied = applied, rejected = rejected, counts = res.counts, changes = res.changes or {} })
end

M.Doc = Doc

-- ---- the buffer ----

local views = {} -- bufnr -> { doc, pending, flushes }

-- foldexpr and foldtext are the transcript window's; the document of the
-- buffer being folded gives the level.
function M.foldexpr(lnum)
  local v = views[vim.api.nvim_get_current_buf()]
  return v and v.doc.levels[lnum] or '0'
end

function M.foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return string.format('%s  [+%d]', first, vim.v.foldend - vim.v.foldstart)
end

-- flush writes what changed in the document since the last flush, and
-- keeps the windows that were on the last line there.
local function flush(b)
  local v = views[b]
  if not v or not vim.api.nvim_buf_is_valid(b) then
    return
  end
  v.pending = false
  local doc = v.doc
  local n = #doc.lines
  local follow = {}
  local count = vim.api.nvim_buf_line_count(b)
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_buf(w) == b and vim.api.nvim_win_get_cursor(w)[1] >= count then
      table.insert(follow, w)
    end
  end
  vim.bo[b].modifiable = true
  for i in pairs(doc.dirty) do
    if i <= v.written then
      vim.api.nvim_buf_set_lines(b, i - 1, i, false, { doc.lines[i] })
    end
  end
  if n > v.written then
    local tail = {}
    for i = v.written + 1, n do
      tail[#tail + 1] = doc.lines[i]
    end
    local start = v.written
    if v.written == 0 then
      vim.api.nvim_buf_set_lines(b, 0, -1, false, tail)
    else
      vim.api.nvim_buf_set_lines(b, start, start, false, tail)
    end
  end
  vim.bo[b].modifiable = false
  vim.bo[b].modified = false
  doc.dirty = {}
  v.written = n
  v.flushes = v.flushes + 1
  for _, w in ipairs(follow) do
    vim.api.nvim_win_set_cursor(w, { n, 0 })
  end
end
M.flush = flush

-- changed is called when the document of b changed: one flush comes after
-- M.interval, however many changes arrive meanwhile.
function M.changed(b)
  local v = views[b]
  if not v or v.pending then
    return
  end
  v.pending = true
  vim.defer_fn(function()
    flush(b)
  end, M.interval)
end

-- attach makes b show doc (written whole at the next flush).
function M.attach(b, doc)
  views[b] = { doc = doc, pending = false, written = 0, flushes = 0 }
  doc.dirty = {}
  vim.api.nvim_create_autocmd('BufWipeout', {
    buffer = b,
    once = true,
    callback = function()
      views[b] = nil
      doc.dirty = nil
    end,
  })
  flush(b)
end

-- view returns the view state of b (for tests: flushes counts the writes).
function M.view(b)
  return views[b]
end

-- window_options sets the folds of a window showing a transcript.
function M.window_options(w)
  vim.wo[w].foldmethod = 'expr'
  vim.wo[w].foldexpr = "v:lua.require'agentls.transcript'.foldexpr(v:lnum)"
  vim.wo[w].foldtext = "v:lua.require'agentls.transcript'.foldtext()"
  vim.wo[w].foldlevel = 0
  vim.wo[w].foldenable = true
  vim.wo[w].wrap = true
  vim.wo[w].linebreak = true
end

return M
