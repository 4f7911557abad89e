-- What one workspace's client knows about its tasks and its heat map, built
-- from agent/run results and the agent/taskUpdate, agent/heatUpdate and
-- $/progress notifications. Views subscribe to changes.
local transcript = require('agentls.transcript')

local M = {}

local State = {}
State.__index = State

function M.new(root)
  return setmetatable({
    root = root,
    tasks = {}, -- taskId -> task
    order = {}, -- taskIds, oldest first
    heat = {}, -- view ('' for the workspace, else a taskId) -> { seq, nodes = { path -> HeatNode } }
    listeners = {},
    waiting_for_person = 0,
    pending_notify = false,
  }, State)
end

-- subscribe registers fn(kind, task_id) for 'tasks', 'heat' and
-- 'transcript' changes (task_id: the task whose transcript changed); it
-- returns a function that unsubscribes.
function State:subscribe(fn)
  local key = {}
  self.listeners[key] = fn
  return function()
    self.listeners[key] = nil
  end
end

function State:changed(kind, task_id)
  for _, fn in pairs(self.listeners) do
    local ok, err = pcall(fn, kind, task_id)
    if not ok then
      vim.notify('agentls: view refresh failed: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

local function new_task(id, prompt)
  return {
    id = id,
    prompt = prompt,
    state = 'planning',
    seq = 0,
    subtasks = {},
    session_id = nil,
    last_tool = nil, -- { subtaskId, tool, arguments }
    last_message = nil,
    question = nil,
    usage = { inputTokens = 0, outputTokens = 0 }, -- and cost, when known
    thinking = {}, -- agent ('' the coordinator, else a subtask id) -> true while it thinks
    progress = nil, -- { title, message, percentage }
    result = nil,
    error = nil,
    counts = nil, -- { applied, rejected } from the stateChanged that ended it
    subtask_counts = nil, -- how its subtasks ended (the server's counts), once it has
    started = vim.loop.now(),
    transcript = transcript.new(id, prompt),
  }
end

function State:task(id)
  return self.tasks[id]
end

-- tasks returns the tasks, newest first.
function State:list()
  local out = {}
  for i = #self.order, 1, -1 do
    table.insert(out, self.tasks[self.order[i]])
  end
  return out
end

-- running returns the newest task that has not ended.
function State:running()
  for _, t in ipairs(self:list()) do
    if not M.ended(t.state) then
      return t
    end
  end
  return nil
end

local ended = { done = true, failed = true, stopped = true, interrupted = true }
function M.ended(state)
  return ended[state] == true
end

function State:ensure_task(id, prompt)
  local t = self.tasks[id]
  if not t then
    t = new_task(id, prompt)
    self.tasks[id] = t
    table.insert(self.order, id)
  elseif prompt and not t.prompt then
    t.prompt = prompt
    t.transcript:retitle(prompt)
  end
  return t
end

-- task_started records a run the editor started, before any notification.
function State:task_started(id, prompt, session_id)
  local t = self:ensure_task(id, prompt)
  t.session_id = session_id
  self:changed('tasks')
  return t
end

local function compact(v)
  if v == nil or v == vim.NIL then
    return ''
  end
  if type(v) == 'table' then
    local ok, s = pcall(vim.json.encode, v)
    v = ok and s or vim.inspect(v)
  end
  v = tostring(v):gsub('%s+', ' ')
  if #v > 80 then
    v = v:sub(1, 77) .. '...'
  end
  return v
end
M.compact = compact

-- usage_text says what a usage counts: "1200 in (800 cached) / 34 out,
-- $0.0123, context 1200 of 200000 (0%)"; what the provider's cache read,
-- the cost and the context only when known.
function M.usage_text(u)
  if type(u) ~= 'table' then
    return ''
  end
  local cached = ''
  if (tonumber(u.cacheReadTokens) or 0) > 0 then
    cached = string.format(' (%d cached)', tonumber(u.cacheReadTokens))
  end
  local s = string.format('%d in%s / %d out', tonumber(u.inputTokens) or 0, cached, tonumber(u.outputTokens) or 0)
  if tonumber(u.cost) then
    s = s .. string.format(', $%.4f', tonumber(u.cost))
  end
  local ctx, window = tonumber(u.contextTokens) or 0, tonumber(u.contextWindow) or 0
  if ctx > 0 and window > 0 then
    s = s .. string.format(', context %d of %d (%d%%)', ctx, window, math.floor(ctx * 100 / window))
  elseif ctx > 0 then
    s = s .. string.format(', context %d', ctx)
  end
  return s
end

-- instructions_text names the project's instruction files of an
-- instructions event: "AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 30
-- tokens), web/CLAUDE.md (left out)"; "none" for an empty list.
function M.instructions_text(files)
  if type(files) ~= 'table' or #files == 0 then
    return 'none'
  end
  local parts = {}
  for _, f in ipairs(files) do
    local tokens = tonumber(f.tokens) or 0
    if f.cut and tokens > 0 then
      table.insert(parts, string.format('%s (cut at %d tokens)', tostring(f.path), tokens))
    elseif f.cut then
      table.insert(parts, string.format('%s (left out)', tostring(f.path)))
    else
      table.insert(parts, string.format('%s (%d tokens)', tostring(f.path), tokens))
    end
  end
  return table.concat(parts, ', ')
end

local todo_marks = { done = '[x]', in_progress = '[>]' }

-- todo_line is one step of a checklist: "[x] Add greet".
function M.todo_line(td)
  return (todo_marks[td.status] or '[ ]') .. ' ' .. compact(td.content)
end

local step_marks = { completed = '[x]', in_progress = '[>]' }

-- step_line is one step of an engine's own plan: "[>] write greet".
function M.step_line(st)
  return (step_marks[st.status] or '[ ]') .. ' ' .. compact(st.content)
end

-- task_update applies an agent/taskUpdate. An update older than one already
-- applied (seq rises by one per notification of a task) is ignored.
function State:task_update(p)
  if type(p.taskId) ~= 'string' then
    return
  end
  local t = self:ensure_task(p.taskId)
  if type(p.seq) == 'number' then
    if p.seq <= t.seq then
      return
    end
    t.seq = p.seq
  end
  if t.result then
    return -- the run's result is final
  end
  if type(p.state) == 'string' then
    t.state = p.state
  end
  if type(p.sessionId) == 'string' then
    t.session_id = p.sessionId
  end
  if type(p.subtasks) == 'table' then
    t.subtasks = p.subtasks
  end
  local e = type(p.event) == 'table' and p.event or {}
  if e.kind == 'toolCall' then
    t.last_tool = { subtaskId = e.subtaskId, tool = e.tool, arguments = compact(e.arguments) }
  elseif e.kind == 'message' and type(e.text) == 'string' then
    t.last_message = { subtaskId = e.subtaskId, text = compact(e.text) }
  elseif e.kind == 'ask' then
    t.question = e.question or e.text
  elseif e.kind == 'answered' then
    t.question = nil
  elseif e.kind == 'usage' then
    -- The event carries the task's running total.
    t.usage = {
      inputTokens = tonumber(e.inputTokens) or 0,
      outputTokens = tonumber(e.outputTokens) or 0,
      cost = tonumber(e.cost),
      cacheReadTokens = tonumber(e.cacheReadTokens),
    }
  elseif e.kind == 'instructions' then
    t.instructions = type(e.instructions) == 'table' and e.instructions or {}
  elseif e.kind == 'stateChanged' and e.applied ~= nil then
    t.counts = { applied = tonumber(e.applied) or 0, rejected = tonumber(e.rejected) or 0 }
  end
  if e.kind == 'stateChanged' and type(e.counts) == 'table' then
    t.subtask_counts = e.counts
  end
  -- An agent thinks from its first thinking event to its next text or
  -- tool call (docs/PROTOCOL.md §5).
  local agent = type(e.subtaskId) == 'string' and e.subtaskId or ''
  if e.kind == 'thinking' then
    t.thinking[agent] = true
  elseif e.kind == 'messageDelta' or e.kind == 'message' or e.kind == 'toolCall' or e.kind == 'subtaskFinished' then
    t.thinking[agent] = nil
  end
  -- A transcript that cannot show an event must not cost the task view.
  local ok, err = pcall(t.transcript.event, t.transcript, e, p.subtasks)
  if not ok then
    vim.notify('agentls: transcript: ' .. tostring(err), vim.log.levels.ERROR)
  end
  self:changed('tasks')
  self:changed('transcript', t.id)
end

-- run_result records the reply to agent/run: the final word on a task.
function State:run_result(id, res)
  local t = self:ensure_task(id)
  t.result = res
  t.state = res.state or t.state
  t.session_id = res.sessionId or t.session_id
  if type(res.subtasks) == 'table' then
    t.subtasks = res.subtasks
  end
  if type(res.usage) == 'table' then
    t.usage = {
      inputTokens = tonumber(res.usage.inputTokens) or 0,
      outputTokens = tonumber(res.usage.outputTokens) or 0,
      cost = tonumber(res.usage.cost),
      cacheReadTokens = tonumber(res.usage.cacheReadTokens),
    }
  end
  t.thinking = {}
  t.question = nil
  t.counts = M.counts(res)
  if type(res.counts) == 'table' then
    t.subtask_counts = res.counts
  end
  t.transcript:result(res)
  self:changed('tasks')
  self:changed('heat')
  self:changed('transcript', t.id)
end

-- counts returns the changes of a run's result applied and rejected: its
-- applied and rejected, else (an older server) its changes counted.
function M.counts(res)
  if type(res) ~= 'table' then
    return { applied = 0, rejected = 0 }
  end
  if type(res.applied) == 'number' then
    return { applied = res.applied, rejected = tonumber(res.rejected) or 0 }
  end
  local c = { applied = 0, rejected = 0 }
  for _, ch in ipairs(type(res.changes) == 'table' and res.changes or {}) do
    if ch.applied then
      c.applied = c.applied + 1
    else
      c.rejected = c.rejected + 1
    end
  end
  return c
end

-- run_failed records an agent/run that answered with an error.
function State:run_failed(id, message)
  local t = self:ensure_task(id)
  t.state = 'failed'
  t.error = message
  t.result = t.result or { state = 'failed', summary = message }
  t.transcript:finish({ state = 'failed', summary = message, changes = {} })
  self:changed('tasks')
  self:changed('transcript', t.id)
end

function State:waiting(on)
  self.waiting_for_person = self.waiting_for_person + (on and 1 or -1)
end

-- progress mirrors $/progress into the task it belongs to (the title is the
-- prompt; tokens the server made are not known in advance).
function State:progress(p)
  local v = type(p.value) == 'table' and p.value or {}
  local key = tostring(p.token)
  self.progress_tokens = self.progress_tokens or {}
  if v.kind == 'begin' then
    for _, t in ipairs(self:list()) do
      if t.prompt == v.title and not t.progress_token then
        t.progress_token = key
        break
      end
    end
  end
  for _, t in pairs(self.tasks) do
    if t.progress_token == key then
      t.progress = t.progress or {}
      t.progress.kind = v.kind
      t.progress.title = v.title or t.progress.title
      t.progress.message = v.message or t.progress.message
      t.progress.percentage = v.percentage or t.progress.percentage
      self:changed('tasks')
      return
    end
  end
end

local function heat_view(self, id)
  id = id or ''
  local v = self.heat[id]
  if not v then
    v = { seq = 0, nodes = {} }
    self.heat[id] = v
  end
  return v
end

-- heat_snapshot replaces a view with an agent/heatSnapshot answer.
function State:heat_snapshot(task_id, snap)
  local v = heat_view(self, task_id)
  if type(snap.seq) == 'number' and snap.seq < v.seq then
    return -- updates newer than this snapshot were already applied
  end
  v.seq = snap.seq or 0
  v.nodes = {}
  for _, n in ipairs(snap.nodes or {}) do
    v.nodes[n.path] = n
  end
  self:changed('heat')
end

-- heat_update applies an agent/heatUpdate over its view.
function State:heat_update(p)
  local v = heat_view(self, p.taskId)
  if type(p.seq) == 'number' then
    if p.seq <= v.seq then
      return
    end
    v.seq = p.seq
  end
  for _, n in ipairs(p.updates or {}) do
    if type(n) == 'table' and type(n.path) == 'string' then
      v.nodes[n.path] = n
    end
  end
  for _, path in ipairs(p.removed or {}) do
    v.nodes[path] = nil
  end
  self:changed('heat')
end

-- hottest returns a view's nodes, hottest first (ties by path).
function State:hottest(task_id, limit)
  local v = heat_view(self, task_id)
  local out = {}
  for _, n in pairs(v.nodes) do
    table.insert(out, n)
  end
  table.sort(out, function(a, b)
    if a.heat ~= b.heat then
      return (a.heat or 0) > (b.heat or 0)
    end
    return a.path < b.path
  end)
  if limit and #out > limit then
    for i = #out, limit + 1, -1 do
      out[i] = nil
    end
  end
  return out
end

return M
