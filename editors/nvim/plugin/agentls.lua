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

local command = vim.api.nvim_create_user_command

command('AgentRun', function(o)
  local a = agentls()
  local ws = a.workspace()
  if not ws then
    return
  end
  local session = o.bang and ws.last_session or nil
  if o.args ~= '' then
    a.run(o.args, { workspace = ws, session_id = session })
  else
    a.prompt(ws, session)
  end
end, { nargs = '*', bang = true, desc = 'agentls: run a task (! continues the last session)' })

command('AgentStop', function(o)
  agentls().stop(nil, o.args ~= '' and o.args or nil)
end, {
  nargs = '?',
  desc = 'agentls: stop a running task (the newest by default)',
  complete = function()
    local ws = agentls().client.get(agentls().client.root_for_buf(0, (agentls().config or {}).root_markers or { '.git' }))
    local ids = {}
    for _, t in ipairs(ws and ws.state:list() or {}) do
      if not require('agentls.state').ended(t.state) then
        table.insert(ids, t.id)
      end
    end
    return ids
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
