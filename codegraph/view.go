package codegraph

// view reads the graph for one query, or one pass over it, while g.mu is
// held for reading: the definitions of each name and the scope of each
// file are looked up once. A view is not used after the lock is let go
// (a query that asks the language server makes a new one after).
type view struct {
	g      *Graph
	defs   map[string][]defRef
	cached int // definitions in defs
	scopes map[*File]*scope
}

// viewDefs bounds the definitions a view keeps (a pass over every file
// looks up every name): past it, it starts again, so that what a pass
// keeps stays a few megabytes.
const viewDefs = 1 << 16

func (g *Graph) newView() *view {
	return &view{g: g, defs: map[string][]defRef{}, scopes: map[*File]*scope{}}
}

// defsOf returns every definition named name that the graph holds: those
// of the stored graph (its index by name), then those of the files in
// memory. The slice is the view's own.
func (v *view) defsOf(name string) []defRef {
	if ds, ok := v.defs[name]; ok {
		return ds
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
	if v.cached+len(out) > viewDefs {
		clear(v.defs)
		v.cached = 0
	}
	v.defs[name] = out
	v.cached += len(out) + 1
	return out
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
