-- Neovim in a real terminal: tmux runs Neovim with the plugin, the real
-- agentls and a scripted model; keys are typed with send-keys and the
-- screen read with capture-pane. The diff review (propose mode), the
-- transcript of a running task steered with :AgentSkip, and the question
-- of a workspace that is not trusted. The screens are printed (as # lines)
-- in the suite's output.
local R = require('agentls_test')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local bin = assert(os.getenv('AGENTLS_BIN'), 'AGENTLS_BIN is not set')
local plugin = vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h:h')

local sock -- the tmux server of this spec (its own socket)

local function tmux(args)
  local cmd = { 'tmux', '-S', sock }
  vim.list_extend(cmd, args)
  local out = vim.fn.system(cmd)
  return out, vim.v.shell_error
end

local session = 'review'

local function screen()
  local out, rc = tmux({ 'capture-pane', '-p', '-t', session })
  if rc ~= 0 then
    return ''
  end
  return out
end

-- wait_screen waits until the screen shows needle (plain text; a list:
-- all of them, as a screen drawn whole does) and returns it.
local function wait_screen(needle, what)
  local last = ''
  local needles = type(needle) == 'table' and needle or { needle }
  R.wait_for(function()
    last = screen()
    for _, n in ipairs(needles) do
      if not last:find(n, 1, true) then
        return false
      end
    end
    return true
  end, function()
    return (what or table.concat(needles, ', ')) .. '; the screen:\n' .. last
  end, 20000)
  return last
end

local function print_screen(shown)
  for _, l in ipairs(vim.split(shown, '\n', true)) do
    io.stdout:write(('#   ' .. l):gsub('%s+$', '') .. '\n')
  end
end

test('the review float in Neovim in a terminal: shown with its keys, y/n per hunk, Enter applies', function()
  if vim.fn.executable('tmux') ~= 1 then
    R.skip('tmux is not installed (test/run.sh installs Debian\'s tmux where it can)')
  end
  local root = R.tmpdir()
  sock = root .. '/tmux.sock'
  vim.fn.mkdir(root .. '/.git', 'p')
  local before = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n'
  R.write(root .. '/n.txt', before)
  R.write(root .. '/.script.json', vim.json.encode({
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { { name = 'read_file', arguments = { path = 'n.txt' } } } },
        { toolCalls = { { name = 'write_file', arguments = { path = 'n.txt', content = 'ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n' } } } },
        { toolCalls = { { name = 'finish', arguments = { summary = 'shouted' } } } },
      },
    },
  }))
  R.write(root .. '/init.lua', string.format([[
vim.opt.rtp:prepend(%q)
vim.cmd('runtime! plugin/agentls.lua')
vim.o.swapfile = false
assert(require('agentls').setup({ cmd = %q, model = %q, edit_mode = 'propose' }))
]], plugin, bin, 'script:' .. root .. '/.script.json'))
  local _, rc = tmux({ 'new-session', '-d', '-s', 'review', '-x', '100', '-y', '32', '-c', root,
    'nvim -u ' .. vim.fn.shellescape(root .. '/init.lua') .. ' -i NONE n.txt' })
  R.eq(0, rc, 'tmux new-session')
  wait_screen('one', 'Neovim showing n.txt')
  tmux({ 'send-keys', '-t', 'review', ':AgentRun Shout the ends', 'Enter' })
  local shown = wait_screen({ 'agentls proposes: update n.txt', '+TEN', 'q or <Esc> reject all' }, 'the review')
  print_screen(shown)
  for _, s in ipairs({ '--- a/n.txt', '+++ b/n.txt', '@@ -1,4 +1,4 @@ undecided', '-one', '+ONE', '-ten', '+TEN',
    'y accept hunk', 'n reject hunk', '<CR> apply the accepted hunks', 'q or <Esc> reject all' }) do
    R.truthy(shown:find(s, 1, true), 'the screen shows ' .. s)
  end
  R.eq(before, R.read(root .. '/n.txt'), 'nothing applied while the review is open')
  tmux({ 'send-keys', '-t', 'review', 'n' })
  wait_screen('@@ -1,4 +1,4 @@ rejected', 'the first hunk rejected')
  tmux({ 'send-keys', '-t', 'review', 'y' })
  wait_screen('1 accepted, 1 rejected, 0 undecided', 'the second hunk accepted')
  tmux({ 'send-keys', '-t', 'review', 'Enter' })
  R.wait_for(function()
    return R.read(root .. '/n.txt') == 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n'
  end, function()
    return 'only the accepted hunk on disk; n.txt is ' .. vim.inspect(R.read(root .. '/n.txt')) .. '; the screen:\n' .. screen()
  end, 20000)
  R.wait_for(function()
    return not screen():find('agentls proposes', 1, true)
  end, 'the review to close')
  tmux({ 'send-keys', '-t', 'review', 'Escape', ':qa!', 'Enter' })
  R.wait_for(function()
    local _, code = tmux({ 'has-session', '-t', 'review' })
    return code ~= 0
  end, 'Neovim to quit')
end)

test('the transcript of a running task in a terminal follows the stream, and :AgentSkip with <Tab> steers the task', function()
  if vim.fn.executable('tmux') ~= 1 then
    R.skip('tmux is not installed (test/run.sh installs Debian\'s tmux where it can)')
  end
  local root = R.tmpdir()
  if sock then
    tmux({ 'kill-server' })
  end
  sock = root .. '/tmux.sock'
  session = 'transcript'
  vim.fn.mkdir(root .. '/.git', 'p')
  R.write(root .. '/n.txt', 'notes\n')
  R.write(root .. '/.script.json', vim.json.encode({
    agents = {
      coordinator = { { text = 'Two steps: think, then write.', toolCalls = { { name = 'plan', arguments = { subtasks = {
        { id = '1', content = 'Think about the notes' },
        { id = '2', content = 'Write it down', dependsOn = { '1' } },
      } } } } } },
      ['1'] = {
        { text = 'Reading the notes first.\nThey are short.', toolCalls = { { name = 'read_file', arguments = { path = 'n.txt' } } } },
        { delayMs = 120000, text = 'still thinking' },
      },
      ['2'] = {
        { text = 'Writing it down.', toolCalls = { { name = 'write_file', arguments = { path = 'out.txt', content = 'written\n' } } } },
        { toolCalls = { { name = 'finish', arguments = { summary = 'written down' } } } },
      },
    },
  }))
  R.write(root .. '/init.lua', string.format([[
vim.opt.rtp:prepend(%q)
vim.cmd('runtime! plugin/agentls.lua')
vim.o.swapfile = false
assert(require('agentls').setup({ cmd = %q, model = %q, edit_mode = 'apply' }))
]], plugin, bin, 'script:' .. root .. '/.script.json'))
  local _, rc = tmux({ 'new-session', '-d', '-s', session, '-x', '110', '-y', '36', '-c', root,
    'nvim -u ' .. vim.fn.shellescape(root .. '/init.lua') .. ' -i NONE n.txt' })
  R.eq(0, rc, 'tmux new-session')
  wait_screen('notes', 'Neovim showing n.txt')
  tmux({ 'send-keys', '-t', session, ':AgentRun Think then write', 'Enter' })
  tmux({ 'send-keys', '-t', session, ':AgentTranscript', 'Enter' })
  local shown = wait_screen({ 'They are short.', '✓ read_file n.txt' }, 'the transcript showing the first subtask\'s tool call')
  for _, want in ipairs({ 'agentls transcript  task nvim-', '── task ──', 'Two steps: think, then write.', '── 1 · Think about the notes ──',
    'Reading the notes first.', 'They are short.', '✓ read_file n.txt  → notes' }) do
    R.truthy(shown:find(want, 1, true), 'the screen shows ' .. want .. '; the screen:\n' .. shown)
  end
  R.eq(nil, shown:find('path: "n.txt"', 1, true), 'the call\'s arguments are folded')
  -- <Tab> completes the running subtask's id.
  tmux({ 'send-keys', '-t', session, ':AgentSkip ', 'Tab' })
  wait_screen(':AgentSkip 1', 'the completion of the running subtask')
  tmux({ 'send-keys', '-t', session, 'Enter' })
  -- The end of the task, with how its subtasks ended (one of two done, one
  -- skipped) and its changes; told in one line, so nothing waits for a key.
  -- The end's line in the message area is waited for too: were it to come
  -- after the :echo below, it would write over what that echo shows.
  shown = wait_screen({ '── task done: 1 of 2 subtasks done, 1 skipped · 1 applied, 0 rejected ──', '✓ done: written down',
    'done: 1 of 2 subtasks done, 1 skipped; 1 applied, 0 rejected' },
    'the end of the task in the transcript and in the message area')
  print_screen(shown)
  for _, want in ipairs({ '↷ subtask 1 skipped', '── 2 · Write it down ──', 'Writing it down.', '✎ changed out.txt', 'written down' }) do
    R.truthy(shown:find(want, 1, true), 'the screen shows ' .. want .. '; the screen:\n' .. shown)
  end
  R.eq(nil, shown:find('Press ENTER', 1, true), 'the end took no key of the person\'s: no hit-enter prompt; the screen:\n' .. shown)
  R.eq('written\n', R.read(root .. '/out.txt'), 'subtask 2 ran after the skip')
  -- The cursor is where the person left it, and what they type goes there.
  tmux({ 'send-keys', '-t', session, ':echo "in " . bufname("%")', 'Enter' })
  wait_screen('in agentls://transcript/nvim-', 'the cursor still in the transcript, where the person put it')
  tmux({ 'send-keys', '-t', session, ':wincmd p', 'Enter', 'i', 'typed ', 'Escape', ':w', 'Enter' })
  R.wait_for(function()
    return R.read(root .. '/n.txt') == 'typed notes\n'
  end, function()
    return 'what was typed in n.txt; it is ' .. vim.inspect(R.read(root .. '/n.txt')) .. '; the screen:\n' .. screen()
  end, 20000)
  tmux({ 'send-keys', '-t', session, 'Escape', ':qa!', 'Enter' })
  R.wait_for(function()
    local _, code = tmux({ 'has-session', '-t', session })
    return code ~= 0
  end, 'Neovim to quit')
end)

test('in a workspace that is not trusted, a command under commands = allow waits for the answer typed on the screen', function()
  if vim.fn.executable('tmux') ~= 1 then
    R.skip('tmux is not installed (test/run.sh installs Debian\'s tmux where it can)')
  end
  local root = R.tmpdir()
  if sock then
    tmux({ 'kill-server' })
  end
  sock = root .. '/tmux.sock'
  session = 'trust'
  vim.fn.mkdir(root .. '/.git', 'p')
  R.write(root .. '/n.txt', 'notes\n')
  R.write(root .. '/.script.json', vim.json.encode({
    agents = {
      coordinator = { { text = 'One step.' } },
      ['1'] = {
        { toolCalls = { { name = 'run_command', arguments = { command = 'echo checked > checked.txt' } } } },
        { toolCalls = { { name = 'finish', arguments = { summary = 'checked' } } } },
      },
    },
  }))
  R.write(root .. '/init.lua', string.format([[
vim.opt.rtp:prepend(%q)
vim.cmd('runtime! plugin/agentls.lua')
vim.o.swapfile = false
assert(require('agentls').setup({ cmd = %q, model = %q, commands = 'allow', workspace_trust = 'untrusted' }))
]], plugin, bin, 'script:' .. root .. '/.script.json'))
  local _, rc = tmux({ 'new-session', '-d', '-s', session, '-x', '110', '-y', '30', '-c', root,
    'nvim -u ' .. vim.fn.shellescape(root .. '/init.lua') .. ' -i NONE n.txt' })
  R.eq(0, rc, 'tmux new-session')
  wait_screen('notes', 'Neovim showing n.txt')
  tmux({ 'send-keys', '-t', session, ':AgentRun Run the check', 'Enter' })
  local shown = wait_screen({ 'This workspace is not trusted. agentls wants to run `echo checked > checked.txt`', 'Deny' }, 'the question')
  print_screen(shown)
  R.eq(nil, R.read(root .. '/checked.txt'), 'nothing runs before the answer')
  -- The first action is Run.
  tmux({ 'send-keys', '-t', session, '1', 'Enter' })
  R.wait_for(function()
    return R.read(root .. '/checked.txt') == 'checked\n'
  end, function()
    return 'the command to run; the screen:\n' .. screen()
  end, 20000)
  tmux({ 'send-keys', '-t', session, 'Escape', ':qa!', 'Enter' })
  R.wait_for(function()
    local _, code = tmux({ 'has-session', '-t', session })
    return code ~= 0
  end, 'Neovim to quit')
end)

T.teardown = function()
  if sock then
    tmux({ 'kill-server' })
  end
end

return T
