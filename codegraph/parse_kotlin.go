package codegraph

import "strings"

var ktKeywords = set("as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in",
	"interface", "is", "null", "object", "package", "return", "super", "this", "throw", "true", "try",
	"typealias", "typeof", "val", "var", "when", "while", "by", "catch", "constructor", "delegate", "dynamic",
	"field", "file", "finally", "get", "import", "init", "param", "property", "receiver", "set", "setparam",
	"value", "where", "actual", "abstract", "annotation", "companion", "const", "crossinline", "data", "enum",
	"expect", "external", "final", "infix", "inline", "inner", "internal", "lateinit", "noinline", "open",
	"operator", "out", "override", "private", "protected", "public", "reified", "sealed", "suspend",
	"tailrec", "vararg", "it")

// declLang says how the declaration scanner (declParser) reads one of the
// languages whose definitions each start with a keyword: Kotlin, Swift.
type declLang struct {
	lang      Lang
	funcs     map[string]bool // fun, func
	types     map[string]Kind // class, interface, struct…: the kind each declares
	props     map[string]bool // val, var, let
	extension string          // Swift's extension: members of another type
	mods      map[string]bool // modifiers that may precede a declaration
	hard      map[string]bool // the keywords that cannot name a function
}

var kotlinDecls = &declLang{
	lang:  LangKotlin,
	funcs: set("fun"),
	types: map[string]Kind{"class": KindClass, "interface": KindInterface, "object": KindClass, "typealias": KindType},
	props: set("val", "var"),
	mods: set("public", "private", "protected", "internal", "open", "abstract", "final", "sealed", "data",
		"enum", "annotation", "inner", "value", "inline", "override", "suspend", "operator", "infix",
		"tailrec", "external", "const", "lateinit", "actual", "expect", "companion", "fun"),
	hard: set("as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface",
		"is", "null", "object", "package", "return", "super", "this", "throw", "true", "try", "typealias",
		"typeof", "val", "var", "when", "while"),
}

// parseKotlin reads Kotlin: classes, interfaces, objects (companions too,
// for their members), enum classes and type aliases, functions at any depth
// (methods in a class body, extension functions by their name), properties
// of classes and files; imports.
func parseKotlin(src []byte) *File {
	p := &declParser{tokParser: newTokParser(src, lexOptions{textBlocks: true}, ktKeywords), l: kotlinDecls}
	p.run()
	p.refs(nil)
	return p.b.file(LangKotlin)
}

type declParser struct {
	*tokParser
	l *declLang
}

// declScope is a definition whose body is open.
type declScope struct {
	sym   int    // -1 for an extension's body
	name  string // the type its members belong to
	open  int    // the body's {
	close int
	typ   bool
	enum  bool
}

func (p *declParser) run() {
	var scopes []declScope
	var opens []int
	for i := 0; i < len(p.t); i++ {
		for len(scopes) > 0 && i > scopes[len(scopes)-1].close {
			scopes = scopes[:len(scopes)-1]
		}
		var punct bool
		if opens, punct = p.openBrackets(opens, i); punct {
			continue
		}
		if p.t[i].kind != tIdent || p.is(i-1, ".") || p.is(i-1, "::") || p.is(i-1, "?.") {
			continue
		}
		parent, container := -1, ""
		var top *declScope
		for k := len(scopes) - 1; k >= 0; k-- {
			if scopes[k].sym >= 0 || scopes[k].typ {
				top = &scopes[k]
				parent, container = top.sym, top.name
				break
			}
		}
		inBody := top != nil && len(opens) > 0 && opens[len(opens)-1] == top.open
		topLevel := len(opens) == 0
		w := p.text(i)
		switch {
		case w == "import" && (i == 0 || p.newLine(i) || p.is(i-1, ";") || p.is(i-1, "@") || p.ident(i-1) && p.t[i-1].line == p.t[i].line):
			j := i + 1
			if p.l.lang == LangSwift && p.ident(j) && p.ident(j+1) && p.t[j+1].line == p.t[i].line && !p.is(j+1, "as") {
				j++ // import struct Foo.Bar
			}
			var b strings.Builder
			for ; j < len(p.t) && p.t[j].line == p.t[i].line && (p.ident(j) && !p.is(j, "as") || p.is(j, ".") || p.is(j, "*")); j++ {
				b.WriteString(p.text(j))
			}
			p.b.imp(b.String(), int(p.t[i].start))
			end := j - 1
			if p.is(j, "as") {
				end = j + 1
			}
			p.skip(i+1, end)
			i = end
		case w == "package" && p.l.lang == LangKotlin && (i == 0 || p.newLine(i)):
			j := i + 1
			var b strings.Builder
			for j < len(p.t) && p.t[j].line == p.t[i].line && (p.ident(j) || p.is(j, ".")) {
				b.WriteString(p.text(j))
				j++
			}
			if p.b.pkg == "" {
				p.b.pkg = b.String()
			}
			p.skip(i+1, j-1)
			i = j - 1
		case p.l.funcs[w] && !p.l.types[p.text(i+1)].isType():
			name, params := p.funcName(i + 1)
			if name < 0 {
				continue
			}
			kind := KindFunction
			if top != nil && top.typ && inBody {
				kind = KindMethod
			}
			open, last := p.declEnd(params)
			sym := p.def(name, kind, parent, container, p.modsStart(i), last)
			if open >= 0 {
				scopes = append(scopes, declScope{sym: sym, name: p.text(name), open: open, close: last})
			}
			i = name
		case p.l.types[w] != 0 || w == p.l.extension:
			if w == "class" && p.l.lang == LangSwift && !p.ident(i+1) || p.l.funcs[p.text(i+1)] || p.l.props[p.text(i+1)] || p.l.mods[p.text(i+1)] && p.l.lang == LangSwift {
				continue // class func, class var
			}
			name := i + 1
			kind := p.l.types[w]
			if w == "object" && p.is(i-1, "companion") {
				if !p.ident(name) || p.keywords[p.text(name)] {
					name = -1 // an unnamed companion: its members are its class's
				}
			} else if !p.ident(name) || p.keywords[p.text(name)] && p.text(name) != "value" {
				continue // object : T { }, an object expression; Foo::class
			}
			switch {
			case w == "class" && p.is(i-1, "enum"):
				kind = KindEnum
			case w == "object" && p.is(i-1, "companion"):
				kind = KindClass
			}
			typeName := ""
			if name >= 0 {
				typeName = p.text(name)
			}
			start := name
			if start < 0 {
				start = i
			}
			if w == p.l.extension {
				// extension A.B<T>: the members of B
				j := name
				for p.ident(j) && p.is(j+1, ".") && p.ident(j+2) {
					j += 2
				}
				typeName = p.text(j)
				p.skip(name, j)
				start = j
			}
			open, last := p.declEnd(start)
			sym := -1
			if w != p.l.extension && name >= 0 && !(w == "object" && p.is(i-1, "companion")) {
				sym = p.def(name, kind, parent, container, p.modsStart(i), last)
			} else if name >= 0 {
				p.notRef[name] = true
			}
			if w == "object" && p.is(i-1, "companion") {
				typeName = container // a companion's members are its class's
				sym = parent
			}
			if open >= 0 {
				scopes = append(scopes, declScope{sym: sym, name: typeName, open: open, close: last, typ: w != "typealias", enum: kind == KindEnum})
			}
			if start > i {
				i = start
			}
		case p.l.props[w] && (topLevel || top != nil && top.typ && inBody):
			name := i + 1
			for p.ident(name) && p.is(name+1, ".") && p.ident(name+2) {
				name += 2 // val Foo.bar: an extension property
			}
			if !p.ident(name) || p.keywords[p.text(name)] && p.text(name) != "value" {
				continue
			}
			kind := KindVariable
			if !topLevel {
				kind = KindField
			}
			last := p.exprEnd(name)
			p.def(name, kind, parent, container, p.modsStart(i), last)
			i = name
		case w == "case" && p.l.lang == LangSwift && top != nil && top.enum && inBody:
			// case a, b(Int), c = 1
			j := i + 1
			last := p.exprEnd(i)
			for j <= last {
				if p.ident(j) {
					p.def(j, KindEnumMember, parent, container, j, j)
				}
				j = p.skipTo(j, ",")
				if j > last {
					break
				}
				j++
			}
			i = last
		}
	}
}

// funcName reads a function's name from token j (after fun or func):
// type parameters, a receiver (Type.name) and the name's own type
// parameters skipped. It returns the name and the opening parenthesis of
// the parameters, or -1.
func (p *declParser) funcName(j int) (int, int) {
	if p.is(j, "<") {
		j = p.angleEnd(j) + 1
	}
	name := -1
	for j < len(p.t) {
		if name >= 0 && p.ident(j) && !p.is(j-1, ".") && !p.is(j-1, "?.") && !p.is(j-1, "?") && !p.is(j-1, ">") {
			return -1, -1 // two names in a row: no function's
		}
		switch {
		case p.is(j, "`") && p.ident(j+1) && p.is(j+2, "`") && name < 0:
			// a keyword made a name: `is`
			name = j + 1
			if !p.is(j+3, "(") && !p.is(j+3, "<") {
				return -1, -1
			}
			if p.is(j+3, "<") {
				j = p.angleEnd(j + 3)
			} else {
				j += 2
			}
			if !p.is(j+1, "(") {
				return -1, -1
			}
			return name, j + 1
		case p.ident(j):
			name = j
			j++
		case p.is(j, "<") && name >= 0:
			e := p.angleEnd(j)
			if e == j {
				return -1, -1
			}
			j = e + 1
		case p.is(j, "?") && name >= 0:
			j++ // fun String? .f()
		case (p.is(j, ".") || p.is(j, "?.")) && name >= 0:
			j++ // fun String?.f()
		case p.is(j, "(") && p.match[j] > int32(j) && name < 0 && p.l.lang == LangKotlin:
			j = int(p.match[j]) + 1 // fun (A) -> B.f()
			for !p.is(j, ".") && j < len(p.t) && !p.is(j, "(") && !p.newLine(j) {
				j++
			}
		case p.is(j, "("):
			if name < 0 || p.l.hard[p.text(name)] {
				return -1, -1
			}
			return name, j
		default:
			return -1, -1
		}
	}
	return -1, -1
}

// declEnd finds the body of a declaration whose header goes on from token
// j: the { of its body and its closing brace, or -1 and the last token of
// an expression body (= …) or of the header.
func (p *declParser) declEnd(j int) (int, int) {
	for k, n := j+1, 0; k < len(p.t); k, n = k+1, n+1 {
		if n > scanLimit {
			return -1, j // no header is this long
		}
		if p.newLine(k) && !p.continues(k-1, k) && !p.is(k, "{") && !p.is(k, ":") && !p.is(k, "where") && !p.is(k-1, ":") && !p.is(k-1, ",") {
			return -1, k - 1
		}
		switch {
		case p.is(k, "{"):
			if p.match[k] > int32(k) {
				return k, int(p.match[k])
			}
			return -1, k
		case p.is(k, "="):
			return -1, p.exprEnd(k)
		case p.is(k, ";"), p.is(k, "}"):
			return -1, k - 1
		case p.is(k, "<"):
			if e := p.angleEnd(k); e > k {
				k = e
			}
		case p.match[k] > int32(k):
			k = int(p.match[k])
		}
	}
	return -1, len(p.t) - 1
}

// exprEnd is the last token of the statement going on from token k: a
// newline ends it unless the line ends in an operator or the next starts
// with one (a > ending a line closes type arguments, a ? a nullable type).
func (p *declParser) exprEnd(k int) int {
	for j, n := k, 0; j < len(p.t); j, n = j+1, n+1 {
		if n > scanLimit {
			return k
		}
		if p.is(j, ";") {
			return j - 1
		}
		if p.match[j] >= 0 && p.match[j] < int32(k) {
			return j - 1 // the enclosing block closes
		}
		if j > k && p.newLine(j) && !p.declContinues(j-1, j) {
			return j - 1
		}
		if p.match[j] > int32(j) {
			j = int(p.match[j])
		}
	}
	return len(p.t) - 1
}

func (p *declParser) declContinues(a, b int) bool {
	if p.t[a].kind == tPunct {
		switch p.text(a) {
		case ")", "]", "}", ">", "<", "?", "!", "++", "--", "@", "#":
		default:
			return true
		}
	}
	if p.t[b].kind == tPunct {
		switch p.text(b) {
		case ".", "?.", "?", ":", "&&", "||", "->", "=", "==", "!=", "+", "*", "/", "%", "|", "&", "...", "..":
			return true
		}
	}
	switch p.text(b) {
	case "as", "is", "in", "where", "else", "catch", "finally":
		return true
	}
	return false
}

// modsStart is the first token of the modifiers and annotations before i.
func (p *declParser) modsStart(i int) int {
	for i > 0 {
		j := i - 1
		switch {
		case p.ident(j) && p.l.mods[p.text(j)]:
			i = j
			continue
		case p.is(j, ")") && p.match[j] > 1 && p.ident(int(p.match[j])-1) && p.is(int(p.match[j])-2, "@"):
			i = int(p.match[j]) - 2
			continue
		case p.ident(j) && p.is(j-1, "@"):
			i = j - 1
			continue
		}
		break
	}
	return i
}
