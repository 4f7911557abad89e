-- Configuration of the agentls plugin: defaults, validation, and the
-- initializationOptions sent to the server (docs/PROTOCOL.md §2).
local M = {}

M.defaults = {
  -- The agentls binary (a name looked up on PATH, or a path).
  cmd = 'agentls',
  -- Extra arguments after `serve`, e.g. { '--log-file', '/tmp/agentls.log' }.
  args = {},
  -- provider:model (openai:gpt-4.1-mini, anthropic:…, ollama:…, script:/abs/path.json).
  -- nil: the server resolves AGENTLS_MODEL, ANTHROPIC_API_KEY, OPENAI_API_KEY.
  model = nil,
  -- apply | propose | branch
  edit_mode = nil,
  -- subtasks run at once
  max_workers = nil,
  -- run_command policy: ask | allow | deny, and prefixes that run without asking
  commands = nil,
  allow_commands = nil,
  -- { allow = { globs }, deny = { globs } }, workspace-relative doublestar globs
  zones = nil,
  -- { reverseCallMs, commandMs, modelMs, humanMs }
  timeouts = nil,
  -- write .orchestration/agent_trace.jsonl (nil: when .orchestration/ exists)
  trace = nil,
  -- MCP servers whose tools the agent uses, by name, as in Claude Code:
  -- { name = { command = 'npx', args = { … }, env = { … } } } (stdio) or
  -- { name = { url = 'https://…/mcp', headers = { … } } } (streamable HTTP).
  mcp_servers = nil,
  -- External agents subtasks may run on (docs/ENGINES.md), by name, over the
  -- built-in claude, codex and gemini found on PATH or in npm's cache:
  -- { goose = { command = { 'goose', 'acp' }, env = { … }, isolate = true },
  --   codex = { disabled = true } }.
  engines = nil,
  -- MCP tools that run without asking: 'mcp__<server>' or 'mcp__<server>__<tool>'
  allow_mcp_tools = nil,
  -- Ask the models for their thinking, shown folded in the transcript:
  -- true, or { budget_tokens = 4096 } (Anthropic's budget, 1024–128000).
  thinking = nil,
  -- Prices and context windows by model, over the built-in ones:
  -- { ['provider:model'] = { input = 3, output = 15, contextWindow = 200000 } }
  -- (US dollars per million tokens).
  prices = nil,
  -- Diagnostics of the agent's edits (docs/PROTOCOL.md §2): how long an
  -- edit waits for your language clients to check it again, and commands
  -- by language for when no editor gives diagnostics:
  -- { wait_ms = 2000, commands = { go = 'go vet ./...' } }.
  diagnostics = nil,
  -- Whether you trust a workspace (docs/SECURITY.md, "Workspace trust"):
  -- 'trusted', 'untrusted', or a function of the root returning true when
  -- trusted (require('agentls.trust').vim_secure reads vim.secure's trust
  -- database, 0.9+). Untrusted, agentls asks before every command, MCP
  -- server and engine run, whatever commands and allow_* say. nil: trusted,
  -- as agentls takes an editor that says nothing.
  workspace_trust = nil,
  -- Files or folders whose presence marks a workspace root, searched upward
  -- from a buffer's file; the current directory when none is found.
  root_markers = { '.orchestration', '.git' },
  -- Start the client when a buffer is opened under a workspace root (false:
  -- only on the first command).
  autostart = false,
  -- After an edit lands in a buffer the user had not modified, write it, so
  -- commands the agent runs on the disk see it. Buffers with unsaved changes
  -- of the user's are never written.
  save_edits = true,
  -- Show warnings of window/logMessage with vim.notify.
  notify_log_level = vim.log.levels.WARN,
  -- Extra environment for the server process.
  env = nil,
}

local enums = {
  edit_mode = { apply = true, propose = true, branch = true, review = true },
  commands = { ask = true, allow = true, deny = true },
}

local function is_list_of_strings(v)
  if type(v) ~= 'table' then
    return false
  end
  for k, s in pairs(v) do
    if type(k) ~= 'number' or type(s) ~= 'string' then
      return false
    end
  end
  return true
end

-- validate returns nil or a message naming the bad option.
local function validate(c)
  if type(c.cmd) ~= 'string' or c.cmd == '' then
    return 'cmd must be the agentls binary (a name on PATH or a path)'
  end
  if not is_list_of_strings(c.args) then
    return 'args must be a list of strings'
  end
  if c.model ~= nil and (type(c.model) ~= 'string' or not c.model:find(':', 1, true)) then
    return 'model must be provider:model, e.g. openai:gpt-4.1-mini or script:/abs/path.json'
  end
  for key, allowed in pairs(enums) do
    local v = c[key]
    if v ~= nil and not allowed[v] then
      local names = vim.tbl_keys(allowed)
      table.sort(names)
      return string.format('%s must be one of %s, got %s', key, table.concat(names, ', '), vim.inspect(v))
    end
  end
  if c.max_workers ~= nil and (type(c.max_workers) ~= 'number' or c.max_workers < 1 or c.max_workers % 1 ~= 0) then
    return 'max_workers must be a whole number ≥ 1'
  end
  if c.allow_commands ~= nil and not is_list_of_strings(c.allow_commands) then
    return 'allow_commands must be a list of strings'
  end
  if c.zones ~= nil then
    if type(c.zones) ~= 'table' then
      return 'zones must be { allow = { globs }, deny = { globs } }'
    end
    for _, k in ipairs({ 'allow', 'deny' }) do
      if c.zones[k] ~= nil and not is_list_of_strings(c.zones[k]) then
        return 'zones.' .. k .. ' must be a list of globs'
      end
    end
  end
  if c.timeouts ~= nil then
    if type(c.timeouts) ~= 'table' then
      return 'timeouts must be a table of milliseconds'
    end
    for k, v in pairs(c.timeouts) do
      if type(v) ~= 'number' or v < 0 then
        return 'timeouts.' .. tostring(k) .. ' must be a number of milliseconds ≥ 0'
      end
    end
  end
  if c.mcp_servers ~= nil then
    if type(c.mcp_servers) ~= 'table' or #c.mcp_servers > 0 then
      return 'mcp_servers must be a table of server name to { command, args, env } or { url, headers }'
    end
    for name, e in pairs(c.mcp_servers) do
      if type(name) ~= 'string' or type(e) ~= 'table' then
        return 'mcp_servers.' .. tostring(name) .. ' must be { command, args, env } or { url, headers }'
      end
      if (e.command == nil) == (e.url == nil) then
        return 'mcp_servers.' .. name .. ' needs command (a stdio server) or url (a streamable HTTP server), not both'
      end
      if e.args ~= nil and not is_list_of_strings(e.args) then
        return 'mcp_servers.' .. name .. '.args must be a list of strings'
      end
    end
  end
  if c.engines ~= nil then
    if type(c.engines) ~= 'table' or #c.engines > 0 then
      return 'engines must be a table of engine name to { command, env, isolate, disabled }'
    end
    for name, e in pairs(c.engines) do
      if type(name) ~= 'string' or type(e) ~= 'table' then
        return 'engines.' .. tostring(name) .. ' must be { command, env, isolate, disabled }'
      end
      if e.command ~= nil and (not is_list_of_strings(e.command) or #e.command == 0) then
        return 'engines.' .. name .. '.command must be a list of strings: the program, then its arguments'
      end
      if e.env ~= nil and type(e.env) ~= 'table' then
        return 'engines.' .. name .. '.env must be a table of variables'
      end
    end
  end
  if c.allow_mcp_tools ~= nil and not is_list_of_strings(c.allow_mcp_tools) then
    return 'allow_mcp_tools must be a list of mcp__<server> or mcp__<server>__<tool>'
  end
  if c.thinking ~= nil and type(c.thinking) ~= 'boolean' and (type(c.thinking) ~= 'table' or (c.thinking.budget_tokens ~= nil and type(c.thinking.budget_tokens) ~= 'number')) then
    return 'thinking must be true, false or { budget_tokens = n }'
  end
  if c.prices ~= nil and (type(c.prices) ~= 'table' or #c.prices > 0) then
    return 'prices must be a table of provider:model to { input, output, contextWindow }'
  end
  if c.diagnostics ~= nil then
    local d = c.diagnostics
    if type(d) ~= 'table' then
      return 'diagnostics must be { wait_ms = n, commands = { language = command } }'
    end
    if d.wait_ms ~= nil and (type(d.wait_ms) ~= 'number' or d.wait_ms < 0 or d.wait_ms % 1 ~= 0) then
      return 'diagnostics.wait_ms must be a whole number of milliseconds ≥ 0'
    end
    if d.commands ~= nil then
      if type(d.commands) ~= 'table' or #d.commands > 0 then
        return 'diagnostics.commands must be a table of language to command, e.g. { go = \'go vet ./...\' }'
      end
      for lang, cmd in pairs(d.commands) do
        if type(lang) ~= 'string' or type(cmd) ~= 'string' then
          return 'diagnostics.commands.' .. tostring(lang) .. ' must be a command line'
        end
      end
    end
  end
  local wt = c.workspace_trust
  if wt ~= nil and wt ~= 'trusted' and wt ~= 'untrusted' and type(wt) ~= 'function' then
    return 'workspace_trust must be \'trusted\', \'untrusted\' or a function(root) returning true when trusted, got ' .. vim.inspect(wt)
  end
  if c.trace ~= nil and type(c.trace) ~= 'boolean' then
    return 'trace must be true or false'
  end
  if not is_list_of_strings(c.root_markers) then
    return 'root_markers must be a list of file or folder names'
  end
  if c.env ~= nil and type(c.env) ~= 'table' then
    return 'env must be a table of variables'
  end
  return nil
end

-- resolve merges opts over the defaults and validates the result. It returns
-- the config, or nil and a message.
function M.resolve(opts)
  if opts ~= nil and type(opts) ~= 'table' then
    return nil, 'setup() takes a table of options'
  end
  local c = vim.tbl_deep_extend('force', {}, M.defaults, opts or {})
  -- Lists replace, never merge with, the defaults.
  if opts and opts.root_markers then
    c.root_markers = opts.root_markers
  end
  if opts and opts.args then
    c.args = opts.args
  end
  local err = validate(c)
  if err then
    return nil, err
  end
  return c
end

-- words names the server's settings as the person wrote them: the server
-- says initializationOptions.maxWorkers where setup() took max_workers, and
-- names a task's own model by the request that gave it, where the person
-- chose it with :AgentModel (or named it to :AgentCheckModel).
function M.words(text)
  if type(text) ~= 'string' then
    return text
  end
  text = text:gsub('initializationOptions%.model %(editor setting "model", ', 'the model option of setup() (')
  text = text:gsub('initializationOptions%.(%a+)', function(key)
    return 'the ' .. key:gsub('%u', function(c)
      return '_' .. c:lower()
    end) .. ' option of setup()'
  end)
  text = text:gsub('agent/run model', 'the model chosen with :AgentModel')
  text = text:gsub('agent/checkModel model', 'the model checked')
  return text
end

-- init_options turns a config into the initializationOptions of docs/PROTOCOL.md §2,
-- with trust ('trusted' or 'untrusted', the workspace's: agentls.trust) as
-- workspaceTrust. Unset options are left out, so the server's defaults and
-- environment fill the gaps.
function M.init_options(c, trust)
  local o = vim.empty_dict()
  o.workspaceTrust = trust
  o.model = c.model
  o.editMode = c.edit_mode
  o.maxWorkers = c.max_workers
  o.commands = c.commands
  o.allowCommands = c.allow_commands
  o.zones = c.zones
  o.timeouts = c.timeouts
  o.trace = c.trace
  if c.mcp_servers ~= nil then
    -- Empty Lua tables would go out as JSON arrays: objects stay objects.
    local servers = vim.empty_dict()
    for name, e in pairs(c.mcp_servers) do
      local entry = vim.deepcopy(e)
      for _, k in ipairs({ 'env', 'headers' }) do
        if entry[k] ~= nil and vim.tbl_isempty(entry[k]) then
          entry[k] = vim.empty_dict()
        end
      end
      servers[name] = entry
    end
    o.mcpServers = servers
  end
  if c.engines ~= nil then
    local engines = vim.empty_dict()
    for name, e in pairs(c.engines) do
      local entry = vim.deepcopy(e)
      if entry.env ~= nil and vim.tbl_isempty(entry.env) then
        entry.env = vim.empty_dict()
      end
      engines[name] = vim.tbl_isempty(entry) and vim.empty_dict() or entry
    end
    o.engines = engines
  end
  o.allowMcpTools = c.allow_mcp_tools
  if type(c.thinking) == 'table' then
    o.thinking = { enabled = true, budgetTokens = c.thinking.budget_tokens }
  elseif c.thinking ~= nil then
    o.thinking = { enabled = c.thinking }
  end
  o.prices = c.prices
  if c.diagnostics ~= nil then
    local d = vim.empty_dict()
    d.waitMs = c.diagnostics.wait_ms
    if c.diagnostics.commands ~= nil then
      d.commands = vim.tbl_isempty(c.diagnostics.commands) and vim.empty_dict() or c.diagnostics.commands
    end
    o.diagnostics = d
  end
  return o
end

return M
