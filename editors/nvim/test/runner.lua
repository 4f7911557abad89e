-- A small test runner for real Neovim, headless:
--   nvim --headless -u NONE -i NONE -c "lua dofile('test/runner.lua').main('test/unit_spec.lua')"
-- A spec file returns a list of { name, fn }. Each test runs in pcall;
-- results print one per line; any failure ends Neovim with :cquit.
local R = {}

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- wait_for waits (processing events) until pred() is true, or fails the
-- test naming what it waited for (what may be a function that describes
-- what it saw).
function R.wait_for(pred, what, ms)
  local ok = vim.wait(ms or 10000, function()
    local good, v = pcall(pred)
    return good and v
  end, 10)
  if not ok then
    if type(what) == 'function' then
      what = what() -- describes what was seen instead
    end
    error('timed out waiting for ' .. what, 2)
  end
end

-- skip ends the test as skipped, with the reason (run.sh fails a skip
-- under CI=true).
local skip_marker = {}
function R.skip(reason)
  error({ [skip_marker] = true, reason = reason }, 0)
end

function R.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format('%s: want %s, got %s', what or 'value', vim.inspect(want), vim.inspect(got)), 2)
  end
end

function R.truthy(v, what)
  if not v then
    error((what or 'value') .. ' is ' .. vim.inspect(v), 2)
  end
end

-- contains fails unless one of lines contains needle (plain text).
function R.contains(lines, needle, what)
  if type(lines) == 'string' then
    lines = vim.split(lines, '\n', { plain = true })
  end
  for _, l in ipairs(lines) do
    if l:find(needle, 1, true) then
      return
    end
  end
  error(string.format('%s: no line contains %q in\n  %s', what or 'lines', needle, table.concat(lines, '\n  ')), 2)
end

function R.not_contains(lines, needle, what)
  for _, l in ipairs(lines) do
    if l:find(needle, 1, true) then
      error(string.format('%s: a line contains %q: %s', what or 'lines', needle, l), 2)
    end
  end
end

function R.buf_lines(b)
  return vim.api.nvim_buf_get_lines(b, 0, -1, false)
end

-- stub_ui replaces vim.ui.input and vim.ui.select with scripted answers
-- (taken in order) and records every call; it returns the record.
function R.stub_ui(answers)
  local rec = { input = {}, select = {}, answers = answers or {} }
  local function next_answer(kind, arg)
    local a = table.remove(rec.answers, 1)
    if type(a) == 'function' then
      return a(kind, arg)
    end
    return a
  end
  vim.ui.input = function(opts, on_confirm)
    table.insert(rec.input, opts)
    local a = next_answer('input', opts)
    on_confirm(a ~= vim.NIL and a or nil)
  end
  vim.ui.select = function(items, opts, on_choice)
    table.insert(rec.select, { items = items, opts = opts })
    local a = next_answer('select', items)
    if type(a) == 'number' then
      on_choice(items[a], a)
    elseif a == nil or a == vim.NIL then
      on_choice(nil, nil)
    else
      for i, it in ipairs(items) do
        local label = opts and opts.format_item and opts.format_item(it) or it
        if label == a then
          on_choice(it, i)
          return
        end
      end
      error('stub_ui: no item ' .. vim.inspect(a) .. ' in ' .. vim.inspect(items))
    end
  end
  return rec
end

-- tmpdir makes a fresh directory and returns its real path.
function R.tmpdir()
  local d = vim.fn.tempname()
  vim.fn.mkdir(d, 'p')
  return vim.loop.fs_realpath(d)
end

function R.write(path, text)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ':h'), 'p')
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

function R.read(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

-- reset closes every window but one and wipes every buffer, so tests do not
-- see each other's.
function R.reset()
  vim.cmd('silent! only!')
  vim.cmd('enew!')
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if b ~= vim.api.nvim_get_current_buf() then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
end

function R.main(file)
  package.loaded['agentls_test'] = R
  vim.cmd('runtime! plugin/agentls.lua')
  local ok_load, tests = pcall(dofile, file)
  if not ok_load then
    out('not ok - loading ' .. file .. ': ' .. tostring(tests))
    vim.cmd('cquit')
    return
  end
  local passed, failed = 0, 0
  local orig_input, orig_select, orig_notify = vim.ui.input, vim.ui.select, vim.notify
  local only = os.getenv('AGENTLS_TEST_ONLY')
  for _, t in ipairs(tests) do
    if not only or t[1]:find(only, 1, true) then
      local notes = {}
      vim.notify = function(msg, level)
        table.insert(notes, { msg = msg, level = level })
      end
      R.notes = notes
      local ok, err = xpcall(t[2], function(e)
        if type(e) == 'table' and e[skip_marker] then
          return e
        end
        return debug.traceback(e)
      end)
      vim.ui.input, vim.ui.select, vim.notify = orig_input, orig_select, orig_notify
      pcall(R.reset)
      if not ok and type(err) == 'table' and err[skip_marker] then
        passed = passed + 1
        out('ok - ' .. t[1] .. ' # SKIP ' .. tostring(err.reason))
      elseif ok then
        passed = passed + 1
        out('ok - ' .. t[1])
      else
        failed = failed + 1
        out('not ok - ' .. t[1])
        out('  ' .. tostring(err):gsub('\n', '\n  '))
        if #notes > 0 then
          out('  notifications: ' .. vim.inspect(notes):gsub('\n', '\n  '))
        end
      end
    end
  end
  if tests.teardown then
    pcall(tests.teardown)
  end
  out(string.format('# %s: %d passed, %d failed', file, passed, failed))
  if failed > 0 or (passed == 0 and not only) then
    vim.cmd('cquit')
  else
    vim.cmd('qall!')
  end
end

return R
