package codegraph

import (
	"context"
	"fmt"
	"path"
	"sort"
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
	// Provenance is how the definition was found when it is what a file's
	// references mean (FindSymbol with a file that uses the name); 0 for
	// a definition found by its own name.
	Provenance Provenance
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
	// Provenance is how the reference was found.
	Provenance Provenance
}

// FindSymbol returns the definitions named so (a name, or
// Container.Name), at most limit of them (sorted by path), and how many
// there are in all. With rel, those defined in rel; when rel defines none
// so named but refers to the name, the definitions its references mean:
// as the editor's language server answers, else as the graph resolves
// them (each with its Provenance). It waits until the graph is current.
func (g *Graph) FindSymbol(ctx context.Context, name, rel string, limit int) ([]Definition, int, error) {
	defer g.startWalk() // after the first answer
	if err := g.answerable(ctx); err != nil {
		return nil, 0, err
	}
	name = strings.TrimSpace(name)
	g.mu.RLock()
	v := g.newView()
	f, err := g.fileArg(rel)
	if err != nil {
		g.mu.RUnlock()
		return nil, 0, err
	}
	ds := v.lookup(f, name)
	var prov Provenance
	if len(ds) == 0 && f != nil {
		// what f's references to the name mean, asked of the language
		// server at the first of each kind (fmt.Errorf and t.Errorf are
		// two), resolved by the graph meanwhile
		bare, qualified := name, false
		if i := strings.LastIndexAny(name, ".:"); i > 0 {
			bare, qualified = name[i+1:], true
		}
		sc := v.scopeOf(f)
		seen := map[string]bool{}
		var qs []lspAsk
		f.detail().eachRef(func(_ int, r Ref) {
			if r.Name != bare || seen[r.Qual] || len(qs) == 8 {
				return
			}
			seen[r.Qual] = true
			qs = append(qs, lspAsk{path: f.Path, lang: f.Lang, pos: r.Pos})
			targets, p := v.resolve(sc, r.Name, r.Qual)
			for _, d := range targets {
				if !qualified || matchDef(d, bare, name) {
					ds = append(ds, d)
					prov = weakest(prov, p)
				}
			}
		})
		g.mu.RUnlock()
		answers := g.newAsker().definitions(ctx, qs)
		g.mu.RLock()
		var byLSP []defRef
		asked := len(qs) > 0
		for _, ans := range answers {
			if !ans.ok {
				asked = false
				break
			}
			byLSP = append(byLSP, g.defsAt(ans.locs)...)
		}
		if asked {
			ds, prov = byLSP, ByLSP
		}
		ds = uniqueDefs(ds)
	}
	defer g.mu.RUnlock()
	lines := newLineCache()
	var out []Definition
	for _, d := range ds {
		if len(out) == limit {
			break
		}
		s := d.sym()
		out = append(out, Definition{Path: d.f.Path, Kind: s.Kind, Name: s.Name, Container: s.Container,
			Start: s.Start, End: s.End, Line: strings.TrimSpace(lines.line(g.Root(), d.f, int(s.Sel.Line))), Provenance: prov})
	}
	return out, len(ds), nil
}

// uniqueDefs sorts definitions by path and place and drops repeats.
func uniqueDefs(ds []defRef) []defRef {
	sort.Slice(ds, func(i, j int) bool {
		if ds[i].f.Path != ds[j].f.Path {
			return ds[i].f.Path < ds[j].f.Path
		}
		return ds[i].i < ds[j].i
	})
	out := ds[:0]
	for i, d := range ds {
		if i == 0 || d.f.Path != ds[i-1].f.Path || d.i != ds[i-1].i {
			out = append(out, d)
		}
	}
	return out
}

// References returns the places that refer to the definitions named so
// (in rel only, when given): the editor's language server's answer for
// each definition it answers for, the graph's for the others. It returns
// at most limit of them, in path order, and how many there are in all.
// It waits until the graph is current.
func (g *Graph) References(ctx context.Context, name, rel string, limit int) ([]Reference, int, error) {
	defer g.startWalk() // after the first answer
	if err := g.answerable(ctx); err != nil {
		return nil, 0, err
	}
	g.mu.RLock()
	f, err := g.fileArg(rel)
	if err != nil {
		g.mu.RUnlock()
		return nil, 0, err
	}
	ds := g.newView().lookup(f, strings.TrimSpace(name))
	g.mu.RUnlock()
	if len(ds) == 0 {
		return nil, 0, fmt.Errorf("%w: no definition of %s", ErrNotFound, name)
	}
	var sites []site
	g.referencesTo(ctx, g.newAsker(), ds, nil, func(st site) { sites = append(sites, st) })
	// one place once, however many of the definitions it may mean
	kept := sites[:0]
	for i, st := range sites {
		if i > 0 && st.f.Path == sites[i-1].f.Path && st.pos == sites[i-1].pos {
			last := &kept[len(kept)-1]
			last.prov = weakest(last.prov, st.prov)
			continue
		}
		kept = append(kept, st)
	}
	lines := newLineCache()
	var out []Reference
	for _, st := range kept {
		if len(out) == limit {
			break
		}
		in := ""
		if syms := st.f.detail().syms; st.encl >= 0 && st.encl < len(syms) {
			in = syms[st.encl].Qualified()
		}
		out = append(out, Reference{Path: st.f.Path, Pos: st.pos, Call: st.call, In: in, Provenance: st.prov,
			Line: strings.TrimSpace(lines.line(g.Root(), st.f, int(st.pos.Line)))})
	}
	return out, len(kept), nil
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
