package codegraph

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/agentls/agentls/api"
)

// Limits of one answer.
const (
	maxNodes     = 500
	maxEdges     = 2000
	maxDepth     = 3
	maxRanges    = 20
	maxRefsShown = 200
)

// ErrNotFound is wrapped by a query for a path or symbol the graph does
// not hold; ErrInvalid by a query that asks for nothing.
var (
	ErrNotFound = errors.New("not in the code graph")
	ErrInvalid  = errors.New("invalid query")
)

// Query asks the graph about a file, a symbol, or a symbol in a file
// (agent/codeGraph, docs/PROTOCOL.md §3).
type Query struct {
	Path   string
	Symbol string
	Depth  int // 0: 1
}

// answer collects nodes and edges, each once, within the limits.
type answer struct {
	g         *Graph
	res       api.CodeGraphResult
	nodes     map[string]bool
	edges     map[string]int // index in res.Edges by from|to|kind
	truncated bool
}

func (g *Graph) newAnswer() *answer {
	return &answer{g: g, nodes: map[string]bool{}, edges: map[string]int{},
		res: api.CodeGraphResult{Nodes: []api.CodeGraphNode{}, Edges: []api.CodeGraphEdge{}}}
}

func toRange(a, b Pos) *api.Range {
	return &api.Range{Start: api.Position{Line: a.Line, Character: a.Col}, End: api.Position{Line: b.Line, Character: b.Col}}
}

func fileID(f *File) string { return f.Path }

// symID is the node id of symbol i of f.
func symID(f *File, i int) string {
	s := &f.Symbols[i]
	id := f.Path + "#" + s.Qualified()
	for j := range f.Symbols {
		if j != i && f.Symbols[j].Name == s.Name && f.Symbols[j].Container == s.Container {
			return id + "@" + strconv.Itoa(int(s.Sel.Line)+1)
		}
	}
	return id
}

func (a *answer) full() bool {
	if len(a.res.Nodes) >= maxNodes || len(a.res.Edges) >= maxEdges {
		a.truncated = true
		return true
	}
	return false
}

func (a *answer) file(f *File) string {
	id := fileID(f)
	if !a.nodes[id] && !a.full() {
		a.nodes[id] = true
		a.res.Nodes = append(a.res.Nodes, api.CodeGraphNode{ID: id, Kind: "file", Path: f.Path, Language: f.Lang.String()})
	}
	return id
}

func (a *answer) sym(f *File, i int) string {
	id := symID(f, i)
	if !a.nodes[id] && !a.full() {
		a.nodes[id] = true
		s := &f.Symbols[i]
		end := s.Sel
		end.Col += uint32(utf16Len(s.Name))
		a.res.Nodes = append(a.res.Nodes, api.CodeGraphNode{
			ID: id, Kind: s.Kind.String(), Path: f.Path, Name: s.Name, Container: s.Container,
			Range: toRange(s.Start, s.End), SelectionRange: toRange(s.Sel, end),
		})
	}
	return id
}

func (a *answer) module(p string) string {
	id := "module:" + p
	if !a.nodes[id] && !a.full() {
		a.nodes[id] = true
		a.res.Nodes = append(a.res.Nodes, api.CodeGraphNode{ID: id, Kind: "module", Name: p})
	}
	return id
}

// edge adds an edge between nodes present, counting repeats and keeping
// the first ranges.
func (a *answer) edge(from, to, kind string, at *api.Range) {
	if !a.nodes[from] || !a.nodes[to] {
		return
	}
	key := from + "\x00" + to + "\x00" + kind
	if i, ok := a.edges[key]; ok {
		e := &a.res.Edges[i]
		e.Count++
		if at != nil && len(e.Ranges) < maxRanges {
			e.Ranges = append(e.Ranges, *at)
		}
		return
	}
	if a.full() {
		return
	}
	e := api.CodeGraphEdge{From: from, To: to, Kind: kind, Count: 1}
	if at != nil {
		e.Ranges = []api.Range{*at}
	}
	a.edges[key] = len(a.res.Edges)
	a.res.Edges = append(a.res.Edges, e)
}

// count adds a file-to-file references edge standing for n references.
func (a *answer) count(from, to string, n int) {
	a.edge(from, to, "references", nil)
	if i, ok := a.edges[from+"\x00"+to+"\x00references"]; ok {
		a.res.Edges[i].Count += n - 1
	}
}

// result finishes the answer: counts only on file-to-file edges.
func (a *answer) result() *api.CodeGraphResult {
	for i := range a.res.Edges {
		e := &a.res.Edges[i]
		if e.Kind != "references" || strings.Contains(e.From, "#") || strings.Contains(e.To, "#") {
			e.Count = 0
		}
	}
	a.res.Truncated = a.truncated
	return &a.res
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// CodeGraph answers a query once the graph is current (built, and every
// change told so far refreshed).
func (g *Graph) CodeGraph(ctx context.Context, q Query) (*api.CodeGraphResult, error) {
	if q.Path == "" && q.Symbol == "" {
		return nil, fmt.Errorf("%w: give a path, a symbol, or both", ErrInvalid)
	}
	if q.Depth <= 0 {
		q.Depth = 1
	}
	if q.Depth > maxDepth {
		q.Depth = maxDepth
	}
	if err := g.Current(ctx); err != nil {
		return nil, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	a := g.newAnswer()
	var f *File
	if q.Path != "" {
		rel := path.Clean(strings.TrimPrefix(q.Path, "./"))
		f = g.files[rel]
		if f == nil {
			if LangOf(rel) == LangNone {
				return nil, fmt.Errorf("%w: %s is not a file of a language the graph reads (Go, Python, JavaScript, TypeScript, Rust, Java, C, C++)", ErrNotFound, rel)
			}
			return nil, fmt.Errorf("%w: %s is not a file the graph holds (it does not exist, or the walks do not show it: ignored, denied, or outside the workspace)", ErrNotFound, rel)
		}
	}
	if q.Symbol != "" {
		if err := g.symbolQuery(a, f, q); err != nil {
			return nil, err
		}
		return a.result(), nil
	}
	g.fileQuery(a, f, q.Depth)
	return a.result(), nil
}

// fileQuery: the file, its definitions, its imports, and the files it
// references and that reference it, to depth.
func (g *Graph) fileQuery(a *answer, f *File, depth int) {
	fid := a.file(f)
	for i := range f.Symbols {
		sid := a.sym(f, i)
		parent := fid
		if p := f.Symbols[i].Parent; p >= 0 && int(p) < len(f.Symbols) {
			parent = symID(f, int(p))
		}
		a.edge(parent, sid, "defines", nil)
	}
	for _, imp := range f.Imports {
		targets := g.importTargets(f, imp)
		if len(targets) == 0 {
			a.edge(fid, a.module(imp.Path), "imports", nil)
			continue
		}
		for _, t := range targets {
			if t != f {
				a.edge(fid, a.file(t), "imports", nil)
			}
		}
	}
	frontier := []*File{f}
	seen := map[*File]bool{f: true}
	for d := 0; d < depth && len(frontier) > 0 && !a.truncated; d++ {
		var next []*File
		for _, x := range frontier {
			for _, n := range g.neighbours(x) {
				a.file(n.f)
				if n.out {
					a.count(fileID(x), fileID(n.f), n.count)
				} else {
					a.count(fileID(n.f), fileID(x), n.count)
				}
				if !seen[n.f] {
					seen[n.f] = true
					next = append(next, n.f)
				}
			}
		}
		frontier = next
	}
}

// neighbour is a file x references (out) or that references x, with the
// number of references.
type neighbour struct {
	f     *File
	out   bool
	count int
}

// neighbours returns the files x references and those that reference x,
// most references first. g.mu is held.
func (g *Graph) neighbours(x *File) []neighbour {
	counts := map[*File]int{}
	s := g.scopeOf(x)
	refCount := map[string]int{}
	for _, r := range x.Refs() {
		refCount[r.Name]++
	}
	for name, n := range refCount {
		// A name counts once per file it leads to, however many of that
		// file's definitions it resolves to: as it is counted from the
		// other side below.
		seenFile := map[*File]bool{}
		for _, d := range g.resolve(s, name) {
			if d.f != x && !seenFile[d.f] {
				seenFile[d.f] = true
				counts[d.f] += n
			}
		}
	}
	var out []neighbour
	for f, n := range counts {
		out = append(out, neighbour{f: f, out: true, count: n})
	}
	// files referring to x: those naming one of x's definitions, when the
	// name resolves to x from there
	names := map[string]bool{}
	for i := range x.Symbols {
		names[x.Symbols[i].Name] = true
	}
	for _, y := range g.files {
		if y == x {
			continue
		}
		var hit []int // indexes into y.Names
		for i, n := range y.Names {
			if names[n] {
				hit = append(hit, i)
			}
		}
		if len(hit) == 0 {
			continue
		}
		ys := g.scopeOf(y)
		n := 0
		for _, i := range hit {
			for _, d := range g.resolve(ys, y.Names[i]) {
				if d.f == x {
					// Every reference by that name, as counted from y's side.
					n += refsOf(y, i)
					break
				}
			}
		}
		if n > 0 {
			out = append(out, neighbour{f: y, count: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].count != out[j].count {
			return out[i].count > out[j].count
		}
		return out[i].f.Path < out[j].f.Path
	})
	return out
}

// refsOf is how often file y refers to its i-th distinct name.
func refsOf(y *File, i int) int {
	if i < len(y.Counts) && y.Counts[i] > 0 {
		return int(y.Counts[i])
	}
	return 1
}

// matchSymbol reports whether s is what a query names: Name, or
// Container.Name (any depth of containers: a.B.c matches container B).
func matchSymbol(s *Symbol, q string) bool {
	if s.Name == q {
		return true
	}
	if i := strings.LastIndexAny(q, ".:"); i > 0 {
		name := q[i+1:]
		cont := strings.TrimRight(q[:i], ".:")
		if j := strings.LastIndexAny(cont, ".:"); j >= 0 {
			cont = cont[j+1:]
		}
		return s.Name == name && s.Container == cont
	}
	return false
}

// lookup returns the definitions a symbol query names (in f only, when
// given). g.mu is held.
func (g *Graph) lookup(f *File, q string) []defRef {
	name := q
	if i := strings.LastIndexAny(q, ".:"); i > 0 {
		name = q[i+1:]
	}
	var out []defRef
	for _, d := range g.defs[name] {
		if (f == nil || d.f == f) && matchSymbol(d.sym(), q) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].f.Path != out[j].f.Path {
			return out[i].f.Path < out[j].f.Path
		}
		return out[i].i < out[j].i
	})
	return out
}

// site is a reference to a definition: where, from which file and which
// enclosing definition (-1: the file's top level).
type site struct {
	f     *File
	encl  int
	pos   Pos
	call  bool
	name  string
	defs  []defRef
	count int
}

// callers returns the references to the definitions ds. g.mu is held.
func (g *Graph) callers(ds []defRef, limit int) []site {
	if len(ds) == 0 {
		return nil
	}
	want := map[defRef]bool{}
	name := ds[0].sym().Name
	for _, d := range ds {
		want[d] = true
	}
	var out []site
	paths := make([]string, 0, len(g.files))
	for p, f := range g.files {
		for _, n := range f.Names {
			if n == name {
				paths = append(paths, p)
				break
			}
		}
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := g.files[p]
		s := g.scopeOf(f)
		hits := false
		for _, d := range g.resolve(s, name) {
			if want[d] {
				hits = true
				break
			}
		}
		if !hits {
			continue
		}
		for _, r := range f.Refs() {
			if r.Name != name {
				continue
			}
			if len(out) >= limit {
				return out
			}
			out = append(out, site{f: f, encl: f.enclosing(r.Pos), pos: r.Pos, call: r.Call, name: name, defs: ds})
		}
	}
	return out
}

// callees returns the references made inside definition d, resolved.
// g.mu is held.
func (g *Graph) callees(d defRef) []site {
	s := d.sym()
	sc := g.scopeOf(d.f)
	var out []site
	for _, r := range d.f.Refs() {
		if before(r.Pos, s.Start) || !before(r.Pos, s.End) || r.Pos == s.Sel {
			continue
		}
		targets := g.resolve(sc, r.Name)
		if len(targets) == 0 {
			continue
		}
		out = append(out, site{f: d.f, encl: int(d.i), pos: r.Pos, call: r.Call, name: r.Name, defs: targets})
	}
	return out
}

// symbolQuery: the definitions, their references and calls, what they
// call, to depth levels of callers and callees.
func (g *Graph) symbolQuery(a *answer, f *File, q Query) error {
	ds := g.lookup(f, q.Symbol)
	if len(ds) == 0 {
		where := "the workspace"
		if f != nil {
			where = f.Path
		}
		return fmt.Errorf("%w: no definition of %s in %s", ErrNotFound, q.Symbol, where)
	}
	for _, d := range ds {
		a.file(d.f)
		sid := a.sym(d.f, int(d.i))
		parent := fileID(d.f)
		if p := d.sym().Parent; p >= 0 && int(p) < len(d.f.Symbols) {
			parent = a.sym(d.f, int(p))
		}
		a.edge(parent, sid, "defines", nil)
	}
	// callers, level by level
	level := ds
	seen := map[defRef]bool{}
	for _, d := range ds {
		seen[d] = true
	}
	for depth := 0; depth < q.Depth && len(level) > 0 && !a.truncated; depth++ {
		var next []defRef
		byName := map[string][]defRef{}
		for _, d := range level {
			byName[d.sym().Name] = append(byName[d.sym().Name], d)
		}
		names := make([]string, 0, len(byName))
		for n := range byName {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, st := range g.callers(byName[n], maxRefsShown) {
				from := a.file(st.f)
				if st.encl >= 0 {
					from = a.sym(st.f, st.encl)
					caller := defRef{f: st.f, i: int32(st.encl)}
					if !seen[caller] {
						seen[caller] = true
						next = append(next, caller)
					}
				}
				kind := "references"
				if st.call {
					kind = "calls"
				}
				end := st.pos
				end.Col += uint32(utf16Len(st.name))
				for _, d := range st.defs {
					a.edge(from, symID(d.f, int(d.i)), kind, toRange(st.pos, end))
				}
			}
		}
		level = next
	}
	// callees, level by level
	level = ds
	seen = map[defRef]bool{}
	for _, d := range ds {
		seen[d] = true
	}
	for depth := 0; depth < q.Depth && len(level) > 0 && !a.truncated; depth++ {
		var next []defRef
		for _, d := range level {
			from := a.sym(d.f, int(d.i))
			for _, st := range g.callees(d) {
				if !st.call {
					continue
				}
				end := st.pos
				end.Col += uint32(utf16Len(st.name))
				for _, t := range st.defs {
					a.file(t.f)
					a.edge(from, a.sym(t.f, int(t.i)), "calls", toRange(st.pos, end))
					if !seen[t] {
						seen[t] = true
						next = append(next, t)
					}
				}
			}
		}
		level = next
	}
	return nil
}
