package codegraph

import (
	"path"
	"slices"
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
// has definitions winning: the same file, what it imports (the files its
// imports lead to; for C#, PHP, Kotlin and Swift also the namespaces,
// packages and modules it sees whole, imports.go), the same directory,
// then anywhere in the workspace when the name is defined in at most
// maxAnywhere places (a more common name is too ambiguous to mean one of
// them). A bare name found in the file itself or in what it imports (a
// Java name in its package too) is Resolved as far as the recogniser sees
// the language's scopes; a member of a value, or a name found by the
// later tiers, is ByName.

const maxAnywhere = 4

// importTargets returns the files an import of f leads to. g.mu is held.
func (g *Graph) importTargets(f *File, imp Import) []*File {
	p := imp.Path
	dir := path.Dir(f.Path)
	switch f.Lang {
	case LangGo:
		return g.goImport(f, p)
	case LangPython:
		return g.pyImport(dir, p)
	case LangJavaScript, LangTypeScript:
		return g.jsImport(dir, p)
	case LangRust:
		return g.rustImport(f, p)
	case LangJava:
		return g.javaImport(p)
	case LangRuby:
		return g.rubyImport(dir, p)
	case LangShell:
		return g.shellImport(dir, p)
	case LangLua:
		return g.luaImport(dir, p)
	case LangPHP:
		return g.phpImport(dir, p)
	case LangCSharp:
		return g.csImport(p)
	case LangKotlin:
		return g.kotlinImport(p)
	case LangSwift:
		return g.swiftImport(p)
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
	for _, p := range g.byBase()[path.Base(suffix)] {
		if p == suffix || strings.HasSuffix(p, "/"+suffix) {
			if f := g.files[p]; f != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

func (g *Graph) goImport(from *File, p string) []*File {
	_, files := g.goPackage(from, p)
	var out []*File
	for _, f := range files {
		if !isGoTest(f) {
			out = append(out, f)
		}
	}
	return out
}

// goPackage returns the directory of the Go import path p, imported from
// the file from, in the workspace and its Go files ("" and none when the
// workspace does not hold it). The module of from is looked in first, then
// the others in the order of their directories.
func (g *Graph) goPackage(from *File, p string) (string, []*File) {
	d := g.goPackageDir(from, p)
	if d == "" {
		return "", nil
	}
	var out []*File
	for _, q := range g.dirs[d] {
		if f := g.files[q]; f != nil && f.Lang == LangGo {
			out = append(out, f)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return d, out
}

// goPackageDir is the directory of the Go import path p, imported from the
// file from ("" when the workspace does not hold it). g.mu is held. The
// answer depends on from's module alone: it is kept (pkgDirCache), since
// a query resolves the imports of thousands of files that share a few.
func (g *Graph) goPackageDir(from *File, p string) string {
	return g.pkgDirs.get(g, from.dir, p)
}

// findPackageDir is goPackageDir, not kept.
func (g *Graph) findPackageDir(from *File, p string) string {
	found := ""
	try := func(d string) bool {
		d = path.Clean(d)
		for _, q := range g.dirs[d] {
			if f := g.files[q]; f != nil && f.Lang == LangGo {
				found = d
				return true
			}
		}
		return false
	}
	g.eachModule(from.dir, func(mdir, mod string) bool {
		switch {
		case p == mod:
			return !try(mdir)
		case len(p) > len(mod) && inDir(p, mod):
			return !try(cleanJoin(mdir, strings.TrimPrefix(p, mod+"/")))
		case mod == "std":
			return !try(cleanJoin(mdir, p)) && !try(cleanJoin(mdir, "vendor/"+p))
		}
		return true
	})
	if found == "" {
		try(p)
	}
	return found
}

// eachModule calls fn with the directory and path of each Go module, the
// one that holds dir (the deepest) first, then the others in the order of
// their directories, until fn returns false. g.mu is held.
func (g *Graph) eachModule(dir string, fn func(mdir, mod string) bool) {
	own := g.ownModule(dir)
	if own != "" && !fn(own, g.modules[own]) {
		return
	}
	for _, m := range g.modDirs {
		if m != own && !fn(m, g.modules[m]) {
			return
		}
	}
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
		var match []string
		for d := range g.dirs {
			if d == dir || strings.HasSuffix(d, "/"+dir) {
				match = append(match, d)
			}
		}
		if len(match) == 0 {
			return nil
		}
		sort.Strings(match)
		var out []*File
		for _, q := range g.dirs[match[0]] {
			if f := g.files[q]; f != nil {
				out = append(out, f)
			}
		}
		return out
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
	// C#, PHP, Kotlin, Swift: the namespaces, packages or modules the file
	// sees whole (imports.go).
	spaces map[string]bool
}

// scopeOf builds the scope of f. g.mu is held.
func (g *Graph) scopeOf(f *File) *scope {
	s := &scope{f: f, dir: path.Dir(f.Path)}
	if f.Lang == LangGo {
		for _, imp := range f.Imports {
			dir := g.goPackageDir(f, imp.Path)
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
	switch f.Lang {
	case LangCSharp, LangPHP, LangKotlin, LangSwift:
		g.spaceScope(s, f)
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
// qual from s means, and how sure that is. v's graph is read-locked.
func (v *view) resolve(s *scope, name, qual string) ([]defRef, Provenance) {
	nd := v.named(name)
	all := nd.all
	if len(all) == 0 {
		return nil, 0
	}
	var out []defRef
	var prov Provenance
	if s.f.Lang == LangGo {
		out, prov = resolveGo(s, nd, qual)
	} else {
		out, prov = resolveTokens(s, all, qual)
	}
	if s.f.Lang != LangGo {
		out = dropConstructors(name, out)
	}
	if len(out) == 0 {
		return nil, 0
	}
	if len(out) > 1 && !slices.IsSortedFunc(out, compareDefs) {
		slices.SortFunc(out, compareDefs)
	}
	return out, prov
}

// compareDefs orders definitions by path and place in the file.
func compareDefs(a, b defRef) int {
	if c := strings.Compare(a.f.Path, b.f.Path); c != 0 {
		return c
	}
	return int(a.i) - int(b.i)
}

// isGoTest reports whether f is a Go test file, which no importer sees.
func isGoTest(f *File) bool { return strings.HasSuffix(f.Path, "_test.go") }

// resolveGo resolves a Go reference by its qualifier (the comment at the
// top) among all the definitions of its name.
func resolveGo(s *scope, nd *nameDefs, qual string) ([]defRef, Provenance) {
	kind, ipath, typ := splitQual(qual)
	switch kind {
	case 0:
		if out := pickGo(nil, nd, s, "", ""); len(out) > 0 {
			return out, Resolved
		}
		var out []defRef
		for _, p := range s.dots {
			out = pickGo(out, nd, s, p, "")
		}
		return out, Resolved
	case 'p':
		if ipath == "" {
			return nil, 0
		}
		return pickGo(nil, nd, s, ipath, ""), Resolved
	case 't':
		if out := pickGo(nil, nd, s, ipath, typ); len(out) > 0 {
			return out, Resolved
		}
		if ipath == "" {
			// a type of a package the file dot-imports
			var out []defRef
			for _, p := range s.dots {
				out = pickGo(out, nd, s, p, typ)
			}
			if len(out) > 0 {
				return out, Resolved
			}
		}
		// a promoted member, or one of a type the workspace does not
		// define: a guess, as for a value of unknown type
	}
	// the guess's tiers: the file's package, the packages it imports,
	// anywhere when the name is rare; counted first so that one slice is
	// made, the imports looked up only when the package has none
	if nd.members == 0 {
		return nil, 0
	}
	var out []defRef
	for _, d := range nd.inDir(s.dir) {
		if d.f.Lang == LangGo && d.container != "" && d.f.dir == s.dir && d.f.Package == s.f.Package {
			out = append(out, d)
		}
	}
	if len(out) > 0 {
		return out, ByName
	}
	if len(s.importedDir) > 0 {
		if len(nd.all) < byDirFrom || len(s.importedDir) > len(nd.all) {
			for _, d := range nd.all {
				if d.f.Lang == LangGo && d.container != "" && s.importedDir[d.f.dir] && !isGoTest(d.f) {
					out = append(out, d)
				}
			}
		} else {
			for dir := range s.importedDir {
				for _, d := range nd.inDir(dir) {
					if d.f.Lang == LangGo && d.container != "" && d.f.dir == dir && !isGoTest(d.f) {
						out = append(out, d)
					}
				}
			}
		}
		if len(out) > 0 {
			return out, ByName
		}
	}
	if nd.members > maxAnywhere {
		return nil, 0
	}
	for _, d := range nd.all {
		if d.f.Lang == LangGo && d.container != "" {
			out = append(out, d)
		}
	}
	return out, ByName
}

// pickGo appends to out the definitions among all that are in the
// package of the import path ipath ("": the file's own package) with this
// container ("": package-level).
func pickGo(out []defRef, nd *nameDefs, s *scope, ipath, container string) []defRef {
	dir, own := s.dir, ipath == ""
	if !own {
		d, ok := s.pkgDirs[ipath]
		if !ok {
			return out
		}
		dir = d
	}
	for _, d := range nd.inDir(dir) {
		f := d.f
		if d.container != container || f.dir != dir || f.Lang != LangGo {
			continue
		}
		if own && f.Package != s.f.Package || !own && isGoTest(f) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// dropConstructors leaves out the constructors (methods named as their
// class) when the class itself is among the definitions of name: a
// reference to the name means the class.
func dropConstructors(name string, ds []defRef) []defRef {
	typ := false
	for _, d := range ds {
		if d.kind.isType() {
			typ = true
			break
		}
	}
	if !typ {
		return ds
	}
	out := ds[:0:0]
	for _, d := range ds {
		if d.kind == KindMethod && name == d.container {
			continue
		}
		out = append(out, d)
	}
	return out
}

// resolveTokens resolves a reference of a token language by the tiers of
// the comment at the top.
func resolveTokens(s *scope, all []defRef, qual string) ([]defRef, Provenance) {
	kind, _, _ := splitQual(qual)
	const (
		tierSame = iota + 1
		tierImported
		tierDir
	)
	tierOf := func(d defRef) int {
		switch {
		case d.f == s.f:
			return tierSame
		case s.imported[d.f] || s.inSpace(d):
			return tierImported
		case d.f.dir == s.dir:
			return tierDir
		}
		return 0
	}
	var n [4]int
	members := 0
	for _, d := range all {
		t := tierOf(d)
		n[t]++
		if t == tierSame && d.container != "" {
			members++
		}
	}
	bare := kind == 0
	collect := func(tier int, membersOnly bool) []defRef {
		out := make([]defRef, 0, n[tier])
		for _, d := range all {
			if tierOf(d) == tier && (!membersOnly || d.container != "") {
				out = append(out, d)
			}
		}
		return out
	}
	switch {
	case kind == '@' && members > 0:
		return collect(tierSame, true), Resolved
	case n[tierSame] > 0:
		return collect(tierSame, false), sure(bare)
	case n[tierImported] > 0:
		return collect(tierImported, false), sure(bare)
	case n[tierDir] > 0:
		return collect(tierDir, false), sure(bare && s.f.Lang == LangJava)
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
