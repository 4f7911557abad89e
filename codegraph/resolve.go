package codegraph

import (
	"path"
	"sort"
	"strings"
)

// Resolution: which files an import leads to, and which definitions a
// reference means. Imports are resolved the way each language's tools
// look for them, within the workspace only (a standard library or a
// package from a registry outside it stays a module name).
//
// A Go reference is resolved by its qualifier (qual.go), as the compiler
// would: a name reached through an import is a package-level definition of
// that import's package and of no other; a bare name is a package-level
// definition of the file's own package (or of a package it dot-imports);
// a member of a value whose type the parser knows is that type's method or
// field. Each is Resolved. A member of a value whose type it does not know
// (t.Errorf) is never taken for a package-level definition: the methods
// and fields so named are a guess, ByName, in tiers (the file's package,
// the packages it imports, anywhere when the name is defined in at most
// maxAnywhere places).
//
// The other languages' references are resolved in tiers, the first that
// has definitions winning: the same file, the files it imports, the same
// directory, then anywhere in the workspace when the name is defined in at
// most maxAnywhere places (a more common name is too ambiguous to mean one
// of them). A bare name found in the file itself or in a file it imports
// (a Java name in its package too) is Resolved as far as the recogniser
// sees the language's scopes; a member of a value, or a name found by the
// later tiers, is ByName.

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
	_, files := g.goPackage(p)
	var out []*File
	for _, f := range files {
		if !isGoTest(f) {
			out = append(out, f)
		}
	}
	return out
}

// goPackage returns the directory of the Go import path p in the
// workspace and its Go files ("" and none when the workspace does not
// hold it).
func (g *Graph) goPackage(p string) (string, []*File) {
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
		d = path.Clean(d)
		var out []*File
		for _, f := range g.dirs[d] {
			if f.Lang == LangGo {
				out = append(out, f)
			}
		}
		if len(out) > 0 {
			return d, out
		}
	}
	return "", nil
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

// Provenance is how a reference was found: the weakest first, so that the
// least of several is what they are together.
type Provenance uint8

// The provenances (docs/PROTOCOL.md §3, agent/codeGraph).
const (
	// ByName: a guess, the definitions of the same name the tiers found.
	ByName Provenance = iota + 1
	// Resolved: the graph resolved it by the language's rules.
	Resolved
	// ByLSP: the editor's language server said so.
	ByLSP
)

func (p Provenance) String() string {
	switch p {
	case ByName:
		return "name"
	case Resolved:
		return "resolved"
	case ByLSP:
		return "lsp"
	}
	return ""
}

// weakest is the lesser of two provenances, 0 counting as none.
func weakest(a, b Provenance) Provenance {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// scope is what a file's references resolve against: the file, the files
// it imports, its directory; for Go, the directory of each import path
// and the dot-imports.
type scope struct {
	f        *File
	imported map[*File]bool
	dir      string
	// Go: the directory of each import path the workspace holds, the
	// directories imported, the paths imported with a dot.
	pkgDirs     map[string]string
	importedDir map[string]bool
	dots        []string
}

// scopeOf builds the scope of f. g.mu is held.
func (g *Graph) scopeOf(f *File) *scope {
	s := &scope{f: f, dir: path.Dir(f.Path)}
	if f.Lang == LangGo {
		for _, imp := range f.Imports {
			dir, _ := g.goPackage(imp.Path)
			if dir == "" {
				continue
			}
			if s.pkgDirs == nil {
				s.pkgDirs, s.importedDir = map[string]string{}, map[string]bool{}
			}
			s.pkgDirs[imp.Path] = dir
			s.importedDir[dir] = true
			if imp.Name == "." {
				s.dots = append(s.dots, imp.Path)
			}
		}
		return s
	}
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

// resolve returns the definitions a reference to name with the qualifier
// qual from s means, and how sure that is. g.mu is held.
func (g *Graph) resolve(s *scope, name, qual string) ([]defRef, Provenance) {
	all := g.defs[name]
	if len(all) == 0 {
		return nil, 0
	}
	var out []defRef
	var prov Provenance
	if s.f.Lang == LangGo {
		out, prov = g.resolveGo(s, all, qual)
	} else {
		out, prov = g.resolveTokens(s, all, qual)
	}
	out = dropConstructors(out)
	if len(out) == 0 {
		return nil, 0
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool {
			if out[i].f.Path != out[j].f.Path {
				return out[i].f.Path < out[j].f.Path
			}
			return out[i].i < out[j].i
		})
	}
	return out, prov
}

// isGoTest reports whether f is a Go test file, which no importer sees.
func isGoTest(f *File) bool { return strings.HasSuffix(f.Path, "_test.go") }

// resolveGo resolves a Go reference by its qualifier (the comment at the
// top). g.mu is held.
func (g *Graph) resolveGo(s *scope, all []defRef, qual string) ([]defRef, Provenance) {
	kind, ipath, typ := splitQual(qual)
	samePkg := func(f *File) bool { return f.dir == s.dir && f.Package == s.f.Package && f.Lang == LangGo }
	inPkg := func(ipath string) func(*File) bool {
		if ipath == "" {
			return samePkg
		}
		dir, ok := s.pkgDirs[ipath]
		if !ok {
			return nil
		}
		return func(f *File) bool { return f.dir == dir && f.Lang == LangGo && !isGoTest(f) }
	}
	pick := func(in func(*File) bool, container string) []defRef {
		if in == nil {
			return nil
		}
		var out []defRef
		for _, d := range all {
			if in(d.f) && d.sym().Container == container {
				out = append(out, d)
			}
		}
		return out
	}
	switch kind {
	case 0:
		if out := pick(samePkg, ""); len(out) > 0 {
			return out, Resolved
		}
		var out []defRef
		for _, p := range s.dots {
			out = append(out, pick(inPkg(p), "")...)
		}
		return out, Resolved
	case 'p':
		return pick(inPkg(ipath), ""), Resolved
	case 't':
		if out := pick(inPkg(ipath), typ); len(out) > 0 {
			return out, Resolved
		}
		if ipath == "" {
			// a type of a package the file dot-imports
			var out []defRef
			for _, p := range s.dots {
				out = append(out, pick(inPkg(p), typ)...)
			}
			if len(out) > 0 {
				return out, Resolved
			}
		}
		// a promoted member, or one of a type the workspace does not
		// define: a guess, as for a value of unknown type
	}
	var same, imported, any []defRef
	for _, d := range all {
		if d.f.Lang != LangGo || d.sym().Container == "" {
			continue
		}
		any = append(any, d)
		switch {
		case samePkg(d.f):
			same = append(same, d)
		case s.importedDir[d.f.dir] && !isGoTest(d.f):
			imported = append(imported, d)
		}
	}
	switch {
	case len(same) > 0:
		return same, ByName
	case len(imported) > 0:
		return imported, ByName
	case len(any) <= maxAnywhere:
		return any, ByName
	}
	return nil, 0
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

// resolveTokens resolves a reference of a token language by the tiers of
// the comment at the top. g.mu is held.
func (g *Graph) resolveTokens(s *scope, all []defRef, qual string) ([]defRef, Provenance) {
	kind, _, _ := splitQual(qual)
	var same, members, imported, dir []defRef
	for _, d := range all {
		switch {
		case d.f == s.f:
			same = append(same, d)
			if d.sym().Container != "" {
				members = append(members, d)
			}
		case s.imported[d.f]:
			imported = append(imported, d)
		case d.f.dir == s.dir:
			dir = append(dir, d)
		}
	}
	bare := kind == 0
	switch {
	case kind == '@' && len(members) > 0:
		return members, Resolved
	case len(same) > 0:
		return same, sure(bare)
	case len(imported) > 0:
		return imported, sure(bare)
	case len(dir) > 0:
		return dir, sure(bare && s.f.Lang == LangJava)
	case len(all) <= maxAnywhere:
		return all, ByName
	}
	return nil, 0
}

// sure is Resolved when ok, else ByName.
func sure(ok bool) Provenance {
	if ok {
		return Resolved
	}
	return ByName
}
