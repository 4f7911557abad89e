package codegraph

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The repo map: the workspace's most relevant definitions, one line each,
// within a token budget, as Aider's repository map does. Files are ranked
// by PageRank over the reference graph (a file that references a name
// points to the file that defines it, weighted by the square root of the
// number of references, a fifth of that when the graph only guesses which
// definition the name means), personalised towards the files the task has
// touched (heat) and those the prompt names; a name the prompt mentions
// weighs ten times more, a private (_name) or very common one ten times
// less. Each file's rank then flows along its edges to the definitions
// they reach, and the definitions are shown best first, grouped by file.

// RepoMapOptions shape a repo map.
type RepoMapOptions struct {
	// Tokens is the budget (estimated at 4 characters a token); 0: 1024.
	Tokens int
	// Prompt is the request: the names and paths it mentions weigh more.
	Prompt string
	// Heat is each file's heat (workspace-relative path to heat, 0..1):
	// files the task works on weigh more, with their neighbours.
	Heat map[string]float64
}

// guessWeight is what a reference the graph only guesses (a definition of
// the same name, ByName) weighs beside one it resolved.
const guessWeight = 0.2

// rankEdge is one name referenced from a file and defined in another.
type rankEdge struct {
	to     int32   // file index
	sym    int32   // the definition's index in that file
	name   int32   // index in rankCache.names
	weight float32 // sqrt(references)
}

// rankCache is the reference graph between files, made once per version
// of the graph.
type rankCache struct {
	version uint64
	files   []*File
	index   map[*File]int32
	out     [][]rankEdge
	names   []string // the names edges stand for
	ndefs   []int    // how many files define each name
}

// fileGraph returns the reference graph of the current version. g.mu is
// held for reading; the cache is swapped under rankMu.
func (g *Graph) fileGraph() *rankCache {
	g.rankMu.Lock()
	defer g.rankMu.Unlock()
	if g.ranks != nil && g.ranks.version == g.version {
		return g.ranks
	}
	rc := &rankCache{version: g.version, index: make(map[*File]int32, len(g.files))}
	v := g.newView()
	nameIdx := map[string]int32{}
	paths := make([]string, 0, len(g.files))
	for p := range g.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ndefs := 0
	for _, p := range paths {
		rc.index[g.files[p]] = int32(len(rc.files))
		rc.files = append(rc.files, g.files[p])
		ndefs += int(g.files[p].nsyms)
	}
	v.budget = passDefs(ndefs)
	intern := func(name string) int32 {
		if i, ok := nameIdx[name]; ok {
			return i
		}
		i := int32(len(rc.names))
		name = strings.Clone(name) // not the detail's blob, which it would keep
		nameIdx[name] = i
		rc.names = append(rc.names, name)
		var last *File
		n := 0
		for _, d := range v.defsOf(name) {
			if d.f != last {
				n++
				last = d.f
			}
		}
		rc.ndefs = append(rc.ndefs, n)
		return i
	}
	rc.out = make([][]rankEdge, len(rc.files))
	var edges []rankEdge
	for i, f := range rc.files {
		s := g.scopeOf(f)
		fd := f.detail()
		edges = edges[:0]
		for k, name := range fd.names {
			targets, prov := v.resolve(s, name, fd.qual(k))
			if len(targets) == 0 {
				continue
			}
			w := math.Sqrt(float64(fd.count(k)))
			if prov == ByName {
				w *= guessWeight
			}
			for _, d := range targets {
				if d.f == f {
					continue
				}
				edges = append(edges, rankEdge{to: rc.index[d.f], sym: d.i, name: intern(name), weight: float32(w)})
			}
		}
		rc.out[i] = slices.Clone(edges)
	}
	g.ranks = rc
	return rc
}

// words are the identifiers and paths a prompt mentions, lower-cased.
func promptWords(prompt string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(prompt, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '/' || r == '-')
	}) {
		w = strings.Trim(w, ".-/")
		if len(w) < 3 {
			continue
		}
		out[strings.ToLower(w)] = true
		for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '.' || r == '/' }) {
			if len(part) >= 3 {
				out[strings.ToLower(part)] = true
			}
		}
	}
	return out
}

// nameWeight is how much a name's references count.
func nameWeight(name string, ndefs int, mentioned map[string]bool) float64 {
	w := 1.0
	if mentioned[strings.ToLower(name)] {
		w *= 10
	}
	if strings.HasPrefix(name, "_") {
		w *= 0.1
	}
	if ndefs > 5 {
		w *= 0.1
	}
	return w
}

// rankedDef is a definition with its rank.
type rankedDef struct {
	f    *File
	i    int
	rank float64
}

// rank ranks the definitions for these options, best first. g.mu is held.
func (g *Graph) rank(o RepoMapOptions) []rankedDef {
	rc := g.fileGraph()
	n := len(rc.files)
	if n == 0 {
		return nil
	}
	mentioned := promptWords(o.Prompt)
	// personalisation: heat, and files the prompt names
	pers := make([]float64, n)
	total := 0.0
	for i, f := range rc.files {
		p := 0.0
		if h := o.Heat[f.Path]; h > 0 {
			p += h
		}
		base := strings.ToLower(path.Base(f.Path))
		stem := strings.TrimSuffix(base, path.Ext(base))
		if mentioned[strings.ToLower(f.Path)] || mentioned[base] || (len(stem) >= 4 && mentioned[stem]) {
			p += 1
		}
		pers[i] = p
		total += p
	}
	if total == 0 {
		for i := range pers {
			pers[i] = 1
		}
		total = float64(n)
	}
	for i := range pers {
		pers[i] /= total
	}
	// each name's weight for this prompt, and the weighted out-degrees
	nw := make([]float64, len(rc.names))
	for k, name := range rc.names {
		nw[k] = nameWeight(name, rc.ndefs[k], mentioned)
	}
	wout := make([]float64, n)
	for i, edges := range rc.out {
		for _, e := range edges {
			wout[i] += float64(e.weight) * nw[e.name]
		}
	}
	rank := pagerank(rc, pers, wout, nw)
	// each file's rank flows to the definitions its edges reach
	defRank := map[[2]int32]float64{}
	for i, edges := range rc.out {
		if wout[i] == 0 {
			continue
		}
		for _, e := range edges {
			defRank[[2]int32{e.to, e.sym}] += rank[i] * float64(e.weight) * nw[e.name] / wout[i]
		}
	}
	out := make([]rankedDef, 0, len(defRank))
	seen := map[[2]int]bool{}
	for k, r := range defRank {
		out = append(out, rankedDef{f: rc.files[k[0]], i: int(k[1]), rank: r})
		seen[[2]int{int(k[0]), int(k[1])}] = true
	}
	// definitions nobody references, ranked by their file's rank, after
	// those that are (the prompt's names first among them), from the best
	// ranked files only: a map shows a few hundred definitions at most
	byRank := make([]int, n)
	for i := range byRank {
		byRank[i] = i
	}
	sort.Slice(byRank, func(a, b int) bool { return rank[byRank[a]] > rank[byRank[b]] })
	for _, fi := range byRank[:min(len(byRank), 200)] {
		f := rc.files[fi]
		syms := f.detail().syms
		for i := range syms {
			s := &syms[i]
			if seen[[2]int{fi, i}] || (s.Parent >= 0 && !mentioned[strings.ToLower(s.Name)]) {
				continue
			}
			r := rank[fi] * 1e-3
			if mentioned[strings.ToLower(s.Name)] {
				r = rank[fi] * 10
			}
			out = append(out, rankedDef{f: f, i: i, rank: r})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].rank != out[b].rank {
			return out[a].rank > out[b].rank
		}
		if out[a].f.Path != out[b].f.Path {
			return out[a].f.Path < out[b].f.Path
		}
		return out[a].i < out[b].i
	})
	return out
}

// pagerank runs the power iteration with damping 0.85 over the weighted
// file graph (nw: each name's weight); dangling files give their rank by
// the personalisation.
func pagerank(rc *rankCache, pers, wout, nw []float64) []float64 {
	n := len(rc.files)
	const d = 0.85
	// the edges between each pair of files, summed, as fractions of the
	// source's out-degree
	type link struct {
		to int32
		p  float64
	}
	links := make([][]link, n)
	acc := make([]float64, n)
	var touched []int32
	for i, edges := range rc.out {
		if wout[i] == 0 {
			continue
		}
		touched = touched[:0]
		for _, e := range edges {
			if acc[e.to] == 0 {
				touched = append(touched, e.to)
			}
			acc[e.to] += float64(e.weight) * nw[e.name]
		}
		ls := make([]link, 0, len(touched))
		for _, t := range touched {
			ls = append(ls, link{to: t, p: acc[t] / wout[i]})
			acc[t] = 0
		}
		links[i] = ls
	}
	r := make([]float64, n)
	copy(r, pers)
	next := make([]float64, n)
	for iter := 0; iter < 50; iter++ {
		dangling := 0.0
		for i := range next {
			next[i] = 0
		}
		for i := range links {
			if wout[i] == 0 {
				dangling += r[i]
				continue
			}
			for _, l := range links[i] {
				next[l.to] += d * r[i] * l.p
			}
		}
		diff := 0.0
		for i := range next {
			next[i] += (d*dangling + 1 - d) * pers[i]
			diff += math.Abs(next[i] - r[i])
		}
		r, next = next, r
		if diff < 1e-9*float64(n) {
			break
		}
	}
	return r
}

// RepoMap renders the repo map for these options: "path:" lines, each
// followed by its chosen definitions' first lines ("  12│func Foo(…) {"),
// files in rank order, definitions in file order. It waits until the
// graph is current; an empty workspace gives "".
func (g *Graph) RepoMap(ctx context.Context, o RepoMapOptions) (string, error) {
	if o.Tokens <= 0 {
		o.Tokens = 1024
	}
	if err := g.Current(ctx); err != nil {
		return "", err
	}
	g.mu.RLock()
	ranked := g.rank(o)
	g.mu.RUnlock()
	if len(ranked) == 0 {
		return "", nil
	}
	budget := o.Tokens * 4
	lines := newLineCache()
	// the most definitions whose map fits: a binary search on the count
	lo, hi := 0, len(ranked)
	if hi > 2000 {
		hi = 2000
	}
	best := ""
	for lo <= hi {
		mid := (lo + hi) / 2
		text := renderMap(ranked[:mid], lines, g.Root())
		if len(text) <= budget {
			best = text
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}

// renderMap renders these definitions grouped by file.
func renderMap(defs []rankedDef, lines *lineCache, root string) string {
	if len(defs) == 0 {
		return ""
	}
	var order []*File
	byFile := map[*File][]int{}
	for _, d := range defs {
		if _, ok := byFile[d.f]; !ok {
			order = append(order, d.f)
		}
		byFile[d.f] = append(byFile[d.f], d.i)
	}
	var b strings.Builder
	for _, f := range order {
		idx := byFile[f]
		sort.Ints(idx)
		b.WriteString(f.Path)
		b.WriteString(":\n")
		last := -1
		syms := f.detail().syms
		for _, i := range idx {
			if i >= len(syms) {
				continue
			}
			s := &syms[i]
			if int(s.Start.Line) == last {
				continue
			}
			last = int(s.Start.Line)
			text := lines.line(root, f, int(s.Sel.Line))
			if text == "" {
				text = s.Kind.String() + " " + s.Qualified()
			}
			fmt.Fprintf(&b, "%5d│%s\n", s.Sel.Line+1, text)
		}
	}
	return b.String()
}

// lineCache reads the lines of the files a map shows, once each.
type lineCache struct {
	files map[string][][]byte
}

func newLineCache() *lineCache { return &lineCache{files: map[string][][]byte{}} }

const maxLine = 120

// line is the text of a 0-based line of f, right-trimmed and cut.
func (c *lineCache) line(root string, f *File, n int) string {
	ls, ok := c.files[f.Path]
	if !ok {
		data, err := os.ReadFile(root + string(os.PathSeparator) + strings.ReplaceAll(f.Path, "/", string(os.PathSeparator)))
		if err == nil && int64(len(data)) == f.Size {
			ls = bytes.Split(data, []byte("\n"))
		}
		c.files[f.Path] = ls
	}
	if n >= len(ls) {
		return ""
	}
	s := strings.TrimRight(string(ls[n]), " \t\r")
	if len(s) > maxLine {
		cut := maxLine
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.ReplaceAll(s, "\t", "    ")
}
