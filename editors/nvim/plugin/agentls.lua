-- agentls: an AI coding agent in Neovim's built-in LSP client. :help agentls
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_err_writeln('agentls needs Neovim 0.7 or newer')
  return
end

local function agentls()
  return require('agentls')
end

local function commands()
  return require('agentls.commands')
end

local command = vim.api.nvim_create_user_command

command('AgentRun', function(o)
  local a = agentls()
  local ws = a.workspace()
  if not ws then
    return
  end
  local session = o.bang and ws.last_session or nil
  if o.range > 0 and vim.api.nvim_buf_get_name(0) ~= '' then
    -- :'<,'>AgentRun attaches the selection's lines.
    a.attach(ws, a.attachment(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ':p'), o.line1, o.line2))
  end
  -- :AgentRun engine=claude {prompt} runs every subtask on that engine.
  local prompt, engine = commands().run_args(o.args)
  if prompt ~= '' then
    a.run(prompt, { workspace = ws, session_id = session, engine = engine })
  else
    a.prompt(ws, session, engine)
  end
end, {
  nargs = '*',
  bang = true,
  range = true,
  desc = 'agentls: run a task (engine={name} first runs it on that engine; ! continues the last session; a range attaches those lines)',
  complete = function(lead, cmdline, pos)
    return commands().complete_run(lead, cmdline, pos)
  end,
})

command('AgentAttach', function(o)
  local a = agentls()
  local ws = a.workspace()
  if not ws then
    return
  end
  if o.bang then
    return a.detach(ws)
  end
  if o.args ~= '' then
    -- A file or an image chosen by its path.
    return a.attach(ws, a.attachment(vim.fn.fnamemodify(vim.fn.expand(o.args), ':p')))
  end
  local name = vim.api.nvim_buf_get_name(0)
  if name == '' then
    return vim.notify('agentls: this buffer has no file to attach', vim.log.levels.WARN)
  end
  local path = vim.fn.fnamemodify(name, ':p')
  if o.range > 0 then
    a.attach(ws, a.attachment(path, o.line1, o.line2)) -- the selection's lines
  else
    a.attach(ws, a.attachment(path)) -- the current file
  end
end, {
  nargs = '?',
  range = true,
  bang = true,
  complete = 'file',
  desc = 'agentls: attach the selection, the current file, or {path} (a file or an image) to the next task (! drops them)',
})

command('AgentStop', function(o)
  agentls().stop(nil, o.args ~= '' and o.args or nil)
end, {
  nargs = '?',
  desc = 'agentls: stop a running task (the newest by default)',
  complete = function(lead)
    return require('agentls.commands').complete_running(lead)
  end,
})

command('AgentTasks', function()
  agentls().tasks()
end, { desc = 'agentls: the live task tree' })

command('AgentHeat', function()
  agentls().heat()
end, { desc = 'agentls: the hottest files' })

command('AgentSessions', function()
  agentls().sessions()
end, { desc = 'agentls: past sessions' })

command('AgentTrace', function(o)
  agentls().trace(o.bang)
end, { bang = true, desc = 'agentls: agent changes of the line under the cursor (! the whole file)' })

command('AgentRestart', function()
  agentls().restart()
end, { desc = 'agentls: stop the clients; the next command starts them with the current setup' })


command('AgentSkip', function(o)
  local a = agentls()
  local ws = a.workspace()
  if ws then
    local task, sub = commands().target(ws, o.fargs)
    a.skip(ws, task, sub)
  end
end, {
  nargs = '*',
  desc = 'agentls: skip a subtask ([taskId] subtaskId; the newest running task by default)',
  complete = function(...)
    return commands().complete_subtask({ 'pending', 'running' })(...)
  end,
})

command('AgentRemove', function(o)
  local a = agentls()
  local ws = a.workspace()
  if ws then
    local task, sub = commands().target(ws, o.fargs)
    a.remove(ws, task, sub)
  end
end, {
  nargs = '*',
  desc = 'agentls: remove a pending subtask ([taskId] subtaskId)',
  complete = function(...)
    return commands().complete_subtask({ 'pending' })(...)
  end,
})

command('AgentAdd', function(o)
  local a = agentls()
  local ws = a.workspace()
  if ws then
    local args = commands().add_args(o.args)
    a.add(ws, args.task_id, args.content, args.depends_on)
  end
end, {
  nargs = '*',
  desc = 'agentls: add a subtask ([task=ID] [after=ID,ID] content)',
  complete = function(...)
    return commands().complete_add(...)
  end,
})

command('AgentFollowUp', function(o)
  local a = agentls()
  local ws = a.workspace()
  if ws then
    local task, prompt = commands().follow_up_args(ws, o.args)
    a.follow_up(ws, task, prompt)
  end
end, {
  nargs = '*',
  desc = 'agentls: continue a finished task with a follow-up ([taskId] prompt)',
  complete = function(...)
    return commands().complete_follow_up(...)
  end,
})

command('AgentTranscript', function(o)
  agentls().transcript(nil, o.args ~= '' and o.args or nil)
end, {
  nargs = '?',
  desc = 'agentls: the live transcript of a task (the running one by default)',
  complete = function(lead)
    return commands().complete_tasks(lead)
  end,
})

command('AgentIntent', function(o)
  if o.args == '' then
    agentls().pick_intent()
  else
    agentls().set_intent(nil, o.args)
  end
end, {
  nargs = '?',
  desc = 'agentls: the intent the next tasks work under (none: each worker selects)',
  complete = function(lead)
    return commands().complete_intent(lead)
  end,
})

command('AgentModel', function(o)
  if o.args == '' then
    agentls().pick_model()
  else
    agentls().set_model(nil, o.args)
  end
end, {
  nargs = '?',
  desc = 'agentls: the model of the next tasks, picked from the providers (default: the setting)',
  complete = function(lead)
    return commands().complete_model(lead)
  end,
})

command('AgentCheckModel', function(o)
  agentls().check_model(nil, o.args ~= '' and o.args or nil)
end, {
  nargs = '?',
  desc = 'agentls: test the connection to a model (the next tasks\' by default)',
  complete = function(lead)
    return commands().complete_model(lead)
  end,
})

command('AgentUndo', function(o)
  agentls().undo(nil, o.fargs[1], o.fargs[2], o.bang)
end, {
  nargs = '*',
  bang = true,
  desc = 'agentls: undo what a task (or one subtask) changed ([taskId] [subtaskId]; ! undoes what can be)',
  complete = function(...)
    return commands().complete_undo(...)
  end,
})
