-- The arguments of the :Agent… commands that steer tasks, and their
-- completion from the live tasks of the current workspace (a workspace
-- whose client is not running completes nothing: completion never starts
-- a server).
local config = require('agentls.config')
local state = require('agentls.state')

local M = {}

local function agentls()
  return require('agentls')
end

-- current_ws is the live workspace of the current buffer, or nil.
function M.current_ws()
  local a = agentls()
  local markers = (a.config or config.defaults).root_markers
  return a.client.get(a.client.root_for_buf(0, markers))
end

local function prefixed(items, lead)
  local out = {}
  for _, s in ipairs(items) do
    if s:sub(1, #lead) == lead then
      table.insert(out, s)
    end
  end
  return out
end

-- task_ids are the ids of ws's tasks, newest first, that pass keep(task).
local function task_ids(ws, keep)
  local out = {}
  for _, t in ipairs(ws and ws.state:list() or {}) do
    if not keep or keep(t) then
      table.insert(out, t.id)
    end
  end
  return out
end

local function running(t)
  return not state.ended(t.state)
end

local function subtask_ids(ws, task_id, states)
  local out = {}
  local t = ws and task_id and ws.state:task(task_id)
  for _, s in ipairs(t and t.subtasks or {}) do
    if not states or vim.tbl_contains(states, s.state) then
      table.insert(out, s.id)
    end
  end
  return out
end

-- words splits the command line before the cursor: the arguments typed so
-- far, without the one being typed.
local function words_before(cmdline, pos)
  local words = vim.split(vim.trim(cmdline:sub(1, pos)), '%s+')
  table.remove(words, 1) -- the command
  if not cmdline:sub(1, pos):match('%s$') then
    table.remove(words) -- the argument being typed
  end
  return words
end

-- target reads [{taskId}] [{subtaskId}]: one argument is a task id when ws
-- has a task of that id, else a subtask of the newest running task.
function M.target(ws, fargs)
  if #fargs >= 2 then
    return fargs[1], fargs[2]
  end
  if #fargs == 1 then
    if ws and ws.state:task(fargs[1]) then
      return fargs[1], nil
    end
    return nil, fargs[1]
  end
  return nil, nil
end

-- complete_subtask completes [{taskId}] {subtaskId}: the running tasks and
-- the subtasks in states of the newest one first, then the subtasks of the
-- task named.
function M.complete_subtask(states)
  return function(lead, cmdline, pos)
    local ws = M.current_ws()
    if not ws then
      return {}
    end
    local before = words_before(cmdline, pos)
    if #before == 0 then
      local live = ws.state:running()
      local items = subtask_ids(ws, live and live.id, states)
      vim.list_extend(items, task_ids(ws, running))
      return prefixed(items, lead)
    end
    if #before == 1 and ws.state:task(before[1]) then
      return prefixed(subtask_ids(ws, before[1], states), lead)
    end
    return {}
  end
end

-- add reads [task={taskId}] [after={id},{id}] {content}.
function M.add_args(args)
  local out = { depends_on = nil, task_id = nil }
  local rest = args or ''
  while true do
    local key, value, tail = rest:match('^%s*(%a+)=(%S*)%s*(.*)$')
    if key == 'task' then
      out.task_id = value
    elseif key == 'after' then
      out.depends_on = vim.tbl_filter(function(s)
        return s ~= ''
      end, vim.split(value, ',', { plain = true }))
    else
      break
    end
    rest = tail
  end
  out.content = vim.trim(rest)
  return out
end

function M.complete_add(lead, cmdline, pos)
  local ws = M.current_ws()
  if not ws then
    return {}
  end
  local before = words_before(cmdline, pos)
  for _, w in ipairs(before) do
    if not w:match('^%a+=') then
      return {} -- the content has begun
    end
  end
  local task_id
  for _, w in ipairs(before) do
    task_id = w:match('^task=(.*)$') or task_id
  end
  if lead:match('^task=') then
    return prefixed(vim.tbl_map(function(id)
      return 'task=' .. id
    end, task_ids(ws, running)), lead)
  end
  if lead:match('^after=') then
    local live = task_id or (ws.state:running() or {}).id
    local done = lead:match('^(after=.*,)') or 'after='
    local taken = {}
    for _, id in ipairs(vim.split(done:sub(7), ',', { plain = true })) do
      taken[id] = true
    end
    local items = {}
    for _, id in ipairs(subtask_ids(ws, live)) do
      if not taken[id] then
        table.insert(items, done .. id)
      end
    end
    return prefixed(items, lead)
  end
  return prefixed({ 'task=', 'after=' }, lead)
end

-- follow_up_args reads [{taskId}] [{prompt}]: the first word is a task id
-- when ws has a task of that id.
function M.follow_up_args(ws, args)
  local first, rest = (args or ''):match('^%s*(%S+)%s*(.*)$')
  if first and ws and ws.state:task(first) then
    return first, vim.trim(rest)
  end
  return nil, vim.trim(args or '')
end

function M.complete_follow_up(lead, cmdline, pos)
  local ws = M.current_ws()
  if not ws or #words_before(cmdline, pos) > 0 then
    return {}
  end
  return prefixed(task_ids(ws, function(t)
    return state.ended(t.state) and t.session_id ~= nil
  end), lead)
end

-- complete_undo completes {taskId} (the tasks that ended) then
-- {subtaskId} (that task's subtasks).
function M.complete_undo(lead, cmdline, pos)
  local ws = M.current_ws()
  if not ws then
    return {}
  end
  local before = words_before(cmdline, pos)
  if #before == 0 then
    return prefixed(task_ids(ws, function(t)
      return state.ended(t.state)
    end), lead)
  end
  if #before == 1 then
    return prefixed(subtask_ids(ws, before[1]), lead)
  end
  return {}
end

function M.complete_tasks(lead)
  return prefixed(task_ids(M.current_ws()), lead)
end

function M.complete_running(lead)
  return prefixed(task_ids(M.current_ws(), running), lead)
end

-- complete_intent offers the intents that can be selected, and none, from
-- the last agent/intents answer (asked when the client started and at
-- each completion, for the next one: completion never waits).
function M.complete_intent(lead)
  local ws = M.current_ws()
  local items = { 'none' }
  for _, i in ipairs(ws and ws.intents_cache or {}) do
    if i.selectable ~= false then
      table.insert(items, i.id)
    end
  end
  if ws then
    agentls().intents(ws, function() end)
  end
  return prefixed(items, lead)
end

-- complete_model offers the models of the last agent/models answer, and
-- default; without one it asks the server, for the next completion
-- (providers may take seconds to answer).
function M.complete_model(lead)
  local ws = M.current_ws()
  local items = { 'default' }
  if ws and ws.models_cache then
    for _, m in ipairs(ws.models_cache.models or {}) do
      table.insert(items, m.id)
    end
  elseif ws and not ws.models_asked then
    ws.models_asked = true
    agentls().models(ws, function() end)
  end
  return prefixed(items, lead)
end

-- engine_names are the engines of ws that can take a subtask, from the
-- last agent/engines answer; without one it asks the running server (its
-- answer is quick: nothing is started), for at most two seconds.
function M.engine_names(ws)
  if not ws then
    return {}
  end
  if not ws.engines_cache then
    local res = agentls().client.request_sync(ws, 'agent/engines', vim.empty_dict(), 2000)
    if type(res) == 'table' then
      ws.engines_cache = res
    end
  end
  local names = { 'agentls' }
  for _, e in ipairs((ws.engines_cache and ws.engines_cache.engines) or {}) do
    if e.usable then
      table.insert(names, e.name)
    end
  end
  return names
end

-- run_args reads :AgentRun's [engine={name}] {prompt}.
function M.run_args(args)
  local engine, rest = (args or ''):match('^%s*engine=(%S*)%s*(.*)$')
  if engine then
    return rest, engine ~= '' and engine or nil
  end
  return args or '', nil
end

-- complete_run completes :AgentRun's engine={name} (the first argument)
-- from agent/engines: the built-in worker and the usable engines.
function M.complete_run(lead, cmdline, pos)
  -- lead is a beginning of engine=, or begins with it.
  if #words_before(cmdline, pos) > 0 or lead:sub(1, 7) ~= ('engine='):sub(1, math.min(#lead, 7)) then
    return {}
  end
  local items = {}
  for _, name in ipairs(M.engine_names(M.current_ws())) do
    table.insert(items, 'engine=' .. name)
  end
  return prefixed(items, lead)
end

return M
