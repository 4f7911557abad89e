-- The review of a proposed edit: the text applier, the hunks, the float and
-- its keys (fed as typed, read by the review's getchar loop), and the edit
-- of what the person accepted, applied through Neovim's own applier.
local R = require('agentls_test')
local reverse = require('agentls.reverse')
local review = require('agentls.review')

local T = {}
local function test(name, fn)
  table.insert(T, { name, fn })
end

local function keys(s)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(s, true, false, true), 't', false)
end

local function range(l1, c1, l2, c2)
  return { start = { line = l1, character = c1 }, ['end'] = { line = l2, character = c2 } }
end

-- proposal is an annotated edit of the files of d: {rel = {edits}}, in the
-- order given by names.
local function proposal(d, names, edits_of, label)
  local dc = {}
  for _, name in ipairs(names) do
    local edits = {}
    for _, e in ipairs(edits_of[name]) do
      table.insert(edits, { range = e[1], newText = e[2], annotationId = 'a1' })
    end
    table.insert(dc, { textDocument = { uri = vim.uri_from_fname(d .. '/' .. name) }, edits = edits })
  end
  return {
    label = label or ('agentls: update ' .. table.concat(names, ', ')),
    edit = {
      documentChanges = dc,
      changeAnnotations = { a1 = { label = label or 'agentls: update', needsConfirmation = true, description = '+2 -2 lines' } },
    },
  }
end

local ten = 'one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n'

-- two_hunks proposes ONE for one and NINE for nine in n.txt of d.
local function two_hunks(d)
  return proposal(d, { 'n.txt' }, { ['n.txt'] = { { range(0, 0, 1, 0), 'ONE\n' }, { range(8, 0, 9, 0), 'NINE\n' } } })
end

local function typed_all()
  -- every key was read: nothing is left to run as a command afterwards
  R.eq(0, vim.fn.getchar(1), 'keys left unread')
end

test('text edits apply as an LSP client applies them: UTF-16 columns, ranges on the old text, order kept', function()
  R.eq('a😀B é\n', review.apply_text_edits('a😀b é\n', { { range = range(0, 3, 0, 4), newText = 'B' } }, 'utf-16'), 'after an emoji')
  R.eq('a😀b E\n', review.apply_text_edits('a😀b é\n', { { range = range(0, 5, 0, 6), newText = 'E' } }, 'utf-16'), 'é is one unit')
  R.eq('xyab\n', review.apply_text_edits('ab\n', { { range = range(0, 0, 0, 0), newText = 'x' }, { range = range(0, 0, 0, 0), newText = 'y' } }, 'utf-16'), 'same start, in order')
  R.eq('a\nB\r\nc', review.apply_text_edits('a\r\nb\r\nc', { { range = range(0, 1, 1, 1), newText = '\nB' } }, 'utf-16'), 'CRLF lines')
  R.eq('a\nb\nend', review.apply_text_edits('a\nb\n', { { range = range(5, 0, 9, 0), newText = 'end' } }, 'utf-16'), 'past the end: the end')
  R.eq('aZ\n', review.apply_text_edits('ab\n', { { range = range(0, 1, 0, 99), newText = 'Z' } }, 'utf-16'), 'past the end of a line: its end')
  local none, err = review.apply_text_edits('abc\n', { { range = range(0, 0, 0, 2), newText = 'x' }, { range = range(0, 1, 0, 3), newText = 'y' } }, 'utf-16')
  R.eq(nil, none, 'overlapping edits')
  R.contains({ err }, 'overlap', 'reason')
end)

test('changes far apart are hunks of their own; changes close together are one hunk', function()
  local files = assert(review.files({ changes = { ['file:///x/n.txt'] = {
    { range = range(0, 0, 1, 0), newText = 'ONE\n' },
    { range = range(2, 0, 3, 0), newText = 'THREE\n' },
    { range = range(11, 0, 12, 0), newText = 'TWELVE\n' },
  } } }, { root = '/x', read = function()
    return ten .. 'eleven\ntwelve\n'
  end }))
  R.eq(1, #files, 'files')
  R.eq('n.txt', files[1].rel, 'relative name')
  R.eq(2, #files[1].hunks, 'hunks')
  R.eq(2, #files[1].hunks[1].parts, 'the first hunk holds both close changes')
  R.eq({ 3, 3 }, { files[1].add, files[1].del }, 'lines added and removed')
end)

test('the float shows the unified diff and the keys; y and n decide per hunk and only accepted hunks land', function()
  local d = R.tmpdir()
  R.write(d .. '/n.txt', ten)
  keys('yn<CR>')
  local res = reverse.apply_edit(two_hunks(d), { root = d, save_edits = true })
  typed_all()
  R.eq({ applied = true }, res, 'result')
  R.eq('ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n', R.read(d .. '/n.txt'), 'only the first hunk, saved')
  local shown = review.last.lines
  R.eq('agentls proposes: update n.txt', shown[1], 'title, the prefix once')
  R.contains(shown, 'update n.txt  +2 -2  (2 hunks: 1 accepted, 1 rejected, 0 undecided)', 'file line')
  R.contains(shown, '--- a/n.txt', 'old side')
  R.contains(shown, '+++ b/n.txt', 'new side')
  R.contains(shown, '@@ -1,4 +1,4 @@ accepted', 'first hunk header')
  R.contains(shown, '@@ -6,5 +6,5 @@ rejected', 'second hunk header')
  R.contains(shown, '-nine', 'a removed line')
  R.contains(shown, '+NINE', 'an added line')
  for _, k in ipairs({ 'y accept hunk', 'n reject hunk', 'Y accept file', 'N reject file', '<CR> apply the accepted hunks', 'q or <Esc> reject all' }) do
    R.contains(review.keys_help, k, 'keys shown')
  end
  R.eq(1, #vim.api.nvim_list_wins(), 'the float is closed')
end)

test('q and <Esc> reject everything and nothing is applied', function()
  local d = R.tmpdir()
  R.write(d .. '/n.txt', ten)
  for _, k in ipairs({ 'q', '<Esc>', 'y<C-c>' }) do
    keys(k)
    local res = reverse.apply_edit(two_hunks(d), { root = d, save_edits = true })
    typed_all()
    R.eq({ applied = false, failureReason = 'rejected by the user' }, res, k)
    R.eq(ten, R.read(d .. '/n.txt'), 'disk after ' .. k)
    R.eq(nil, reverse.loaded_buffer(d .. '/n.txt'), 'no buffer opened by ' .. k)
  end
end)

test('<CR> with no hunk accepted is a rejection; A accepts everything', function()
  local d = R.tmpdir()
  R.write(d .. '/n.txt', ten)
  keys('<CR>')
  R.eq(false, reverse.apply_edit(two_hunks(d), { root = d, save_edits = true }).applied, 'nothing accepted')
  R.eq(ten, R.read(d .. '/n.txt'), 'disk')
  keys('A')
  R.eq({ applied = true }, reverse.apply_edit(two_hunks(d), { root = d, save_edits = true }), 'all')
  typed_all()
  R.eq('ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nNINE\nten\n', R.read(d .. '/n.txt'), 'both hunks')
end)

test(']c [c move between hunks, Y and N decide a whole file', function()
  local d = R.tmpdir()
  R.write(d .. '/a.txt', ten)
  R.write(d .. '/b.txt', ten)
  local p = proposal(d, { 'a.txt', 'b.txt' }, {
    ['a.txt'] = { { range(0, 0, 1, 0), 'A1\n' }, { range(9, 0, 10, 0), 'A10\n' } },
    ['b.txt'] = { { range(0, 0, 1, 0), 'B1\n' }, { range(9, 0, 10, 0), 'B10\n' } },
  }, 'agentls: update a.txt, b.txt')
  -- ]c]c: to b.txt's first hunk; N rejects b.txt and moves to the first
  -- undecided hunk, a.txt's first; ]c [c: to its second and back; n
  -- rejects it and moves on; y accepts a.txt's second hunk.
  keys(']c]cN]c[cny<CR>')
  R.eq({ applied = true }, reverse.apply_edit(p, { root = d, save_edits = true }), 'result')
  typed_all()
  R.eq('one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nA10\n', R.read(d .. '/a.txt'), 'a.txt: its second hunk only')
  R.eq(ten, R.read(d .. '/b.txt'), 'b.txt rejected')
  R.contains(review.last.lines, 'update b.txt  +2 -2  (2 hunks: 0 accepted, 2 rejected, 0 undecided)', 'b.txt line')

  local d2 = R.tmpdir()
  R.write(d2 .. '/a.txt', ten)
  R.write(d2 .. '/b.txt', ten)
  p = proposal(d2, { 'a.txt', 'b.txt' }, {
    ['a.txt'] = { { range(0, 0, 1, 0), 'A1\n' }, { range(9, 0, 10, 0), 'A10\n' } },
    ['b.txt'] = { { range(0, 0, 1, 0), 'B1\n' }, { range(9, 0, 10, 0), 'B10\n' } },
  }, 'agentls: update a.txt, b.txt')
  -- j moves the cursor into a.txt's second hunk; Y accepts a.txt.
  keys('jjjjjjjYG<CR>')
  R.eq({ applied = true }, reverse.apply_edit(p, { root = d2, save_edits = true }), 'second review')
  typed_all()
  R.contains(review.last.lines, 'update a.txt  +2 -2  (2 hunks: 2 accepted, 0 rejected, 0 undecided)', 'Y on a line of a.txt accepts a.txt')
  R.contains(review.last.lines, 'update b.txt  +2 -2  (2 hunks: 0 accepted, 0 rejected, 2 undecided)', 'b.txt left undecided')
  R.eq('A1\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nA10\n', R.read(d2 .. '/a.txt'), 'a.txt whole')
  R.eq(ten, R.read(d2 .. '/b.txt'), 'undecided hunks are not applied')
end)

test('a new file is reviewed whole; the review shows it from /dev/null', function()
  local d = R.tmpdir()
  local uri = vim.uri_from_fname(d .. '/sub/new.txt')
  local p = {
    label = 'agentls: create sub/new.txt',
    edit = {
      documentChanges = {
        { kind = 'create', uri = uri, annotationId = 'a1' },
        { textDocument = { uri = uri }, edits = { { range = range(0, 0, 0, 0), newText = 'x\ny\n', annotationId = 'a1' } } },
      },
      changeAnnotations = { a1 = { label = 'create', needsConfirmation = true } },
    },
  }
  keys('y<CR>')
  R.eq({ applied = true }, reverse.apply_edit(p, { root = d, save_edits = true }), 'accepted')
  typed_all()
  R.eq('x\ny\n', R.read(d .. '/sub/new.txt'), 'created')
  R.contains(review.last.lines, '--- /dev/null', 'from nothing')
  R.contains(review.last.lines, '@@ -0,0 +1,2 @@ accepted (the whole file)', 'one unit')
end)

test('an accepted hunk at the end of a file without a final newline, and after UTF-16 text, lands exactly', function()
  local d = R.tmpdir()
  R.write(d .. '/u.txt', 'é😀 one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nlast')
  local p = proposal(d, { 'u.txt' }, { ['u.txt'] = {
    { range(0, 4, 0, 7), 'ONE' },
    { range(9, 0, 9, 4), 'LAST\nmore' },
  } })
  keys('ny<CR>')
  R.eq({ applied = true }, reverse.apply_edit(p, { root = d, save_edits = false }), 'result')
  typed_all()
  local b = reverse.loaded_buffer(d .. '/u.txt')
  R.eq({ 'é😀 one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'LAST', 'more' }, R.buf_lines(b), 'buffer')
  R.contains(review.last.lines, '-é😀 one', 'the rejected hunk was shown')
  R.contains(review.last.lines, '+é😀 ONE', 'with the text the UTF-16 columns name')
  vim.bo[b].modified = false
end)

-- pieces splits text into lines that keep their "\n" (the last may lack
-- one): the lines vim.diff numbers.
local function pieces(text)
  local out = {}
  for l in text:gmatch('[^\n]*\n') do
    table.insert(out, l)
  end
  local rest = text:match('[^\n]+$')
  if rest then
    table.insert(out, rest)
  end
  return out
end

test('for any texts and decisions, the accepted edit gives the old text with exactly the accepted hunks', function()
  math.randomseed(7)
  local words = { 'a', 'b', 'c', 'é', '😀x', '' }
  local function random_lines(n)
    local lines = {}
    for _ = 1, n do
      table.insert(lines, words[math.random(#words)] .. words[math.random(#words)] .. words[math.random(#words)])
    end
    return lines
  end
  local function text_of(lines, eol)
    local t = table.concat(lines, '\n')
    if #lines > 0 and eol then
      t = t .. '\n'
    end
    return t
  end
  -- new is old with a few lines replaced, inserted or deleted, so that
  -- the diff has several hunks, and the final newline sometimes changed
  local function mutate(lines)
    local out = vim.deepcopy(lines)
    for _ = 1, math.random(1, 4) do
      local i = math.random(1, #out + 1)
      local r = math.random(3)
      if r == 1 or #out == 0 then
        table.insert(out, i, random_lines(1)[1])
      elseif r == 2 then
        table.remove(out, math.min(i, #out))
      else
        out[math.min(i, #out)] = 'changed ' .. random_lines(1)[1]
      end
    end
    return out
  end
  local partial = 0
  for round = 1, 400 do
    local lines = random_lines(math.random(0, 40))
    local old_eol = math.random() < 0.8
    local old = text_of(lines, old_eol)
    local new = text_of(mutate(lines), math.random() < 0.8 and old_eol or not old_eol)
    local edit = { changes = { ['file:///w/f.txt'] = { { range = range(0, 0, 999, 0), newText = new } } } }
    local files = assert(review.files(edit, { root = '/w', read = function()
      return old
    end }))
    local f = files[1]
    R.eq(new, f.new, 'round ' .. round .. ': the proposal applied to the copy')
    local seen = {}
    for _, g in ipairs(f.hunks) do
      g.decision = math.random() < 0.5
      seen[g.decision] = true
    end
    if seen[true] and seen[false] then
      partial = partial + 1
    end
    -- the oracle: old lines, with the accepted groups' new lines instead
    local op, np, out, at = pieces(old), pieces(new), {}, 1
    for _, g in ipairs(f.hunks) do
      for _, p in ipairs(g.parts) do
        local first = p.ca > 0 and p.sa or p.sa + 1
        for i = at, first - 1 do
          table.insert(out, op[i])
        end
        if g.decision then
          for i = p.sb, p.sb + p.cb - 1 do
            if p.cb > 0 then
              table.insert(out, np[i])
            end
          end
        else
          for i = p.sa, p.sa + p.ca - 1 do
            if p.ca > 0 then
              table.insert(out, op[i])
            end
          end
        end
        at = first + p.ca
      end
    end
    for i = at, #op do
      table.insert(out, op[i])
    end
    local want = table.concat(out)
    local accepted = review.accepted_edit(edit, files, 'utf-16')
    local got = old
    if accepted then
      got = assert(review.apply_text_edits(old, accepted.changes['file:///w/f.txt'] or {}, 'utf-16'))
    end
    if got ~= want then
      error(string.format('round %d: old %q new %q decisions %s: got %q, want %q', round, old, new,
        vim.inspect(vim.tbl_map(function(g)
          return g.decision
        end, f.hunks)), got, want))
    end
  end
  R.truthy(partial >= 50, 'rounds with some hunks accepted and some rejected: ' .. partial)
end)

return T
