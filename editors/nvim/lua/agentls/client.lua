-- One agentls client per workspace root: started when a buffer of that root
-- is opened (autostart) or on the first command, and found again by root.
local compat = require('agentls.compat')
local config = require('agentls.config')
local reverse = require('agentls.reverse')
local state = require('agentls.state')
local trust = require('agentls.trust')

local M = {}

local workspaces = {} -- root -> workspace
local by_client = {} -- client id -> workspace

-- The workspace of a handler's client.
local function ws_of(ctx)
  return ctx and by_client[ctx.client_id]
end

local function exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

-- find_root walks up from path (a file or a directory) to the first folder
-- holding one of markers; nil when none does.
function M.find_root(path, markers)
  if path == nil or path == '' then
    return nil
  end
  local dir = vim.fn.fnamemodify(path, ':p')
  local stat = vim.loop.fs_stat(dir)
  if not stat or stat.type ~= 'directory' then
    dir = vim.fn.fnamemodify(dir, ':h')
  end
  dir = dir:gsub('/+$', '')
  if dir == '' then
    dir = '/'
  end
  while true do
    for _, m in ipairs(markers) do
      if exists((dir == '/' and '' or dir) .. '/' .. m) then
        return vim.loop.fs_realpath(dir) or dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

-- root_for_buf is the workspace root of a buffer: found from its file by
-- the markers, else the current directory.
function M.root_for_buf(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr or 0)
  local buftype = vim.bo[bufnr or 0].buftype
  if name ~= '' and buftype == '' then
    local root = M.find_root(name, markers)
    if root then
      return root
    end
  end
  local cwd = vim.loop.cwd()
  return M.find_root(cwd, markers) or vim.loop.fs_realpath(cwd) or cwd
end

-- capabilities are Neovim's own, plus what agentls reads (docs/PROTOCOL.md §2).
function M.capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.applyEdit = true
  caps.workspace.workspaceEdit = caps.workspace.workspaceEdit or {}
  caps.workspace.workspaceEdit.documentChanges = true
  caps.workspace.workspaceEdit.resourceOperations = { 'create', 'rename', 'delete' }
  -- Propose mode: the edit handler asks before applying an annotated edit.
  caps.workspace.workspaceEdit.changeAnnotationSupport = { groupsOnLabel = false }
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.window.showMessage = caps.window.showMessage or { messageActionItem = { additionalPropertiesSupport = false } }
  caps.experimental = caps.experimental or {}
  -- runCommand is false: Neovim answers server requests on its main loop,
  -- and a long command would freeze the editor; the server runs commands
  -- itself with the same approval and timeout (docs/PROTOCOL.md §4).
  -- references and definition: the code graph asks the buffers' other
  -- language clients (reverse.lua) before it guesses. diagnostics: a
  -- worker's edits are told vim.diagnostic's errors (reverse.lua), and the
  -- server hears when they change (diagnostics_changed, below).
  caps.experimental.agent = { readFile = true, runCommand = false, ask = true, references = true, definition = true,
    diagnostics = true }
  return caps
end

local function flush(ws)
  local queue = ws.queue
  ws.queue = {}
  for _, fn in ipairs(queue) do
    local ok, err = pcall(fn, ws)
    if not ok then
      vim.notify('agentls: ' .. tostring(err), vim.log.levels.ERROR)
    end
  end
end

local function fail_queue(ws, message)
  local queue = ws.queue
  ws.queue = {}
  ws.failed = message
  for _, fn in ipairs(queue) do
    pcall(fn, ws, message)
  end
end

-- trust_of is the trust of root under cfg, telling why when the
-- workspace_trust function failed.
local function trust_of(cfg, root)
  local value, source, err = trust.of(cfg.workspace_trust, root)
  if err then
    vim.notify('agentls: ' .. err .. '; the workspace is taken as untrusted', vim.log.levels.ERROR)
  end
  return value, source
end

-- start starts the client of root. It returns the workspace, or nil and why.
local function start(root, cfg, bufnr)
  if vim.fn.executable(cfg.cmd) ~= 1 then
    return nil, string.format('agentls binary %q not found (set cmd in require("agentls").setup)', cfg.cmd)
  end
  local trusted, trust_source = trust_of(cfg, root)
  local ws = {
    root = root,
    config = cfg,
    state = state.new(root),
    queue = {},
    ready = false,
    client_id = nil,
    server_info = nil,
    -- The workspaceTrust agentls was last sent, and where it came from.
    trust = trusted,
    trust_source = trust_source,
  }
  local cmd = { cfg.cmd, 'serve' }
  vim.list_extend(cmd, cfg.args or {})
  local id = compat.start({
    name = 'agentls',
    cmd = cmd,
    cmd_env = cfg.env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ':t') } },
    init_options = config.init_options(cfg, trusted),
    capabilities = M.capabilities(),
    handlers = reverse.handlers(ws_of),
    on_init = function(client, result)
      local w = by_client[client.id] or ws
      w.server_info = result and result.serverInfo
      local agent = result and result.capabilities and result.capabilities.experimental
        and result.capabilities.experimental.agent
      if not (agent and agent.version == 1) then
        vim.notify('agentls: the server does not speak agentls protocol version 1', vim.log.levels.ERROR)
      end
      -- on_init runs inside the initialize reply; run the queue after it.
      vim.schedule(function()
        w.ready = true
        flush(w)
      end)
    end,
    on_exit = function(code, signal, client_id)
      local w = by_client[client_id]
      by_client[client_id] = nil
      if w and workspaces[w.root] == w then
        workspaces[w.root] = nil
      end
      if w then
        vim.schedule(function()
          fail_queue(w, string.format('agentls exited (code %s, signal %s)', tostring(code), tostring(signal)))
          for _, t in pairs(w.state.tasks) do
            if not state.ended(t.state) then
              w.state:run_failed(t.id, 'the agentls process exited')
            end
          end
        end)
      end
    end,
  }, bufnr)
  if not id then
    return nil, 'agentls did not start (see :LspLog)'
  end
  local existing = by_client[id]
  if existing then
    return existing -- 0.8+: vim.lsp.start reused the live client
  end
  ws.client_id = id
  by_client[id] = ws
  workspaces[root] = ws
  return ws
end

local function alive(ws)
  local client = ws.client_id and vim.lsp.get_client_by_id(ws.client_id)
  return client ~= nil and not compat.is_stopped(client)
end

-- get returns the live workspace of root, if any.
function M.get(root)
  local ws = workspaces[root]
  if ws and alive(ws) then
    return ws
  end
  return nil
end

-- ensure returns the workspace of root, starting its client when needed.
function M.ensure(root, cfg, bufnr)
  local ws = M.get(root)
  if ws then
    if bufnr and not vim.lsp.buf_is_attached(bufnr, ws.client_id) then
      vim.lsp.buf_attach_client(bufnr, ws.client_id)
    end
    return ws
  end
  return start(root, cfg, bufnr)
end

-- all returns the live workspaces.
function M.all()
  local out = {}
  for _, ws in pairs(workspaces) do
    if alive(ws) then
      table.insert(out, ws)
    end
  end
  table.sort(out, function(a, b)
    return a.root < b.root
  end)
  return out
end

-- when_ready runs fn(ws) once initialize has been answered (at once if it
-- has): vim.lsp.start_client returns before that. fn(ws, err) gets an error
-- message instead when the client exits first.
function M.when_ready(ws, fn)
  if ws.ready then
    fn(ws)
  elseif ws.failed then
    fn(ws, ws.failed)
  else
    table.insert(ws.queue, fn)
  end
end

-- request sends method once the client is ready; cb(err, result, code)
-- gets the reply: err a string, code the error's JSON-RPC code when the
-- server answered one.
function M.request(ws, method, params, cb)
  M.when_ready(ws, function(w, failure)
    if failure then
      cb(failure)
      return
    end
    local client = vim.lsp.get_client_by_id(w.client_id)
    if not client then
      cb('the agentls client is gone')
      return
    end
    local ok = compat.request(client, method, params, function(err, result)
      if err then
        local code = type(err) == 'table' and tonumber(err.code) or nil
        cb(type(err) == 'table' and (err.message or vim.inspect(err)) or tostring(err), nil, code)
      else
        cb(nil, result)
      end
    end)
    if not ok then
      cb('the agentls client is not running')
    end
  end)
end

-- request_sync waits up to timeout_ms for the reply (for tests and
-- :checkhealth; commands use request).
function M.request_sync(ws, method, params, timeout_ms)
  local done, err, res = false, nil, nil
  M.request(ws, method, params, function(e, r)
    done, err, res = true, e, r
  end)
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 10) then
    return nil, method .. ': no answer within ' .. tostring(timeout_ms or 10000) .. ' ms'
  end
  return res, err
end

-- refresh_trust works out the trust of ws's root again under cfg (the
-- workspace_trust of the latest setup(), a function of it asked again)
-- and, once the client is ready, sends it with workspace/didChangeConfiguration
-- when it changed: agentls takes it for the tasks started afterwards, so
-- it is sent before the next agent/run. It returns the trust.
function M.refresh_trust(ws, cfg)
  local value, source = trust_of(cfg, ws.root)
  ws.trust_source = source
  M.when_ready(ws, function(w, failure)
    if failure or w.trust == value then
      return
    end
    local c = vim.lsp.get_client_by_id(w.client_id)
    if c then
      compat.notify(c, 'workspace/didChangeConfiguration', { settings = { agentls = { workspaceTrust = value } } })
      w.trust = value
      vim.notify(string.format('agentls: %s is %s now', w.root, value), vim.log.levels.INFO)
    end
  end)
  return value
end

-- stop_all stops every client (for tests and :AgentRestart).
function M.stop_all()
  for id, ws in pairs(by_client) do
    local client = vim.lsp.get_client_by_id(id)
    if client then
      compat.stop(client)
    end
    workspaces[ws.root] = nil
  end
end

-- The files whose diagnostics changed since the last flush, and whether one
-- is scheduled: a language server's publish of many files is one
-- agent/didChangeDiagnostics per workspace.
local changed, flushing = {}, false

-- diagnostics_changed tells the servers of the workspaces that hold the
-- file of bufnr that its diagnostics changed (agent/didChangeDiagnostics,
-- docs/PROTOCOL.md §4), on the next turn of the event loop: a worker that
-- waits for its edit's diagnostics reads them then. Run on every
-- DiagnosticChanged (init.lua).
function M.diagnostics_changed(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or next(workspaces) == nil then
    return
  end
  changed[reverse.normalize(name) or name] = true
  if flushing then
    return
  end
  flushing = true
  vim.schedule(function()
    local files = changed
    changed, flushing = {}, false
    for _, ws in ipairs(M.all()) do
      local uris = {}
      for fname in pairs(files) do
        if vim.startswith(fname, ws.root .. '/') then
          table.insert(uris, vim.uri_from_fname(fname))
        end
      end
      local c = #uris > 0 and ws.ready and vim.lsp.get_client_by_id(ws.client_id)
      if c then
        table.sort(uris)
        compat.notify(c, 'agent/didChangeDiagnostics', { uris = uris })
      end
    end
  end)
end

M.ws_of = ws_of

return M
