-- Installation: every snippet of the Install section of editors/nvim/README.md,
-- run in a fresh Neovim in the order its plugin manager follows, against a
-- copy of the plugin laid out like a checkout. Each must leave the :Agent…
-- commands defined, :help agentls working and setup() called. The README is
-- read here, so a snippet that stops working fails this test.
local R = require('agentls_test')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')
local readme = assert(R.read(plugin .. '/README.md'), 'README.md')
local commands = { 'AgentRun', 'AgentStop', 'AgentTasks', 'AgentHeat', 'AgentSessions', 'AgentTrace', 'AgentRestart' }

-- snippet returns the fenced block of text (the plugin's README by default)
-- whose first line is marker.
local function snippet(marker, text)
  for body in (text or readme):gmatch('```%w*\n(.-)```') do
    if body:sub(1, #marker + 1) == marker .. '\n' then
      return body
    end
  end
  error('no code block starting with ' .. marker, 2)
end

-- The README's one-off help step for the managers that do not build tags.
local helptags_step = ':helptags /path/to/agentls/editors/nvim/doc'

-- checkout makes a fresh directory with the plugin at editors/nvim and a
-- home for the Neovim under test; the help tags are built in the copy, never
-- in the repository.
local function checkout()
  local root = R.tmpdir()
  vim.fn.mkdir(root .. '/agentls/editors/nvim', 'p')
  vim.fn.mkdir(root .. '/home', 'p')
  for _, d in ipairs({ 'plugin', 'lua', 'doc' }) do
    local out = vim.fn.system({ 'cp', '-R', plugin .. '/' .. d, root .. '/agentls/editors/nvim/' .. d })
    assert(vim.v.shell_error == 0, out)
  end
  os.remove(root .. '/agentls/editors/nvim/doc/tags')
  return root
end

-- at puts the checkout in place of the README's /path/to/agentls.
local function at(text, root)
  return (text:gsub('/path/to/agentls', function()
    return root .. '/agentls'
  end))
end

-- The check that runs in the Neovim under test once it has started (and
-- after the steps a person would type): what is defined, and whether the help
-- opens.
local check = [[
local res = { commands = {}, errmsg = vim.v.errmsg }
for _, c in ipairs(vim.fn.json_decode(os.getenv('AGENTLS_TEST_COMMANDS'))) do
  res.commands[c] = vim.fn.exists(':' .. c) == 2
end
local ok, agentls = pcall(require, 'agentls')
res.setup_called = ok and agentls.config ~= nil
for _, topic in ipairs({ 'agentls', ':AgentRun', 'agentls.setup()' }) do
  local found = pcall(vim.cmd, 'help ' .. topic)
  res['help ' .. topic] = found and vim.fn.expand('%:t') or false
  if found then
    vim.cmd('helpclose')
  end
end
res.messages = vim.fn.execute('messages')
local f = assert(io.open(os.getenv('AGENTLS_TEST_RESULT'), 'w'))
f:write(vim.fn.json_encode(res))
f:close()
vim.cmd('qall!')
]]

-- start runs a fresh headless Neovim with init as its init file, in the
-- checkout's home (HOME and the XDG directories there), types the steps
-- (Ex commands) after startup, runs the check and returns what it found.
local function start(root, init, steps)
  local home = root .. '/home'
  R.write(root .. '/check.lua', check)
  local argv = {
    'env', 'HOME=' .. home,
    'XDG_CONFIG_HOME=' .. home .. '/.config', 'XDG_DATA_HOME=' .. home .. '/.local/share',
    'XDG_STATE_HOME=' .. home .. '/.local/state', 'XDG_CACHE_HOME=' .. home .. '/.cache',
    'AGENTLS_TEST_RESULT=' .. root .. '/result.json',
    'AGENTLS_TEST_COMMANDS=' .. vim.fn.json_encode(commands),
    'timeout', '60', 'nvim', '--headless', '-i', 'NONE', '-u', init,
  }
  for _, s in ipairs(steps or {}) do
    vim.list_extend(argv, { '-c', s })
  end
  vim.list_extend(argv, { '-c', 'luafile ' .. root .. '/check.lua' })
  local out = vim.fn.system(argv)
  local text = R.read(root .. '/result.json')
  if not text then
    error('Neovim exited ' .. vim.v.shell_error .. ' without a result:\n' .. out, 2)
  end
  local res = vim.fn.json_decode(text)
  res.output = out
  return res
end

-- loaded fails unless the plugin is fully there: commands, help, setup().
local function loaded(res, how)
  local why = how .. ' (messages: ' .. res.messages .. res.output .. ')'
  for _, c in ipairs(commands) do
    R.truthy(res.commands[c], ':' .. c .. ' after ' .. why)
  end
  for _, topic in ipairs({ 'agentls', ':AgentRun', 'agentls.setup()' }) do
    R.eq('agentls.txt', res['help ' .. topic], ':help ' .. topic .. ' after ' .. why)
  end
  R.truthy(res.setup_called, 'setup() after ' .. why)
end

-- What lazy.nvim does with a plugin it loads (lua/lazy/core/loader.lua,
-- Loader._load): Neovim's own plugin loading is off; the plugin's dir goes on
-- 'runtimepath'; the .lua and .vim files under dir/plugin/ are sourced,
-- sorted; then config(plugin, opts) runs. A spec with dir is a local plugin;
-- one that names a repository is cloned to <root>/lazy/<name>.
local lazy = [[
vim.go.loadplugins = false
local spec = dofile(os.getenv('AGENTLS_TEST_SPEC'))
local name = spec.name or (spec.dir or spec[1]):match('[^/]+$')
local plugin = { name = name, dir = spec.dir or os.getenv('AGENTLS_TEST_CLONE') }
vim.opt.rtp:append(plugin.dir)
local files = {}
local function walk(dir)
  local fs = vim.loop.fs_scandir(dir)
  while fs do
    local n, t = vim.loop.fs_scandir_next(fs)
    if not n then
      break
    end
    local path = dir .. '/' .. n
    if t == 'directory' then
      walk(path)
    elseif n:match('%.lua$') or n:match('%.vim$') then
      table.insert(files, path)
    end
  end
end
walk(plugin.dir .. '/plugin')
table.sort(files)
for _, f in ipairs(files) do
  vim.cmd('source ' .. vim.fn.fnameescape(f))
end
if spec.config then
  spec.config(plugin, spec.opts or {})
end
]]

local function with_lazy(root, spec_source, clone)
  R.write(root .. '/spec.lua', 'return ' .. spec_source)
  R.write(root .. '/init.lua', 'vim.env.AGENTLS_TEST_SPEC = ' .. vim.inspect(root .. '/spec.lua') .. '\n'
    .. 'vim.env.AGENTLS_TEST_CLONE = ' .. vim.inspect(clone or '') .. '\n' .. lazy)
  return start(root, root .. '/init.lua')
end

test('lazy.nvim: the README spec loads the commands, the help and the setup', function()
  local root = checkout()
  loaded(with_lazy(root, at(snippet('-- lazy.nvim'), root)), 'the lazy.nvim spec')
end)

test('lazy.nvim: the spec of the top README works too', function()
  local top = assert(R.read(plugin .. '/../../README.md'), 'README.md')
  local root = checkout()
  loaded(with_lazy(root, at(snippet("{ dir = '/path/to/agentls/editors/nvim', name = 'agentls',", top), root)),
    "the top README's lazy.nvim spec")
end)

test('lazy.nvim: a spec naming the repository root leaves the commands undefined', function()
  -- The spec the README used to give: lazy.nvim sources the plugin/ of the
  -- clone's root, which has none, and appending editors/nvim in config comes
  -- after the sourcing. This keeps the emulation above honest: it does not
  -- source what lazy.nvim would not.
  local root = checkout()
  local res = with_lazy(root, [[{ 'agentls/agentls', config = function(plugin)
    vim.opt.rtp:append(plugin.dir .. '/editors/nvim')
    require('agentls').setup({})
  end }]], root .. '/agentls')
  R.truthy(res.setup_called, 'the Lua modules load')
  R.eq(false, res.commands.AgentRun, ':AgentRun')
  R.eq(false, res['help agentls'], ':help agentls')
end)

test('vim-plug: the README lines load the commands, and the help after :helptags', function()
  -- vim-plug puts a local plugin on 'runtimepath' in plug#end(), while the
  -- init file runs; Neovim sources its plugin/ at startup.
  local root = checkout()
  local lines, plugs = {}, 0
  for _, l in ipairs(vim.split(at(snippet('" vim-plug'), root), '\n', { plain = true })) do
    local dir = l:match("^Plug '([^']+)'")
    if dir then
      plugs = plugs + 1
      table.insert(lines, 'execute "set rtp^=" . fnameescape(' .. vim.fn.string(dir) .. ')')
    elseif not l:match('^call plug#') then
      table.insert(lines, l)
    end
  end
  R.eq(1, plugs, 'Plug lines in the snippet')
  R.write(root .. '/init.vim', table.concat(lines, '\n'))
  R.contains(readme, helptags_step, 'the README names the help step')
  loaded(start(root, root .. '/init.vim', { at(helptags_step, root) }), 'the vim-plug lines')
end)

test('packer.nvim: the README use() loads the commands, and the help after :helptags', function()
  -- packer.nvim links a local plugin into pack/packer/start/<as> of the data
  -- directory, where Neovim loads it at startup, and runs config from
  -- plugin/packer_compiled.lua of the config directory, also at startup.
  local root = checkout()
  R.write(root .. '/init.lua', [[
_G.packer_configs = {}
function use(spec)
  local dir = vim.fn.stdpath('data') .. '/site/pack/packer/start'
  vim.fn.mkdir(dir, 'p')
  assert(vim.loop.fs_symlink(spec[1], dir .. '/' .. (spec.as or spec[1]:match('[^/]+$'))))
  table.insert(_G.packer_configs, spec.config)
end
]] .. at(snippet('-- packer.nvim'), root))
  R.write(root .. '/home/.config/nvim/plugin/packer_compiled.lua', [[
for _, config in ipairs(_G.packer_configs) do
  config()
end
]])
  loaded(start(root, root .. '/init.lua', { at(helptags_step, root) }), 'the packer.nvim use()')
end)

-- packadd_setup runs the README's shell lines in the checkout's home.
local function packadd_setup(root)
  local sh = at(snippet('mkdir -p ~/.local/share/nvim/site/pack/agentls/opt'), root)
  local out = vim.fn.system({ 'env', 'HOME=' .. root .. '/home', 'sh', '-ec', sh })
  R.eq(0, vim.v.shell_error, 'the shell lines: ' .. out)
end

test('packadd in init.lua: the README lines load the commands, and the help after :helptags', function()
  local root = checkout()
  packadd_setup(root)
  R.write(root .. '/init.lua', snippet('-- packadd (in init.lua)'))
  loaded(start(root, root .. '/init.lua', { at(helptags_step, root) }), 'packadd in init.lua')
end)

test(':packadd agentls typed after startup loads the commands too', function()
  local root = checkout()
  packadd_setup(root)
  R.write(root .. '/init.lua', '')
  loaded(start(root, root .. '/init.lua', { 'packadd agentls', "lua require('agentls').setup({})", at(helptags_step, root) }),
    ':packadd after startup')
end)

return T
