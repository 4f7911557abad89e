package codegraph

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
)

// parseGo parses Go with the standard library's own parser: every
// definition, import and reference is exactly what the compiler sees. A
// file with syntax errors keeps what the parser recovered.
func parseGo(name string, src []byte) (*File, error) {
	fset := token.NewFileSet()
	// The parser's object resolution is off (it costs a quarter of the
	// parse): refs tells a function's locals from the package's names
	// itself, by the declarations it has met in the function.
	f, perr := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	b := newBuilder(src)
	out := b.file(LangGo)
	if f == nil {
		if perr != nil {
			out.Err = firstError(perr)
		}
		return out, nil
	}
	tf := fset.File(f.Pos())
	off := func(p token.Pos) int {
		if !p.IsValid() || tf == nil {
			return 0
		}
		o := int(p) - tf.Base()
		if o < 0 {
			o = 0
		}
		if o > len(src) {
			o = len(src)
		}
		return o
	}
	g := goParser{b: b, off: off, pkgs: map[string]bool{}, file: f}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		b.imp(p, off(imp.Pos()))
		local := path.Base(p)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		g.pkgs[local] = true
	}
	for _, d := range f.Decls {
		g.decl(d)
	}
	// a method's parent is its receiver's type when this file defines it
	types := map[string]int{}
	for i, s := range b.syms {
		if s.Kind.isType() && s.Parent < 0 {
			types[s.Name] = i
		}
	}
	for i := range b.syms {
		if s := &b.syms[i]; s.Kind == KindMethod && s.Parent < 0 {
			if t, ok := types[s.Container]; ok {
				s.Parent = int32(t)
			}
		}
	}
	for _, d := range f.Decls {
		g.refs(d)
	}
	out = b.file(LangGo)
	if perr != nil {
		out.Err = firstError(perr)
	}
	return out, nil
}

func firstError(err error) string {
	if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
		return list[0].Error()
	}
	return err.Error()
}

type goParser struct {
	b      *builder
	off    func(token.Pos) int
	file   *ast.File
	pkgs   map[string]bool // the file's import names
	locals map[string]bool // names declared so far in the function being read
}

// An identifier's Obj is free (object resolution is off): it marks the
// names that are definitions (or otherwise no references) and the callees,
// sparing a map lookup for every identifier of the file.
var (
	markDef  = &ast.Object{Name: "definition"}
	markCall = &ast.Object{Name: "call"}
)

func isDef(id *ast.Ident) bool { return id.Obj == markDef }

func setDef(id *ast.Ident) { id.Obj = markDef }

func (g *goParser) def(id *ast.Ident, kind Kind, parent int, container string, from, to token.Pos) int {
	setDef(id)
	if id.Name == "_" {
		return -1
	}
	return g.b.def(id.Name, kind, parent, container, g.off(from), g.off(to), g.off(id.Pos()))
}

func (g *goParser) decl(d ast.Decl) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		kind, container := KindFunction, ""
		if d.Recv != nil && len(d.Recv.List) > 0 {
			kind, container = KindMethod, receiverType(d.Recv.List[0].Type)
		}
		g.def(d.Name, kind, -1, container, d.Pos(), d.End())
	case *ast.GenDecl:
		single := !d.Lparen.IsValid()
		for _, spec := range d.Specs {
			from, to := spec.Pos(), spec.End()
			if single {
				from, to = d.Pos(), d.End()
			}
			switch s := spec.(type) {
			case *ast.TypeSpec:
				kind := KindType
				switch s.Type.(type) {
				case *ast.StructType:
					kind = KindStruct
				case *ast.InterfaceType:
					kind = KindInterface
				}
				i := g.def(s.Name, kind, -1, "", from, to)
				g.members(s, i)
			case *ast.ValueSpec:
				kind := KindVariable
				if d.Tok == token.CONST {
					kind = KindConstant
				}
				for _, n := range s.Names {
					g.def(n, kind, -1, "", from, to)
				}
			}
		}
	}
}

// members records a struct's fields and an interface's methods.
func (g *goParser) members(s *ast.TypeSpec, parent int) {
	var list *ast.FieldList
	kind := KindField
	switch t := s.Type.(type) {
	case *ast.StructType:
		list = t.Fields
	case *ast.InterfaceType:
		list, kind = t.Methods, KindMethod
	}
	if list == nil {
		return
	}
	for _, f := range list.List {
		for _, n := range f.Names {
			g.def(n, kind, parent, s.Name.Name, f.Pos(), f.End())
		}
	}
}

// receiverType is the base type name of a method's receiver.
func receiverType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// refs records the references of a declaration, in source order. Names a
// function declares (its receiver, parameters and results, := and var
// declarations, range variables, local types, labels) are locals: Go
// declares before use, so a name is local from its declaration to the
// function's end, and its uses are left out of the references (they are
// most identifiers of a file, and never another file's business).
func (g *goParser) refs(d ast.Decl) {
	g.locals = map[string]bool{}
	if fd, ok := d.(*ast.FuncDecl); ok {
		g.fields(fd.Recv)
		g.fields(fd.Type.Params)
		g.fields(fd.Type.Results)
	}
	ast.Inspect(d, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if id := callee(n.Fun); id != nil && !isDef(id) {
				id.Obj = markCall
			}
		case *ast.FuncLit:
			g.fields(n.Type.Params)
			g.fields(n.Type.Results)
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					g.local(e)
				}
			}
		case *ast.RangeStmt:
			if n.Tok == token.DEFINE {
				g.local(n.Key)
				g.local(n.Value)
			}
		case *ast.DeclStmt:
			if gd, ok := n.Decl.(*ast.GenDecl); ok {
				for _, spec := range gd.Specs {
					switch s := spec.(type) {
					case *ast.ValueSpec:
						for _, id := range s.Names {
							g.local(id)
						}
					case *ast.TypeSpec:
						g.local(s.Name)
					}
				}
			}
		case *ast.LabeledStmt:
			g.local(n.Label)
		case *ast.BranchStmt:
			if n.Label != nil {
				setDef(n.Label)
			}
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && !g.locals[x.Name] && g.pkgs[x.Name] {
				setDef(x) // a package name, not a reference to a definition
			}
		case *ast.Ident:
			if isDef(n) || n.Name == "_" || g.locals[n.Name] {
				return false
			}
			g.b.ref(n.Name, g.off(n.Pos()), n.Obj == markCall)
		}
		return true
	})
}

// fields declares the names of a parameter list as locals.
func (g *goParser) fields(list *ast.FieldList) {
	if list == nil {
		return
	}
	for _, f := range list.List {
		for _, id := range f.Names {
			g.local(id)
		}
	}
}

// local declares an identifier (a name being defined) as a local.
func (g *goParser) local(e ast.Expr) {
	if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
		g.locals[id.Name] = true
		setDef(id)
	}
}

// callee is the name a call calls: f, x.f, f[T], (f).
func callee(e ast.Expr) *ast.Ident {
	for {
		switch t := e.(type) {
		case *ast.Ident:
			return t
		case *ast.SelectorExpr:
			return t.Sel
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		default:
			return nil
		}
	}
}
