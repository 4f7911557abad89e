package codegraph

import (
	"path"
	"sort"
	"strings"
)

// The imports of C#, PHP, Ruby, shell, Kotlin, Swift and Lua, followed as
// far as their recognisers see them (resolve.go says how the older
// languages' are):
//
//   - Ruby: require_relative 'a' is a.rb beside the file; require 'a/b' is
//     a/b.rb under a directory named lib (the load path a gem gives; the
//     one nearest the file when there are several), or at the workspace's
//     top; load likewise.
//   - shell: source and . of a literal path, relative to the script's
//     directory or else to the workspace's top (where a script is most
//     often run from), or after a variable that names the script's
//     directory ("$DIR/lib.sh", "$(dirname "$0")/lib.sh"): the idiom of a
//     script that finds its own files.
//   - Lua: require "a.b" is a/b.lua or a/b/init.lua under any directory
//     (package.path's ./?.lua and ./?/init.lua, from wherever it starts),
//     the one nearest the file when there are several.
//   - PHP: use A\B\C is the class, interface, trait, enum, function or
//     constant C that a file declaring namespace A\B defines, and the
//     namespace A\B itself when A\B\C is one; require and include of a
//     literal path (or one after __DIR__) are that file.
//   - C#: using A.B is every file that declares namespace A.B; using
//     static A.B.C the type C of namespace A.B.
//   - Kotlin: import a.b.C is what package a.b defines named C (a.b.C.D,
//     the member class D of C, is C's file); import a.b.* the package.
//   - Swift: import M is module M: the Swift files under a directory
//     named M (Sources/M in a Swift package, the module's folder in a
//     project); import struct M.T, the files of M that define T.
//
// And what a file sees without importing it: a C# file the namespaces it
// declares and those around them, a PHP file its namespace, a Kotlin file
// its package, a Swift file in Sources/M its module M. These, and the
// namespaces and packages imported whole, are not made into lists of
// files: a namespace of thousands of files would make every one of them
// hold the list. The scope keeps their names (scope.spaces), and a
// definition is visible through one when its file declares it
// (File.Package: the namespace or package of the file's first definition)
// or it is a member of it (its container). A Swift file's module is a
// directory of its path.

// maxNamespace bounds the length of a namespace's full name: a deeper one
// (only a hostile file nests so) is known by its outer part.
const maxNamespace = 256

// namespaces returns, for each of syms, the full name of the namespace it
// is or is in ("" for none), nested namespaces' names joined with sep.
// Parents come before their children, so one pass makes them all.
func namespaces(syms []Symbol, sep string) []string {
	out := make([]string, len(syms))
	for i := range syms {
		outer := ""
		if p := int(syms[i].Parent); p >= 0 && p < i {
			outer = out[p]
		}
		out[i] = outer
		if syms[i].Kind == KindNamespace {
			switch {
			case outer == "":
				out[i] = syms[i].Name
			case len(outer)+len(sep)+len(syms[i].Name) <= maxNamespace:
				out[i] = outer + sep + syms[i].Name
			}
			if len(out[i]) > maxNamespace {
				out[i] = outer
			}
		}
	}
	return out
}

// firstNamespace is the full name of the namespace that holds the first
// definition (other than a namespace) of syms that is in one, or else of
// the first namespace; "" when there is none.
func firstNamespace(syms []Symbol, sep string) string {
	names := namespaces(syms, sep)
	first := ""
	for i := range syms {
		if names[i] == "" {
			continue
		}
		if syms[i].Kind != KindNamespace {
			return names[i]
		}
		if first == "" {
			first = names[i]
		}
	}
	return first
}

// eachDefNamed calls fn with every definition named name that the graph
// holds, as view.named finds them. g.mu is held.
func (g *Graph) eachDefNamed(name string, fn func(d defRef)) {
	for _, im := range g.images {
		if id := im.lookup(name); id >= 0 {
			im.eachDef(id, func(f *File, i int32, kind Kind, container string) {
				fn(defRef{f: f, i: i, kind: kind, container: container})
			})
		}
	}
	for _, d := range g.defs[name] {
		fn(d)
	}
}

// filesSorted returns the files of set in the order of their paths.
func filesSorted(set map[*File]bool) []*File {
	out := make([]*File, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// first returns the files found at the first of the paths the workspace
// holds.
func (g *Graph) first(paths ...string) []*File {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if f := g.files[p]; f != nil {
			return []*File{f}
		}
	}
	return nil
}

func (g *Graph) rubyImport(dir, p string) []*File {
	if p == "" || strings.HasPrefix(p, "/") {
		return nil
	}
	file := p
	if !strings.HasSuffix(file, ".rb") {
		file += ".rb"
	}
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
		return g.first(cleanJoin(dir, file)) // require_relative
	}
	// require: the load path, a gem's lib directories (the nearest first)
	out := nearest(dir, g.bySuffix("lib/"+file))
	if len(out) == 0 {
		out = g.first(path.Clean(file))
	}
	return out
}

// nearer reports whether the path a is nearer the directory dir than b:
// it shares more leading directories with it, or as many and is less
// deep (the workspace's own lib before a vendored gem's), or is as deep
// and sorts first.
func nearer(dir, a, b string) bool {
	if ca, cb := commonDirs(dir, a), commonDirs(dir, b); ca != cb {
		return ca > cb
	}
	if da, db := strings.Count(a, "/"), strings.Count(b, "/"); da != db {
		return da < db
	}
	return a < b
}

// commonDirs is the number of leading directories dir and the file p share.
func commonDirs(dir, p string) int {
	ds := strings.Split(dir, "/")
	ps := strings.Split(path.Dir(p), "/")
	n := 0
	for n < len(ds) && n < len(ps) && ds[n] == ps[n] && ds[n] != "." {
		n++
	}
	return n
}

func (g *Graph) shellImport(dir, p string) []*File {
	p = strings.Trim(p, `"'`)
	// "$DIR/lib.sh", "${DIR}/lib.sh", "$(dirname "$0")/lib.sh": the
	// script's own directory, by the idiom
	if strings.HasPrefix(p, "$") {
		i := strings.LastIndexAny(p, "})")
		if i < 0 {
			i = strings.IndexByte(p, '/') - 1
		}
		if i < 0 || i+1 >= len(p) || p[i+1] != '/' {
			return nil
		}
		p = "." + p[i+1:]
	}
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsAny(p, "$`*?[") {
		return nil
	}
	return g.first(cleanJoin(dir, p), cleanJoin(".", p))
}

func (g *Graph) luaImport(dir, p string) []*File {
	if p == "" || strings.ContainsAny(p, "/\\") {
		return nil
	}
	mod := strings.ReplaceAll(p, ".", "/")
	out := g.bySuffix(mod + ".lua")
	if len(out) == 0 {
		out = g.bySuffix(mod + "/init.lua")
	}
	return nearest(dir, out)
}

// nearest returns of files the one nearest the directory dir (the one
// that shares the most leading directories with it): of several files a
// module name may mean, the one of the importer's own tree.
func nearest(dir string, files []*File) []*File {
	if len(files) < 2 {
		return files
	}
	best := files[0]
	for _, f := range files[1:] {
		if nearer(dir, f.Path, best.Path) {
			best = f
		}
	}
	return []*File{best}
}

// splitName cuts a qualified name at its last separator: the namespace
// and the name ("" and the name when it has none).
func splitName(q, sep string) (string, string) {
	if i := strings.LastIndex(q, sep); i >= 0 {
		return q[:i], q[i+len(sep):]
	}
	return "", q
}

// definedIn returns the files of lang that define name in the namespace
// or package ns: the file declares ns (its Package), or the definition's
// container is ns.
func (g *Graph) definedIn(lang Lang, ns, name string) map[*File]bool {
	x := defsIn{g: g, lang: lang}
	return x.files(ns, name)
}

// defsIn finds what definedIn finds for many names, each name's
// definitions looked up once and indexed by namespace, so that a file
// importing one name from many namespaces costs their number, not its
// product with the name's definitions.
type defsIn struct {
	g     *Graph
	lang  Lang
	names map[string]map[string]map[*File]bool // name -> namespace -> files
}

func (x *defsIn) files(ns, name string) map[*File]bool {
	byNS, ok := x.names[name]
	if !ok {
		x.g.eachDefNamed(name, func(d defRef) {
			if d.f.Lang != x.lang || d.kind == KindNamespace {
				return
			}
			add := func(ns string) {
				if byNS == nil {
					byNS = map[string]map[*File]bool{}
				}
				if byNS[ns] == nil {
					byNS[ns] = map[*File]bool{}
				}
				byNS[ns][d.f] = true
			}
			add(d.container)
			if d.container == "" && d.f.Package != "" {
				add(d.f.Package)
			}
		})
		if x.names == nil {
			x.names = map[string]map[string]map[*File]bool{}
		}
		x.names[name] = byNS
	}
	return byNS[ns]
}

// namespaceFiles returns the files of lang that declare the namespace ns
// (a namespace definition of that full name, or one nested as its last
// part in a namespace named as the rest).
func (g *Graph) namespaceFiles(lang Lang, ns, sep string) map[*File]bool {
	var out map[*File]bool
	add := func(d defRef) {
		if d.f.Lang == lang && d.kind == KindNamespace {
			if out == nil {
				out = map[*File]bool{}
			}
			out[d.f] = true
		}
	}
	g.eachDefNamed(ns, func(d defRef) {
		if d.container == "" {
			add(d)
		}
	})
	for i := strings.Index(ns, sep); i >= 0; {
		outer, inner := ns[:i], ns[i+len(sep):]
		g.eachDefNamed(inner, func(d defRef) {
			if d.container != "" && (d.container == outer || strings.HasSuffix(outer, sep+d.container)) {
				add(d)
			}
		})
		j := strings.Index(ns[i+len(sep):], sep)
		if j < 0 {
			break
		}
		i += len(sep) + j
	}
	return out
}

func (g *Graph) phpImport(dir, p string) []*File {
	if strings.Contains(p, "/") || strings.HasSuffix(p, ".php") || strings.HasSuffix(p, ".inc") {
		// require, include
		if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") {
			return g.first(cleanJoin(dir, p))
		}
		if out := g.first(cleanJoin(dir, p)); out != nil {
			return out
		}
		return g.bySuffix(p)
	}
	p = strings.TrimPrefix(p, `\`)
	ns, name := splitName(p, `\`)
	if out := g.definedIn(LangPHP, ns, name); len(out) > 0 {
		return filesSorted(out)
	}
	return filesSorted(g.namespaceFiles(LangPHP, p, `\`))
}

func (g *Graph) csImport(p string) []*File {
	if out := g.namespaceFiles(LangCSharp, p, "."); len(out) > 0 {
		return filesSorted(out)
	}
	// using static A.B.C, or using X = A.B.C: a type
	ns, name := splitName(p, ".")
	return filesSorted(g.definedIn(LangCSharp, ns, name))
}

func (g *Graph) kotlinImport(p string) []*File {
	if pkg, ok := strings.CutSuffix(p, ".*"); ok {
		return g.packageFiles(LangKotlin, pkg)
	}
	// a.b.C, or a.b.C.D (D a member of C): the first that is defined
	return filesSorted(kotlinDefined(&defsIn{g: g, lang: LangKotlin}, p))
}

// kotlinDefined returns the files that define what import a.b.C names:
// C of package a.b, or for a.b.C.D, C's file.
func kotlinDefined(x *defsIn, p string) map[*File]bool {
	for q := p; ; {
		ns, name := splitName(q, ".")
		if ns == "" {
			return nil
		}
		if out := x.files(ns, name); len(out) > 0 {
			return out
		}
		q = ns
	}
}

// packageFiles returns the files of lang whose package is pkg, looked for
// in the directories whose path ends as the package's (Kotlin's habit),
// then in every file (a package is not bound to a directory).
func (g *Graph) packageFiles(lang Lang, pkg string) []*File {
	if pkg == "" {
		return nil
	}
	dir := strings.ReplaceAll(pkg, ".", "/")
	var out []*File
	for d, ps := range g.dirs {
		if d == dir || strings.HasSuffix(d, "/"+dir) {
			for _, q := range ps {
				if f := g.files[q]; f != nil && f.Lang == lang && f.Package == pkg {
					out = append(out, f)
				}
			}
		}
	}
	if len(out) == 0 {
		for _, f := range g.files {
			if f.Lang == lang && f.Package == pkg {
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

func (g *Graph) swiftImport(p string) []*File {
	mod, decl, _ := strings.Cut(p, ".")
	if mod == "" {
		return nil
	}
	if decl != "" {
		// import struct M.T: the files of module M that define T
		_, name := splitName(decl, ".")
		var out []*File
		seen := map[*File]bool{}
		g.eachDefNamed(name, func(d defRef) {
			if d.f.Lang == LangSwift && !seen[d.f] && inModule(d.f.dir, mod) {
				seen[d.f] = true
				out = append(out, d.f)
			}
		})
		if len(out) > 0 {
			sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
			return out
		}
	}
	var out []*File
	for d, ps := range g.dirs {
		if !inModule(d, mod) {
			continue
		}
		for _, q := range ps {
			if f := g.files[q]; f != nil && f.Lang == LangSwift {
				out = append(out, f)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// inModule reports whether the directory dir is in a directory named mod.
func inModule(dir, mod string) bool {
	if dir == mod || strings.HasPrefix(dir, mod+"/") || strings.HasSuffix(dir, "/"+mod) {
		return true
	}
	return strings.Contains(dir, "/"+mod+"/")
}

// swiftModule is the module a Swift file at p belongs to as a Swift
// package lays it out (Sources/M/…), or "".
func swiftModule(p string) string {
	i := strings.LastIndex("/"+p, "/Sources/")
	if i < 0 {
		return ""
	}
	rest := p[i+len("Sources/"):]
	mod, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return mod
}

// spaceScope sets what the file f of C#, PHP, Kotlin or Swift sees by
// name rather than by file: its own namespaces, package or module and
// those it imports whole (s.spaces), and adds the files of the names it
// imports one by one to s.imported. g.mu is held.
func (g *Graph) spaceScope(s *scope, f *File) {
	add := func(ns string) {
		if ns == "" {
			return
		}
		if s.spaces == nil {
			s.spaces = map[string]bool{}
		}
		s.spaces[ns] = true
	}
	addFiles := func(files map[*File]bool) {
		for t := range files {
			if s.imported == nil {
				s.imported = map[*File]bool{}
			}
			s.imported[t] = true
		}
	}
	x := &defsIn{g: g, lang: f.Lang}
	switch f.Lang {
	case LangCSharp:
		// the namespaces the file declares, and those around them
		syms := f.Symbols()
		for i, ns := range namespaces(syms, ".") {
			if syms[i].Kind == KindNamespace {
				for ; ns != "" && !s.spaces[ns]; ns, _ = splitName(ns, ".") {
					add(ns)
				}
			}
		}
		for _, imp := range f.Imports {
			add(imp.Path)
			ns, name := splitName(imp.Path, ".")
			addFiles(x.files(ns, name))
		}
	case LangPHP:
		add(f.Package)
		for _, imp := range f.Imports {
			if strings.Contains(imp.Path, "/") || strings.HasSuffix(imp.Path, ".php") || strings.HasSuffix(imp.Path, ".inc") {
				for _, t := range g.phpImport(f.dir, imp.Path) {
					addFiles(map[*File]bool{t: true})
				}
				continue
			}
			p := strings.TrimPrefix(imp.Path, `\`)
			add(p) // use A\B, then B\C
			ns, name := splitName(p, `\`)
			addFiles(x.files(ns, name))
		}
	case LangKotlin:
		add(f.Package)
		for _, imp := range f.Imports {
			if pkg, ok := strings.CutSuffix(imp.Path, ".*"); ok {
				add(pkg)
				continue
			}
			addFiles(kotlinDefined(x, imp.Path))
		}
	case LangSwift:
		add(swiftModule(f.Path))
		for _, imp := range f.Imports {
			mod, _, _ := strings.Cut(imp.Path, ".")
			add(mod)
		}
	}
}

// inSpace reports whether the definition d is visible to the file of s
// through a namespace, package or module it sees whole.
func (s *scope) inSpace(d defRef) bool {
	if s.spaces == nil || d.f.Lang != s.f.Lang {
		return false
	}
	if s.f.Lang == LangSwift {
		// a directory of the definition's path names a module seen: as
		// many looks as the path has directories, whatever the imports
		for dir := d.f.dir; dir != ""; {
			name, rest, _ := strings.Cut(dir, "/")
			if s.spaces[name] {
				return true
			}
			dir = rest
		}
		return false
	}
	return d.f.Package != "" && s.spaces[d.f.Package] || d.container != "" && s.spaces[d.container]
}
