-- The editor's side of docs/PROTOCOL.md §4 and §5: handlers for the requests the
-- server sends (agent/readFile, agent/ask, window/showMessageRequest,
-- workspace/applyEdit, agent/references, agent/definition, agent/diagnostics)
-- and for its notifications (agent/taskUpdate, agent/heatUpdate,
-- window/logMessage, $/progress).
--
-- Neovim answers a server request with the handler's return value. Two
-- rules of its client shape every handler here:
--   * a handler that returns nil sends no reply at all (0.7): a null result
--     is vim.NIL;
--   * an error must use a code of vim.lsp.protocol.ErrorCodes, or the client
--     trips an assertion and again sends no reply.
-- From 0.9 a handler runs in a coroutine and may yield while a vim.ui
-- provider waits for the person; before 0.9 it runs on the main loop and the
-- answer must be known when it returns (the built-in vim.ui.input and
-- vim.ui.select answer at once).
local compat = require('agentls.compat')

local M = {}

local ErrorCodes = vim.lsp.protocol.ErrorCodes

local function rpc_error(code, message)
  return vim.lsp.rpc.rpc_response_error(code, message)
end

-- await runs start(done), where start opens a UI that calls done(value)
-- once, and returns that value. ok is false when the UI answered neither at
-- once nor (on 0.9+) later from the coroutine: an asynchronous vim.ui
-- provider on a Neovim that answers server requests synchronously.
function M.await(start)
  local co = compat.in_coroutine()
  local finished, value = false, nil
  if co then
    local yielded = false
    start(function(v)
      if finished then
        return
      end
      finished, value = true, v
      if yielded then
        vim.schedule(function()
          coroutine.resume(co, v)
        end)
      end
    end)
    if finished then
      return value, true
    end
    yielded = true
    return coroutine.yield(), true
  end
  start(function(v)
    if not finished then
      finished, value = true, v
    end
  end)
  if not finished then
    return nil, false
  end
  return value, true
end

local function async_ui_warning(what)
  vim.notify(
    'agentls: the vim.ui provider did not answer ' .. what .. ' at once, and this Neovim ('
      .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor)
      .. ') answers server requests synchronously: treated as dismissed. Neovim 0.9+ waits for asynchronous providers.',
    vim.log.levels.WARN
  )
end

-- normalize gives a comparable absolute path: symlinks resolved when the
-- file exists.
local function normalize(path)
  if path == nil or path == '' then
    return nil
  end
  local abs = vim.fn.fnamemodify(path, ':p')
  return vim.loop.fs_realpath(abs) or abs
end
M.normalize = normalize

-- loaded_buffer returns the loaded buffer showing path, if any.
function M.loaded_buffer(path)
  local want = normalize(path)
  if not want then
    return nil
  end
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' and normalize(name) == want then
        return b
      end
    end
  end
  return nil
end

-- buffer_text is the buffer's text as Neovim would write it ('eol' and
-- 'fixeol' decide the final newline), with "\n" line ends: buffer lines,
-- positions and the edits computed from them all agree.
function M.buffer_text(b)
  local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
  if #lines == 1 and lines[1] == '' then
    return ''
  end
  local text = table.concat(lines, '\n')
  local bo = vim.bo[b]
  if bo.eol or (bo.fixeol and not bo.binary) then
    text = text .. '\n'
  end
  return text
end

local function read_disk(path)
  local f, err = io.open(path, 'rb')
  if not f then
    return nil, err
  end
  local data = f:read('*a')
  f:close()
  if data == nil then
    return nil, 'read failed'
  end
  return data
end

-- target resolves the file of a reverse call: its uri, else its
-- workspace-relative path under root.
local function target(params, root)
  if type(params) ~= 'table' then
    return nil
  end
  if type(params.uri) == 'string' and params.uri ~= '' then
    return vim.uri_to_fname(params.uri)
  end
  if type(params.path) == 'string' and params.path ~= '' and root then
    return root .. '/' .. params.path
  end
  return nil
end

-- read_file answers agent/readFile: the loaded buffer's text, unsaved edits
-- included, else the file on disk.
function M.read_file(params, root)
  local path = target(params, root)
  if not path then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: neither uri nor path given')
  end
  local b = M.loaded_buffer(path)
  if b then
    return { content = M.buffer_text(b) }
  end
  local data, err = read_disk(path)
  if not data then
    return nil, rpc_error(ErrorCodes.InvalidParams, string.format('cannot read %s: %s', params.path or path, tostring(err)))
  end
  return { content = data }
end

-- ask answers agent/ask: vim.ui.select over the options, else vim.ui.input.
function M.ask(params)
  if type(params) ~= 'table' or type(params.question) ~= 'string' then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: "question" must be a string')
  end
  local options = type(params.options) == 'table' and params.options or {}
  local answer, ok
  if #options > 0 then
    answer, ok = M.await(function(done)
      vim.ui.select(options, { prompt = 'agentls: ' .. params.question, kind = 'agentls.ask' }, function(choice)
        done(choice)
      end)
    end)
  else
    answer, ok = M.await(function(done)
      vim.ui.input({ prompt = 'agentls: ' .. params.question .. ' ' }, function(input)
        done(input)
      end)
    end)
  end
  if not ok then
    async_ui_warning('a question')
  end
  if answer == nil then
    answer = vim.NIL
  end
  return { answer = answer }
end

-- show_message_request answers window/showMessageRequest through
-- vim.ui.select (the built-in handler uses inputlist).
function M.show_message_request(params)
  if type(params) ~= 'table' then
    return vim.NIL
  end
  local actions = type(params.actions) == 'table' and params.actions or {}
  local message = tostring(params.message or '')
  if #actions == 0 then
    vim.notify('agentls: ' .. message, vim.log.levels.INFO)
    return vim.NIL
  end
  local choice, ok = M.await(function(done)
    vim.ui.select(actions, {
      prompt = 'agentls: ' .. message,
      kind = 'agentls.approval',
      format_item = function(a)
        return a.title
      end,
    }, function(a)
      done(a)
    end)
  end)
  if not ok then
    async_ui_warning('an approval')
  end
  return choice or vim.NIL
end

-- edit_files lists the files a WorkspaceEdit touches: {fname, uri, kind}.
local function edit_files(edit)
  local out, seen = {}, {}
  local function add(uri, kind)
    if type(uri) == 'string' and not seen[uri] then
      seen[uri] = true
      table.insert(out, { uri = uri, fname = vim.uri_to_fname(uri), kind = kind })
    end
  end
  for _, c in ipairs(edit.documentChanges or {}) do
    if c.kind == 'create' or c.kind == 'delete' then
      add(c.uri, c.kind)
    elseif c.kind == 'rename' then
      add(c.oldUri, 'delete')
      add(c.newUri, 'create')
    elseif c.textDocument then
      add(c.textDocument.uri, 'update')
    end
  end
  for uri in pairs(edit.changes or {}) do
    add(uri, 'update')
  end
  return out
end

-- needs_confirmation reports whether any change annotation of edit asks
-- the person to confirm (propose mode).
local function needs_confirmation(edit)
  for _, a in pairs(edit.changeAnnotations or {}) do
    if type(a) == 'table' and a.needsConfirmation then
      return true
    end
  end
  return false
end

-- stale_version reports the first TextDocumentEdit whose version is older
-- than the buffer's: the edit was computed against text that has changed.
local function stale_version(edit)
  for _, c in ipairs(edit.documentChanges or {}) do
    local td = c.textDocument
    if td and type(td.version) == 'number' then
      local b = M.loaded_buffer(vim.uri_to_fname(td.uri))
      local have = b and vim.lsp.util.buf_versions[b]
      if have and have ~= td.version then
        return td.uri
      end
    end
  end
  return nil
end

-- check_resources checks the edit's CreateFile and DeleteFile against the
-- disk before anything is applied, as the LSP asks and Neovim 0.7's own
-- applier does not: a create never empties a file that exists (unless it
-- says overwrite), and a delete never throws away a buffer's unsaved text.
-- It returns the reason and the index of the change to refuse, or nil.
local function check_resources(edit)
  for i, c in ipairs(edit.documentChanges or {}) do
    local opts = type(c.options) == 'table' and c.options or {}
    if (c.kind == 'create' or c.kind == 'delete') and type(c.uri) ~= 'string' then
      return 'a ' .. c.kind .. ' without a uri', i - 1
    end
    if c.kind == 'create' then
      if vim.loop.fs_stat(vim.uri_to_fname(c.uri)) and not opts.overwrite and not opts.ignoreIfExists then
        return c.uri .. ' already exists', i - 1
      end
    elseif c.kind == 'delete' then
      local fname = vim.uri_to_fname(c.uri)
      if not vim.loop.fs_stat(fname) then
        if not opts.ignoreIfNotExists then
          return c.uri .. ' does not exist', i - 1
        end
      else
        local b = M.loaded_buffer(fname)
        if b and vim.bo[b].modified then
          return c.uri .. ' has unsaved changes in its buffer; save or revert it first', i - 1
        end
      end
    end
  end
  return nil
end

-- make_parents creates the directories of the files the edit creates:
-- Neovim 0.7 opens a new file without making them, and fails.
local function make_parents(edit)
  for _, c in ipairs(edit.documentChanges or {}) do
    if c.kind == 'create' then
      local dir = vim.fn.fnamemodify(vim.uri_to_fname(c.uri), ':h')
      if vim.fn.isdirectory(dir) == 0 then
        vim.fn.mkdir(dir, 'p')
      end
    end
  end
end

-- current_text is a file's text as agent/readFile answers it: its loaded
-- buffer's, else the disk's; nil when it cannot be read.
local function current_text(fname)
  local b = M.loaded_buffer(fname)
  if b then
    return M.buffer_text(b)
  end
  return read_disk(fname)
end

-- apply_edit answers workspace/applyEdit. Edits land in buffers (undoable)
-- through Neovim's own apply_workspace_edit. An edit whose annotations need
-- confirmation is shown first as a diff (agentls.review) and only what the
-- person accepts of it is applied: every hunk, some, or none.
-- With opts.save_edits, buffers the person had not modified are written.
function M.apply_edit(params, opts)
  if type(params) ~= 'table' or type(params.edit) ~= 'table' then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: "edit" must be a WorkspaceEdit')
  end
  local edit = params.edit
  if needs_confirmation(edit) then
    local accepted, why = require('agentls.review').run(params, {
      root = opts.root,
      offset_encoding = opts.offset_encoding,
      read = current_text,
    })
    if not accepted then
      return { applied = false, failureReason = why }
    end
    edit = accepted
  end
  local files = edit_files(edit)
  local stale = stale_version(edit)
  if stale then
    return { applied = false, failureReason = 'the document changed since the edit was made: ' .. stale }
  end
  local refused, index = check_resources(edit)
  if refused then
    return { applied = false, failureReason = refused, failedChange = index }
  end
  local modified_before, empty_before = {}, {}
  for _, f in ipairs(files) do
    local b = M.loaded_buffer(f.fname)
    modified_before[f.fname] = b ~= nil and vim.bo[b].modified
    if b then
      local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
      empty_before[f.fname] = #lines == 1 and lines[1] == ''
      -- Close the undo block, so one undo takes back the agent's edit only.
      vim.api.nvim_buf_call(b, function()
        vim.cmd('let &g:undolevels = &g:undolevels')
      end)
    else
      local st = vim.loop.fs_stat(f.fname)
      empty_before[f.fname] = st == nil or st.size == 0
    end
  end
  local made, merr = pcall(make_parents, edit)
  if not made then
    return { applied = false, failureReason = tostring(merr) }
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, opts.offset_encoding or 'utf-16')
  if not ok then
    return { applied = false, failureReason = tostring(err) }
  end
  -- Text inserted into an empty buffer ends with the buffer's own empty
  -- line: "a\n" would become "a\n\n" on write. Drop that line.
  for _, f in ipairs(files) do
    local b = empty_before[f.fname] and f.kind ~= 'delete' and M.loaded_buffer(f.fname)
    if b then
      local n = vim.api.nvim_buf_line_count(b)
      local last = vim.api.nvim_buf_get_lines(b, n - 1, n, false)[1]
      if n > 1 and last == '' and (vim.bo[b].eol or vim.bo[b].fixeol) then
        vim.api.nvim_buf_set_lines(b, n - 1, n, false, {})
      end
    end
  end
  if opts.save_edits then
    for _, f in ipairs(files) do
      local b = f.kind ~= 'delete' and not modified_before[f.fname] and M.loaded_buffer(f.fname)
      if b and vim.bo[b].modified then
        local wok, werr = pcall(vim.api.nvim_buf_call, b, function()
          vim.cmd('silent noautocmd keepalt write')
        end)
        if not wok then
          vim.notify('agentls: the edit is in the buffer but was not written: ' .. tostring(werr), vim.log.levels.WARN)
        end
      end
    end
  end
  return { applied = true }
end

-- The code graph's questions to the editor's language servers
-- (agent/references, agent/definition): forwarded, as
-- textDocument/references and textDocument/definition, to the language
-- clients of the file's buffer (never agentls itself), the buffer loaded
-- when it is not. The answer is waited for, so that it is known when the
-- handler returns (before 0.9 Neovim answers server requests on its main
-- loop), within a bound under agentls's own for one question. null when no
-- client can answer: agentls then answers from its graph.

M.lsp_timeout_ms = 4000

-- file_buffer is the buffer of a file, loaded (without a swap file, its
-- filetype detected, so that language clients that attach by filetype do)
-- when no buffer shows it.
local function file_buffer(fname)
  local b = M.loaded_buffer(fname)
  if b then
    return b
  end
  if vim.fn.filereadable(fname) ~= 1 then
    return nil
  end
  b = vim.fn.bufadd(fname)
  vim.bo[b].swapfile = false
  vim.bo[b].buflisted = false
  vim.fn.bufload(b)
  vim.api.nvim_buf_call(b, function()
    vim.cmd('silent! filetype detect')
  end)
  return b
end

local capability = {
  ['textDocument/references'] = 'referencesProvider',
  ['textDocument/definition'] = 'definitionProvider',
}

local function can_answer(c, method)
  if c.name == 'agentls' or compat.is_stopped(c) then
    return false
  end
  local v = c.server_capabilities and c.server_capabilities[capability[method]]
  return v ~= nil and v ~= false
end

-- inside reports whether path is under dir.
local function inside(path, dir)
  dir = normalize(dir)
  return dir ~= nil and (path == dir or vim.startswith(path, dir .. '/'))
end

-- serves reports whether a client that is not attached to the buffer b
-- (of filetype ft, the file fname) would be: it takes the filetype, or
-- serves another buffer of it, and its root holds the file.
local function serves(c, b, ft, fname)
  if c.config and c.config.root_dir and not inside(fname, c.config.root_dir) then
    return false
  end
  if c.config and type(c.config.filetypes) == 'table' then
    return vim.tbl_contains(c.config.filetypes, ft)
  end
  for _, other in ipairs(compat.client_buffers(c)) do
    if other ~= b and vim.api.nvim_buf_is_valid(other) and vim.bo[other].filetype == ft then
      return true
    end
  end
  return false
end

-- lsp_clients are the clients that can answer method for the buffer b:
-- those attached to it, else those that serve its filetype and root,
-- attached to it now.
function M.lsp_clients(b, method)
  local out = {}
  for _, c in ipairs(compat.buf_clients(b)) do
    if can_answer(c, method) then
      table.insert(out, c)
    end
  end
  if #out > 0 then
    return out
  end
  local ft = vim.bo[b].filetype
  local fname = normalize(vim.api.nvim_buf_get_name(b))
  if ft == '' or not fname then
    return out
  end
  for _, c in ipairs(compat.clients()) do
    if can_answer(c, method) and serves(c, b, ft, fname) then
      vim.lsp.buf_attach_client(b, c.id)
      table.insert(out, c)
    end
  end
  return out
end

-- file_lines reads the lines of a file once per answer: its loaded
-- buffer's, else the disk's.
local function line_reader()
  local cache = {}
  return function(uri, n)
    local lines = cache[uri]
    if not lines then
      local fname = vim.uri_to_fname(uri)
      local b = M.loaded_buffer(fname)
      if b then
        lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
      else
        local data = read_disk(fname)
        lines = data and vim.split(data, '\n', { plain = true }) or {}
      end
      cache[uri] = lines
    end
    return ((lines[n + 1] or ''):gsub('\r$', ''))
  end
end

-- convert moves a position's character between UTF-16 (agentls's) and
-- UTF-8 (a client that speaks it): to_utf8 or back.
local function convert(line, character, to_utf8)
  local ok, v = pcall(function()
    if to_utf8 then
      return vim.str_byteindex(line, character, true)
    end
    local _, u16 = vim.str_utfindex(line, math.min(character, #line))
    return u16
  end)
  return ok and v or character
end

local function convert_range(r, uri, lines)
  for _, k in ipairs({ 'start', 'end' }) do
    local p = r and r[k]
    if type(p) == 'table' and type(p.line) == 'number' and type(p.character) == 'number' then
      p.character = convert(lines(uri, p.line), p.character, false)
    end
  end
end

-- ask_language_servers forwards a question of agentls's to the file's
-- language clients: the first answer that names a place.
function M.ask_language_servers(method, params)
  if type(params) ~= 'table' or type(params.textDocument) ~= 'table' or type(params.textDocument.uri) ~= 'string'
    or type(params.position) ~= 'table' then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: textDocument.uri and position are required')
  end
  -- No other language client at all: nothing to load a buffer for.
  local any = false
  for _, c in ipairs(compat.clients()) do
    any = any or can_answer(c, method)
  end
  local ok, fname = pcall(vim.uri_to_fname, params.textDocument.uri)
  local b = any and ok and file_buffer(fname)
  if not b then
    return vim.NIL
  end
  local answer, failed = nil, nil
  for _, c in ipairs(M.lsp_clients(b, method)) do
    local p = vim.deepcopy(params)
    local utf8 = c.offset_encoding == 'utf-8'
    if utf8 then
      local line = vim.api.nvim_buf_get_lines(b, p.position.line, p.position.line + 1, false)[1] or ''
      p.position.character = convert(line, p.position.character, true)
    end
    local res, err = compat.request_sync(c, method, p, M.lsp_timeout_ms, b)
    if res and res.err == nil and res.result ~= nil and res.result ~= vim.NIL then
      local result = res.result
      if result.uri or result.targetUri then
        result = { result }
      end
      if utf8 then
        local lines = line_reader()
        for _, l in ipairs(result) do
          convert_range(l.range, l.uri, lines)
          convert_range(l.targetRange, l.targetUri, lines)
          convert_range(l.targetSelectionRange, l.targetUri, lines)
        end
      end
      if #result > 0 then
        return result
      end
      answer = result
    else
      failed = err or (res and res.err and res.err.message) or failed
    end
  end
  if answer then
    return answer
  end
  if failed then
    return nil, rpc_error(ErrorCodes.InternalError, string.format('%s: the language server did not answer: %s', method, tostring(failed)))
  end
  return vim.NIL
end

-- The diagnostics Neovim has (agent/diagnostics): vim.diagnostic.get's, of
-- every namespace (the language clients', and linters'), as LSP diagnostics:
-- 0-based lines, characters in UTF-16 (vim.diagnostic counts bytes). The
-- server waits for its report of a change itself, told by
-- agent/didChangeDiagnostics (client.lua, on DiagnosticChanged): this
-- answers at once.

local severities = { [1] = 1, [2] = 2, [3] = 3, [4] = 4 }

-- to_lsp turns a vim.diagnostic into an LSP Diagnostic, the line of the
-- file read through lines(uri, n) to count its characters.
local function to_lsp(d, uri, lines)
  local lsp = type(d.user_data) == 'table' and type(d.user_data.lsp) == 'table' and d.user_data.lsp or {}
  local function pos(line, col)
    line = math.max(line or 0, 0)
    return { line = line, character = convert(lines(uri, line), math.max(col or 0, 0), false) }
  end
  local out = {
    range = { start = pos(d.lnum, d.col), ['end'] = pos(d.end_lnum or d.lnum, d.end_col or d.col) },
    severity = severities[d.severity] or 1,
    message = tostring(d.message or ''),
  }
  local code = d.code or lsp.code
  if type(code) == 'string' or type(code) == 'number' then
    out.code = code
  end
  if type(d.source) == 'string' and d.source ~= '' then
    out.source = d.source
  end
  return out
end

-- buffer_of is the buffer, loaded or not, named fname: a language client's
-- diagnostics of a file no window shows are on an unloaded buffer.
local function buffer_of(fname)
  local want = normalize(fname)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(b)
    if name ~= '' and normalize(name) == want then
      return b
    end
  end
  return nil
end

-- diagnostics answers agent/diagnostics: the diagnostics of the files
-- params.uris names, else of every file under root that has some. A file
-- without any is left out; none at all is null.
function M.diagnostics(params, root)
  if params ~= nil and type(params) ~= 'table' then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: agent/diagnostics takes {uris?}')
  end
  local uris = type(params) == 'table' and params.uris or nil
  if uris ~= nil and uris ~= vim.NIL and type(uris) ~= 'table' then
    return nil, rpc_error(ErrorCodes.InvalidParams, 'invalid params: uris must be a list of URIs')
  end
  local lines = line_reader()
  local by_uri, order = {}, {}
  local function add(uri, ds)
    for _, d in ipairs(ds) do
      if not by_uri[uri] then
        by_uri[uri] = {}
        table.insert(order, uri)
      end
      table.insert(by_uri[uri], to_lsp(d, uri, lines))
    end
  end
  if type(uris) == 'table' and #uris > 0 then
    for _, uri in ipairs(uris) do
      local ok, fname = pcall(vim.uri_to_fname, uri)
      local b = ok and type(uri) == 'string' and buffer_of(fname)
      if b then
        add(uri, vim.diagnostic.get(b))
      end
    end
  else
    local dir = normalize(root)
    local per = {}
    for _, d in ipairs(vim.diagnostic.get()) do
      per[d.bufnr] = per[d.bufnr] or {}
      table.insert(per[d.bufnr], d)
    end
    for b, ds in pairs(per) do
      local name = vim.api.nvim_buf_is_valid(b) and normalize(vim.api.nvim_buf_get_name(b))
      if name and (dir == nil or vim.startswith(name, dir .. '/')) then
        add(vim.uri_from_fname(name), ds)
      end
    end
  end
  if #order == 0 then
    return vim.NIL
  end
  local items = {}
  for _, uri in ipairs(order) do
    table.insert(items, { uri = uri, diagnostics = by_uri[uri] })
  end
  return { items = items }
end

-- handlers returns the client's handlers. ws(ctx) returns the workspace
-- entry of the client (root, state, config).
function M.handlers(ws)
  local h = {}
  h['agent/readFile'] = function(_, params, ctx)
    local w = ws(ctx)
    return M.read_file(params, w and w.root)
  end
  h['agent/ask'] = function(_, params, ctx)
    local w = ws(ctx)
    if w then
      w.state:waiting(true)
    end
    local res, err = M.ask(params)
    if w then
      w.state:waiting(false)
    end
    return res, err
  end
  h['window/showMessageRequest'] = function(_, params)
    return M.show_message_request(params)
  end
  h['workspace/applyEdit'] = function(_, params, ctx)
    local w = ws(ctx)
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    return M.apply_edit(params, {
      root = w and w.root,
      save_edits = w and w.config.save_edits,
      offset_encoding = client and client.offset_encoding,
    })
  end
  h['agent/references'] = function(_, params)
    return M.ask_language_servers('textDocument/references', params)
  end
  h['agent/definition'] = function(_, params)
    return M.ask_language_servers('textDocument/definition', params)
  end
  h['agent/diagnostics'] = function(_, params, ctx)
    local w = ws(ctx)
    return M.diagnostics(params, w and w.root)
  end
  h['agent/taskUpdate'] = function(_, params, ctx)
    local w = ws(ctx)
    if w and type(params) == 'table' then
      w.state:task_update(params)
    end
  end
  h['agent/heatUpdate'] = function(_, params, ctx)
    local w = ws(ctx)
    if w and type(params) == 'table' then
      w.state:heat_update(params)
    end
  end
  h['window/logMessage'] = function(err, params, ctx, config)
    local w = ws(ctx)
    local builtin = vim.lsp.handlers['window/logMessage']
    if builtin then
      builtin(err, params, ctx, config)
    end
    if w and type(params) == 'table' and type(params.type) == 'number' then
      -- MessageType: 1 error, 2 warning, 3 info, 4 log.
      local level = ({ vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG })[params.type]
      if level and level >= (w.config.notify_log_level or vim.log.levels.WARN) then
        vim.notify('agentls: ' .. tostring(params.message), level)
      end
    end
  end
  h['$/progress'] = function(err, params, ctx, config)
    local w = ws(ctx)
    if w and type(params) == 'table' then
      w.state:progress(params)
    end
    local builtin = vim.lsp.handlers['$/progress']
    if builtin then
      return builtin(err, params, ctx, config)
    end
  end
  return h
end

return M
