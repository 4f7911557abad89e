package editing

import (
	"sort"
	"strconv"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/lsppos"
	"github.com/hexops/gotextdiff"
	"github.com/hexops/gotextdiff/span"
)

// Diff is the line-based change from one text to another, in gotextdiff's
// representation (whole-line TextEdits with line and byte offset) so that
// gotextdiff.ToUnified can render it.
//
// It is computed without gotextdiff's Myers, whose memory grows with file
// size × changes (a 10k-line file with 10% of lines changed needs over a
// gigabyte). Instead:
//
//  1. the common prefix and suffix of lines are trimmed;
//  2. lines that occur exactly once in both texts anchor the rest (patience
//     diff: the longest increasing run of such pairs, then the same on each
//     gap between anchors);
//  3. a gap without such anchors goes to a Myers search bounded in edit
//     distance and work;
//  4. what is still left, or everything once a work budget proportional to
//     the input is spent, becomes one whole-region replacement.
//
// Time and memory are therefore linear in the input up to a log factor, and
// the edits always reproduce the new text exactly: a fallback only makes the
// diff coarser, never wrong.
type Diff struct {
	old, new string
	oldLines []int // byte offset of each old line start, plus len(old)
	newLines []int // the same for new
	hunks    []hunk
	// Coarse reports that some region was replaced whole because it was
	// beyond the bounds of the fine search.
	Coarse bool
}

// hunk replaces old lines [a0,a1) by new lines [b0,b1) (0-based).
type hunk struct{ a0, a1, b0, b1 int }

// LineSpan is a span of lines, 1-based and inclusive.
type LineSpan struct {
	Start int `json:"startLine"`
	End   int `json:"endLine"`
}

// Bounds of the fine search. They are variables so tests can shrink them to
// exercise the fallbacks on small inputs.
var (
	// myersMaxD bounds the edit distance the Myers search looks for; its
	// memory is about 8·D² bytes.
	myersMaxD = 1000
	// myersWork bounds (N+M)·D of one Myers search.
	myersWork = 4_000_000
	// workFactor bounds the total line comparisons of one diff at
	// workFactor·(N+M) plus workFloor.
	workFactor = 64
	workFloor  = 1 << 20
)

// ComputeDiff returns the line diff from old to new.
func ComputeDiff(old, new string) *Diff {
	d := &Diff{old: old, new: new, oldLines: lineStarts(old), newLines: lineStarts(new)}
	na, nb := len(d.oldLines)-1, len(d.newLines)-1
	a, b, nids := internLines(old, new, d.oldLines, d.newLines)
	df := &differ{budget: workFactor*(na+nb) + workFloor, maxD: myersMaxD, work: myersWork}
	df.grow(nids)
	df.diff(a, b, 0, 0)
	d.hunks = df.out
	d.Coarse = df.coarse
	return d
}

// lineStarts returns the byte offset at which each "\n"-terminated line of s
// starts, followed by len(s). A last line without "\n" counts as a line.
func lineStarts(s string) []int {
	starts := make([]int, 0, strings.Count(s, "\n")+2)
	starts = append(starts, 0)
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(s) {
			starts = append(starts, i)
		}
	}
	if len(s) == 0 {
		return []int{0}
	}
	return append(starts, len(s))
}

// internLines maps every distinct line (terminator included) to a small int.
func internLines(old, new string, oldStarts, newStarts []int) (a, b []int32, n int) {
	ids := make(map[string]int32, len(oldStarts)+len(newStarts))
	conv := func(s string, starts []int) []int32 {
		out := make([]int32, len(starts)-1)
		for i := range out {
			line := s[starts[i]:starts[i+1]]
			id, ok := ids[line]
			if !ok {
				id = int32(len(ids))
				ids[line] = id
			}
			out[i] = id
		}
		return out
	}
	a = conv(old, oldStarts)
	b = conv(new, newStarts)
	return a, b, len(ids)
}

type differ struct {
	budget int // line comparisons left before everything left is replaced whole
	maxD   int // bound of a Myers search's edit distance
	work   int // bound of a Myers search's (N+M)·D
	coarse bool
	out    []hunk
	// scratch indexed by line id, kept zero between uses
	countA, countB []int32
	posA, posB     []int32
}

// grow makes the scratch hold ids up to n.
func (df *differ) grow(n int) {
	if n <= len(df.countA) {
		return
	}
	n = max(n, 2*len(df.countA))
	df.countA = make([]int32, n)
	df.countB = make([]int32, n)
	df.posA = make([]int32, n)
	df.posB = make([]int32, n)
}

func (df *differ) emit(a0, a1, b0, b1 int) {
	if a0 == a1 && b0 == b1 {
		return
	}
	if n := len(df.out); n > 0 {
		if last := &df.out[n-1]; last.a1 == a0 && last.b1 == b0 {
			last.a1, last.b1 = a1, b1
			return
		}
	}
	df.out = append(df.out, hunk{a0, a1, b0, b1})
}

// diff emits the hunks turning a into b; ao and bo are their offsets in the
// whole texts. Hunks are emitted in order.
func (df *differ) diff(a, b []int32, ao, bo int) {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b, ao, bo = a[1:], b[1:], ao+1, bo+1
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	if len(a) == 0 || len(b) == 0 {
		df.emit(ao, ao+len(a), bo, bo+len(b))
		return
	}
	df.budget -= len(a) + len(b)
	if df.budget < 0 {
		df.coarse = true
		df.emit(ao, ao+len(a), bo, bo+len(b))
		return
	}
	if anchors := df.anchors(a, b); len(anchors) > 0 {
		pa, pb := 0, 0
		for _, an := range anchors {
			df.diff(a[pa:an.i], b[pb:an.j], ao+pa, bo+pb)
			pa, pb = an.i+1, an.j+1
		}
		df.diff(a[pa:], b[pb:], ao+pa, bo+pb)
		return
	}
	if ops, ok := myers(a, b, df.maxD, df.work); ok {
		for _, h := range ops {
			df.emit(ao+h.a0, ao+h.a1, bo+h.b0, bo+h.b1)
		}
		return
	}
	df.coarse = true
	df.emit(ao, ao+len(a), bo, bo+len(b))
}

type anchor struct{ i, j int }

// anchors returns the longest increasing sequence of pairs (i, j) where
// a[i] == b[j] and that line occurs exactly once in a and once in b.
func (df *differ) anchors(a, b []int32) []anchor {
	for i, id := range a {
		df.countA[id]++
		df.posA[id] = int32(i)
	}
	for j, id := range b {
		df.countB[id]++
		df.posB[id] = int32(j)
	}
	var pairs []anchor
	for j, id := range b {
		if df.countA[id] == 1 && df.countB[id] == 1 {
			pairs = append(pairs, anchor{int(df.posA[id]), j})
		}
	}
	for _, id := range a {
		df.countA[id] = 0
	}
	for _, id := range b {
		df.countB[id] = 0
	}
	if len(pairs) == 0 {
		return nil
	}
	return lis(pairs)
}

// lis returns the longest subsequence of pairs (ordered by j) whose i rises,
// by patience sorting in O(n log n).
func lis(pairs []anchor) []anchor {
	tails := make([]int, 0, 16) // index into pairs of the smallest tail of each length
	prev := make([]int, len(pairs))
	for k, p := range pairs {
		n := sort.Search(len(tails), func(x int) bool { return pairs[tails[x]].i >= p.i })
		if n > 0 {
			prev[k] = tails[n-1]
		} else {
			prev[k] = -1
		}
		if n == len(tails) {
			tails = append(tails, k)
		} else {
			tails[n] = k
		}
	}
	out := make([]anchor, len(tails))
	for k, x := len(tails)-1, tails[len(tails)-1]; k >= 0; k, x = k-1, prev[x] {
		out[k] = pairs[x]
	}
	return out
}

// myers finds a shortest edit script from a to b with the greedy O((N+M)·D)
// algorithm, keeping one frontier per distance for the backtrack. It gives up
// (ok false) beyond an edit distance of limit or (N+M)·D beyond work.
func myers(a, b []int32, limit, work int) (hunks []hunk, ok bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, limit)
	if w := work / (n + m); w < maxD {
		maxD = w
	}
	off := maxD + 1
	v := make([]int, 2*maxD+3)
	var trace [][]int
	for d := 0; d <= maxD; d++ {
		snap := make([]int, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: insertion from b
			} else {
				x = v[off+k-1] + 1 // right: deletion from a
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, d, n, m), true
			}
		}
	}
	return nil, false
}

// backtrack walks the frontiers back from (n, m) and returns the hunks.
// trace[d] holds v[-d..d] as it was before step d.
func backtrack(trace [][]int, dEnd, n, m int) []hunk {
	type step struct{ x, y, px, py int }
	steps := make([]step, 0, dEnd)
	x, y := n, m
	for d := dEnd; d > 0; d-- {
		prev := trace[d] // frontier after step d-1, indexed k+d
		k := x - y
		get := func(k int) int { return prev[k+d] }
		var pk int
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := get(pk)
		py := px - pk
		// the move from (px,py) then the snake up to (x,y)
		sx, sy := px, py
		if pk == k+1 {
			sy++ // insertion
		} else {
			sx++ // deletion
		}
		steps = append(steps, step{sx, sy, px, py})
		x, y = px, py
	}
	var out []hunk
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		h := hunk{s.px, s.x, s.py, s.y}
		if n := len(out); n > 0 && out[n-1].a1 == h.a0 && out[n-1].b1 == h.b0 {
			out[n-1].a1, out[n-1].b1 = h.a1, h.b1
			continue
		}
		out = append(out, h)
	}
	return out
}

// Empty reports whether the texts are equal.
func (d *Diff) Empty() bool { return len(d.hunks) == 0 }

// Stat counts the lines added and removed.
func (d *Diff) Stat() (added, removed int) {
	for _, h := range d.hunks {
		added += h.b1 - h.b0
		removed += h.a1 - h.a0
	}
	return added, removed
}

// Edits returns the change as gotextdiff TextEdits: whole lines, with line
// (1-based), column 1 and byte offset set on both ends.
func (d *Diff) Edits() []gotextdiff.TextEdit {
	out := make([]gotextdiff.TextEdit, len(d.hunks))
	for i, h := range d.hunks {
		start := span.NewPoint(h.a0+1, 1, d.oldLines[h.a0])
		end := span.NewPoint(h.a1+1, 1, d.oldLines[h.a1])
		out[i] = gotextdiff.TextEdit{
			Span:    span.New("", start, end),
			NewText: d.new[d.newLines[h.b0]:d.newLines[h.b1]],
		}
	}
	return out
}

// Spans returns the changed lines of the new text (1-based, inclusive). A
// pure deletion changes no line of the new text and has no span.
func (d *Diff) Spans() []LineSpan {
	var out []LineSpan
	for _, h := range d.hunks {
		if h.b1 > h.b0 {
			out = append(out, LineSpan{Start: h.b0 + 1, End: h.b1})
		}
	}
	return out
}

// MapLine follows a line of the old text (0-based) into the new text. A
// line the change left as it was maps to its line in the new text: from,
// with exact true. A line the change replaced maps to the lines that
// replaced it, [from, to) (empty when they were deleted), with exact false.
// A line past the old text's end moves with its end.
func (d *Diff) MapLine(line int) (from, to int, exact bool) {
	shift := 0
	for _, h := range d.hunks {
		if line < h.a0 {
			break
		}
		if line < h.a1 {
			return h.b0, h.b1, false
		}
		shift = h.b1 - h.a1
	}
	return line + shift, line + shift + 1, true
}

// TextEdits returns the change as LSP TextEdits on the old text, with
// positions in UTF-16 code units and LSP's line breaks ("\n", "\r\n" and a
// lone "\r"). Changed lines are refined to the words that changed where
// they share enough with their old text (refine.go); other hunks are whole
// lines. Applied together to the old text they give the new text
// exactly. A range ending at the end of a file without a final line break
// ends on its last line rather than past it.
func (d *Diff) TextEdits() []api.TextEdit {
	if len(d.hunks) == 0 {
		return nil
	}
	// Every offset is the start of a line, the start of a token or the end
	// of the text, so the clamped conversion is exact.
	return d.textEdits(lsppos.NewMapper(d.old))
}

// Unified renders the change as a unified diff with three lines of context,
// headed "--- from" and "+++ to" (use "/dev/null" for a created or deleted
// file). It is empty when nothing changed.
func (d *Diff) Unified(from, to string) string {
	if len(d.hunks) == 0 {
		return ""
	}
	return formatUnified(gotextdiff.ToUnified(from, to, d.old, d.Edits()))
}

// formatUnified writes u in the standard form. It differs from
// gotextdiff.Unified.Format where that is wrong: an empty side of a hunk is
// written "-N,0" with N the line before it (as diff and patch expect), the
// new side's start line is counted right, and the output is built in one
// buffer.
func formatUnified(u gotextdiff.Unified) string {
	if len(u.Hunks) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("--- " + u.From + "\n+++ " + u.To + "\n")
	shift := 0 // new lines minus old lines before this hunk
	for _, h := range u.Hunks {
		from, to := 0, 0
		for _, l := range h.Lines {
			switch l.Kind {
			case gotextdiff.Delete:
				from++
			case gotextdiff.Insert:
				to++
			default:
				from++
				to++
			}
		}
		sb.WriteString("@@ -")
		writeRange(&sb, h.FromLine, from)
		sb.WriteString(" +")
		// gotextdiff's ToLine misses the context lines that join edits
		// into one hunk; it is recomputed from the old side.
		writeRange(&sb, h.FromLine+shift, to)
		shift += to - from
		sb.WriteString(" @@\n")
		for _, l := range h.Lines {
			switch l.Kind {
			case gotextdiff.Delete:
				sb.WriteByte('-')
			case gotextdiff.Insert:
				sb.WriteByte('+')
			default:
				sb.WriteByte(' ')
			}
			sb.WriteString(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				sb.WriteString("\n\\ No newline at end of file\n")
			}
		}
	}
	return sb.String()
}

func writeRange(sb *strings.Builder, line, count int) {
	switch count {
	case 0:
		sb.WriteString(strconv.Itoa(line - 1))
		sb.WriteString(",0")
	case 1:
		sb.WriteString(strconv.Itoa(line))
	default:
		sb.WriteString(strconv.Itoa(line))
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(count))
	}
}
