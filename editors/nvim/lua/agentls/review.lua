-- The review of a proposed edit (propose mode, docs/EDITING.md): a
-- workspace/applyEdit whose change annotations need confirmation is shown
-- as a unified diff in a float, computed here by applying the edit to a
-- copy of each file's text, and the person accepts or rejects each hunk or
-- each file. Nothing is applied until they decide; what they accepted is
-- turned back into an edit of those hunks alone.
--
-- The review is modal: Neovim before 0.9 answers a server request with the
-- handler's return value, so the keys are read with getchar() until the
-- person decides, and the float shows them.
local M = {}

-- ---- text ----

-- line_starts returns the byte offsets (1-based) at which the lines of text
-- start, LSP lines: split at "\r\n", "\n" and a lone "\r".
local function line_starts(text)
  local starts = { 1 }
  local i, n = 1, #text
  while i <= n do
    local c = text:byte(i)
    if c == 10 then
      table.insert(starts, i + 1)
    elseif c == 13 then
      if text:byte(i + 1) == 10 then
        i = i + 1
      end
      table.insert(starts, i + 1)
    end
    i = i + 1
  end
  return starts
end

-- byte_col returns the byte count of the first col units of line in the
-- given offset encoding, clamped to the line.
local function byte_col(line, col, encoding)
  if col <= 0 then
    return 0
  end
  if encoding == 'utf-8' then
    return math.min(col, #line)
  end
  local utf32, utf16 = vim.str_utfindex(line)
  local max = encoding == 'utf-32' and utf32 or utf16
  if col >= max then
    return #line
  end
  local ok, b = pcall(vim.str_byteindex, line, col, encoding ~= 'utf-32')
  if not ok then
    return #line
  end
  return b
end

-- offset_of returns the byte offset (0-based) of an LSP position in text.
local function offset_of(text, starts, pos, encoding)
  local line = pos.line or 0
  if line >= #starts then
    return #text
  end
  local s = starts[line + 1]
  local content
  if starts[line + 2] then
    content = text:sub(s, starts[line + 2] - 1):gsub('\r?\n$', ''):gsub('\r$', '')
  else
    content = text:sub(s)
  end
  return s - 1 + byte_col(content, pos.character or 0, encoding)
end

-- apply_text_edits applies LSP text edits to text, as a client applies them
-- to a document: ranges refer to the text before any edit; edits that start
-- at the same place keep their order. It returns the new text, or nil and
-- why the edits cannot be applied.
function M.apply_text_edits(text, edits, encoding)
  local starts = line_starts(text)
  local spans = {}
  for i, e in ipairs(edits or {}) do
    if type(e) ~= 'table' or type(e.range) ~= 'table' then
      return nil, 'text edit ' .. i .. ' has no range'
    end
    local a = offset_of(text, starts, e.range.start or {}, encoding)
    local b = offset_of(text, starts, e.range['end'] or {}, encoding)
    if b < a then
      a, b = b, a
    end
    table.insert(spans, { a = a, b = b, text = tostring(e.newText or ''), i = i })
  end
  table.sort(spans, function(x, y)
    if x.a ~= y.a then
      return x.a < y.a
    end
    return x.i < y.i
  end)
  local out, at = {}, 0
  for k, s in ipairs(spans) do
    if s.a < at then
      return nil, string.format('text edits %d and %d overlap', spans[k - 1].i, s.i)
    end
    table.insert(out, text:sub(at + 1, s.a))
    table.insert(out, s.text)
    at = s.b
  end
  table.insert(out, text:sub(at + 1))
  return table.concat(out)
end

-- split_lines splits text as vim.diff counts lines: at "\n", a last line
-- without one included.
local function split_lines(text)
  local lines = vim.split(text, '\n', true)
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

-- line_offsets returns the byte offset (0-based) at which each line of
-- text starts, and #text after the last.
local function line_offsets(text)
  local offs, at = { 0 }, 0
  while true do
    local nl = text:find('\n', at + 1, true)
    if not nl then
      break
    end
    at = nl
    table.insert(offs, at)
  end
  if offs[#offs] ~= #text then
    table.insert(offs, #text)
  end
  return offs
end

-- ---- the files of an edit ----

local function read_disk(path)
  local f = io.open(path, 'rb')
  if not f then
    return nil
  end
  local data = f:read('*a')
  f:close()
  return data
end

-- files builds the review of an edit: one entry per file it touches, in
-- order, each {uri, fname, rel, kind, old, new, hunks, whole}. read(fname)
-- returns a file's current text (its buffer, else the disk) or nil.
function M.files(edit, opts)
  local encoding = opts.offset_encoding or 'utf-16'
  local read = opts.read
  local by_uri, order = {}, {}
  local function entry(uri)
    local f = by_uri[uri]
    if f then
      return f
    end
    local fname = vim.uri_to_fname(uri)
    local text = read(fname)
    f = { uri = uri, fname = fname, kind = 'update', existed = text ~= nil, old = text, new = text }
    if opts.root and fname:sub(1, #opts.root + 1) == opts.root .. '/' then
      f.rel = fname:sub(#opts.root + 2)
    else
      f.rel = fname
    end
    by_uri[uri] = f
    table.insert(order, f)
    return f
  end
  local function text_edits(uri, edits)
    local f = entry(uri)
    if f.new == nil then
      return 'cannot read ' .. f.rel
    end
    local new, err = M.apply_text_edits(f.new, edits, encoding)
    if not new then
      return f.rel .. ': ' .. err
    end
    f.new, f.edited = new, true
  end
  if type(edit.documentChanges) == 'table' and #edit.documentChanges > 0 then
    for _, c in ipairs(edit.documentChanges) do
      local err
      if c.kind == 'create' then
        local f = entry(c.uri)
        local opt = type(c.options) == 'table' and c.options or {}
        if not (f.existed and opt.ignoreIfExists and not opt.overwrite) then
          f.new, f.kind, f.whole = '', 'create', true
        end
      elseif c.kind == 'delete' then
        local f = entry(c.uri)
        f.new, f.kind, f.whole = nil, 'delete', true
      elseif c.kind == 'rename' then
        local from, to = entry(c.oldUri), entry(c.newUri)
        to.new, to.kind, to.whole = from.new, 'create', true
        from.new, from.kind, from.whole = nil, 'delete', true
      elseif type(c.textDocument) == 'table' then
        err = text_edits(c.textDocument.uri, c.edits)
      end
      if err then
        return nil, err
      end
    end
  else
    local uris = vim.tbl_keys(edit.changes or {})
    table.sort(uris)
    for _, uri in ipairs(uris) do
      local err = text_edits(uri, edit.changes[uri])
      if err then
        return nil, err
      end
    end
  end
  for _, f in ipairs(order) do
    M.hunks(f)
  end
  return order
end

-- hunks fills f.hunks: the changed regions of the file (vim.diff's
-- indices), grouped as a unified diff with three lines of context groups
-- them. A group is what the person accepts or rejects. A new, deleted or
-- renamed file, and a file with lone "\r" line ends, is one unit.
function M.hunks(f)
  local old, new = f.old or '', f.new or ''
  if old:find('\r[^\n]') or old:sub(-1) == '\r' then
    f.whole = true
  end
  f.old_lines, f.new_lines = split_lines(old), split_lines(new)
  local idx = old == new and {} or vim.diff(old, new, { result_type = 'indices' })
  local groups = {}
  for _, d in ipairs(idx) do
    local part = { sa = d[1], ca = d[2], sb = d[3], cb = d[4] }
    -- first and last old line a part touches, counting insertions as
    -- sitting between lines
    local first = part.ca > 0 and part.sa or part.sa + 1
    local last = part.ca > 0 and part.sa + part.ca - 1 or part.sa
    local g = groups[#groups]
    if g and (f.whole or first - g.last - 1 <= 6) then
      table.insert(g.parts, part)
      g.last = last
    else
      table.insert(groups, { parts = { part }, first = first, last = last })
    end
  end
  if f.whole and #groups == 0 and f.kind ~= 'update' then
    -- an empty new file, or deleting an empty one: still one unit
    table.insert(groups, { parts = {}, first = 1, last = 0 })
  end
  f.hunks = groups
  local add, del = 0, 0
  for _, d in ipairs(idx) do
    add, del = add + d[4], del + d[2]
  end
  f.add, f.del = add, del
end

-- ---- rendering ----

local CONTEXT = 3

local function strip_cr(s)
  return (s:gsub('\r$', ''))
end

local function state_word(decision)
  if decision == true then
    return 'accepted'
  elseif decision == false then
    return 'rejected'
  end
  return 'undecided'
end

-- hunk_lines renders one group: its @@ header and lines.
local function hunk_lines(f, g)
  local ol, nl = f.old_lines, f.new_lines
  local parts = g.parts
  local lines = {}
  if #parts == 0 then
    return { '@@ -0,0 +0,0 @@ ' .. state_word(g.decision) .. ' (an empty file)' }
  end
  local p1, pn = parts[1], parts[#parts]
  local ctx = f.whole and 0 or CONTEXT
  local before_from = math.max(1, g.first - ctx)
  local after_to = math.min(#ol, g.last + ctx)
  -- new-side line of the first context line
  local b_first = (p1.cb > 0 and p1.sb or p1.sb + 1) - (g.first - before_from)
  for i = before_from, g.first - 1 do
    table.insert(lines, ' ' .. strip_cr(ol[i]))
  end
  for k, p in ipairs(parts) do
    for i = p.sa, p.sa + p.ca - 1 do
      if p.ca > 0 then
        table.insert(lines, '-' .. strip_cr(ol[i]))
      end
    end
    for i = p.sb, p.sb + p.cb - 1 do
      if p.cb > 0 then
        table.insert(lines, '+' .. strip_cr(nl[i]))
      end
    end
    local nxt = parts[k + 1]
    if nxt then
      local from = p.ca > 0 and p.sa + p.ca or p.sa + 1
      local to = (nxt.ca > 0 and nxt.sa or nxt.sa + 1) - 1
      for i = from, to do
        table.insert(lines, ' ' .. strip_cr(ol[i]))
      end
    end
  end
  local last_old = pn.ca > 0 and pn.sa + pn.ca - 1 or pn.sa
  for i = last_old + 1, after_to do
    table.insert(lines, ' ' .. strip_cr(ol[i]))
  end
  local a_count, b_count = 0, 0
  for _, l in ipairs(lines) do
    local c = l:sub(1, 1)
    if c ~= '+' then
      a_count = a_count + 1
    end
    if c ~= '-' then
      b_count = b_count + 1
    end
  end
  local a_start = a_count > 0 and before_from or before_from - 1
  local b_start = b_count > 0 and b_first or b_first - 1
  local header = string.format('@@ -%d,%d +%d,%d @@ %s', a_start, a_count, b_start, b_count, state_word(g.decision))
  if f.whole then
    header = header .. ' (the whole file)'
  end
  table.insert(lines, 1, header)
  return lines
end

local function file_summary(f)
  local acc, rej = 0, 0
  for _, g in ipairs(f.hunks) do
    if g.decision == true then
      acc = acc + 1
    elseif g.decision == false then
      rej = rej + 1
    end
  end
  local n = #f.hunks
  local what
  if f.whole then
    what = state_word(f.hunks[1] and f.hunks[1].decision)
  else
    what = string.format('%d hunk%s: %d accepted, %d rejected, %d undecided', n, n == 1 and '' or 's', acc, rej, n - acc - rej)
  end
  return string.format('%s %s  +%d -%d  (%s)', f.kind, f.rel, f.add, f.del, what)
end

-- render returns the lines of the review and, for each group, the line of
-- its header: {lines, marks = {{file, group, line}}}.
function M.render(title, files)
  local lines, marks = { title, '' }, {}
  for fi, f in ipairs(files) do
    if fi > 1 then
      table.insert(lines, '')
    end
    f.line = #lines + 1
    table.insert(lines, file_summary(f))
    table.insert(lines, '--- ' .. (f.existed and f.kind ~= 'create' and 'a/' .. f.rel or '/dev/null'))
    table.insert(lines, '+++ ' .. (f.kind ~= 'delete' and 'b/' .. f.rel or '/dev/null'))
    if #f.hunks == 0 then
      table.insert(lines, '(no change to the text)')
    end
    for gi, g in ipairs(f.hunks) do
      table.insert(marks, { file = fi, group = gi, line = #lines + 1 })
      vim.list_extend(lines, hunk_lines(f, g))
    end
  end
  return { lines = lines, marks = marks }
end

M.keys_help = {
  'y accept hunk   n reject hunk   Y accept file   N reject file   ]c [c next/previous hunk',
  '<CR> apply the accepted hunks (undecided ones are rejected)   A accept all and apply',
  'q or <Esc> reject all   j k <C-d> <C-u> gg G scroll',
}

-- ---- the edit of what was accepted ----

-- lsp_position returns the position of byte offset off (a line start, or
-- the end of the text) in text.
local function lsp_position(text, offs, line_index, encoding)
  -- line_index is 1-based: the start of that line, or past the last line.
  if #text == 0 then
    return { line = 0, character = 0 }
  end
  if line_index <= #offs - 1 or (line_index == #offs and text:sub(-1) == '\n') then
    return { line = line_index - 1, character = 0 }
  end
  -- the end of a text whose last line has no "\n"
  local last_start = offs[#offs - 1]
  local last = text:sub(last_start + 1)
  local units = #last
  if encoding ~= 'utf-8' then
    local utf32, utf16 = vim.str_utfindex(last)
    units = encoding == 'utf-32' and utf32 or utf16
  end
  return { line = #offs - 2, character = units }
end

-- partial_edits returns the text edits, against the old text, of the
-- accepted groups of an updated file.
function M.partial_edits(f, encoding)
  local old, new = f.old or '', f.new or ''
  local ooffs, noffs = line_offsets(old), line_offsets(new)
  -- ooffs[i] is where line i starts (1-based lines), ooffs[#lines+1] the end.
  local edits = {}
  for _, g in ipairs(f.hunks) do
    if g.decision == true then
      for _, p in ipairs(g.parts) do
        local a1 = p.ca > 0 and p.sa or p.sa + 1 -- first old line replaced
        local a2 = a1 + p.ca -- first old line kept after it
        local b1 = p.cb > 0 and p.sb or p.sb + 1
        local b2 = b1 + p.cb
        local nb = new:sub((noffs[b1] or #new) + 1, noffs[b2] or #new)
        table.insert(edits, {
          range = {
            start = lsp_position(old, ooffs, a1, encoding),
            ['end'] = lsp_position(old, ooffs, a2, encoding),
          },
          newText = nb,
        })
      end
    end
  end
  return edits
end

-- accepted_edit returns the part of edit the decisions accept, or nil when
-- nothing is accepted. A file accepted whole keeps its changes as sent.
function M.accepted_edit(edit, files, encoding)
  local state = {}
  local any = false
  for _, f in ipairs(files) do
    local acc, all = 0, true
    for _, g in ipairs(f.hunks) do
      if g.decision == true then
        acc = acc + 1
      else
        all = false
      end
    end
    if #f.hunks == 0 then
      all, acc = true, 0
    end
    state[f.uri] = { file = f, all = all, none = acc == 0 and #f.hunks > 0 }
    any = any or acc > 0
  end
  if not any then
    return nil
  end
  local out = {}
  for k, v in pairs(edit) do
    if k ~= 'documentChanges' and k ~= 'changes' then
      out[k] = v
    end
  end
  local function partial(uri)
    local s = state[uri]
    return s.file.edited and not s.all and not s.none and not s.file.whole
  end
  if type(edit.documentChanges) == 'table' and #edit.documentChanges > 0 then
    out.documentChanges = {}
    local done = {}
    for _, c in ipairs(edit.documentChanges) do
      local uri = c.uri or (c.textDocument and c.textDocument.uri) or c.oldUri
      local s = uri and state[uri]
      if c.kind == 'rename' then
        if s and not s.none and not state[c.newUri].none then
          table.insert(out.documentChanges, c)
        end
      elseif s and s.none then
        -- rejected: left out
      elseif c.textDocument and partial(uri) then
        if not done[uri] then
          done[uri] = true
          table.insert(out.documentChanges, {
            textDocument = c.textDocument,
            edits = M.partial_edits(s.file, encoding),
          })
        end
      elseif s then
        table.insert(out.documentChanges, c)
      end
    end
  else
    out.changes = {}
    for uri, edits in pairs(edit.changes or {}) do
      local s = state[uri]
      if s and not s.none then
        out.changes[uri] = partial(uri) and M.partial_edits(s.file, encoding) or edits
      end
    end
  end
  return out
end

-- ---- the float ----

local function tc(s)
  return vim.api.nvim_replace_termcodes(s, true, false, true)
end

-- getchar reads one key; nil when interrupted (<C-c>).
function M.getchar()
  local ok, c = pcall(vim.fn.getchar)
  if not ok then
    return nil
  end
  if type(c) == 'number' then
    return vim.fn.nr2char(c)
  end
  return c
end

local depth = 0

-- open shows the review; it returns a handle with update(view) and close().
local function open(view)
  local level = depth + 1
  local prev = vim.api.nvim_get_current_win()
  local columns, rows = vim.o.columns, vim.o.lines
  local width = 20
  for _, l in ipairs(view.lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  for _, l in ipairs(M.keys_help) do
    width = math.max(width, vim.fn.strdisplaywidth(l) + 2)
  end
  width = math.max(20, math.min(width, columns - 4))
  local help = #M.keys_help + 1
  local height = math.max(3, math.min(#view.lines, rows - help - 6))
  local row = math.max(0, math.floor((rows - height - help - 4) / 2))
  local col = math.max(0, math.floor((columns - width - 2) / 2))
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, view.lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'diff'
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor', row = row, col = col, width = width, height = height,
    style = 'minimal', border = 'rounded', zindex = 50 + level * 2, noautocmd = true,
  })
  -- The text's own background: the diff's colours stay readable.
  vim.wo[win].winhighlight = 'NormalFloat:Normal,FloatBorder:Normal'
  vim.wo[win].cursorline = true
  vim.wo[win].wrap = false
  local hbuf = vim.api.nvim_create_buf(false, true)
  vim.bo[hbuf].bufhidden = 'wipe'
  local hok, hwin = pcall(vim.api.nvim_open_win, hbuf, false, {
    relative = 'editor', row = row + height + 2, col = col, width = width, height = help,
    style = 'minimal', border = 'rounded', zindex = 51 + level * 2, focusable = false, noautocmd = true,
  })
  if not hok then
    pcall(vim.api.nvim_win_close, win, true)
    pcall(vim.api.nvim_set_current_win, prev)
    error(hwin, 0)
  end
  vim.wo[hwin].winhighlight = 'NormalFloat:Normal,FloatBorder:Normal'
  vim.wo[hwin].wrap = true
  local h = { buf = buf, win = win, hbuf = hbuf, hwin = hwin }
  local ns = vim.api.nvim_create_namespace('agentls.review')
  local groups = { accepted = 'DiffAdd', rejected = 'DiffDelete', undecided = 'WarningMsg' }
  function h.update(v, status)
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, v.lines)
    vim.bo[buf].modifiable = false
    vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
    vim.api.nvim_buf_add_highlight(buf, ns, 'Title', 0, 0, -1)
    for _, m in ipairs(v.marks) do
      local l = v.lines[m.line]
      local s, e, word = l:find('@@ ([a-z]+)', 3)
      if s and groups[word] then
        vim.api.nvim_buf_add_highlight(buf, ns, groups[word], m.line - 1, s + 2, e)
      end
    end
    local lines = { status }
    vim.list_extend(lines, M.keys_help)
    vim.api.nvim_buf_set_lines(hbuf, 0, -1, false, lines)
  end
  function h.close()
    depth = depth - 1
    pcall(vim.api.nvim_win_close, hwin, true)
    pcall(vim.api.nvim_win_close, win, true)
    if vim.api.nvim_win_is_valid(prev) then
      pcall(vim.api.nvim_set_current_win, prev)
    end
  end
  depth = level
  return h
end

-- M.last holds the text of the last review shown (for tests and
-- :messages-like inspection): {lines, status}.
M.last = nil

-- run shows the review of params.edit and waits for the person. It returns
-- the edit to apply (all of it, or the accepted part), or nil and a reason.
-- opts: root, offset_encoding, read(fname).
function M.run(params, opts)
  local edit = params.edit
  local encoding = opts.offset_encoding or 'utf-16'
  local files, err = M.files(edit, {
    root = opts.root,
    offset_encoding = encoding,
    read = opts.read or function(fname)
      return read_disk(fname)
    end,
  })
  if not files then
    return nil, 'cannot show the proposed edit: ' .. err
  end
  local label = tostring(params.label or '')
  for _, a in pairs(edit.changeAnnotations or {}) do
    if label == '' and type(a) == 'table' and a.label then
      label = tostring(a.label)
    end
  end
  label = label:gsub('^agentls:%s*', '')
  if label == '' then
    label = 'an edit'
  end
  local title = 'agentls proposes: ' .. label

  local view = M.render(title, files)
  local opened, h = pcall(open, view)
  if not opened then
    return nil, 'cannot show the proposed edit: ' .. tostring(h)
  end
  local cur = 1 -- index into view.marks of the current hunk
  local function group(m)
    return files[m.file].hunks[m.group]
  end
  -- mark_at returns the index of the hunk the cursor is in, or of the
  -- next one when the cursor is above a file's first hunk.
  local function mark_at(line)
    local best
    for i, m in ipairs(view.marks) do
      if m.line <= line then
        best = i
      end
    end
    if best then
      for _, f in ipairs(files) do
        if f.line > view.marks[best].line and f.line <= line then
          best = nil
          break
        end
      end
    end
    if best then
      return best
    end
    for i, m in ipairs(view.marks) do
      if m.line >= line then
        return i
      end
    end
    return math.max(1, #view.marks)
  end
  local function next_undecided(from)
    local n = #view.marks
    for k = 1, n do
      local i = (from + k - 1) % n + 1
      if group(view.marks[i]).decision == nil then
        return i
      end
    end
    return math.min(from + 1, n)
  end
  local function counts()
    local acc, rej, n = 0, 0, #view.marks
    for _, m in ipairs(view.marks) do
      local d = group(m).decision
      acc = acc + (d == true and 1 or 0)
      rej = rej + (d == false and 1 or 0)
    end
    return acc, rej, n
  end
  local function redraw(line)
    view = M.render(title, files)
    if line and #view.marks > 0 then
      line = math.max(1, math.min(line, #view.lines))
      cur = mark_at(line)
    end
    local acc, rej, n = counts()
    local status
    if n == 0 then
      status = 'nothing to review'
    else
      local m = view.marks[cur]
      status = string.format('hunk %d/%d (%s) · %d accepted, %d rejected, %d undecided',
        cur, n, files[m.file].rel, acc, rej, n - acc - rej)
    end
    h.update(view, status)
    M.last = { lines = view.lines, status = status }
    line = line or (view.marks[cur] and view.marks[cur].line) or 1
    line = math.max(1, math.min(line, #view.lines))
    pcall(vim.api.nvim_win_set_cursor, h.win, { line, 0 })
    vim.cmd('redraw')
  end
  local function decide(value, whole_file)
    local m = view.marks[cur]
    if not m then
      return
    end
    if whole_file then
      for _, g in ipairs(files[m.file].hunks) do
        g.decision = value
      end
    else
      group(m).decision = value
    end
  end

  local result
  local ok, perr = pcall(function()
    redraw()
    local half = math.max(1, math.floor(vim.api.nvim_win_get_height(h.win) / 2))
    while true do
      local line = vim.api.nvim_win_get_cursor(h.win)[1]
      cur = #view.marks > 0 and mark_at(line) or 1
      local key = M.getchar()
      if key == nil or key == 'q' or key == tc('<Esc>') or key == tc('<C-c>') then
        result = 'reject'
        return
      elseif key == 'A' then
        result = 'all'
        return
      elseif key == tc('<CR>') then
        result = 'apply'
        return
      elseif key == 'y' or key == 'n' then
        decide(key == 'y', false)
        cur = next_undecided(cur)
        redraw()
      elseif key == 'Y' or key == 'N' then
        decide(key == 'Y', true)
        cur = next_undecided(cur)
        redraw()
      elseif key == ']' or key == '[' then
        local k2 = M.getchar()
        if k2 == 'c' and #view.marks > 0 then
          local at = view.marks[cur].line
          if key == ']' and at <= line then
            cur = math.min(cur + 1, #view.marks)
          elseif key == '[' and at >= line then
            cur = math.max(cur - 1, 1)
          end
          redraw()
        end
      elseif key == tc('<Tab>') and #view.marks > 0 then
        cur = cur % #view.marks + 1
        redraw()
      elseif key == tc('<S-Tab>') and #view.marks > 0 then
        cur = (cur - 2) % #view.marks + 1
        redraw()
      elseif key == 'j' or key == tc('<Down>') then
        redraw(line + 1)
      elseif key == 'k' or key == tc('<Up>') then
        redraw(line - 1)
      elseif key == tc('<C-d>') or key == tc('<C-f>') or key == tc('<PageDown>') then
        redraw(line + (key == tc('<C-d>') and half or half * 2))
      elseif key == tc('<C-u>') or key == tc('<C-b>') or key == tc('<PageUp>') then
        redraw(line - (key == tc('<C-u>') and half or half * 2))
      elseif key == 'G' then
        redraw(#view.lines)
      elseif key == 'g' then
        if M.getchar() == 'g' then
          redraw(1)
        end
      end
    end
  end)
  h.close()
  if not ok then
    return nil, 'the review failed: ' .. tostring(perr)
  end
  if result == 'all' then
    return edit
  elseif result == 'apply' then
    local accepted = M.accepted_edit(edit, files, encoding)
    if accepted == nil then
      return nil, 'rejected by the user'
    end
    return accepted
  end
  return nil, 'rejected by the user'
end

return M
