package codegraph

import (
	"context"
	"fmt"
	"path"
	"strings"
)

// Definition is a definition found by name (the workers' find_symbol).
type Definition struct {
	Path       string
	Kind       Kind
	Name       string
	Container  string
	Start, End Pos
	// Line is the text of the definition's first line (its name's line),
	// trimmed; "" when the file on disk no longer holds it.
	Line string
}

// Reference is a place that refers to a definition (the workers'
// find_references).
type Reference struct {
	Path string
	Pos  Pos
	Call bool
	// In is the definition the reference is inside ("Type.Method"), "" at
	// the file's top level.
	In string
	// Line is the text of the reference's line, trimmed.
	Line string
}

// FindSymbol returns the definitions named so (a name, or Container.Name),
// in rel only when it is not "", at most limit of them (sorted by path),
// and how many there are in all. It waits until the graph is current.
func (g *Graph) FindSymbol(ctx context.Context, name, rel string, limit int) ([]Definition, int, error) {
	if err := g.Current(ctx); err != nil {
		return nil, 0, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	f, err := g.fileArg(rel)
	if err != nil {
		return nil, 0, err
	}
	ds := g.lookup(f, strings.TrimSpace(name))
	lines := newLineCache()
	var out []Definition
	for _, d := range ds {
		if len(out) == limit {
			break
		}
		s := d.sym()
		out = append(out, Definition{Path: d.f.Path, Kind: s.Kind, Name: s.Name, Container: s.Container,
			Start: s.Start, End: s.End, Line: strings.TrimSpace(lines.line(g.Root(), d.f, int(s.Sel.Line)))})
	}
	return out, len(ds), nil
}

// References returns the places that refer to the definitions named so
// (in rel only, when given), at most limit of them in path order, and
// whether there were more. It waits until the graph is current.
func (g *Graph) References(ctx context.Context, name, rel string, limit int) ([]Reference, bool, error) {
	if err := g.Current(ctx); err != nil {
		return nil, false, err
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	f, err := g.fileArg(rel)
	if err != nil {
		return nil, false, err
	}
	ds := g.lookup(f, strings.TrimSpace(name))
	if len(ds) == 0 {
		return nil, false, fmt.Errorf("%w: no definition of %s", ErrNotFound, name)
	}
	// the definitions by name: each name's references resolve separately
	byName := map[string][]defRef{}
	var names []string
	for _, d := range ds {
		n := d.sym().Name
		if _, ok := byName[n]; !ok {
			names = append(names, n)
		}
		byName[n] = append(byName[n], d)
	}
	lines := newLineCache()
	var out []Reference
	more := false
	for _, n := range names {
		for _, st := range g.callers(byName[n], limit+1) {
			if len(out) == limit {
				more = true
				break
			}
			in := ""
			if st.encl >= 0 {
				in = st.f.Symbols[st.encl].Qualified()
			}
			out = append(out, Reference{Path: st.f.Path, Pos: st.pos, Call: st.call, In: in,
				Line: strings.TrimSpace(lines.line(g.Root(), st.f, int(st.pos.Line)))})
		}
	}
	return out, more, nil
}

// fileArg is the record of rel ("" gives nil). g.mu is held.
func (g *Graph) fileArg(rel string) (*File, error) {
	if rel == "" {
		return nil, nil
	}
	rel = path.Clean(strings.TrimPrefix(rel, "./"))
	f := g.files[rel]
	if f == nil {
		return nil, fmt.Errorf("%w: %s is not a source file of the graph", ErrNotFound, rel)
	}
	return f, nil
}
