-- agentls in Neovim's built-in LSP client.
--
--   require('agentls').setup({ model = 'anthropic:claude-sonnet-4-5', edit_mode = 'propose' })
--
-- One client per workspace root; see :help agentls.
local client = require('agentls.client')
local config = require('agentls.config')
local views = require('agentls.views')

local M = {}

M.config = nil

local function notify(msg, level)
  vim.notify('agentls: ' .. msg, level or vim.log.levels.INFO)
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
-- running clients keep theirs until they restart (:AgentRestart).
function M.setup(opts)
  local c, err = config.resolve(opts)
  if not c then
    notify('setup: ' .. err, vim.log.levels.ERROR)
    return false
  end
  M.config = c
  local group = vim.api.nvim_create_augroup('agentls', { clear = true })
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
  end
  return ws, err
end

local counter = 0
local function new_task_id()
  counter = counter + 1
  return string.format('nvim-%x-%x-%d', os.time(), vim.loop.hrtime() % 0x100000, counter)
end

-- run starts a task. opts: session_id (continue that session), edit_mode,
-- intent_id, on_done(result, err). It returns the workspace and the task id
-- (chosen here so the task can be stopped before the server's first word).
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
  params.intentId = opts.intent_id
  client.request(ws, 'agent/run', params, function(err, result)
    if err then
      ws.state:run_failed(id, err)
      notify('task failed: ' .. err, vim.log.levels.ERROR)
    else
      ws.state:run_result(id, result)
      ws.last_session = result.sessionId or ws.last_session
      local changes = result.changes and #result.changes or 0
      local level = result.state == 'done' and vim.log.levels.INFO or vim.log.levels.WARN
      notify(string.format('task %s %s: %s (%d change%s)', id, result.state or '?', result.summary or '', changes, changes == 1 and '' or 's'), level)
      -- The heat view ends with the task's last accesses.
      M.heat_refresh(ws)
    end
    if opts.on_done then
      opts.on_done(result, err)
    end
  end)
  return ws, id
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

function M.open(ws, path)
  local target = ws.root .. '/' .. path
  -- Open in the previous window, not in the view.
  vim.cmd('wincmd p')
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

-- prompt asks for a prompt with vim.ui.input and runs it.
function M.prompt(ws, session_id)
  vim.ui.input({ prompt = session_id and 'agentls (continue): ' or 'agentls: ' }, function(input)
    if input and vim.trim(input) ~= '' then
      M.run(input, { workspace = ws, session_id = session_id })
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
