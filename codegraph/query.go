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
	maxNodes  = 500
	maxEdges  = 2000
	maxDepth  = 3
	maxRanges = 20
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

// answer collects nodes and edges, each once, within the limits, and
// counts what the limits leave out.
type answer struct {
	res       api.CodeGraphResult
	nodes     map[string]bool
	edges     map[string]int // index in res.Edges by from|to|kind
	provs     []Provenance   // of each edge of res.Edges
	truncated bool
	omitted   int
	unread    int // files a cut answer did not read (referencesTo)
}

func newAnswer() *answer {
	return &answer{nodes: map[string]bool{}, edges: map[string]int{},
		res: api.CodeGraphResult{Nodes: []api.CodeGraphNode{}, Edges: []api.CodeGraphEdge{}}}
}

func toRange(a, b Pos) *api.Range {
	return &api.Range{Start: api.Position{Line: a.Line, Character: a.Col}, End: api.Position{Line: b.Line, Character: b.Col}}
}

func fileID(f *File) string { return f.Path }

// symID is the node id of symbol i of f.
func symID(f *File, i int) string {
	syms := f.detail().syms
	if i >= len(syms) {
		return f.Path + "#?" + strconv.Itoa(i)
	}
	s := &syms[i]
	id := f.Path + "#" + s.Qualified()
	for j := range syms {
		if j != i && syms[j].Name == s.Name && syms[j].Container == s.Container {
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
	syms := f.detail().syms
	if !a.nodes[id] && !a.full() && i < len(syms) {
		a.nodes[id] = true
		s := &syms[i]
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

// edge adds an edge between nodes present: a repeat is counted, keeps the
// first ranges and lowers the edge's provenance to the least sure. It
// reports whether the answer holds it.
func (a *answer) edge(from, to, kind string, at *api.Range, prov Provenance) bool {
	if !a.nodes[from] || !a.nodes[to] {
		return false
	}
	key := from + "\x00" + to + "\x00" + kind
	if i, ok := a.edges[key]; ok {
		e := &a.res.Edges[i]
		e.Count++
		if at != nil && len(e.Ranges) < maxRanges {
			e.Ranges = append(e.Ranges, *at)
		}
		a.provs[i] = weakest(a.provs[i], prov)
		return true
	}
	if a.full() {
		return false
	}
	e := api.CodeGraphEdge{From: from, To: to, Kind: kind, Count: 1}
	if at != nil {
		e.Ranges = []api.Range{*at}
	}
	a.edges[key] = len(a.res.Edges)
	a.res.Edges = append(a.res.Edges, e)
	a.provs = append(a.provs, prov)
	return true
}

// ref adds a "references" or "calls" edge for one reference, or counts it
// as left out.
func (a *answer) ref(from, to, kind string, at *api.Range, prov Provenance) {
	if !a.edge(from, to, kind, at, prov) {
		a.omitted++
		a.truncated = true
	}
}

// files adds a file-to-file "references" edge standing for n references,
// or counts them as left out.
func (a *answer) files(from, to string, n int, prov Provenance) {
	if !a.edge(from, to, "references", nil, prov) {
		a.omitted += n
		a.truncated = true
		return
	}
	a.res.Edges[a.edges[from+"\x00"+to+"\x00references"]].Count += n - 1
}

// result finishes the answer: counts and provenances on the edges of
// references and calls only.
func (a *answer) result() *api.CodeGraphResult {
	for i := range a.res.Edges {
		e := &a.res.Edges[i]
		switch e.Kind {
		case "references", "calls":
			e.Provenance = api.Provenance(a.provs[i].String())
		default:
			e.Count = 0
		}
	}
	a.res.Truncated = a.truncated
	a.res.Omitted = a.omitted
	a.res.Unread = a.unread
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
// change told so far refreshed): the editor's language server first for
// the references and the guessed calls, as far as its bounds go
// (lsp.go), then the graph.
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
	defer g.startWalk() // after the first answer
	if err := g.answerable(ctx); err != nil {
		return nil, err
	}
	a := newAnswer()
	ask := g.newAsker()
	g.mu.RLock()
	v := g.newView()
	var f *File
	if q.Path != "" {
		rel := path.Clean(strings.TrimPrefix(q.Path, "./"))
		f = g.files[rel]
		if f == nil {
			g.mu.RUnlock()
			if LangOf(rel) == LangNone {
				return nil, fmt.Errorf("%w: %s is not a file of a language the graph reads (%s)", ErrNotFound, rel, langsRead)
			}
			return nil, fmt.Errorf("%w: %s is not a file the graph holds (it does not exist, or the walks do not show it: ignored, denied, or outside the workspace)", ErrNotFound, rel)
		}
	}
	if q.Symbol == "" {
		g.fileNodes(a, f)
		g.mu.RUnlock()
		g.fileQuery(ctx, a, ask, f, q.Depth)
		return a.result(), nil
	}
	ds := v.lookup(f, q.Symbol)
	if len(ds) == 0 {
		g.mu.RUnlock()
		where := "the workspace"
		if f != nil {
			where = f.Path
		}
		return nil, fmt.Errorf("%w: no definition of %s in %s", ErrNotFound, q.Symbol, where)
	}
	for _, d := range ds {
		a.file(d.f)
		sid := a.sym(d.f, int(d.i))
		parent := fileID(d.f)
		if p := d.sym().Parent; p >= 0 && int(p) < len(d.f.detail().syms) {
			parent = a.sym(d.f, int(p))
		}
		a.edge(parent, sid, "defines", nil, 0)
	}
	g.mu.RUnlock()
	g.symbolQuery(ctx, a, ask, ds, q.Depth)
	return a.result(), nil
}

// fileNodes adds a file, its definitions and its imports. g.mu is held.
func (g *Graph) fileNodes(a *answer, f *File) {
	fid := a.file(f)
	syms := f.detail().syms
	for i := range syms {
		sid := a.sym(f, i)
		parent := fid
		if p := syms[i].Parent; p >= 0 && int(p) < len(syms) {
			parent = symID(f, int(p))
		}
		a.edge(parent, sid, "defines", nil, 0)
	}
	for _, imp := range f.Imports {
		targets := g.importTargets(f, imp)
		if len(targets) == 0 {
			a.edge(fid, a.module(imp.Path), "imports", nil, 0)
			continue
		}
		for _, t := range targets {
			if t != f {
				a.edge(fid, a.file(t), "imports", nil, 0)
			}
		}
	}
}

// fileQuery: the files f references and that reference it, to depth.
func (g *Graph) fileQuery(ctx context.Context, a *answer, ask *asker, f *File, depth int) {
	frontier := []*File{f}
	seen := map[string]bool{f.Path: true}
	made := map[[2]string]bool{} // the file-to-file edges made
	for d := 0; d < depth && len(frontier) > 0 && !a.truncated; d++ {
		var next []*File
		for _, x := range frontier {
			for _, n := range g.neighbours(ctx, ask, x) {
				from, to := x, n.f
				if !n.out {
					from, to = n.f, x
				}
				pair := [2]string{from.Path, to.Path}
				if made[pair] {
					continue // counted from the other side already
				}
				made[pair] = true
				a.file(n.f)
				a.files(fileID(from), fileID(to), n.count, n.prov)
				if !seen[n.f.Path] {
					seen[n.f.Path] = true
					next = append(next, n.f)
				}
			}
		}
		frontier = next
	}
}

// neighbour is a file x references (out) or that references x, with the
// number of references and how they were found.
type neighbour struct {
	f     *File
	out   bool
	count int
	prov  Provenance
}

// tally counts references to or from files, by path.
type tally map[string]*neighbour

func (t tally) add(path string, out bool, n int, prov Provenance) {
	if e := t[path]; e != nil {
		e.count += n
		e.prov = weakest(e.prov, prov)
		return
	}
	t[path] = &neighbour{out: out, count: n, prov: prov}
}

// neighbours returns the files x references and those that reference x,
// most references first. The language server is asked where each of x's
// definitions is referred to, and what each reference of x the graph
// only guesses means; what it does not answer, the graph does.
func (g *Graph) neighbours(ctx context.Context, ask *asker, x *File) []neighbour {
	out, in := tally{}, tally{}
	xd := x.detail()
	// What the graph knows, and what to ask.
	g.mu.RLock()
	v := g.newView()
	s := v.scopeOf(x)
	type guessed struct {
		k     int
		files []string // the files the graph's guess leads to
	}
	var guesses []guessed
	var guessQs []lspAsk
	keyFiles := make([][]string, len(xd.names))
	keyProv := make([]Provenance, len(xd.names))
	for k, name := range xd.names {
		targets, prov := v.resolve(s, name, xd.qual(k))
		keyFiles[k], keyProv[k] = targetFiles(targets, x), prov
		if prov == ByName && ask != nil {
			continue // asked below, reference by reference: a guess of x's own may be another file's
		}
		for _, p := range keyFiles[k] {
			out.add(p, true, xd.count(k), prov)
		}
	}
	if ask != nil {
		xd.eachRef(func(k int, r Ref) {
			if keyProv[k] == ByName {
				guesses = append(guesses, guessed{k: k, files: keyFiles[k]})
				guessQs = append(guessQs, lspAsk{path: x.Path, lang: x.Lang, pos: r.Pos})
			}
		})
	}
	// files referring to x: those naming one of x's definitions, when the
	// name resolves to x from there; by name, to replace a name's count
	// with the language server's
	byName := map[string]tally{}
	names := map[string]bool{}
	for i := range xd.syms {
		names[xd.syms[i].Name] = true
	}
	dets := map[*File]*detail{}
	for n := range names {
		v.referrers(n, func(y *File) {
			if y == x {
				return
			}
			yd, ok := dets[y]
			if !ok {
				yd = y.detail()
				dets[y] = yd
			}
			for k, yn := range yd.names {
				if yn != n {
					continue
				}
				targets, prov := v.resolve(v.scopeOf(y), n, yd.qual(k))
				for _, d := range targets {
					if d.f == x {
						if byName[n] == nil {
							byName[n] = tally{}
						}
						// Every reference by that name, as counted from y's side.
						byName[n].add(y.Path, false, yd.count(k), prov)
						break
					}
				}
			}
		})
	}
	defQs := make([]lspAsk, len(xd.syms))
	for i := range xd.syms {
		defQs[i] = lspAsk{path: x.Path, lang: x.Lang, pos: xd.syms[i].Sel}
	}
	g.mu.RUnlock()

	// The language server, unlocked.
	var defAns, guessAns []lspAnswer
	if ask != nil {
		defAns = ask.references(ctx, defQs)
		guessAns = ask.definitions(ctx, guessQs)
	}

	g.mu.RLock()
	defer g.mu.RUnlock()
	for i, gs := range guesses {
		if !guessAns[i].ok {
			for _, p := range gs.files {
				out.add(p, true, 1, ByName)
			}
			continue
		}
		seen := map[string]bool{}
		for _, l := range guessAns[i].locs {
			if l.path != x.Path && !seen[l.path] && g.files[l.path] != nil {
				seen[l.path] = true
				out.add(l.path, true, 1, ByLSP)
			}
		}
	}
	// a name's incoming references are the server's when it answered for
	// every definition of x so named
	answered := map[string]bool{}
	for i := range xd.syms {
		n := xd.syms[i].Name
		ok := defAns != nil && defAns[i].ok
		if a, seen := answered[n]; !seen || a {
			answered[n] = ok
		}
	}
	for n, t := range byName {
		if answered[n] {
			continue
		}
		for p, e := range t {
			in.add(p, false, e.count, e.prov)
		}
	}
	for i := range xd.syms {
		if !answered[xd.syms[i].Name] {
			continue
		}
		for _, l := range defAns[i].locs {
			if l.path != x.Path && g.files[l.path] != nil {
				in.add(l.path, false, 1, ByLSP)
			}
		}
	}
	var list []neighbour
	for _, t := range []tally{out, in} {
		for p, e := range t {
			if f := g.files[p]; f != nil {
				e.f = f
				list = append(list, *e)
			}
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].count != list[j].count {
			return list[i].count > list[j].count
		}
		if list[i].f.Path != list[j].f.Path {
			return list[i].f.Path < list[j].f.Path
		}
		return list[i].out && !list[j].out
	})
	return list
}

// targetFiles are the paths of the files of these definitions, each once,
// but x's.
func targetFiles(ds []defRef, x *File) []string {
	var out []string
	for i, d := range ds {
		if d.f == x || (i > 0 && ds[i-1].f == d.f) {
			continue
		}
		out = append(out, d.f.Path)
	}
	return out
}

// matchDef reports whether definition d, named name, is what a query
// names: Name, Container.Name (any depth of containers: a.B.c matches
// container B), or for a Go package-level definition package.Name
// (io.Reader).
func matchDef(d defRef, name, q string) bool {
	if name == q {
		return true
	}
	if i := strings.LastIndexAny(q, ".:"); i > 0 {
		qname := q[i+1:]
		cont := strings.TrimRight(q[:i], ".:")
		if j := strings.LastIndexAny(cont, ".:"); j >= 0 {
			cont = cont[j+1:]
		}
		if name != qname {
			return false
		}
		return d.container == cont || (d.container == "" && d.f.Lang == LangGo && d.f.Package == cont)
	}
	return false
}

// queryName is the name a symbol query looks up: its last part.
func queryName(q string) string {
	if i := strings.LastIndexAny(q, ".:"); i > 0 {
		return q[i+1:]
	}
	return q
}

// lookup returns the definitions a symbol query names (in f only, when
// given).
func (v *view) lookup(f *File, q string) []defRef {
	name := queryName(q)
	var out []defRef
	for _, d := range v.defsOf(name) {
		if (f == nil || d.f == f) && matchDef(d, name, q) {
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
// enclosing definition (-1: the file's top level), what it means and how
// that was found.
type site struct {
	f        *File
	encl     int
	pos, end Pos
	call     bool
	defs     []defRef
	prov     Provenance
}

func siteEnd(pos Pos, name string) Pos {
	pos.Col += uint32(utf16Len(name))
	return pos
}

// callersIn returns the references of f to the definitions want (all
// named name), in position order: each reference of f to the name that
// resolves to one of them.
func (v *view) callersIn(f *File, name string, want map[defKey]bool) []site {
	type hit struct {
		defs []defRef
		prov Provenance
	}
	fd := f.detail()
	hits := map[int]hit{}
	for k, n := range fd.names {
		if n != name {
			continue
		}
		targets, prov := v.resolve(v.scopeOf(f), n, fd.qual(k))
		var mine []defRef
		for _, d := range targets {
			if want[d.key()] {
				mine = append(mine, d)
			}
		}
		if len(mine) > 0 {
			hits[k] = hit{defs: mine, prov: prov}
		}
	}
	if len(hits) == 0 {
		return nil
	}
	var out []site
	fd.eachRef(func(k int, r Ref) {
		if h, ok := hits[k]; ok {
			out = append(out, site{f: f, encl: fd.enclosing(r.Pos), pos: r.Pos, end: siteEnd(r.Pos, name),
				call: r.Call, defs: h.defs, prov: h.prov})
		}
	})
	return out
}

// callsAt tells whether a reference of the graph at a position is a call,
// reading each file's references once.
type callsAt map[*File]map[Pos]bool

func (c callsAt) at(f *File, p Pos) bool {
	m, ok := c[f]
	if !ok {
		m = map[Pos]bool{}
		f.detail().eachRef(func(_ int, r Ref) {
			if r.Call {
				m[r.Pos] = true
			}
		})
		c[f] = m
	}
	return m[p]
}

// referencesTo calls each with the references to the definitions ds,
// in path and position order: the language server's for each definition
// it answers for, the graph's for the others. The graph's are found file
// by file, each file that refers to the names by the index of names being
// read and resolved when its turn comes. Before each file it asks full
// (nil: never full): once the answer takes no more, it stops, and returns
// what it left: the language server's references in the files left
// (known without reading them) and the files left that the index says
// refer to the names (unread: their references, some of which may be to
// other definitions of the same name, are not counted).
func (g *Graph) referencesTo(ctx context.Context, ask *asker, ds []defRef, full func() bool, each func(site)) (left, unread int) {
	qs := make([]lspAsk, len(ds))
	for i, d := range ds {
		qs[i] = lspAsk{path: d.f.Path, lang: d.f.Lang, pos: d.sym().Sel}
	}
	answers := ask.references(ctx, qs)
	g.mu.RLock()
	defer g.mu.RUnlock()
	// the files to read, by path: the language server's references in
	// each, and the names the graph finds it refers to
	type candidate struct {
		f     *File
		lsp   []site
		names []string
	}
	cands := map[string]*candidate{}
	get := func(f *File) *candidate {
		c := cands[f.Path]
		if c == nil {
			c = &candidate{f: f}
			cands[f.Path] = c
		}
		return c
	}
	byName := map[string][]defRef{}
	var names []string
	calls := callsAt{}
	for i, d := range ds {
		if !answers[i].ok {
			n := d.sym().Name
			if _, ok := byName[n]; !ok {
				names = append(names, n)
			}
			byName[n] = append(byName[n], d)
			continue
		}
		seen := map[lspLoc]bool{}
		for _, l := range answers[i].locs {
			f := g.files[l.path]
			if f == nil || (l.path == d.f.Path && l.start == d.sym().Sel) || seen[l] {
				continue // a file the graph does not hold, the declaration, a repeat
			}
			seen[l] = true
			end := l.end
			if end.Line != l.start.Line || end.Col <= l.start.Col {
				end = siteEnd(l.start, d.sym().Name)
			}
			c := get(f)
			c.lsp = append(c.lsp, site{f: f, encl: f.detail().enclosing(l.start), pos: l.start, end: end,
				call: calls.at(f, l.start), defs: []defRef{d}, prov: ByLSP})
		}
	}
	sort.Strings(names)
	v := g.newView()
	want := map[string]map[defKey]bool{}
	for _, n := range names {
		w := map[defKey]bool{}
		for _, d := range byName[n] {
			w[d.key()] = true
		}
		want[n] = w
		v.referrers(n, func(f *File) {
			c := get(f)
			c.names = append(c.names, n)
		})
	}
	paths := make([]string, 0, len(cands))
	for p := range cands {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for i, p := range paths {
		if full != nil && full() {
			for _, p := range paths[i:] {
				c := cands[p]
				left += len(c.lsp)
				if len(c.names) > 0 {
					unread++
				}
			}
			return left, unread
		}
		c := cands[p]
		sites := append([]site(nil), c.lsp...)
		for _, n := range c.names {
			sites = append(sites, v.callersIn(c.f, n, want[n])...)
		}
		sort.SliceStable(sites, func(i, j int) bool { return before(sites[i].pos, sites[j].pos) })
		for _, st := range sites {
			each(st)
		}
	}
	return 0, 0
}

// defsAt are the definitions at the locations of an answer: those whose
// name is where a location starts. g.mu is held.
func (g *Graph) defsAt(locs []lspLoc) []defRef {
	var out []defRef
	for _, l := range locs {
		f := g.files[l.path]
		if f == nil {
			continue
		}
		syms := f.detail().syms
		for i := range syms {
			if syms[i].Sel == l.start {
				out = append(out, defAt(f, i))
			}
		}
	}
	return out
}

// callees returns the calls made inside definition d and the definitions
// they call: the graph's, and for the calls it only guesses, the language
// server's answer when it gives one.
func (g *Graph) callees(ctx context.Context, ask *asker, d defRef) []site {
	g.mu.RLock()
	v := g.newView()
	s := d.sym()
	sc := v.scopeOf(d.f)
	type res struct {
		defs []defRef
		prov Provenance
	}
	memo := map[nameQual]res{}
	var out []site
	var guesses []int
	var qs []lspAsk
	for _, r := range d.f.Refs() {
		if !r.Call || before(r.Pos, s.Start) || !before(r.Pos, s.End) || r.Pos == s.Sel {
			continue
		}
		k := nameQual{r.Name, r.Qual}
		t, ok := memo[k]
		if !ok {
			t.defs, t.prov = v.resolve(sc, r.Name, r.Qual)
			memo[k] = t
		}
		if len(t.defs) == 0 {
			continue
		}
		if t.prov == ByName && ask != nil {
			guesses = append(guesses, len(out))
			qs = append(qs, lspAsk{path: d.f.Path, lang: d.f.Lang, pos: r.Pos})
		}
		out = append(out, site{f: d.f, encl: int(d.i), pos: r.Pos, end: siteEnd(r.Pos, r.Name), call: true, defs: t.defs, prov: t.prov})
	}
	g.mu.RUnlock()
	if len(qs) == 0 {
		return out
	}
	answers := ask.definitions(ctx, qs)
	g.mu.RLock()
	defer g.mu.RUnlock()
	drop := map[int]bool{}
	for i, at := range guesses {
		if !answers[i].ok {
			continue
		}
		defs := g.defsAt(answers[i].locs)
		if len(defs) == 0 {
			drop[at] = true // the server says it is defined elsewhere
			continue
		}
		out[at].defs, out[at].prov = defs, ByLSP
	}
	kept := out[:0]
	for i, st := range out {
		if !drop[i] {
			kept = append(kept, st)
		}
	}
	return kept
}

// symbolQuery: the references to and calls of the definitions ds, and
// what they call, to depth levels of callers and callees.
func (g *Graph) symbolQuery(ctx context.Context, a *answer, ask *asker, ds []defRef, depth int) {
	// callers, level by level
	level := ds
	seen := map[defKey]bool{}
	for _, d := range ds {
		seen[d.key()] = true
	}
	for lv := 0; lv < depth && len(level) > 0 && !a.truncated; lv++ {
		var next []defRef
		left, unread := g.referencesTo(ctx, ask, level, a.full, func(st site) {
			from := a.file(st.f)
			if st.encl >= 0 {
				from = a.sym(st.f, st.encl)
				caller := defAt(st.f, st.encl)
				if !seen[caller.key()] {
					seen[caller.key()] = true
					next = append(next, caller)
				}
			}
			kind := "references"
			if st.call {
				kind = "calls"
			}
			for _, d := range st.defs {
				a.ref(from, symID(d.f, int(d.i)), kind, toRange(st.pos, st.end), st.prov)
			}
		})
		a.omitted += left
		a.unread += unread
		level = next
	}
	// callees, level by level
	level = ds
	seen = map[defKey]bool{}
	for _, d := range ds {
		seen[d.key()] = true
	}
	for lv := 0; lv < depth && len(level) > 0 && !a.truncated; lv++ {
		var next []defRef
		for _, d := range level {
			from := a.sym(d.f, int(d.i))
			for _, st := range g.callees(ctx, ask, d) {
				for _, t := range st.defs {
					a.file(t.f)
					a.ref(from, a.sym(t.f, int(t.i)), "calls", toRange(st.pos, st.end), st.prov)
					if !seen[t.key()] {
						seen[t.key()] = true
						next = append(next, t)
					}
				}
			}
		}
		level = next
	}
}
