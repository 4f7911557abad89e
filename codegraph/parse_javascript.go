package codegraph

var jsKeywords = set("break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
	"do", "else", "export", "extends", "finally", "for", "function", "if", "import", "in", "instanceof",
	"new", "return", "super", "switch", "this", "throw", "try", "typeof", "var", "void", "while", "with",
	"yield", "let", "static", "async", "await", "of", "null", "true", "false", "undefined",
	// TypeScript
	"interface", "type", "enum", "namespace", "module", "declare", "abstract", "implements", "private",
	"protected", "public", "readonly", "as", "satisfies", "keyof", "infer", "is", "asserts", "unique",
	"any", "unknown", "never", "string", "number", "boolean", "symbol", "object", "bigint", "override",
	"accessor", "from", "get", "set", "constructor")

// jsModifiers may stand before a class member's name.
var jsModifiers = set("public", "private", "protected", "static", "readonly", "async", "abstract",
	"override", "declare", "get", "set", "accessor", "export", "default")

// parseJS reads JavaScript and TypeScript: functions, classes and their
// methods and fields, interfaces and their members, type aliases, enums and
// their members, namespaces, top-level variables (a variable holding a
// function is a function at any depth); imports, re-exports, require()
// and import().
func parseJS(lang Lang, src []byte) *File {
	p := &jsParser{tokParser: newTokParser(src, lexOptions{regex: true, templates: true}, jsKeywords), ts: lang == LangTypeScript}
	p.run()
	p.refs(func(i int) bool { return p.is(i+1, "<") && p.is(p.angleEnd(i+1)+1, "(") && p.angleEnd(i+1) > i+1 })
	return p.b.file(lang)
}

type jsScope struct {
	open, close int // the braces
	sym         int // the definition it is the body of, or -1
	name        string
	kind        byte // 'c' class body, 'i' interface body, 'e' enum body, 'n' namespace, 'f' function, 'b' other block
	next        int  // class and interface bodies: where the next member starts
}

type jsParser struct {
	*tokParser
	ts     bool
	scopes []jsScope
	// the declarations whose list goes on after a function's or class's
	// body the scan enters (var f = function () {…}, g = class {…}): the
	// const, let or var and where the next declarator starts, the
	// innermost last
	rest []jsRest
}

type jsRest struct{ kw, next int }

func (p *jsParser) top() *jsScope {
	if len(p.scopes) == 0 {
		return nil
	}
	return &p.scopes[len(p.scopes)-1]
}

// atModule reports whether declarations here are the module's or a
// namespace's (not a function's or a block's).
func (p *jsParser) atModule() bool {
	s := p.top()
	return s == nil || s.kind == 'n'
}

func (p *jsParser) parent() (int, string) {
	if s := p.top(); s != nil && (s.kind == 'c' || s.kind == 'i' || s.kind == 'n' || s.kind == 'e') {
		return s.sym, s.name
	}
	return -1, ""
}

func (p *jsParser) push(open int, sym int, name string, kind byte) {
	if open < 0 || open >= len(p.t) || p.match[open] < 0 {
		return
	}
	p.scopes = append(p.scopes, jsScope{open: open, close: int(p.match[open]), sym: sym, name: name, kind: kind, next: open + 1})
}

// stmtStart reports whether token i may start a declaration: the file's
// start, or after ; { } or a line break.
func (p *jsParser) stmtStart(i int) bool {
	if i == 0 {
		return true
	}
	if p.is(i-1, ";") || p.is(i-1, "{") || p.is(i-1, "}") || p.newLine(i) {
		return !p.is(i-1, ".")
	}
	switch p.text(i - 1) {
	case "export", "default", "declare", "async", "abstract":
		return true
	}
	return false
}

// declStart is the first token of the declaration whose keyword is at i:
// export, default, declare, async, abstract before it belong to it.
func (p *jsParser) declStart(i int) int {
	for i > 0 {
		switch p.text(i - 1) {
		case "export", "default", "declare", "async", "abstract":
			i--
			continue
		}
		if p.t[i-1].kind == tPunct && p.text(i-1) == "@" {
			i--
			continue
		}
		break
	}
	return i
}

// bodyEnd is the closing brace of the body that follows the signature
// starting at i, or the statement's end when there is none (an overload,
// an abstract method). It looks no further than scanLimit tokens
// (brackets skipped whole count as one): a signature is short.
func (p *jsParser) bodyEnd(i int) (end, open int) {
	j := i
	for n := 0; j < len(p.t); n++ {
		if n == scanLimit {
			return j - 1, -1
		}
		switch {
		case p.is(j, "{"):
			if p.match[j] > 0 {
				return int(p.match[j]), j
			}
			return j, -1
		case p.is(j, ";"), p.is(j, "}"):
			return j - 1 + boolInt(p.is(j, ";")), -1
		case p.is(j, "=>"):
			// an arrow's body: a block or an expression
			if p.is(j+1, "{") && p.match[j+1] > 0 {
				return int(p.match[j+1]), j + 1
			}
			return p.stmtEnd(j + 1), -1
		case p.is(j, "<"):
			j = p.angleEnd(j)
		case p.match[j] > int32(j):
			j = int(p.match[j])
		}
		if j > i && p.newLine(j+1) && p.is(j, ")") && !p.is(j+1, "{") && !p.is(j+1, ":") && !p.is(j+1, "=>") {
			return j, -1 // an overload signature without ;
		}
		j++
	}
	return len(p.t) - 1, -1
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *jsParser) run() {
	for i := 0; i < len(p.t); i++ {
		for s := p.top(); s != nil && i > s.close; s = p.top() {
			p.scopes = p.scopes[:len(p.scopes)-1]
		}
		for len(p.rest) > 0 && p.rest[len(p.rest)-1].next <= i {
			r := p.rest[len(p.rest)-1]
			p.rest = p.rest[:len(p.rest)-1]
			if r.next == i {
				p.declarators(r.kw, i)
			}
		}
		if s := p.top(); s != nil && (s.kind == 'c' || s.kind == 'i') && i == s.next && i < s.close {
			p.member(i, s)
			continue
		}
		if s := p.top(); s != nil && s.kind == 'e' && i > s.open && i < s.close {
			if p.t[i].kind == tIdent || p.t[i].kind == tString {
				if p.is(i-1, "{") || p.is(i-1, ",") {
					end := p.skipWithin(i, ",", "}")
					if p.t[i].kind == tIdent {
						p.def(i, KindEnumMember, s.sym, s.name, i, end-1)
					}
				}
			}
			continue
		}
		t := p.t[i]
		if t.kind == tPunct && p.is(i, "{") && p.match[i] > int32(i) {
			if s := p.top(); s == nil || s.open != i {
				p.push(i, -1, "", p.blockKind(i))
			}
			continue
		}
		if t.kind != tIdent {
			continue
		}
		switch p.text(i) {
		case "function":
			if p.is(i-1, ".") {
				continue
			}
			n := i + 1
			if p.is(n, "*") {
				n++
			}
			if !p.ident(n) {
				continue
			}
			end, open := p.bodyEnd(n + 1)
			par, cont := p.parent()
			sym := p.def(n, KindFunction, par, cont, p.declStart(i), end)
			if open >= 0 {
				p.push(open, sym, p.text(n), 'f')
				i = open
			}
		case "class":
			if p.is(i-1, ".") || !p.ident(i+1) || p.keywords[p.text(i+1)] && p.text(i+1) != "constructor" {
				continue
			}
			p.typeDecl(i, KindClass, 'c')
		case "interface":
			if p.ts && p.stmtStart(i) && p.ident(i+1) {
				p.typeDecl(i, KindInterface, 'i')
			}
		case "enum":
			if p.ts && p.ident(i+1) && (p.stmtStart(i) || p.is(i-1, "const")) {
				p.typeDecl(i, KindEnum, 'e')
			}
		case "namespace", "module":
			if p.ts && p.stmtStart(i) && p.ident(i+1) && !p.is(i+1, ".") {
				n := i + 1
				for p.is(n+1, ".") && p.ident(n+2) {
					n += 2
				}
				if p.is(n+1, "{") {
					par, cont := p.parent()
					sym := p.def(n, KindNamespace, par, cont, p.declStart(i), int(p.match[n+1]))
					p.push(n+1, sym, p.text(n), 'n')
					i = n + 1
				}
			}
		case "type":
			if p.ts && p.stmtStart(i) && p.ident(i+1) && (p.is(i+2, "=") || p.is(i+2, "<")) {
				end := p.stmtEnd(i)
				par, cont := p.parent()
				sym := p.def(i+1, KindType, par, cont, p.declStart(i), end)
				if eq := i + 2; p.is(eq, "=") && p.is(eq+1, "{") && int(p.match[eq+1]) <= end {
					// an object type: its members are the type's, as an
					// interface's are
					p.push(eq+1, sym, p.text(i+1), 'i')
					i = eq + 1
				}
			}
		case "const", "let", "var":
			if p.stmtStart(i) || p.is(i-1, "(") {
				p.variables(i)
			}
		case "import":
			p.importStmt(i)
		case "export":
			if p.is(i+1, "*") || p.is(i+1, "{") || p.is(i+1, "type") {
				p.fromClause(i)
			}
		case "require":
			if p.is(i+1, "(") && p.t[min(i+2, len(p.t)-1)].kind == tString && p.is(i+3, ")") {
				p.b.imp(unquote(p.text(i+2)), int(p.t[i].start))
			}
		}
	}
}

// blockKind is the kind of the block opened by the brace at i.
func (p *jsParser) blockKind(i int) byte {
	if p.is(i-1, ")") || p.is(i-1, "=>") {
		return 'f'
	}
	return 'b'
}

// typeDecl records a class, interface or enum whose keyword is at i, and
// enters its body.
func (p *jsParser) typeDecl(i int, kind Kind, scope byte) {
	open := p.headerEnd(i + 2)
	if open >= len(p.t) || !p.is(open, "{") || p.match[open] < 0 {
		return
	}
	first := p.declStart(i)
	if kind == KindEnum && p.is(i-1, "const") {
		first = p.declStart(i - 1)
	}
	par, cont := p.parent()
	sym := p.def(i+1, kind, par, cont, first, int(p.match[open]))
	p.push(open, sym, p.text(i+1), scope)
}

// variables records the names a const, let or var at i declares: a
// function when its value is one (at any depth), a variable or constant at
// the module's level.
func (p *jsParser) variables(i int) { p.declarators(i, i+1) }

// declarators records the declarators of the const, let or var at i from
// the token j on. When one's value is a function or class whose body the
// scan enters, the rest are read once the scan has left it.
func (p *jsParser) declarators(i, j int) {
	end := p.stmtEnd(i)
	for j <= end && j < len(p.t) {
		if !p.ident(j) {
			// destructuring: skip the pattern
			if p.match[j] > int32(j) {
				j = int(p.match[j]) + 1
			}
			j = p.skipWithin(j, ",", ";")
			if j > end {
				return
			}
			j++
			continue
		}
		name := j
		// the first declarator's span starts with the statement, a later
		// one's with its name
		start := p.declStart(i)
		if j > i+1 {
			start = name
		}
		k := j + 1
		if p.is(k, "!") {
			k++
		}
		if p.is(k, ":") {
			k = p.skipType(k + 1)
		}
		valueEnd := p.skipWithin(k, ",", ";")
		if valueEnd > end+1 {
			valueEnd = end + 1
		}
		if p.is(k, "=") && p.is(k+1, "class") {
			// a class expression: the variable names the class
			open := p.skipWithin(k+2, "{", ";")
			if p.is(open, "{") && p.match[open] > int32(open) {
				par, cont := p.parent()
				sym := p.def(name, KindClass, par, cont, start, int(p.match[open]))
				p.push(open, sym, p.text(name), 'c')
			}
			p.later(i, valueEnd+1, end)
			return
		}
		if p.is(k, "=") && p.fnValue(k+1) {
			bodyEnd, open := p.bodyEnd(k + 1)
			if open < 0 && p.is(valueEnd, ",") {
				// an arrow's expression body ends with its declarator
				bodyEnd = min(bodyEnd, valueEnd-1)
			}
			par, cont := p.parent()
			sym := p.def(name, KindFunction, par, cont, start, max(bodyEnd, valueEnd-1))
			if open >= 0 {
				p.push(open, sym, p.text(name), 'f')
				p.later(i, valueEnd+1, end)
				return // the scan goes on inside the function
			}
			j = valueEnd + 1
			continue
		}
		if p.atModule() {
			kind := KindVariable
			if p.text(i) == "const" {
				kind = KindConstant
			}
			par, cont := p.parent()
			p.def(name, kind, par, cont, start, valueEnd-1)
		}
		j = valueEnd + 1
	}
}

// headerEnd is the body's { of the class, interface or enum whose header
// goes on at i, or the ; that ends one without a body: a brace inside the
// type arguments (extends Base<{ a: T }>) is not the body's. It looks no
// further than scanLimit tokens (brackets skipped whole count as one).
func (p *jsParser) headerEnd(i int) int {
	angles := 0
	for n := 0; i < len(p.t) && n < scanLimit; i, n = i+1, n+1 {
		switch t := p.text(i); {
		case t == "<":
			angles++
		case t == ">" || t == ">>" || t == ">>>":
			angles = max(0, angles-len(t))
		case t == ";" && angles == 0, t == "{" && angles == 0:
			return i
		case p.match[i] > int32(i):
			i = int(p.match[i])
		}
	}
	return i
}

// later keeps the declarators of the const, let or var at kw that start
// at next for when the scan gets there, if the statement (ending at end)
// has more.
func (p *jsParser) later(kw, next, end int) {
	if next <= end && next < len(p.t) && p.is(next-1, ",") {
		p.rest = append(p.rest, jsRest{kw: kw, next: next})
	}
}

// skipType returns the token after a type annotation starting at i.
func (p *jsParser) skipType(i int) int {
	for i < len(p.t) {
		switch {
		case p.is(i, "="), p.is(i, ","), p.is(i, ";"), p.is(i, ")"), p.is(i, "}"), p.is(i, "=>"):
			return i
		case p.is(i, "<"):
			i = p.angleEnd(i)
		case p.match[i] > int32(i):
			i = int(p.match[i])
		}
		if p.newLine(i+1) && !p.continues(i, i+1) {
			return i + 1
		}
		i++
	}
	return i
}

// fnValue reports whether the expression at i is a function: function,
// async function, an arrow (params) => or x =>.
func (p *jsParser) fnValue(i int) bool {
	if p.is(i, "async") {
		i++
	}
	switch {
	case p.is(i, "function"):
		return true
	case p.ident(i) && p.is(i+1, "=>"):
		return true
	case p.is(i, "<"):
		e := p.angleEnd(i)
		return e > i && p.fnValue(e+1)
	case p.is(i, "(") && p.match[i] > int32(i):
		j := int(p.match[i]) + 1
		if p.is(j, ":") {
			j = p.skipType(j + 1)
			for j < len(p.t) && !p.is(j, "=>") && !p.newLine(j) && j < int(p.match[i])+64 {
				j++
			}
		}
		return p.is(j, "=>")
	}
	return false
}

// member records the class or interface member starting at i and sets
// where the next one starts.
func (p *jsParser) member(i int, s *jsScope) {
	j := i
	for j < s.close {
		switch {
		case p.is(j, ";"), p.is(j, ","):
			j++
			continue
		case p.is(j, "@"):
			j++
			if p.ident(j) {
				j++
			}
			for p.is(j, ".") && p.ident(j+1) {
				j += 2
			}
			if p.is(j, "(") && p.match[j] > 0 {
				j = int(p.match[j]) + 1
			}
			continue
		case p.ident(j) && jsModifiers[p.text(j)] && !p.is(j+1, "(") && !p.is(j+1, ":") && !p.is(j+1, "=") && !p.is(j+1, ";") && !p.is(j+1, "?") && !p.is(j+1, "<"):
			j++
			continue
		case p.is(j, "*"):
			j++
			continue
		}
		break
	}
	if j >= s.close {
		s.next = s.close
		return
	}
	start := i
	for start < j && (p.is(start, ";") || p.is(start, ",")) {
		start++
	}
	name := j
	switch {
	case p.ident(j) || p.t[j].kind == tString:
		j++
	case p.is(j, "[") && p.match[j] > 0:
		// a computed name or an index signature: no definition
		end := p.memberEnd(int(p.match[j])+1, s)
		s.next = end + 1
		return
	case p.is(j, "{") && p.match[j] > 0:
		// a static block
		s.next = int(p.match[j]) + 1
		p.push(j, -1, "", 'f')
		return
	default:
		s.next = j + 1
		return
	}
	if p.is(j, "?") || p.is(j, "!") {
		j++
	}
	kind := KindField
	if p.is(j, "(") || p.is(j, "<") {
		kind = KindMethod
	} else if p.is(j, "=") && p.fnValue(j+1) {
		kind = KindMethod
	}
	end := p.memberEnd(j, s)
	if p.t[name].kind == tIdent {
		p.def(name, kind, s.sym, s.name, start, end)
	}
	s.next = end + 1
	if p.is(s.next, ";") || p.is(s.next, ",") {
		s.next++
	}
}

// memberEnd is the last token of a member whose signature goes on at j.
func (p *jsParser) memberEnd(j int, s *jsScope) int {
	if j < s.close && p.newLine(j) && !p.continues(j-1, j) {
		return j - 1 // a field without a value or a ;
	}
	for j < s.close {
		switch {
		case p.is(j, ";"), p.is(j, ","):
			return j
		case p.is(j, "{"):
			if p.match[j] > int32(j) {
				m := int(p.match[j])
				// an object type or a body: a body ends the member
				if p.is(j-1, ")") || p.is(j-1, "=>") || p.newLine(m+1) || p.is(m+1, ";") || p.is(m+1, "}") {
					return m
				}
				j = m
			}
		case p.is(j, "<"):
			if e := p.angleEnd(j); e > j {
				// the > that closes type arguments ends a line as a
				// bracket does (configure(): Promise<void>)
				j = e
				if p.newLine(j+1) && j+1 < s.close && !p.goesOn(j+1) {
					return j
				}
				j++
				continue
			}
		case p.match[j] > int32(j):
			j = int(p.match[j])
		}
		if p.newLine(j+1) && j+1 < s.close && !p.continues(j, j+1) {
			return j
		}
		j++
	}
	return s.close - 1
}

// importStmt records the module of an import at i: import … from "m",
// import "m", import("m"), import x = require("m").
func (p *jsParser) importStmt(i int) {
	if p.is(i-1, ".") {
		return
	}
	if p.is(i+1, "(") {
		if i+2 < len(p.t) && p.t[i+2].kind == tString {
			p.b.imp(unquote(p.text(i+2)), int(p.t[i].start))
		}
		return
	}
	if i+1 < len(p.t) && p.t[i+1].kind == tString {
		p.b.imp(unquote(p.text(i+1)), int(p.t[i].start))
		p.skip(i+1, i+1)
		return
	}
	p.fromClause(i)
}

// fromClause finds the `from "m"` of an import or export at i.
func (p *jsParser) fromClause(i int) {
	end := p.stmtEnd(i)
	for j, n := i+1, 0; j <= end && j+1 < len(p.t) && n < scanLimit; j, n = j+1, n+1 {
		if p.match[j] > int32(j) {
			j = int(p.match[j]) // the names in braces
			continue
		}
		if p.is(j, "from") && p.t[j+1].kind == tString {
			p.b.imp(unquote(p.text(j+1)), int(p.t[i].start))
			return
		}
		if p.is(j, "require") && p.is(j+1, "(") && j+2 < len(p.t) && p.t[j+2].kind == tString {
			p.b.imp(unquote(p.text(j+2)), int(p.t[i].start))
			return
		}
	}
}

// unquote strips a literal's quotes (no escapes: module names have none).
func unquote(s string) string {
	if len(s) >= 2 {
		switch s[0] {
		case '"', '\'', '`':
			return s[1 : len(s)-1]
		}
	}
	return s
}
