package codegraph

import (
	"path"
	"sort"
	"strings"
)

// Resolution: which files an import leads to, and which definitions a
// reference (a bare name) means. Imports are resolved the way each
// language's tools look for them, within the workspace only (a standard
// library or a package from a registry outside it stays a module name).
// A name is resolved in tiers, the first that has definitions winning:
// the same file, the files it imports, the same directory (a Go package,
// a Java package, a C module's headers), then anywhere in the workspace
// when the name is defined in at most maxAnywhere places (a more common
// name is too ambiguous to mean one of them).

const maxAnywhere = 4

// importTargets returns the files an import of f leads to. g.mu is held.
func (g *Graph) importTargets(f *File, imp Import) []*File {
	p := imp.Path
	dir := path.Dir(f.Path)
	switch f.Lang {
	case LangGo:
		return g.goImport(p)
	case LangPython:
		return g.pyImport(dir, p)
	case LangJavaScript, LangTypeScript:
		return g.jsImport(dir, p)
	case LangRust:
		return g.rustImport(f, p)
	case LangJava:
		return g.javaImport(p)
	case LangC, LangCPP:
		if t := g.files[cleanJoin(dir, p)]; t != nil {
			return []*File{t}
		}
		return g.bySuffix(p)
	}
	return nil
}

// cleanJoin joins a relative path onto a directory; "" when it leaves the
// workspace.
func cleanJoin(dir, rel string) string {
	p := path.Join(dir, rel)
	if p == ".." || strings.HasPrefix(p, "../") {
		return ""
	}
	return p
}

// bySuffix returns the files whose path ends with the slash path suffix
// (at a directory boundary).
func (g *Graph) bySuffix(suffix string) []*File {
	suffix = strings.TrimPrefix(path.Clean(suffix), "./")
	if strings.HasPrefix(suffix, "../") {
		suffix = strings.TrimLeft(suffix, "./")
	}
	var out []*File
	for _, p := range g.bases[path.Base(suffix)] {
		if p == suffix || strings.HasSuffix(p, "/"+suffix) {
			if f := g.files[p]; f != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

func (g *Graph) goImport(p string) []*File {
	var dirs []string
	for mdir, mod := range g.modules {
		switch {
		case p == mod:
			dirs = append(dirs, mdir)
		case strings.HasPrefix(p, mod+"/"):
			dirs = append(dirs, cleanJoin(mdir, strings.TrimPrefix(p, mod+"/")))
		case mod == "std":
			dirs = append(dirs, cleanJoin(mdir, p), cleanJoin(mdir, "vendor/"+p))
		}
	}
	dirs = append(dirs, p)
	for _, d := range dirs {
		var out []*File
		for _, f := range g.dirs[path.Clean(d)] {
			if f.Lang == LangGo {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

func (g *Graph) pyImport(dir, p string) []*File {
	base := ""
	rel := p
	if strings.HasPrefix(p, ".") {
		dots := len(p) - len(strings.TrimLeft(p, "."))
		base = dir
		for i := 1; i < dots; i++ {
			base = path.Dir(base)
		}
		rel = p[dots:]
	}
	mod := strings.ReplaceAll(rel, ".", "/")
	tries := []string{mod + ".py", mod + "/__init__.py", mod + ".pyi"}
	if mod == "" {
		tries = []string{"__init__.py"}
	}
	for _, t := range tries {
		if strings.HasPrefix(p, ".") {
			if f := g.files[cleanJoin(base, t)]; f != nil {
				return []*File{f}
			}
			continue
		}
		if out := g.bySuffix(t); len(out) > 0 {
			return out
		}
	}
	return nil
}

var jsExts = []string{"", ".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts",
	"/index.ts", "/index.tsx", "/index.js", "/index.jsx", "/index.mjs"}

func (g *Graph) jsImport(dir, p string) []*File {
	if !strings.HasPrefix(p, "./") && !strings.HasPrefix(p, "../") && p != "." && p != ".." {
		return nil // a package: outside the workspace's sources
	}
	target := cleanJoin(dir, p)
	if target == "" {
		return nil
	}
	bases := []string{target}
	// TypeScript's ESM style names the .js its .ts compiles to.
	for _, ext := range []string{".js", ".jsx", ".mjs", ".cjs"} {
		if stem, ok := strings.CutSuffix(target, ext); ok {
			bases = append(bases, stem)
		}
	}
	for _, b := range bases {
		for _, ext := range jsExts {
			if f := g.files[b+ext]; f != nil {
				return []*File{f}
			}
		}
	}
	return nil
}

func (g *Graph) rustImport(f *File, p string) []*File {
	dir := path.Dir(f.Path)
	base := path.Base(f.Path)
	// the directory of f's own submodules
	moddir := dir
	switch base {
	case "mod.rs", "lib.rs", "main.rs":
	default:
		moddir = path.Join(dir, strings.TrimSuffix(base, ".rs"))
	}
	if name, ok := strings.CutPrefix(p, "mod "); ok {
		for _, t := range []string{path.Join(moddir, name+".rs"), path.Join(moddir, name, "mod.rs")} {
			if x := g.files[t]; x != nil {
				return []*File{x}
			}
		}
		return nil
	}
	segs := strings.Split(strings.SplitN(p, "{", 2)[0], "::")
	var root string
	switch segs[0] {
	case "crate":
		root = crateRoot(f.Path)
		segs = segs[1:]
	case "self":
		root = moddir
		segs = segs[1:]
	case "super":
		root = path.Dir(moddir)
		segs = segs[1:]
	default:
		return nil // another crate
	}
	for n := len(segs); n > 0; n-- {
		mod := strings.Join(segs[:n], "/")
		if mod == "" {
			continue
		}
		for _, t := range []string{path.Join(root, mod+".rs"), path.Join(root, mod, "mod.rs")} {
			if x := g.files[t]; x != nil {
				return []*File{x}
			}
		}
	}
	return nil
}

// crateRoot is the src directory a Rust file is under (its crate's root
// module's directory), or its own directory.
func crateRoot(p string) string {
	dir := path.Dir(p)
	for d := dir; d != "." && d != "/"; d = path.Dir(d) {
		if path.Base(d) == "src" {
			return d
		}
	}
	return dir
}

func (g *Graph) javaImport(p string) []*File {
	if stem, ok := strings.CutSuffix(p, ".*"); ok {
		dir := strings.ReplaceAll(stem, ".", "/")
		for d, files := range g.dirs {
			if d == dir || strings.HasSuffix(d, "/"+dir) {
				return files
			}
		}
		return nil
	}
	parts := strings.Split(p, ".")
	for n := len(parts); n > 0 && n >= len(parts)-1; n-- {
		if out := g.bySuffix(strings.Join(parts[:n], "/") + ".java"); len(out) > 0 {
			return out
		}
	}
	return nil
}

// scope is what a file's references resolve against: the file, the files
// it imports, its directory.
type scope struct {
	f        *File
	imported map[*File]bool
	dir      string
}

// scopeOf builds the scope of f. g.mu is held.
func (g *Graph) scopeOf(f *File) *scope {
	s := &scope{f: f, dir: path.Dir(f.Path)}
	for _, imp := range f.Imports {
		for _, t := range g.importTargets(f, imp) {
			if s.imported == nil {
				s.imported = map[*File]bool{}
			}
			s.imported[t] = true
		}
	}
	return s
}

// resolve returns the definitions a reference to name from s means, by
// the tiers above. g.mu is held.
func (g *Graph) resolve(s *scope, name string) []defRef {
	all := g.defs[name]
	if len(all) == 0 {
		return nil
	}
	if len(all) == 1 {
		return all
	}
	out := dropConstructors(g.tier(s, all))
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool {
			if out[i].f.Path != out[j].f.Path {
				return out[i].f.Path < out[j].f.Path
			}
			return out[i].i < out[j].i
		})
	}
	return out
}

// dropConstructors leaves out the constructors (methods named as their
// class) when the class itself is among the definitions: a reference to
// the name means the class.
func dropConstructors(ds []defRef) []defRef {
	typ := false
	for _, d := range ds {
		if d.sym().Kind.isType() {
			typ = true
			break
		}
	}
	if !typ {
		return ds
	}
	out := ds[:0:0]
	for _, d := range ds {
		if s := d.sym(); s.Kind == KindMethod && s.Name == s.Container {
			continue
		}
		out = append(out, d)
	}
	return out
}

// tier picks the definitions of the first tier that has any.
func (g *Graph) tier(s *scope, all []defRef) []defRef {
	var same, imported, dir []defRef
	for _, d := range all {
		switch {
		case d.f == s.f:
			same = append(same, d)
		case s.imported[d.f]:
			imported = append(imported, d)
		case d.f.dir == s.dir:
			dir = append(dir, d)
		}
	}
	switch {
	case len(same) > 0:
		return same
	case len(imported) > 0:
		return imported
	case len(dir) > 0:
		return dir
	case len(all) <= maxAnywhere:
		return all
	}
	return nil
}
