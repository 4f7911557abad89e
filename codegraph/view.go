package codegraph

// view reads the graph for one query, or one pass over it, while g.mu is
// held for reading: the definitions of each name and the scope of each
// file are looked up once. A view is not used after the lock is let go
// (a query that asks the language server makes a new one after).
type view struct {
	g      *Graph
	defs   map[string]*nameDefs // the names looked up lately
	older  map[string]*nameDefs // those of the generation before
	cached int                  // definitions in defs
	budget int                  // definitions a generation keeps (viewDefs)
	scopes map[*File]*scope
}

// nameDefs is every definition of one name, and those of Go by directory
// (made when first asked, for a name with many), so that resolving a Go
// reference looks at the one directory its package is in rather than at
// every definition of the name: a monorepo holds thousands of some.
type nameDefs struct {
	all     []defRef
	byDir   map[string][]defRef // Go definitions by directory, or nil
	members int                 // Go definitions with a container
}

// byDirFrom is the number of definitions from which a name's are indexed
// by directory.
const byDirFrom = 32

func newNameDefs(all []defRef) *nameDefs {
	nd := &nameDefs{all: all}
	for _, d := range all {
		if d.f.Lang == LangGo && d.container != "" {
			nd.members++
		}
	}
	return nd
}

// inDir returns the definitions that may be in the Go directory dir: all
// of them for a name with few (the caller checks the directory), else
// those the index has there.
func (nd *nameDefs) inDir(dir string) []defRef {
	if len(nd.all) < byDirFrom {
		return nd.all
	}
	if nd.byDir == nil {
		nd.byDir = map[string][]defRef{}
		for _, d := range nd.all {
			if d.f.Lang == LangGo {
				nd.byDir[d.f.dir] = append(nd.byDir[d.f.dir], d)
			}
		}
	}
	return nd.byDir[dir]
}

// viewDefs bounds the definitions a view keeps in one generation (a pass
// over every file looks up every name): past it, the names looked up
// lately become the older generation, and a name found there is kept
// again, so that the common names a pass meets in every file (String,
// Error, ten thousand definitions each in a monorepo) are indexed once
// while what a pass keeps stays within two generations, a few megabytes
// (on three copies of the standard library, a first repo map took 6.7 s
// of CPU to 2.9 s, for the same peak memory). The repo map's pass keeps
// more on a large graph (passDefs).
const viewDefs = 1 << 17

// passDefs is what a view keeps in one generation for a pass over every
// file of a graph of n definitions: a quarter of them, from viewDefs up
// to a million (about 100 MB). On ten copies of the standard library
// (3.75 million definitions) the first repo map took 51 s of CPU with
// viewDefs, 14 s with a million, its peak memory within ctags's.
func passDefs(n int) int { return max(viewDefs, min(n/4, 1<<20)) }

func (g *Graph) newView() *view {
	return &view{g: g, defs: map[string]*nameDefs{}, scopes: map[*File]*scope{}, budget: viewDefs}
}

// defsOf returns every definition named name that the graph holds: those
// of the stored graph (its index by name), then those of the files in
// memory. The slice is the view's own.
func (v *view) defsOf(name string) []defRef { return v.named(name).all }

// named is defsOf with the index by directory.
func (v *view) named(name string) *nameDefs {
	if nd, ok := v.defs[name]; ok {
		return nd
	}
	if nd, ok := v.older[name]; ok {
		v.keep(name, nd)
		return nd
	}
	var out []defRef
	for _, im := range v.g.images {
		if id := im.lookup(name); id >= 0 {
			im.eachDef(id, func(f *File, i int32, kind Kind, container string) {
				out = append(out, defRef{f: f, i: i, kind: kind, container: container})
			})
		}
	}
	out = append(out, v.g.defs[name]...)
	nd := newNameDefs(out)
	v.keep(name, nd)
	return nd
}

// keep keeps the definitions of name in the view's newer generation.
func (v *view) keep(name string, nd *nameDefs) {
	if v.cached+len(nd.all) > v.budget {
		v.older, v.defs = v.defs, map[string]*nameDefs{}
		v.cached = 0
	}
	v.defs[name] = nd
	v.cached += len(nd.all) + 1
}

// referrers calls fn with each file that refers to name (with any
// qualifier), each once.
func (v *view) referrers(name string, fn func(f *File)) {
	for _, im := range v.g.images {
		if id := im.lookup(name); id >= 0 {
			im.eachReferrer(id, fn)
		}
	}
	for _, f := range v.g.naming[name] {
		fn(f)
	}
}

// scopeOf is the scope of f (resolve.go).
func (v *view) scopeOf(f *File) *scope {
	s, ok := v.scopes[f]
	if !ok {
		s = v.g.scopeOf(f)
		v.scopes[f] = s
	}
	return s
}
