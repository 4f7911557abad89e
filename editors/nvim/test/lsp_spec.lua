-- agentls asks Neovim's other language clients: gopls (installed by run.sh,
-- AGENTLS_GOPLS), started as a user's configuration starts it for Go
-- buffers, answers agent/references for the code graph, in a workspace
-- where a guess by name would be wrong, and its diagnostics tell a worker
-- what its edit broke.
local R = require('agentls_test')
local agentls = require('agentls')
local client = require('agentls.client')
local compat = require('agentls.compat')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local bin = assert(os.getenv('AGENTLS_BIN'), 'AGENTLS_BIN is not set')
local gopls = os.getenv('AGENTLS_GOPLS')

-- Two packages with a Reader and its Read; a call of Read on a value whose
-- type the graph cannot see (one.New()'s); t.Errorf beside errs.Errorf, with
-- an Errorf method in errs for a guess by name to take.
local files = {
  ['go.mod'] = 'module example.com/w\n\ngo 1.21\n',
  ['one/reader.go'] = 'package one\n\ntype Reader struct{}\n\nfunc New() *Reader { return &Reader{} }\n\nfunc (*Reader) Read() {}\n',
  ['two/reader.go'] = 'package two\n\ntype Reader struct{}\n\nfunc (Reader) Read() {}\n',
  ['errs/errs.go'] = 'package errs\n\nfunc Errorf(f string) error { return nil }\n\ntype T struct{}\n\nfunc (T) Errorf(f string) {}\n',
  ['use/use.go'] = 'package use\n\nimport (\n\t"testing"\n\n\t"example.com/w/errs"\n\t"example.com/w/one"\n\t"example.com/w/two"\n)\n\n'
    .. 'func Use(t *testing.T) error {\n\tone.New().Read()\n\t_ = two.Reader{}\n\tt.Errorf("testing\'s")\n\treturn errs.Errorf("errs\'s")\n}\n',
}

-- calls are the calls edges of an agent/codeGraph answer, "from -> to" to
-- their provenance.
local function calls(res)
  local out = {}
  for _, e in ipairs(res and res.edges or {}) do
    if e.kind == 'calls' then
      out[e.from .. ' -> ' .. e.to] = e.provenance
    end
  end
  return out
end

test('gopls answers agentls\'s questions through Neovim: the references are its own, the guesses by name are gone', function()
  if gopls == nil or gopls == '' then
    R.skip('AGENTLS_GOPLS is not set (scripts/gopls.sh installs gopls)')
  end
  agentls.restart()
  -- as a person's configuration has it: filetypes detected (-u NONE has not)
  vim.cmd('filetype on')
  local root = R.tmpdir()
  for name, text in pairs(files) do
    R.write(root .. '/' .. name, text)
  end
  -- gopls for the Go buffers of the workspace, as a configuration of the
  -- person's would start it.
  local gopls_id
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'go',
    callback = function(ev)
      if not vim.startswith(vim.api.nvim_buf_get_name(ev.buf), root) then
        return
      end
      gopls_id = gopls_id or vim.lsp.start_client({ name = 'gopls', cmd = { gopls }, root_dir = root })
      vim.lsp.buf_attach_client(ev.buf, gopls_id)
    end,
  })
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  vim.cmd('edit use/use.go')
  local use_buf = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    local c = gopls_id and vim.lsp.get_client_by_id(gopls_id)
    return c and c.initialized
  end, 'gopls to start', 30000)
  -- gopls has loaded the module once it answers: the first load may take a
  -- while on a cold cache.
  R.wait_for(function()
    local res = compat.request_sync(vim.lsp.get_client_by_id(gopls_id), 'textDocument/definition',
      { textDocument = { uri = vim.uri_from_bufnr(use_buf) }, position = { line = 11, character = 11 } }, 20000, use_buf)
    return res and type(res.result) == 'table' and #res.result > 0
  end, 'gopls to load the module', 120000)

  assert(agentls.setup({ cmd = bin }))
  local ws = assert(agentls.workspace())
  R.eq(root, ws.root, 'workspace root')
  local function graph(params)
    local res, err = client.request_sync(ws, 'agent/codeGraph', params, 60000)
    assert(res, 'agent/codeGraph ' .. vim.inspect(params) .. ': ' .. tostring(err))
    return res
  end

  local read_one = calls(graph({ symbol = 'Read', path = 'one/reader.go' }))
  R.eq('lsp', read_one['use/use.go#Use -> one/reader.go#Reader.Read'], 'one.New().Read() is one\'s Read, as gopls says: ' .. vim.inspect(read_one))
  local read_two = calls(graph({ symbol = 'Read', path = 'two/reader.go' }))
  R.eq(nil, read_two['use/use.go#Use -> two/reader.go#Reader.Read'], 'and not two\'s, as a guess by name would have it: ' .. vim.inspect(read_two))
  local errorf = calls(graph({ symbol = 'errs.Errorf' }))
  R.eq('lsp', errorf['use/use.go#Use -> errs/errs.go#Errorf'], 'errs.Errorf is called from Use: ' .. vim.inspect(errorf))
  local method = calls(graph({ symbol = 'T.Errorf' }))
  R.eq(nil, method['use/use.go#Use -> errs/errs.go#T.Errorf'], 't.Errorf is testing\'s, not errs.T\'s: ' .. vim.inspect(method))

  -- agentls asked through the plugin: the buffers of the files asked about
  -- are loaded, gopls attached to them, agentls's own client not asked.
  local one = require('agentls.reverse').loaded_buffer(root .. '/one/reader.go')
  R.truthy(one, 'one/reader.go was loaded for the question')
  local names = {}
  for _, c in ipairs(compat.buf_clients(one)) do
    table.insert(names, c.name)
  end
  R.truthy(vim.tbl_contains(names, 'gopls'), 'gopls serves one/reader.go: ' .. vim.inspect(names))
end)

-- start_gopls starts gopls for the Go buffers under root, as a person's
-- configuration would; it returns a function that gives its client id.
local function start_gopls(root)
  vim.cmd('filetype on')
  local gopls_id
  vim.api.nvim_create_autocmd('FileType', {
    pattern = 'go',
    callback = function(ev)
      if not vim.startswith(vim.api.nvim_buf_get_name(ev.buf), root) then
        return
      end
      gopls_id = gopls_id or vim.lsp.start_client({ name = 'gopls', cmd = { gopls }, root_dir = root })
      vim.lsp.buf_attach_client(ev.buf, gopls_id)
    end,
  })
  return function()
    return gopls_id
  end
end

local function call(name, args)
  return { name = name, arguments = args }
end

test('a worker is told the error gopls finds in its edit, fixes it, and the task ends with no diagnostics', function()
  if gopls == nil or gopls == '' then
    R.skip('AGENTLS_GOPLS is not set (scripts/gopls.sh installs gopls)')
  end
  agentls.restart()
  local root = R.tmpdir()
  R.write(root .. '/go.mod', 'module example.com/greet\n\ngo 1.21\n')
  R.write(root .. '/main.go', 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("Hello")\n}\n')
  R.write(root .. '/other.go', 'package main\n\nfunc other() string { return "other" }\n')
  R.write(root .. '/.script.json', vim.json.encode({
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { call('read_file', { path = 'main.go' }) } },
        { toolCalls = { call('edit_file', { path = 'main.go', old_string = 'fmt.Println("Hello")', new_string = 'fmt.Println("Hello, " + name)' }) } },
        { toolCalls = { call('edit_file', { path = 'main.go', old_string = '\tfmt.Println("Hello, " + name)', new_string = '\tname := "world"\n\tfmt.Println("Hello, " + name)' }) } },
        { toolCalls = { call('get_diagnostics', vim.empty_dict()) } },
        { toolCalls = { call('finish', { summary = 'greets by name' }) } },
      },
    },
  }))
  local gopls_id = start_gopls(root)
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  -- Another file of the package is open, and gopls loads the module;
  -- main.go is opened by the edit itself, and gopls first publishes what
  -- it finds in the file as it was.
  vim.cmd('edit other.go')
  local other = vim.api.nvim_get_current_buf()
  R.wait_for(function()
    local c = gopls_id() and vim.lsp.get_client_by_id(gopls_id())
    return c and c.initialized
  end, 'gopls to start', 30000)
  R.wait_for(function()
    local res = compat.request_sync(vim.lsp.get_client_by_id(gopls_id()), 'textDocument/hover',
      { textDocument = { uri = vim.uri_from_bufnr(other) }, position = { line = 2, character = 6 } }, 20000, other)
    return res and type(res.result) == 'table'
  end, 'gopls to load the module', 120000)

  -- The edit's wait ends when gopls reports: the bound only guards a
  -- gopls that never does.
  assert(agentls.setup({ cmd = bin, model = 'script:' .. root .. '/.script.json', edit_mode = 'apply',
    diagnostics = { wait_ms = 300000 } }))
  local ws = assert(agentls.workspace())
  local updates = {}
  local apply = ws.state.task_update
  ws.state.task_update = function(self, p)
    table.insert(updates, p)
    return apply(self, p)
  end
  local done, result, err = false, nil, nil
  agentls.run('Greet by name', { workspace = ws, on_done = function(r, e)
    done, result, err = true, r, e
  end })
  R.wait_for(function()
    return done
  end, 'the task to end', 240000)
  assert(not err, 'agent/run failed: ' .. tostring(err))
  R.eq('done', result.state, 'state')

  local results = {}
  for _, u in ipairs(updates) do
    if u.event and u.event.kind == 'toolResult' then
      table.insert(results, u.event.tool .. ': ' .. tostring(u.event.summary))
    end
  end
  R.contains(results, 'edit_file: Updated main.go (+1 -1 lines). Diagnostics after this change, from the editor\'s language server: 1 error new. main.go:6:26: error: undefined: name (compiler', 'the error gopls found is in the edit\'s result')
  R.contains(results, 'edit_file: Updated main.go (+1 -0 lines). Diagnostics: the editor\'s language server finds no new error or warning after this change.', 'the fix leaves none')
  R.contains(results, 'get_diagnostics: No diagnostics in the workspace, from the editor\'s language servers.', 'the task ends with none')
  R.eq({}, vim.diagnostic.get(require('agentls.reverse').loaded_buffer(root .. '/main.go')), 'Neovim shows none either')
end)

return T
