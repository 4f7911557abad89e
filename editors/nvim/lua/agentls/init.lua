-- agentls in Neovim's built-in LSP client.
--
--   require('agentls').setup({ model = 'anthropic:claude-sonnet-4-5', edit_mode = 'propose' })
--
-- One client per workspace root; see :help agentls.
local client = require('agentls.client')
local config = require('agentls.config')
local state = require('agentls.state')
local transcript = require('agentls.transcript')
local views = require('agentls.views')

local M = {}

M.config = nil

local function notify(msg, level)
  vim.notify('agentls: ' .. msg, level or vim.log.levels.INFO)
end

-- notify_line tells msg on one line that fits the command line, so that
-- what a task says unasked never stops the person's typing with a
-- hit-enter prompt (the whole of it is in the transcript and :AgentTasks).
local function notify_line(msg, level)
  msg = 'agentls: ' .. msg:gsub('%s*\n%s*', ' ')
  local room = math.max(20, (tonumber(vim.v.echospace) or vim.o.columns - 12) - 1)
  if vim.fn.strdisplaywidth(msg) > room then
    msg = vim.fn.strcharpart(msg, 0, room - 1) .. '…'
    while vim.fn.strdisplaywidth(msg) > room do
      msg = vim.fn.strcharpart(msg, 0, vim.fn.strchars(msg) - 2) .. '…'
    end
  end
  vim.notify(msg, level or vim.log.levels.INFO)
end

-- end_message says how a run ended, in one line: its subtasks from the
-- server's counts (the skipped and removed ones too), its changes, and the
-- first line of its summary where that says more than the counts (one
-- subtask's result, a failed plan): the server words a task of several
-- subtasks from the same counts.
function M.end_message(id, result)
  -- A rejected change is no change: say what was applied and what not.
  local c = state.counts(result)
  local changes = transcript.counts(c.applied, c.rejected)
  local ended = transcript.subtask_counts(result.counts)
  local first = vim.split(result.summary or '', '\n', { plain = true })[1] or ''
  local counts = (ended and (ended .. '; ') or '') .. changes
  if first ~= '' and (not ended or transcript.subtask_total(result.counts) == 1) then
    return string.format('task %s %s: %s (%s)', id, result.state or '?', first, counts)
  end
  return string.format('task %s %s: %s', id, result.state or '?', counts)
end

local function cfg()
  if not M.config then
    local c, err = config.resolve({})
    assert(c, err)
    M.config = c
  end
  return M.config
end

-- setup configures the plugin. It may be called again to change options;
-- running clients keep theirs until they restart (:AgentRestart), but for
-- workspace_trust, which reaches them at once.
function M.setup(opts)
  local c, err = config.resolve(opts)
  if not c then
    notify('setup: ' .. err, vim.log.levels.ERROR)
    return false
  end
  M.config = c
  for _, ws in ipairs(client.all()) do
    client.refresh_trust(ws, c)
  end
  local group = vim.api.nvim_create_augroup('agentls', { clear = true })
  -- The servers wait for the diagnostics of their edits: they hear when
  -- Neovim's change (client.diagnostics_changed).
  vim.api.nvim_create_autocmd('DiagnosticChanged', {
    group = group,
    callback = function(ev)
      require('agentls.client').diagnostics_changed(ev.buf)
    end,
  })
  if c.autostart then
    vim.api.nvim_create_autocmd('BufReadPost', {
      group = group,
      callback = function(ev)
        if vim.bo[ev.buf].buftype == '' then
          M.workspace(ev.buf)
        end
      end,
    })
  end
  return true
end

-- workspace returns the workspace of a buffer (current by default),
-- starting its client when needed; nil and a message when it cannot start.
function M.workspace(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local c = cfg()
  local root = client.root_for_buf(bufnr, c.root_markers)
  local attach = vim.bo[bufnr].buftype == '' and vim.api.nvim_buf_get_name(bufnr) ~= '' and bufnr or nil
  local ws, err = client.ensure(root, c, attach)
  if not ws then
    notify(err, vim.log.levels.ERROR)
  elseif not ws.intents_asked then
    -- For the completion of :AgentIntent, which never waits.
    ws.intents_asked = true
    M.intents(ws, function() end)
  end
  return ws, err
end

local counter = 0
local function new_task_id()
  counter = counter + 1
  return string.format('nvim-%x-%x-%d', os.time(), vim.loop.hrtime() % 0x100000, counter)
end

-- run starts a task. opts: session_id (continue that session), edit_mode,
-- intent_id (default: the one chosen with :AgentIntent), model (default:
-- the one chosen with :AgentModel), engine (every subtask on this engine,
-- 'agentls' for the built-in worker; default: as the plan says),
-- on_done(result, err). It returns the
-- workspace and the task id (chosen here so the task can be stopped before
-- the server's first word).
function M.run(prompt, opts)
  opts = opts or {}
  if type(prompt) ~= 'string' or vim.trim(prompt) == '' then
    notify('a task needs a prompt', vim.log.levels.ERROR)
    return nil
  end
  local ws = opts.workspace or M.workspace()
  if not ws then
    return nil
  end
  local id = new_task_id()
  ws.state:task_started(id, prompt, opts.session_id)
  local params = { prompt = prompt, taskId = id }
  params.sessionId = opts.session_id
  params.editMode = opts.edit_mode
  params.intentId = opts.intent_id or ws.intent_id
  params.model = opts.model or ws.model
  if opts.engine ~= nil and opts.engine ~= '' then
    params.engine = opts.engine
  end
  -- The attachments given, else those gathered with :AgentAttach, which
  -- this run takes.
  local atts = opts.attachments or ws.attachments
  if atts and #atts > 0 then
    params.attachments = atts
  end
  if not opts.attachments then
    ws.attachments = nil
  end
  -- The trust may have changed since the last task (a workspace_trust
  -- function asked again: :trust, say): agentls hears it first.
  client.refresh_trust(ws, cfg())
  client.request(ws, 'agent/run', params, function(err, result)
    if err then
      ws.state:run_failed(id, err)
      notify('task failed: ' .. config.words(err), vim.log.levels.ERROR)
    else
      ws.state:run_result(id, result)
      ws.last_session = result.sessionId or ws.last_session
      local level = result.state == 'done' and vim.log.levels.INFO or vim.log.levels.WARN
      notify_line(M.end_message(id, result), level)
      -- The heat view ends with the task's last accesses.
      M.heat_refresh(ws)
    end
    if opts.on_done then
      opts.on_done(result, err)
    end
  end)
  return ws, id
end

local image_exts = { png = true, jpg = true, jpeg = true, gif = true, webp = true }

-- attachment makes the attachment of agent/run for a file (absolute path):
-- an image by its extension, else a file, with the lines first..last
-- (1-based, both in) when given.
function M.attachment(path, first, last)
  local ext = (path:match('%.([%w]+)$') or ''):lower()
  if image_exts[ext] then
    return { type = 'image', path = path, name = vim.fn.fnamemodify(path, ':t') }
  end
  local a = { type = 'file', path = path }
  if first then
    -- An end at character 0 leaves its line out: the line after last.
    a.range = { start = { line = first - 1, character = 0 }, ['end'] = { line = last, character = 0 } }
  end
  return a
end

-- describe says what an attachment is: "main.go:5-7", "shot.png (image)".
function M.describe(a, root)
  local p = a.path or a.name or 'image'
  if root and p:sub(1, #root + 1) == root .. '/' then
    p = p:sub(#root + 2)
  end
  if a.type == 'image' then
    return p .. ' (image)'
  end
  if a.range then
    return string.format('%s:%d-%d', p, a.range.start.line + 1, a.range['end'].line)
  end
  return p
end

-- attach adds an attachment to those the next :AgentRun of ws sends.
function M.attach(ws, a)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  ws.attachments = ws.attachments or {}
  table.insert(ws.attachments, a)
  local names = {}
  for _, x in ipairs(ws.attachments) do
    table.insert(names, M.describe(x, ws.root))
  end
  notify(string.format('attached to the next task: %s', table.concat(names, ', ')))
end

-- attachments are those the next :AgentRun of ws sends (a copy).
function M.attachments(ws)
  return vim.deepcopy((ws or {}).attachments or {})
end

-- detach drops the attachments gathered for the next run of ws.
function M.detach(ws)
  ws = ws or M.workspace()
  if ws then
    ws.attachments = nil
    notify('no attachment for the next task')
  end
end

-- stop stops a task of the current workspace: task_id, else the newest
-- task still running.
function M.stop(ws, task_id)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  if not task_id then
    local t = ws.state:running()
    if not t then
      notify('no task is running in ' .. ws.root, vim.log.levels.WARN)
      return
    end
    task_id = t.id
  end
  client.request(ws, 'agent/stop', { taskId = task_id }, function(err, result)
    if err then
      notify('stop: ' .. err, vim.log.levels.ERROR)
    elseif result and result.stopped then
      notify('stopping task ' .. task_id)
    else
      notify('task ' .. task_id .. ' was not running', vim.log.levels.WARN)
    end
  end)
end

-- ---- steering a live task ----

-- live_task returns the task a control acts on: task_id, else the newest
-- task still running; nil and why when there is none.
local function live_task(ws, task_id)
  if task_id and task_id ~= '' then
    return task_id
  end
  local t = ws.state:running()
  if not t then
    return nil, 'no task is running in ' .. ws.root
  end
  return t.id
end

-- subtasks_in returns the subtasks of task_id whose state is in states.
function M.subtasks_in(ws, task_id, states)
  local out = {}
  local t = ws.state:task(task_id)
  for _, s in ipairs(t and t.subtasks or {}) do
    if not states or vim.tbl_contains(states, s.state) then
      table.insert(out, s)
    end
  end
  return out
end

-- pick_subtask calls fn(subtask_id) with subtask_id, or asks for one of the
-- task's subtasks in states with vim.ui.select.
local function pick_subtask(ws, task_id, subtask_id, states, what, fn)
  if subtask_id and subtask_id ~= '' then
    return fn(subtask_id)
  end
  local subs = M.subtasks_in(ws, task_id, states)
  if #subs == 0 then
    notify(string.format('task %s has no %s subtask to %s', task_id, table.concat(states, ' or '), what), vim.log.levels.WARN)
    return
  end
  vim.ui.select(subs, {
    prompt = string.format('agentls: %s which subtask of %s?', what, task_id),
    format_item = function(s)
      return string.format('%s  [%s]  %s', s.id, s.state, state.compact(s.content))
    end,
  }, function(s)
    if s then
      fn(s.id)
    end
  end)
end

local function control(ws, method, params, done, on_done)
  client.request(ws, method, params, function(err, res)
    if err then
      notify(method:gsub('^agent/', '') .. ': ' .. err, vim.log.levels.ERROR)
    else
      notify(done(res))
    end
    if on_done then
      on_done(res, err)
    end
  end)
end

-- skip skips a pending or running subtask (a running one is cancelled; its
-- dependants go on as if it were done). task_id: the newest running task
-- by default; subtask_id: asked for when nil.
function M.skip(ws, task_id, subtask_id, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local id, err = live_task(ws, task_id)
  if not id then
    return notify(err, vim.log.levels.WARN)
  end
  pick_subtask(ws, id, subtask_id, { 'pending', 'running' }, 'skip', function(sub)
    control(ws, 'agent/skipSubtask', { taskId = id, subtaskId = sub }, function()
      return string.format('subtask %s of task %s skipped', sub, id)
    end, on_done)
  end)
end

-- remove removes a pending subtask.
function M.remove(ws, task_id, subtask_id, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local id, err = live_task(ws, task_id)
  if not id then
    return notify(err, vim.log.levels.WARN)
  end
  pick_subtask(ws, id, subtask_id, { 'pending' }, 'remove', function(sub)
    control(ws, 'agent/removeSubtask', { taskId = id, subtaskId = sub }, function()
      return string.format('subtask %s of task %s removed', sub, id)
    end, on_done)
  end)
end

-- add adds a subtask to a running task, after the subtasks depends_on (a
-- list of ids); content is asked for when empty.
function M.add(ws, task_id, content, depends_on, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local id, err = live_task(ws, task_id)
  if not id then
    return notify(err, vim.log.levels.WARN)
  end
  local function send(text)
    local params = { taskId = id, content = text }
    if depends_on and #depends_on > 0 then
      params.dependsOn = depends_on
    end
    control(ws, 'agent/addSubtask', params, function(res)
      local after = (depends_on and #depends_on > 0) and (' after ' .. table.concat(depends_on, ', ')) or ''
      return string.format('subtask %s added to task %s%s', res and res.subtaskId or '?', id, after)
    end, on_done)
  end
  if content and vim.trim(content) ~= '' then
    return send(content)
  end
  vim.ui.input({ prompt = string.format('agentls: add a subtask to %s: ', id) }, function(input)
    if input and vim.trim(input) ~= '' then
      send(input)
    end
  end)
end

-- follow_up continues a task's conversation with prompt (asked for when
-- empty): a new task in its session, whose coordinator sees the earlier
-- prompts, plans and results. task_id: the newest task that has ended, by
-- default.
function M.follow_up(ws, task_id, prompt, opts)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local t
  if task_id and task_id ~= '' then
    t = ws.state:task(task_id)
    if not t then
      return notify('no task ' .. task_id .. ' in ' .. ws.root, vim.log.levels.ERROR)
    end
  else
    for _, c in ipairs(ws.state:list()) do
      if state.ended(c.state) and c.session_id then
        t = c
        break
      end
    end
    if not t then
      return notify('no finished task to follow up in ' .. ws.root, vim.log.levels.WARN)
    end
  end
  if not t.session_id then
    return notify('task ' .. t.id .. ' has no session yet', vim.log.levels.WARN)
  end
  local function go(text)
    return M.run(text, vim.tbl_extend('force', opts or {}, { workspace = ws, session_id = t.session_id }))
  end
  if prompt and vim.trim(prompt) ~= '' then
    return go(prompt)
  end
  vim.ui.input({ prompt = string.format('agentls (follow up on %s): ', t.id) }, function(input)
    if input and vim.trim(input) ~= '' then
      go(input)
    end
  end)
end

-- ---- undo ----

local undo_verbs = { update = 'restored', create = 'recreated', delete = 'deleted' }

-- undo_words says what agent/undo did: the files restored, recreated or
-- deleted, and each one refused with its reason.
function M.undo_words(res, what, partial)
  local done, refused = {}, {}
  for _, f in ipairs(res.files or {}) do
    if f.undone then
      local verb = undo_verbs[f.operation]
      table.insert(done, verb and (verb .. ' ' .. f.path) or (f.path .. ' (as it was already)'))
    elseif type(f.reason) == 'string' and f.reason ~= '' then
      table.insert(refused, f.reason)
    end
  end
  if res.undone then
    return string.format('undid %s: %s', what, #done > 0 and table.concat(done, ', ') or 'nothing to undo')
  end
  local out = string.format('%s not undone: %s', what, #refused > 0 and table.concat(refused, '; ') or 'refused')
  if #done > 0 then
    out = out .. '; ' .. table.concat(done, ', ')
  elseif not partial then
    out = out .. ' (:AgentUndo! undoes the files that can be)'
  end
  return out
end

-- undo takes back what a task (with subtask_id, one subtask) changed:
-- agent/undo restores each file through the editor, refusing a file the
-- person changed since (with partial, the other files are undone all the
-- same). task_id: the newest task that has ended, by default.
function M.undo(ws, task_id, subtask_id, partial, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  if not task_id or task_id == '' then
    for _, t in ipairs(ws.state:list()) do
      if state.ended(t.state) then
        task_id = t.id
        break
      end
    end
    if not task_id then
      return notify('no finished task to undo in ' .. ws.root, vim.log.levels.WARN)
    end
  end
  local params = { taskId = task_id, subtaskId = subtask_id, partial = partial or nil }
  local t = ws.state:task(task_id)
  params.sessionId = t and t.session_id or nil
  local what = subtask_id and string.format('subtask %s of task %s', subtask_id, task_id) or ('task ' .. task_id)
  client.request(ws, 'agent/undo', params, function(err, res)
    if err then
      notify('undo: ' .. err, vim.log.levels.ERROR)
    elseif res then
      notify(M.undo_words(res, what, partial), res.undone and vim.log.levels.INFO or vim.log.levels.WARN)
    end
    if on_done then
      on_done(res, err)
    end
  end)
end

-- ---- intents and models for the next runs ----

-- intents asks the server for the intents of the workspace; cb(intents,
-- err). A broken intents file is an error.
function M.intents(ws, cb)
  client.request(ws, 'agent/intents', vim.empty_dict(), function(err, res)
    if err then
      return cb(nil, err)
    end
    if res and type(res.error) == 'string' and res.error ~= '' then
      return cb(nil, res.error)
    end
    ws.intents_cache = res and res.intents or {}
    cb(ws.intents_cache)
  end)
end

local function intent_label(i)
  local scope = type(i.ownedScope) == 'table' and table.concat(i.ownedScope, ', ') or ''
  return string.format('%s  %s  (%s%s)', i.id, i.name or '', i.status or '', scope ~= '' and ('; ' .. scope) or '')
end

-- set_intent makes the next runs of ws work under the intent id ('none' or
-- nil: the workers select their own). A completed intent is refused.
function M.set_intent(ws, id, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  if id == nil or id == '' or id == 'none' then
    ws.intent_id = nil
    notify('the next tasks choose their intents themselves')
    return on_done and on_done(nil)
  end
  M.intents(ws, function(intents, err)
    if not intents then
      notify('intents: ' .. err, vim.log.levels.ERROR)
      return on_done and on_done(nil, err)
    end
    for _, i in ipairs(intents) do
      if i.id == id then
        if i.selectable == false then
          local msg = string.format('intent %s (%s) is %s: a completed intent cannot be selected', i.id, i.name or '', i.status or '')
          notify(msg, vim.log.levels.ERROR)
          return on_done and on_done(nil, msg)
        end
        ws.intent_id = id
        notify(string.format('the next tasks work under %s (%s)', id, i.name or ''))
        return on_done and on_done(id)
      end
    end
    local msg = 'no intent ' .. id .. ' in .orchestration/active_intents.yaml'
    notify(msg, vim.log.levels.ERROR)
    return on_done and on_done(nil, msg)
  end)
end

-- pick_intent offers the intents that can be selected (not COMPLETED) with
-- vim.ui.select, and "none", for the next runs.
function M.pick_intent(ws)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  M.intents(ws, function(intents, err)
    if not intents then
      return notify('intents: ' .. err, vim.log.levels.ERROR)
    end
    local items = { { id = 'none' } }
    for _, i in ipairs(intents) do
      if i.selectable ~= false then
        table.insert(items, i)
      end
    end
    if #items == 1 then
      return notify('no intent to select in .orchestration/active_intents.yaml', vim.log.levels.WARN)
    end
    vim.ui.select(items, {
      prompt = 'agentls: the intent of the next tasks',
      format_item = function(i)
        local current = (i.id == 'none' and ws.intent_id == nil) or i.id == ws.intent_id
        local label = i.id == 'none' and 'none: each worker selects the intent of its subtask' or intent_label(i)
        return (current and '● ' or '  ') .. label
      end,
    }, function(i)
      if i then
        M.set_intent(ws, i.id)
      end
    end)
  end)
end

-- engines asks the server for its engines (agent/engines: name, version,
-- usable or why not); cb(res, err). The answer is kept for completion.
function M.engines(ws, cb, probe)
  client.request(ws, 'agent/engines', probe and { probe = true } or vim.empty_dict(), function(err, res)
    if res then
      ws.engines_cache = res
    end
    cb(res, err)
  end)
end

-- models asks the server for the models its providers offer; cb(res, err).
function M.models(ws, cb)
  client.request(ws, 'agent/models', vim.empty_dict(), function(err, res)
    if res then
      ws.models_cache = res
    end
    cb(res, err)
  end)
end

-- check_model tries model (default: the model of the next run) and shows
-- the server's verdict; on_done(result, err).
function M.check_model(ws, model, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  model = (model and model ~= '') and model or ws.model
  local params = model and { model = model } or vim.empty_dict()
  client.request(ws, 'agent/checkModel', params, function(err, res)
    if err then
      notify('checkModel: ' .. err, vim.log.levels.ERROR)
    elseif res then
      notify(config.words(res.message or ''), res.ok and vim.log.levels.INFO or vim.log.levels.WARN)
    end
    if on_done then
      on_done(res, err)
    end
  end)
end

-- set_model makes the next runs of ws use model ('default' or nil: the
-- model setting), and checks it.
function M.set_model(ws, model, on_done)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  if model == nil or model == '' or model == 'default' then
    ws.model = nil
    notify('the next tasks use the model setting')
    return M.check_model(ws, nil, on_done)
  end
  ws.model = model
  notify('the next tasks use ' .. model)
  M.check_model(ws, model, on_done)
end

-- pick_model offers the models of agent/models (the one of the next run
-- marked) with vim.ui.select; the choice is checked with agent/checkModel.
function M.pick_model(ws)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  notify('asking the providers for their models…')
  M.models(ws, function(res, err)
    if err then
      return notify('models: ' .. err, vim.log.levels.ERROR)
    end
    for _, p in ipairs(res.providers or {}) do
      if p.configured and type(p.error) == 'string' and p.error ~= '' then
        notify(string.format('%s: %s', p.provider, p.error), vim.log.levels.WARN)
      end
    end
    local setting = (res.current and res.current ~= '') and res.current or 'none configured'
    local items = { { id = 'default' } }
    for _, m in ipairs(res.models or {}) do
      table.insert(items, m)
    end
    local next_model = ws.model or res.current
    vim.ui.select(items, {
      prompt = 'agentls: the model of the next tasks',
      format_item = function(m)
        if m.id == 'default' then
          return (ws.model == nil and '● ' or '  ') .. 'default: the model setting (' .. setting .. ')'
        end
        local name = (m.displayName and m.displayName ~= '' and m.displayName ~= m.name) and ('  ' .. m.displayName) or ''
        return (m.id == next_model and ws.model ~= nil and '● ' or '  ') .. m.id .. name .. (m.current and '  (the setting)' or '')
      end,
    }, function(m)
      if m then
        M.set_model(ws, m.id)
      end
    end)
  end)
end

-- ---- the transcript ----

-- transcript opens the live transcript of task_id (default: the newest
-- running task, else the newest task).
function M.transcript(ws, task_id)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local t
  if task_id and task_id ~= '' then
    t = ws.state:task(task_id)
  else
    t = ws.state:running() or ws.state:list()[1]
  end
  if not t then
    notify(task_id and ('no task ' .. task_id .. ' in ' .. ws.root) or ('no task yet in ' .. ws.root), vim.log.levels.WARN)
    return
  end
  return views.transcript(ws, t)
end

function M.open(ws, path)
  local target = ws.root .. '/' .. path
  -- Open in the previous window, not in the view; when that is another
  -- view (the heat view under its neighbours), in a window with a file.
  vim.cmd('wincmd p')
  if vim.api.nvim_buf_get_name(0):find('^agentls://') then
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if vim.bo[vim.api.nvim_win_get_buf(w)].buftype == '' then
        vim.api.nvim_set_current_win(w)
        break
      end
    end
  end
  vim.cmd('edit ' .. vim.fn.fnameescape(target))
end

function M.heat_refresh(ws)
  client.request(ws, 'agent/heatSnapshot', vim.empty_dict(), function(err, snap)
    if err then
      notify('heat: ' .. err, vim.log.levels.ERROR)
    elseif snap then
      ws.state:heat_snapshot(nil, snap)
    end
  end)
end

local actions = {
  neighbours = function(ws, path)
    M.neighbours(ws, path)
  end,
  stop = function(ws, id)
    M.stop(ws, id)
  end,
  open = function(ws, path)
    M.open(ws, path)
  end,
  heat_refresh = function(ws)
    M.heat_refresh(ws)
  end,
  session = function(ws, id)
    M.session(ws, id)
  end,
  continue = function(ws, id)
    M.prompt(ws, id)
  end,
  skip = function(ws, id, sub)
    M.skip(ws, id, sub)
  end,
  remove = function(ws, id, sub)
    M.remove(ws, id, sub)
  end,
  add = function(ws, id, after)
    M.add(ws, id, nil, after and { after } or nil)
  end,
  follow_up = function(ws, id)
    M.follow_up(ws, id)
  end,
  transcript = function(ws, id)
    M.transcript(ws, id)
  end,
  undo = function(ws, id, sub)
    local what = sub and string.format('subtask %s of task %s', sub, id) or ('task ' .. id)
    vim.ui.select({ 'Undo', 'Keep' }, { prompt = 'agentls: undo what ' .. what .. ' changed?' }, function(choice)
      if choice == 'Undo' then
        M.undo(ws, id, sub)
      end
    end)
  end,
  delete = function(ws, id)
    vim.ui.select({ 'Delete', 'Keep' }, { prompt = 'agentls: delete session ' .. id .. '?' }, function(choice)
      if choice ~= 'Delete' then
        return
      end
      client.request(ws, 'agent/deleteSession', { sessionId = id }, function(err)
        if err then
          notify('delete: ' .. err, vim.log.levels.ERROR)
        else
          notify('session ' .. id .. ' deleted')
          M.sessions(ws)
        end
      end)
    end)
  end,
}

-- neighbours shows the files path references and those that reference it,
-- asked of agent/codeGraph now (the heat's updates carry no graph).
function M.neighbours(ws, path)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  return views.neighbours(ws, path, actions, function(p, done)
    client.request(ws, 'agent/codeGraph', { path = p }, done)
  end)
end

-- prompt asks for a prompt with vim.ui.input and runs it.
function M.prompt(ws, session_id, engine)
  local label = engine and ('agentls on ' .. engine) or 'agentls'
  vim.ui.input({ prompt = label .. (session_id and ' (continue): ' or ': ') }, function(input)
    if input and vim.trim(input) ~= '' then
      M.run(input, { workspace = ws, session_id = session_id, engine = engine })
    end
  end)
end

function M.tasks(ws)
  ws = ws or M.workspace()
  if ws then
    return views.tasks(ws, actions)
  end
end

function M.heat(ws)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  local b = views.heat(ws, actions, 50)
  M.heat_refresh(ws)
  return b
end

function M.sessions(ws)
  ws = ws or M.workspace()
  if not ws then
    return
  end
  client.request(ws, 'agent/sessions', vim.empty_dict(), function(err, res)
    if err then
      notify('sessions: ' .. err, vim.log.levels.ERROR)
      return
    end
    views.sessions(ws, res and res.sessions or {}, actions)
  end)
end

function M.session(ws, id)
  client.request(ws, 'agent/session', { sessionId = id }, function(err, res)
    if err then
      notify('session: ' .. err, vim.log.levels.ERROR)
      return
    end
    views.session(ws, res)
  end)
end

-- relpath is the workspace-relative path of a buffer's file, or nil.
local function relpath(ws, bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' then
    return nil
  end
  local abs = vim.fn.fnamemodify(name, ':p')
  abs = vim.loop.fs_realpath(abs) or abs
  local root = ws.root:gsub('/$', '')
  if abs:sub(1, #root + 1) ~= root .. '/' then
    return nil
  end
  return abs:sub(#root + 2)
end

-- trace shows the trace entries of the cursor's line (whole file with
-- whole_file).
function M.trace(whole_file)
  local bufnr = vim.api.nvim_get_current_buf()
  local ws = M.workspace(bufnr)
  if not ws then
    return
  end
  local path = relpath(ws, bufnr)
  if not path then
    notify('this buffer is not a file of ' .. ws.root, vim.log.levels.WARN)
    return
  end
  local line = not whole_file and vim.api.nvim_win_get_cursor(0)[1] or nil
  local params = { path = path, line = line }
  client.request(ws, 'agent/trace', params, function(err, res)
    if err then
      notify('trace: ' .. err, vim.log.levels.ERROR)
      return
    end
    M.last_trace = { path = path, line = line, entries = res and res.entries or {} }
    M.last_trace.buf, M.last_trace.win = views.trace(path, line, M.last_trace.entries)
  end)
end

-- restart stops every client; the next command starts them again with the
-- current setup().
function M.restart()
  client.stop_all()
end

M.client = client
M.views = views

return M
