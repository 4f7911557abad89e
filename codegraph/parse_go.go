package codegraph

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"path"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// parseGo parses Go with the standard library's own parser: every
// definition, import and reference is exactly what the compiler sees. A
// file with syntax errors keeps what the parser recovered. A byte Go
// does not allow in a source file (a NUL, or one that is not UTF-8, as
// a Latin-1 letter in a comment) is read as a space, since go/parser
// gives up a whole file for one of them; the file's error says where.
func parseGo(name string, src []byte) (*File, error) {
	src, bad := goSanitize(name, src)
	out, err := parseGoClean(name, src)
	if out != nil && bad != "" {
		if out.Err != "" {
			bad += "; " + out.Err
		}
		out.Err = bad
	}
	return out, err
}

// goSanitize returns src with each NUL byte and each byte that is not
// part of a UTF-8 encoding replaced by a space (a copy; src itself when
// it has none), and where the first one was ("" for none). A space keeps
// every offset, line and UTF-16 column of the file as it was.
func goSanitize(name string, src []byte) ([]byte, string) {
	if utf8.Valid(src) && bytes.IndexByte(src, 0) < 0 {
		return src, ""
	}
	out := make([]byte, len(src))
	copy(out, src)
	first := -1
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		if r == 0 || (r == utf8.RuneError && n == 1) {
			if first < 0 {
				first = i
			}
			out[i] = ' '
			i++
			continue
		}
		i += n
	}
	line := 1 + bytes.Count(src[:first], []byte("\n"))
	col := first - bytes.LastIndexByte(src[:first], '\n')
	return out, fmt.Sprintf("%s:%d:%d: a NUL byte or a byte that is not UTF-8, read as a space", name, line, col)
}

func parseGoClean(name string, src []byte) (*File, error) {
	fset := token.NewFileSet()
	// The parser's object resolution is off (it costs a quarter of the
	// parse): refs tells a function's locals from the package's names
	// itself, by the declarations it has met in the function.
	f, perr := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	b := newBuilder(src)
	if f == nil {
		out := b.file(LangGo)
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
	g := goParser{b: b, off: off, file: f, names: goNamesPool.Get().(map[string]goName), types: map[nameQual]string{}}
	defer func() {
		clear(g.names)
		goNamesPool.Put(g.names)
	}()
	if f.Name != nil {
		b.pkg = f.Name.Name
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		local, given := importName(p), ""
		if imp.Name != nil {
			local, given = imp.Name.Name, imp.Name.Name
		}
		b.impNamed(p, given, off(imp.Pos()))
		if local == "_" || local == "." || local == "" {
			continue
		}
		e := g.name(local)
		e.pkg, e.qual = true, qualPkg(p)
		g.names[local] = e
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
	out := b.file(LangGo)
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
	b    *builder
	off  func(token.Pos) int
	file *ast.File
	// names holds what the walk knows of each name of the file, so that
	// an identifier costs one lookup: whether it is an import name, a
	// local of the declaration being read, and its index among the
	// names the builder records references to.
	names map[string]goName
	cur   uint32 // the declaration being read, counted from 1
	// types holds the qualifiers of the types met (typeQual), made once
	// per file: key the import path and the type's name.
	types map[nameQual]string
}

// goName is what the walk knows of a name of a Go file.
type goName struct {
	ref   int32  // index among the builder's names, -1 until referred to
	local uint32 // the declaration (goParser.cur) it is a local of, 0 none
	pkg   bool   // an import name of the file
	// qual is, for an import name, the qualifier of the names reached
	// through it ("p" and the import path: qual.go), else "".
	qual string
	// typ is, for a local whose type the walk knows, the qualifier of its
	// members ("t", the type's import path and name), else "".
	typ string
}

// goNamesPool holds the name tables of the files being parsed, reused
// from file to file.
var goNamesPool = sync.Pool{New: func() any { return map[string]goName{} }}

// importName is the name a Go import path's package goes by when the
// import does not name it: the path's last element, the one before it
// when that is a major version (math/rand/v2 is rand), without a "go-"
// prefix and cut at the first character that cannot be in a name
// (gopkg.in/yaml.v3 is yaml). A package named otherwise is not seen as one.
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		if dir := path.Dir(p); dir != "." {
			base = path.Base(dir)
		}
	}
	base = strings.TrimPrefix(base, "go-")
	for i, r := range base {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return base[:i]
		}
	}
	return base
}

// predeclared are Go's predeclared types: a value of one has no members
// the workspace defines.
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
	"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true,
	"int32": true, "int64": true, "rune": true, "string": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

// name returns what is known of name (a new entry when nothing).
func (g *goParser) name(name string) goName {
	if e, ok := g.names[name]; ok {
		return e
	}
	return goName{ref: -1}
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
	g.cur++ // no name is a local of it yet
	switch d := d.(type) {
	case *ast.FuncDecl:
		g.fields(d.Type.TypeParams)
		g.fields(d.Recv)
		g.fields(d.Type.Params)
		g.fields(d.Type.Results)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			if ts, ok := spec.(*ast.TypeSpec); ok {
				g.fields(ts.TypeParams)
			}
		}
	}
	g.walk(d)
}

// walk visits n and the nodes under it in the order of ast.Walk (a
// switch rather than ast.Inspect's visitor and closure: this walk is a
// fifth of a Go file's parse), noting at each node, before its children,
// what it declares, calls or refers to.
func (g *goParser) walk(n ast.Node) {
	switch n := n.(type) {
	case *ast.Ident:
		if isDef(n) || n.Name == "_" {
			return
		}
		e, ok := g.names[n.Name]
		if ok && e.local == g.cur {
			return
		}
		if !ok || e.ref < 0 {
			e.ref = int32(g.b.intern(n.Name, qualBare))
			g.names[n.Name] = e
		}
		g.b.refIdx(uint32(e.ref), g.b.pos(g.off(n.Pos())), n.Obj == markCall)

	case *ast.Field:
		// its names are declared here (fields, parameters, methods),
		// never references
		if n.Type != nil {
			g.walk(n.Type)
		}
		if n.Tag != nil {
			g.walk(n.Tag)
		}
	case *ast.FieldList:
		for _, f := range n.List {
			g.walk(f)
		}

	case *ast.BadExpr, *ast.BasicLit:
	case *ast.Ellipsis:
		if n.Elt != nil {
			g.walk(n.Elt)
		}
	case *ast.FuncLit:
		g.fields(n.Type.Params)
		g.fields(n.Type.Results)
		g.walk(n.Type)
		g.walk(n.Body)
	case *ast.CompositeLit:
		if n.Type != nil {
			g.walk(n.Type)
		}
		// The keys of a struct literal are its type's fields; those of a
		// map, slice or array literal are values.
		keys := qualMember
		switch n.Type.(type) {
		case *ast.MapType, *ast.ArrayType:
			keys = ""
		default:
			if q := g.typeQual(n.Type); q != "" {
				keys = q
			}
		}
		for _, e := range n.Elts {
			if kv, ok := e.(*ast.KeyValueExpr); ok && keys != "" {
				if id, ok := kv.Key.(*ast.Ident); ok {
					g.member(id, keys)
					g.walk(kv.Value)
					continue
				}
			}
			g.walk(e)
		}
	case *ast.ParenExpr:
		g.walk(n.X)
	case *ast.SelectorExpr:
		// x.f: through an import, f is that package's; on a value whose
		// type is known, a member of that type; else a member of a value
		// of unknown type.
		qual := qualMember
		if x, ok := n.X.(*ast.Ident); ok {
			if e, ok := g.names[x.Name]; ok {
				switch {
				case e.local == g.cur:
					if e.typ != "" {
						qual = e.typ
					}
				case e.pkg:
					setDef(x) // a package name, not a reference to a definition
					qual = e.qual
				}
			}
		}
		g.walk(n.X)
		g.member(n.Sel, qual)
	case *ast.IndexExpr:
		g.walk(n.X)
		g.walk(n.Index)
	case *ast.IndexListExpr:
		g.walk(n.X)
		g.exprs(n.Indices)
	case *ast.SliceExpr:
		g.walk(n.X)
		if n.Low != nil {
			g.walk(n.Low)
		}
		if n.High != nil {
			g.walk(n.High)
		}
		if n.Max != nil {
			g.walk(n.Max)
		}
	case *ast.TypeAssertExpr:
		g.walk(n.X)
		if n.Type != nil {
			g.walk(n.Type)
		}
	case *ast.CallExpr:
		if id := callee(n.Fun); id != nil && !isDef(id) {
			id.Obj = markCall
		}
		g.walk(n.Fun)
		g.exprs(n.Args)
	case *ast.StarExpr:
		g.walk(n.X)
	case *ast.UnaryExpr:
		g.walk(n.X)
	case *ast.BinaryExpr:
		g.walk(n.X)
		g.walk(n.Y)
	case *ast.KeyValueExpr:
		g.walk(n.Key)
		g.walk(n.Value)

	case *ast.ArrayType:
		if n.Len != nil {
			g.walk(n.Len)
		}
		g.walk(n.Elt)
	case *ast.StructType:
		g.walk(n.Fields)
	case *ast.FuncType:
		if n.TypeParams != nil {
			g.walk(n.TypeParams)
		}
		if n.Params != nil {
			g.walk(n.Params)
		}
		if n.Results != nil {
			g.walk(n.Results)
		}
	case *ast.InterfaceType:
		g.walk(n.Methods)
	case *ast.MapType:
		g.walk(n.Key)
		g.walk(n.Value)
	case *ast.ChanType:
		g.walk(n.Value)

	case *ast.BadStmt, *ast.EmptyStmt:
	case *ast.DeclStmt:
		if gd, ok := n.Decl.(*ast.GenDecl); ok {
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.ValueSpec:
					typ := ""
					if s.Type != nil {
						typ = g.typeQual(s.Type)
					}
					for i, id := range s.Names {
						t := typ
						if s.Type == nil && len(s.Values) == len(s.Names) {
							t = g.exprType(s.Values[i])
						}
						g.local(id, t)
					}
				case *ast.TypeSpec:
					g.local(s.Name, "")
				}
			}
		}
		g.walk(n.Decl)
	case *ast.LabeledStmt:
		g.local(n.Label, "")
		g.walk(n.Label)
		g.walk(n.Stmt)
	case *ast.ExprStmt:
		g.walk(n.X)
	case *ast.SendStmt:
		g.walk(n.Chan)
		g.walk(n.Value)
	case *ast.IncDecStmt:
		g.walk(n.X)
	case *ast.AssignStmt:
		if n.Tok == token.DEFINE {
			for i, e := range n.Lhs {
				typ := ""
				if len(n.Lhs) == len(n.Rhs) {
					typ = g.exprType(n.Rhs[i])
				}
				g.local(e, typ)
			}
		}
		g.exprs(n.Lhs)
		g.exprs(n.Rhs)
	case *ast.GoStmt:
		g.walk(n.Call)
	case *ast.DeferStmt:
		g.walk(n.Call)
	case *ast.ReturnStmt:
		g.exprs(n.Results)
	case *ast.BranchStmt:
		if n.Label != nil {
			setDef(n.Label)
			g.walk(n.Label)
		}
	case *ast.BlockStmt:
		g.stmts(n.List)
	case *ast.IfStmt:
		if n.Init != nil {
			g.walk(n.Init)
		}
		g.walk(n.Cond)
		g.walk(n.Body)
		if n.Else != nil {
			g.walk(n.Else)
		}
	case *ast.CaseClause:
		g.exprs(n.List)
		g.stmts(n.Body)
	case *ast.SwitchStmt:
		if n.Init != nil {
			g.walk(n.Init)
		}
		if n.Tag != nil {
			g.walk(n.Tag)
		}
		g.walk(n.Body)
	case *ast.TypeSwitchStmt:
		if n.Init != nil {
			g.walk(n.Init)
		}
		g.walk(n.Assign)
		g.walk(n.Body)
	case *ast.CommClause:
		if n.Comm != nil {
			g.walk(n.Comm)
		}
		g.stmts(n.Body)
	case *ast.SelectStmt:
		g.walk(n.Body)
	case *ast.ForStmt:
		if n.Init != nil {
			g.walk(n.Init)
		}
		if n.Cond != nil {
			g.walk(n.Cond)
		}
		if n.Post != nil {
			g.walk(n.Post)
		}
		g.walk(n.Body)
	case *ast.RangeStmt:
		if n.Tok == token.DEFINE {
			g.local(n.Key, "")
			g.local(n.Value, "")
		}
		if n.Key != nil {
			g.walk(n.Key)
		}
		if n.Value != nil {
			g.walk(n.Value)
		}
		g.walk(n.X)
		g.walk(n.Body)

	case *ast.ImportSpec:
		// its name is the import's, no reference
	case *ast.ValueSpec:
		for _, id := range n.Names {
			g.walk(id)
		}
		if n.Type != nil {
			g.walk(n.Type)
		}
		g.exprs(n.Values)
	case *ast.TypeSpec:
		g.walk(n.Name)
		if n.TypeParams != nil {
			g.walk(n.TypeParams)
		}
		g.walk(n.Type)
	case *ast.BadDecl:
	case *ast.GenDecl:
		for _, s := range n.Specs {
			g.walk(s)
		}
	case *ast.FuncDecl:
		if n.Recv != nil {
			g.walk(n.Recv)
		}
		g.walk(n.Name)
		g.walk(n.Type)
		if n.Body != nil {
			g.walk(n.Body)
		}
	}
}

func (g *goParser) exprs(list []ast.Expr) {
	for _, e := range list {
		g.walk(e)
	}
}

func (g *goParser) stmts(list []ast.Stmt) {
	for _, s := range list {
		g.walk(s)
	}
}

// fields declares the names of a parameter list as locals, of the type
// the list gives them.
func (g *goParser) fields(list *ast.FieldList) {
	if list == nil {
		return
	}
	for _, f := range list.List {
		typ := ""
		if len(f.Names) > 0 {
			typ = g.typeQual(f.Type)
		}
		for _, id := range f.Names {
			g.local(id, typ)
		}
	}
}

// local declares an identifier (a name being defined) as a local, whose
// members have the qualifier typ ("" when its type is not known).
func (g *goParser) local(e ast.Expr, typ string) {
	if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
		e := g.name(id.Name)
		e.local, e.typ = g.cur, typ
		g.names[id.Name] = e
		setDef(id)
	}
}

// member records a reference to a member (a field, a method) or a
// package's name, with its qualifier (qual.go).
func (g *goParser) member(id *ast.Ident, qual string) {
	if id.Name == "_" {
		return
	}
	g.b.refAt(id.Name, qual, g.b.pos(g.off(id.Pos())), id.Obj == markCall)
}

// typeQual is the qualifier of the members of a value of type e: a named
// type of the file's package or of an imported one, through pointers,
// parentheses and type arguments; "" for any other type.
func (g *goParser) typeQual(e ast.Expr) string {
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
			if predeclared[t.Name] {
				return ""
			}
			if n, ok := g.names[t.Name]; ok && (n.local == g.cur || n.pkg) {
				return "" // a local type, a type parameter
			}
			return g.typeName("", t.Name)
		case *ast.SelectorExpr:
			x, ok := t.X.(*ast.Ident)
			if !ok {
				return ""
			}
			n, ok := g.names[x.Name]
			if !ok || !n.pkg || n.local == g.cur {
				return ""
			}
			return g.typeName(n.qual[1:], t.Sel.Name)
		default:
			return ""
		}
	}
}

// typeName is qualType(path, typ), made once per file.
func (g *goParser) typeName(path, typ string) string {
	k := nameQual{path, typ}
	q, ok := g.types[k]
	if !ok {
		q = qualType(path, typ)
		g.types[k] = q
	}
	return q
}

// exprType is the qualifier of the members of the value of e when its
// type shows: a composite literal, its address, new(T).
func (g *goParser) exprType(e ast.Expr) string {
	switch v := e.(type) {
	case *ast.CompositeLit:
		if v.Type != nil {
			return g.typeQual(v.Type)
		}
	case *ast.UnaryExpr:
		if cl, ok := v.X.(*ast.CompositeLit); ok && v.Op == token.AND && cl.Type != nil {
			return g.typeQual(cl.Type)
		}
	case *ast.CallExpr:
		if id, ok := v.Fun.(*ast.Ident); ok && id.Name == "new" && len(v.Args) == 1 {
			if n, ok := g.names[id.Name]; !ok || n.local != g.cur {
				return g.typeQual(v.Args[0])
			}
		}
	case *ast.ParenExpr:
		return g.exprType(v.X)
	}
	return ""
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
