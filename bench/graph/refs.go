package main

// -mode refs: how true the graph's references are, against an oracle read
// with go/ast. For a package-level definition of a Go package of the tree,
// the oracle's references are the identifiers that name it as the
// compiler would: in the package's own files, a bare name not hidden by a
// declaration of a block (go/parser's object resolution); in any file, a
// selector whose left side is a name of an import of the package's path
// (or a bare name in a file that imports it with a dot). It reads a struct
// literal's keys as the struct's fields, as the compiler would for a
// struct, and a map or slice literal's as values. The graph's are
// References of package.Name in the file that defines it. Printed per name
// and in all: the graph's references, the oracle's, those in both, the
// precision (in both / the graph's) and the recall (in both / the
// oracle's), and how the graph found its own (resolved, name).

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/agentls/agentls/codegraph"
)

// target is a package-level definition: its package's directory, import
// path and name, the definition's name and the file that defines it.
type target struct {
	dir, importPath, pkg, name, file string
}

func (t target) String() string { return t.importPath + "." + t.name }

// place is a reference: a file and the 0-based line and UTF-16 column of
// its name.
type place struct {
	path      string
	line, col uint32
}

// goFile is a parsed file of the tree.
type goFile struct {
	rel, dir string
	ast      *ast.File
	tf       *token.File
	src      []byte
	imports  map[string]string // local name -> import path (with "." for a dot import)
}

func refs(tree string, extra int, seed uint64) error {
	g, err := newGraph(options{tree: tree})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	if err := g.Current(ctx); err != nil {
		return err
	}
	files, err := parseTree(tree, g)
	if err != nil {
		return err
	}
	packageNames(files)
	targets := []target{}
	for _, want := range []string{"fmt.Errorf", "io.Reader", "strings.Builder"} {
		i := strings.LastIndexByte(want, '.')
		t, ok := find(files, want[:i], want[i+1:])
		if !ok {
			return fmt.Errorf("%s is not defined in %s", want, tree)
		}
		targets = append(targets, t)
	}
	cands := exported(files)
	r := rand.New(rand.NewPCG(seed, seed))
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	oracles := map[target]map[place]bool{}
	for _, t := range targets {
		oracles[t] = oracleRefs(files, t)
	}
	// drawn among the names the oracle finds referenced at least once: a
	// name nobody uses says nothing of either
	unused := 0
	for _, c := range cands {
		if len(targets) == 3+extra {
			break
		}
		if _, ok := oracles[c]; ok {
			continue
		}
		o := oracleRefs(files, c)
		if len(o) == 0 {
			unused++
			continue
		}
		oracles[c] = o
		targets = append(targets, c)
	}
	fmt.Printf("refs_names %d (fmt.Errorf, io.Reader, strings.Builder and %d exported names drawn with seed %d from %d, passing over %d nobody refers to)\n",
		len(targets), len(targets)-3, seed, len(cands), unused)
	var all, drawn tally
	for i, t := range targets {
		oracle := oracles[t]
		got, provs, err := graphRefs(ctx, g, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		var n tally
		n.add(got, oracle, provs)
		all.merge(n)
		if i >= 3 {
			drawn.merge(n)
		}
		fmt.Printf("refs %s graph %d oracle %d both %d precision %s recall %s (%s)\n", t, n.graph, n.oracle, n.both,
			pct(n.both, n.graph), pct(n.both, n.oracle), n.provs())
	}
	fmt.Printf("refs_drawn_precision %s %% (%d of the graph's %d)\n", strings.TrimSuffix(pct(drawn.both, drawn.graph), "%"), drawn.both, drawn.graph)
	fmt.Printf("refs_drawn_recall %s %% (%d of the oracle's %d)\n", strings.TrimSuffix(pct(drawn.both, drawn.oracle), "%"), drawn.both, drawn.oracle)
	fmt.Printf("refs_all_precision %s %% (%d of the graph's %d)\n", strings.TrimSuffix(pct(all.both, all.graph), "%"), all.both, all.graph)
	fmt.Printf("refs_all_recall %s %% (%d of the oracle's %d)\n", strings.TrimSuffix(pct(all.both, all.oracle), "%"), all.both, all.oracle)
	cancel()
	return <-done
}

// tally counts the references of one name or of several.
type tally struct {
	graph, oracle, both int
	byProv              map[string]int
}

func (n *tally) add(got map[place]bool, oracle map[place]bool, provs map[string]int) {
	n.graph, n.oracle = len(got), len(oracle)
	for p := range got {
		if oracle[p] {
			n.both++
		}
	}
	n.byProv = provs
}

func (n *tally) merge(o tally) {
	n.graph += o.graph
	n.oracle += o.oracle
	n.both += o.both
	if n.byProv == nil {
		n.byProv = map[string]int{}
	}
	for k, v := range o.byProv {
		n.byProv[k] += v
	}
}

func (n *tally) provs() string {
	keys := make([]string, 0, len(n.byProv))
	for k := range n.byProv {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, n.byProv[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}

// graphRefs are the graph's references to t, and how many it found each
// way.
func graphRefs(ctx context.Context, g *codegraph.Graph, t target) (map[place]bool, map[string]int, error) {
	refs, _, err := g.References(ctx, t.pkg+"."+t.name, t.file, 1<<30)
	if err != nil {
		return nil, nil, err
	}
	got := map[place]bool{}
	provs := map[string]int{}
	for _, r := range refs {
		got[place{r.Path, r.Pos.Line, r.Pos.Col}] = true
		provs[r.Provenance.String()]++
	}
	return got, provs, nil
}

// parseTree parses the Go files the graph holds (go/parser's object
// resolution on: it tells a block's declarations from the package's).
func parseTree(tree string, g *codegraph.Graph) ([]*goFile, error) {
	var out []*goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(tree, p)
		rel = filepath.ToSlash(rel)
		if f := g.File(rel); f == nil || f.Err != "" {
			return nil // not in the graph, or not Go it could read whole
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		af, err := parser.ParseFile(fset, rel, src, 0)
		if err != nil {
			return nil
		}
		gf := &goFile{rel: rel, dir: path.Dir(rel), ast: af, tf: fset.File(af.Pos()), src: src, imports: map[string]string{}}
		out = append(out, gf)
		return nil
	})
	return out, err
}

// importPathOf is the import path of a directory of GOROOT/src.
func importPathOf(dir string) string {
	for _, v := range []string{"cmd/vendor/", "vendor/"} {
		if rest, ok := strings.CutPrefix(dir, v); ok {
			return rest
		}
	}
	return dir
}

// packageNames maps each import path to its package's name, and fills in
// each file's imports with the names they go by.
func packageNames(files []*goFile) map[string]string {
	names := map[string]string{}
	for _, f := range files {
		if !strings.HasSuffix(f.rel, "_test.go") && f.ast.Name.Name != "main" {
			names[importPathOf(f.dir)] = f.ast.Name.Name
		}
	}
	for _, f := range files {
		for _, imp := range f.ast.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			local := names[p]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			if local != "" && local != "_" {
				f.imports[local] = p
			}
		}
	}
	return names
}

// find is the definition of name in the package of importPath.
func find(files []*goFile, importPath, name string) (target, bool) {
	for _, c := range exported(files) {
		if c.importPath == importPath && c.name == name {
			return c, true
		}
	}
	return target{}, false
}

// exported are the exported package-level definitions of the tree's
// library packages (not commands, tests, testdata or vendored copies),
// each once, in order.
func exported(files []*goFile) []target {
	seen := map[string]bool{}
	var out []target
	for _, f := range files {
		if strings.HasSuffix(f.rel, "_test.go") || f.ast.Name.Name == "main" || strings.HasPrefix(f.dir, "cmd/") ||
			strings.Contains("/"+f.dir+"/", "/testdata/") || strings.Contains("/"+f.dir+"/", "/vendor/") {
			continue
		}
		add := func(id *ast.Ident) {
			if id == nil || !id.IsExported() {
				return
			}
			k := f.dir + "." + id.Name
			if seen[k] {
				return
			}
			seen[k] = true
			out = append(out, target{dir: f.dir, importPath: importPathOf(f.dir), pkg: f.ast.Name.Name, name: id.Name, file: f.rel})
		}
		for _, d := range f.ast.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					add(d.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							add(n)
						}
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].importPath != out[j].importPath {
			return out[i].importPath < out[j].importPath
		}
		return out[i].name < out[j].name
	})
	return out
}

// oracleRefs are the references to t as the compiler sees them.
func oracleRefs(files []*goFile, t target) map[place]bool {
	out := map[place]bool{}
	for _, f := range files {
		own := f.dir == t.dir && f.ast.Name.Name == t.pkg
		dot := f.imports["."] == t.importPath
		var locals []string // the names the file imports t's package as
		for l, p := range f.imports {
			if p == t.importPath && l != "." {
				locals = append(locals, l)
			}
		}
		if !own && !dot && len(locals) == 0 {
			continue
		}
		decl := declaring(f.ast)
		bare := own || dot
		var visit func(n ast.Node) bool
		visit = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Obj == nil && n.Sel.Name == t.name {
					for _, l := range locals {
						if x.Name == l {
							out[f.place(n.Sel)] = true
						}
					}
				}
				// the selector's name is a member or a package's, never
				// a bare name: only its left side is read on
				ast.Inspect(n.X, visit)
				return false
			case *ast.Ident:
				if !bare || n.Name != t.name || decl[n] {
					return false
				}
				if n.Obj != nil && f.ast.Scope.Lookup(n.Name) != n.Obj {
					return false // a block's declaration hides it
				}
				out[f.place(n)] = true
			}
			return true
		}
		ast.Inspect(f.ast, visit)
	}
	return out
}

// declaring are the identifiers of a file that declare a name (or are
// otherwise no references): declarations' names, fields, parameters,
// labels, import names, the keys of struct literals.
func declaring(f *ast.File) map[*ast.Ident]bool {
	d := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncDecl:
			d[n.Name] = true
		case *ast.TypeSpec:
			d[n.Name] = true
		case *ast.ValueSpec:
			for _, id := range n.Names {
				d[id] = true
			}
		case *ast.Field:
			for _, id := range n.Names {
				d[id] = true
			}
		case *ast.ImportSpec:
			if n.Name != nil {
				d[n.Name] = true
			}
		case *ast.LabeledStmt:
			d[n.Label] = true
		case *ast.BranchStmt:
			if n.Label != nil {
				d[n.Label] = true
			}
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Obj != nil && id.Obj.Decl == n {
						d[id] = true
					}
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok {
						d[id] = true
					}
				}
			}
		case *ast.CompositeLit:
			switch n.Type.(type) {
			case *ast.MapType, *ast.ArrayType:
			default:
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok {
						if id, ok := kv.Key.(*ast.Ident); ok {
							d[id] = true
						}
					}
				}
			}
		}
		return true
	})
	return d
}

// place is where an identifier of the file is, in LSP terms.
func (f *goFile) place(id *ast.Ident) place {
	off := f.tf.Offset(id.Pos())
	line := f.tf.Line(id.Pos()) - 1
	start := f.tf.LineStart(line + 1)
	col := 0
	for _, r := range string(f.src[f.tf.Offset(start):off]) {
		if r >= 0x10000 {
			col += 2
		} else {
			col++
		}
	}
	return place{f.rel, uint32(line), uint32(col)}
}
