-- Differences between the Neovim versions the plugin supports (0.7 to the
-- current release), kept in one place.
local M = {}

local function has(v)
  return vim.fn.has('nvim-' .. v) == 1
end

-- Client methods became colon-called in 0.11 (the dot form is deprecated).
local colon = has('0.11')

function M.request(client, method, params, handler, bufnr)
  if colon then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if colon then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

-- request_sync waits for a client's answer (a vim.wait that runs the event
-- loop meanwhile): { result = ..., err = ... }, or nil and why.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if colon then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

-- buf_clients are the language clients attached to a buffer, a list.
function M.buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    table.insert(out, c)
  end
  return out
end

-- clients are every running language client, a list.
function M.clients()
  if vim.lsp.get_clients then
    return vim.lsp.get_clients()
  end
  return vim.lsp.get_active_clients()
end

-- client_buffers are the buffers a client is attached to.
function M.client_buffers(client)
  if client.attached_buffers then
    local out = {}
    for b in pairs(client.attached_buffers) do
      table.insert(out, b)
    end
    return out
  end
  return vim.lsp.get_buffers_by_client_id(client.id)
end

function M.is_stopped(client)
  if colon then
    return client:is_stopped()
  end
  return client.is_stopped()
end

function M.stop(client, force)
  if colon then
    return client:stop(force)
  end
  return client.stop(force)
end

-- start starts (or, on 0.8+, reuses) the client for config and attaches
-- bufnr when given. It returns the client id or nil.
--
-- vim.lsp.start exists from 0.8 and attaches the buffer itself; 0.7 has only
-- vim.lsp.start_client, which returns before initialize has been answered.
function M.start(config, bufnr)
  if vim.lsp.start then
    return vim.lsp.start(config, {
      bufnr = bufnr or vim.api.nvim_get_current_buf(),
      reuse_client = function(client, conf)
        return client.name == conf.name and client.config.root_dir == conf.root_dir and not M.is_stopped(client)
      end,
    })
  end
  local id = vim.lsp.start_client(config)
  if id and bufnr then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

-- Whether server requests are answered from a coroutine the handler may
-- yield (0.9+): then a vim.ui provider may answer asynchronously.
function M.in_coroutine()
  local co = coroutine.running()
  if co == nil then
    return nil
  end
  -- Lua 5.2+ returns the main coroutine with a second value true.
  local _, is_main = coroutine.running()
  if is_main then
    return nil
  end
  return co
end

-- health returns start/ok/warn/error/info reporters for :checkhealth on any
-- supported version (0.7: require('health').report_*, 0.8-0.9:
-- vim.health.report_*, 0.10+: vim.health.start/ok/…).
function M.health()
  local h = vim.health
  if h == nil or (h.start == nil and h.report_start == nil) then
    h = require('health')
  end
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
    info = h.info or h.report_info,
  }
end

M.has = has

return M
