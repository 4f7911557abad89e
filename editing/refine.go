package editing

import (
	"cmp"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/lsppos"
)

// Refinement of changed lines to words.
//
// The line diff says which lines changed; the edits sent to the editor say
// which words did, so that a preview strikes out only what changed, each
// changed word has its own tick box, and the marks and cursors on a changed
// line stay where they are. A hunk that replaces lines by lines is split
// into tokens (runs of word characters, runs of blanks, a line break, any
// other single character); its old and new lines are paired where they are
// alike (they share at least refineMinShare of their visible bytes, blanks
// and line breaks left out), in order, keeping the pairing that shares the
// most; each pair is diffed by tokens with the line diff's own machinery
// (patience anchors, then a bounded Myers) and gives one edit per changed
// run of tokens; lines left unpaired (rewritten, inserted, deleted) are
// replaced whole, as before.
//
// A hunk keeps its line edit when:
//   - one side is empty (lines only inserted or deleted: already minimal);
//   - it is larger than refineMaxBytes, old and new text together;
//   - it has more than refinePairs line pairs and not as many new lines as
//     old (with as many, each line is paired with the line of its rank);
//   - no line of it is like another (a rewrite: a confetti of edits between
//     the blanks and brackets the lines still share would be harder to read
//     than the rewrite);
//   - the token diff of a pair runs past its bounds (refineMaxD,
//     refineWork).
//
// Two changed runs of a line are one edit when the text between them holds
// no word (blanks and punctuation only), so "call(x, 1)" → "call(y; 2)" is
// one edit rather than three; edits that touch are one edit. Edits never
// start or end inside a character or between "\r" and "\n": tokens are whole
// characters and "\r\n" is one token, so every position is exact.
//
// The cost is linear in the bytes of the hunks refined plus their line
// pairs (at most refinePairs each), with one token map and one scratch
// reused across the hunks of a diff.

// Bounds of the refinement. They are variables so tests can move them.
var (
	// refineMaxBytes bounds the old plus new bytes of a hunk that is refined.
	refineMaxBytes = 64 << 10
	// refineMaxD bounds the edit distance, in tokens, of the Myers search
	// over a hunk's tokens (its memory is about 8·D² bytes).
	refineMaxD = 256
	// refineWork bounds (N+M)·D of that search.
	refineWork = 1 << 20
	// refineMinShare is the least share of their visible bytes an old and
	// a new line must have in common to be refined against each other.
	refineMinShare = 0.4
	// refinePairs bounds old lines × new lines of a hunk whose lines are
	// paired by similarity; a larger hunk of as many old lines as new
	// pairs each line with the line of its rank, any other keeps its line
	// edit.
	refinePairs = 16384
	// refineMapCap: the token map, shared by the hunks of a diff, is
	// cleared when it holds more tokens than this. Clearing costs the
	// capacity the map ever had, so it is cleared rarely, and a map never
	// grows much past this (plus one hunk's tokens).
	refineMapCap = 4096
)

// Token kinds.
const (
	tokWord byte = iota
	tokBlank
	tokBreak // "\n" or "\r\n": ends a line of the line diff
	tokCR    // a lone "\r": a line break to LSP, inside a line of the line diff
	tokOther
)

// refiner holds what the refinement of the hunks of one diff reuses.
type refiner struct {
	// The hunk's tokens, old (a) and new (b): their hash, kind, start in
	// the whole text (plus the end), and the index of the first token of
	// each line (plus the token count).
	ah, bh []uint64
	ak, bk []byte
	ao, bo []int
	al, bl []int
	// The visible tokens of each line, sorted by hash, for the pairing:
	// line i's are av[avl[i]:avl[i+1]], holding va[i] bytes.
	av, bv   []visTok
	avl, bvl []int
	va, vb   []int
	// sim and best are the pairing's scratch.
	sim, best []int32
	// ids interns the tokens of paired lines for the token diff.
	ids    map[string]int32
	pa, pb []int32
	df     differ
	edits  []refined
}

// visTok is a visible token of a line: its hash and length.
type visTok struct {
	h    uint64
	size int
}

// refined is one edit of a hunk: old bytes [a0,a1) become new bytes [b0,b1),
// offsets in the whole old and new texts.
type refined struct{ a0, a1, b0, b1 int }

func newRefiner() *refiner {
	return &refiner{ids: make(map[string]int32, 256)}
}

// FNV-1a, 64 bits: the hash of a token, for the pairing of lines only (a
// collision could only pair two lines that are less alike than it says;
// the token diff compares tokens themselves).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// tokenize appends the tokens of s[from:to] to hashes, offs and kinds and
// returns them; offs gets the offset of each token start and finally to.
func tokenize(s string, from, to int, hashes []uint64, offs []int, kinds []byte) ([]uint64, []int, []byte) {
	for i := from; i < to; {
		start := i
		c := s[i]
		var kind byte
		switch {
		case c == '\n':
			kind, i = tokBreak, i+1
		case c == '\r':
			kind, i = tokCR, i+1
			if i < to && s[i] == '\n' {
				kind, i = tokBreak, i+1
			}
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			kind = tokBlank
			for i < to && (s[i] == ' ' || s[i] == '\t' || s[i] == '\v' || s[i] == '\f') {
				i++
			}
		case c < utf8.RuneSelf:
			if isWordByte(c) {
				kind = tokWord
				i = wordEnd(s, i, to)
			} else {
				kind, i = tokOther, i+1
			}
		default:
			ru, size := utf8.DecodeRuneInString(s[i:to])
			switch {
			case isWordRune(ru):
				kind = tokWord
				i = wordEnd(s, i, to)
			case unicode.IsSpace(ru):
				kind, i = tokBlank, i+size
			default:
				kind, i = tokOther, i+size
			}
		}
		h := uint64(fnvOffset)
		for k := start; k < i; k++ {
			h = (h ^ uint64(s[k])) * fnvPrime
		}
		hashes = append(hashes, h)
		offs = append(offs, start)
		kinds = append(kinds, kind)
	}
	return hashes, append(offs, to), kinds
}

// visibleTokens returns, for each line, its visible tokens sorted by hash
// (appended to vis, line i's from starts[i]) and their bytes.
func visibleTokens(hashes []uint64, kinds []byte, offs, lines []int, vis []visTok, starts, bytes []int) ([]visTok, []int, []int) {
	for i := 0; i+1 < len(lines); i++ {
		starts = append(starts, len(vis))
		n := 0
		for k := lines[i]; k < lines[i+1]; k++ {
			if visible(kinds[k]) {
				size := offs[k+1] - offs[k]
				vis = append(vis, visTok{hashes[k], size})
				n += size
			}
		}
		line := vis[starts[i]:]
		slices.SortFunc(line, func(x, y visTok) int { return cmp.Compare(x.h, y.h) })
		bytes = append(bytes, n)
	}
	return vis, append(starts, len(vis)), bytes
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// wordEnd returns the end of the run of word characters that starts at i.
func wordEnd(s string, i, to int) int {
	for i < to {
		c := s[i]
		if c < utf8.RuneSelf {
			if !isWordByte(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:to])
		if !isWordRune(r) {
			return i
		}
		i += size
	}
	return i
}

// refine returns the edits of hunk h of d at word level, or nil when the
// hunk keeps its line edit.
func (r *refiner) refine(d *Diff, h hunk) []refined {
	if h.a0 == h.a1 || h.b0 == h.b1 {
		return nil
	}
	oa, ob := d.oldLines[h.a0], d.oldLines[h.a1]
	na, nb := d.newLines[h.b0], d.newLines[h.b1]
	if (ob-oa)+(nb-na) > refineMaxBytes {
		return nil
	}
	n, m := h.a1-h.a0, h.b1-h.b0
	if n*m > refinePairs && n != m {
		return nil
	}
	r.ah, r.ao, r.ak = tokenize(d.old, oa, ob, r.ah[:0], r.ao[:0], r.ak[:0])
	r.bh, r.bo, r.bk = tokenize(d.new, na, nb, r.bh[:0], r.bo[:0], r.bk[:0])
	r.al = lineTokens(r.ak, r.al[:0])
	r.bl = lineTokens(r.bk, r.bl[:0])
	r.av, r.avl, r.va = visibleTokens(r.ah, r.ak, r.ao, r.al, r.av[:0], r.avl[:0], r.va[:0])
	r.bv, r.bvl, r.vb = visibleTokens(r.bh, r.bk, r.bo, r.bl, r.bv[:0], r.bvl[:0], r.vb[:0])

	pairs := r.align(n, m)
	if len(pairs) == 0 {
		return nil
	}
	out := r.edits[:0]
	add := func(e refined) {
		if k := len(out); k > 0 && out[k-1].a1 == e.a0 && out[k-1].b1 == e.b0 {
			out[k-1].a1, out[k-1].b1 = e.a1, e.b1 // contiguous: one edit
			return
		}
		out = append(out, e)
	}
	i, j := 0, 0 // the next old and new line of the hunk
	for _, p := range pairs {
		if p.i > i || p.j > j {
			// The lines between pairs are replaced whole.
			add(refined{r.ao[r.al[i]], r.ao[r.al[p.i]], r.bo[r.bl[j]], r.bo[r.bl[p.j]]})
		}
		if !r.words(d, p.i, p.j, add) {
			return nil
		}
		i, j = p.i+1, p.j+1
	}
	if i < n || j < m {
		add(refined{r.ao[r.al[i]], r.ao[r.al[n]], r.bo[r.bl[j]], r.bo[r.bl[m]]})
	}
	r.edits = out
	return out
}

// lineTokens returns the index of the first token of each line of a
// tokenized text, plus the number of tokens.
func lineTokens(kinds []byte, out []int) []int {
	out = append(out, 0)
	for i, k := range kinds {
		if k == tokBreak && i+1 < len(kinds) {
			out = append(out, i+1)
		}
	}
	return append(out, len(kinds))
}

// pair matches old line i with new line j of a hunk (0-based).
type pair struct{ i, j int }

// align pairs the old and new lines of the hunk that are alike (they share
// at least refineMinShare of their visible bytes), in order, keeping the
// pairing that shares the most: a dynamic programme over the n·m pairs, or,
// for a hunk of as many new lines as old ones with more than refinePairs
// pairs, each line with the line of its rank.
func (r *refiner) align(n, m int) []pair {
	if n*m > refinePairs {
		if n != m {
			return nil
		}
		var out []pair
		for i := 0; i < n; i++ {
			if r.score(i, i) >= 0 {
				out = append(out, pair{i, i})
			}
		}
		return out
	}
	// sim[i*m+j]: twice the bytes old line i and new line j share, or -1
	// when they are not alike.
	r.sim = grow(r.sim, n*m)
	alike := false
	for i := 0; i < n; i++ {
		for j := 0; j < m; j++ {
			s := r.score(i, j)
			r.sim[i*m+j] = s
			alike = alike || s >= 0
		}
	}
	if !alike {
		return nil
	}
	// best[i*(m+1)+j]: the most shared by a pairing of the first i old and
	// j new lines.
	w := m + 1
	r.best = grow(r.best, (n+1)*w)
	for i := 0; i <= n; i++ {
		for j := 0; j <= m; j++ {
			if i == 0 || j == 0 {
				r.best[i*w+j] = 0
				continue
			}
			b := max(r.best[(i-1)*w+j], r.best[i*w+j-1])
			if s := r.sim[(i-1)*m+j-1]; s >= 0 {
				b = max(b, r.best[(i-1)*w+j-1]+s)
			}
			r.best[i*w+j] = b
		}
	}
	var out []pair
	for i, j := n, m; i > 0 && j > 0; {
		switch s := r.sim[(i-1)*m+j-1]; {
		case s >= 0 && r.best[i*w+j] == r.best[(i-1)*w+j-1]+s:
			out = append(out, pair{i - 1, j - 1})
			i, j = i-1, j-1
		case r.best[i*w+j] == r.best[(i-1)*w+j]:
			i--
		default:
			j--
		}
	}
	slices.Reverse(out)
	return out
}

// score returns twice the visible bytes old line i and new line j share
// (their tokens as multisets, by hash), or -1 when that is less than
// refineMinShare of their visible bytes.
func (r *refiner) score(i, j int) int32 {
	va, vb := r.va[i], r.vb[j]
	if va+vb == 0 || float64(2*min(va, vb)) < refineMinShare*float64(va+vb) {
		return -1 // they cannot share enough
	}
	x, xe := r.avl[i], r.avl[i+1]
	y, ye := r.bvl[j], r.bvl[j+1]
	shared := 0
	for x < xe && y < ye {
		switch hx, hy := r.av[x].h, r.bv[y].h; {
		case hx == hy:
			shared += r.av[x].size
			x, y = x+1, y+1
		case hx < hy:
			x++
		default:
			y++
		}
	}
	if float64(2*shared) < refineMinShare*float64(va+vb) {
		return -1
	}
	return int32(2 * shared)
}

func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func visible(kind byte) bool { return kind == tokWord || kind == tokOther }

// words diffs old line i with new line j of the hunk by tokens and adds one
// edit per changed run, joined over gaps of blanks and punctuation. It
// reports false when the token diff ran past its bounds.
func (r *refiner) words(d *Diff, i, j int, add func(refined)) bool {
	a0, a1, b0, b1 := r.al[i], r.al[i+1], r.bl[j], r.bl[j+1]
	if len(r.ids) > refineMapCap {
		clear(r.ids)
	}
	intern := func(s string, offs []int, from, to int, ids []int32) []int32 {
		for k := from; k < to; k++ {
			tok := s[offs[k]:offs[k+1]]
			id, ok := r.ids[tok]
			if !ok {
				id = int32(len(r.ids))
				r.ids[tok] = id
			}
			ids = append(ids, id)
		}
		return ids
	}
	r.pa = intern(d.old, r.ao, a0, a1, r.pa[:0])
	r.pb = intern(d.new, r.bo, b0, b1, r.pb[:0])
	df := &r.df
	df.grow(len(r.ids))
	df.out, df.coarse = df.out[:0], false
	df.maxD, df.work = refineMaxD, refineWork
	df.budget = workFactor*((a1-a0)+(b1-b0)) + 1024
	df.diff(r.pa, r.pb, a0, b0)
	if df.coarse {
		return false
	}
	for k, t := range df.out {
		e := refined{r.ao[t.a0], r.ao[t.a1], r.bo[t.b0], r.bo[t.b1]}
		if k > 0 && r.joinable(df.out[k-1].a1, t.a0) {
			e.a0, e.b0 = r.ao[df.out[k-1].a1], r.bo[df.out[k-1].b1]
		}
		add(e)
	}
	return true
}

// joinable reports whether the unchanged old tokens [i,j) between two
// changed runs of a line hold no word and no line break: blanks and
// punctuation only.
func (r *refiner) joinable(i, j int) bool {
	for k := i; k < j; k++ {
		if kind := r.ak[k]; kind == tokWord || kind == tokBreak || kind == tokCR {
			return false
		}
	}
	return true
}

// textEdits returns the LSP edits of d: each hunk refined to words where it
// can be, else the hunk's line edit.
func (d *Diff) textEdits(m *lsppos.Mapper) []api.TextEdit {
	out := make([]api.TextEdit, 0, len(d.hunks))
	r := newRefiner()
	for _, h := range d.hunks {
		if fine := r.refine(d, h); fine != nil {
			for _, e := range fine {
				out = append(out, api.TextEdit{
					Range:   api.Range{Start: m.Position(e.a0), End: m.Position(e.a1)},
					NewText: d.new[e.b0:e.b1],
				})
			}
			continue
		}
		out = append(out, api.TextEdit{
			Range: api.Range{
				Start: m.Position(d.oldLines[h.a0]),
				End:   m.Position(d.oldLines[h.a1]),
			},
			NewText: d.new[d.newLines[h.b0]:d.newLines[h.b1]],
		})
	}
	return out
}
