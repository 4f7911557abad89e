package codegraph

import "strings"

var cKeywords = set("auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
	"enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
	"volatile", "while", "_Bool", "_Complex", "_Atomic", "_Static_assert", "_Noreturn", "_Thread_local",
	"_Alignas", "_Alignof", "_Generic", "bool", "true", "false", "NULL",
	// C++
	"alignas", "alignof", "and", "asm", "catch", "class", "compl", "concept", "consteval", "constexpr",
	"constinit", "const_cast", "co_await", "co_return", "co_yield", "decltype", "delete", "dynamic_cast",
	"explicit", "export", "final", "friend", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
	"operator", "or", "override", "private", "protected", "public", "reinterpret_cast", "requires",
	"static_assert", "static_cast", "template", "this", "thread_local", "throw", "try", "typeid",
	"typename", "using", "virtual", "wchar_t", "char8_t", "char16_t", "char32_t", "xor")

// cAttributes are names that take parentheses but are not a declarator:
// attributes and specifiers before or after one.
var cAttributes = set("__attribute__", "__attribute", "__declspec", "alignas", "_Alignas", "decltype",
	"__asm__", "__asm", "asm", "throw", "noexcept", "requires", "sizeof", "__typeof__", "typeof",
	"_Static_assert", "static_assert", "__THROW", "__nonnull", "__wur", "__attribute_pure__")

// parseC reads C and C++: functions and methods (in-class declarations,
// definitions, out-of-class Class::method definitions), structs, unions,
// classes and their fields, enums and their enumerators, typedefs and
// using aliases, namespaces, file-scope variables and #define macros;
// #include as imports. It reads declarations the way a person does, by
// their shape: a name before a parameter list before a body is a
// function; preprocessor conditionals are read through, both branches.
func parseC(lang Lang, src []byte) *File {
	cpp := lang == LangCPP
	p := &cParser{tokParser: newTokParser(src, lexOptions{preprocessor: true, rawStrings: cpp, digitQuote: cpp}, cKeywords), cpp: cpp}
	p.directives()
	p.decls(0, len(p.t), -1, "", false)
	p.refs(nil)
	return p.b.file(lang)
}

type cParser struct {
	*tokParser
	cpp bool
}

// directives records #define and #include.
func (p *cParser) directives() {
	for _, t := range p.t {
		if t.kind != tDirective {
			continue
		}
		text := string(p.src[t.start:t.end])
		body := strings.TrimLeft(text[1:], " \t")
		word := body
		if k := strings.IndexAny(body, " \t<\"("); k >= 0 {
			word = body[:k]
		}
		rest := strings.TrimLeft(body[len(word):], " \t")
		switch word {
		case "include", "include_next", "import":
			if len(rest) > 1 && (rest[0] == '"' || rest[0] == '<') {
				closer := byte('"')
				if rest[0] == '<' {
					closer = '>'
				}
				if k := strings.IndexByte(rest[1:], closer); k >= 0 {
					p.b.imp(rest[1:1+k], int(t.start))
				}
			}
		case "define":
			n := 0
			for n < len(rest) && isIdentChar(rest[n]) {
				n++
			}
			if n == 0 {
				continue
			}
			nameOff := int(t.end) - len(rest)
			// the directive's span, continuation lines included
			p.b.def(rest[:n], KindMacro, -1, "", int(t.start), int(t.end), nameOff)
		}
	}
}

// decls reads the declarations of tokens [from, to): the file, a
// namespace, an extern "C" block, or a class body (inClass, parent and
// container naming the class).
func (p *cParser) decls(from, to, parent int, container string, inClass bool) {
	i := from
	for i < to {
		t := p.t[i]
		if t.kind == tDirective || p.is(i, ";") || p.is(i, "}") || p.is(i, ")") || p.is(i, "]") {
			i++
			continue
		}
		if t.kind != tIdent && !p.is(i, "~") && !p.is(i, "::") && !p.is(i, "[") && !p.is(i, "*") {
			// not a declaration: skip the statement
			i = p.stmtStop(i, to) + 1
			continue
		}
		switch p.text(i) {
		case "public", "private", "protected":
			if p.is(i+1, ":") {
				i += 2
				continue
			}
		case "namespace":
			if p.cpp {
				i = p.namespace(i, to, parent, container)
				continue
			}
		case "extern":
			if i+1 < to && p.t[i+1].kind == tString && p.is(i+2, "{") {
				if p.match[i+2] < 0 { // closed under another #ifdef
					i += 3
					continue
				}
				close := int(p.match[i+2])
				p.decls(i+3, close, parent, container, inClass)
				i = close + 1
				continue
			}
		case "template":
			if p.is(i+1, "<") {
				i = p.angleEnd(i+1) + 1
				continue
			}
		case "using", "friend", "static_assert", "_Static_assert":
			if p.text(i) == "using" && p.ident(i+1) && p.is(i+2, "=") {
				end := p.stmtStop(i, to)
				p.def(i+1, KindType, parent, container, i, end)
				i = end + 1
				continue
			}
			i = p.stmtStop(i, to) + 1
			continue
		}
		i = p.declaration(i, to, parent, container, inClass)
	}
}

// stmtStop is the ; or the closing brace of the body that ends the
// statement starting at i (brackets skipped whole, a constructor's member
// initialisers a{1} too), or to-1.
func (p *cParser) stmtStop(i, to int) int {
	inits := false
	for j := i; j < to; j++ {
		if p.is(j, ";") {
			return j
		}
		if p.is(j, ":") && p.is(j-1, ")") {
			inits = true
		}
		if inits && p.is(j, "{") && p.match[j] > int32(j) && (p.ident(j-1) && !cKeywords[p.text(j-1)] || p.is(j-1, ">")) {
			j = int(p.match[j])
			continue
		}
		if p.is(j, "{") && p.match[j] > int32(j) {
			m := int(p.match[j])
			if p.is(m+1, ";") {
				return m + 1
			}
			return m
		}
		if p.match[j] > int32(j) {
			j = int(p.match[j])
		}
	}
	return to - 1
}

func (p *cParser) namespace(i, to, parent int, container string) int {
	j := i + 1
	name := -1
	for p.ident(j) || p.is(j, "::") {
		if p.ident(j) {
			name = j
		}
		j++
	}
	if p.is(j, "=") { // an alias
		return p.stmtStop(i, to) + 1
	}
	if !p.is(j, "{") || p.match[j] < 0 {
		return p.stmtStop(i, to) + 1
	}
	close := int(p.match[j])
	sym, cont := parent, container
	if name >= 0 {
		sym = p.def(name, KindNamespace, parent, container, i, close)
		cont = p.text(name)
	}
	p.decls(j+1, close, sym, cont, false)
	return close + 1
}

// declaration reads one declaration starting at i and returns the token
// after it.
func (p *cParser) declaration(i, to, parent int, container string, inClass bool) int {
	start := i
	typedef := false
	if p.is(i, "typedef") {
		typedef = true
		i++
	}
	// skip leading specifiers and attributes
	for i < to && (p.ident(i) && (cAttributes[p.text(i)] || p.text(i) == "[[")) {
		if p.is(i+1, "(") && p.match[i+1] > 0 {
			i = int(p.match[i+1]) + 1
		} else {
			i++
		}
	}
	for p.is(i, "[") && p.is(i+1, "[") && p.match[i] > 0 {
		i = int(p.match[i]) + 1
	}
	// a struct, union, class or enum with a body
	if kw := p.text(i); kw == "struct" || kw == "union" || kw == "class" || kw == "enum" {
		if end, ok := p.record(start, i, to, parent, container, typedef); ok {
			return end
		}
	}
	stop := p.stmtStop(start, to)
	if typedef {
		p.typedefName(start, stop, parent, container)
		return stop + 1
	}
	// the declarator's parameter list: the first ( at depth 0 after a name
	// that is not an attribute, with no = before it
	params := -1
	for j := i; j <= stop && j < to; j++ {
		if p.is(j, "=") || p.is(j, "{") {
			break
		}
		if p.is(j, "<") && p.cpp {
			j = p.angleEnd(j)
			continue
		}
		if p.is(j, "(") {
			if p.is(j+1, "*") || p.is(j+1, "&") || p.is(j+1, "^") {
				break // a pointer to a function: a variable or a field
			}
			if p.declName(j-1) >= 0 && !cAttributes[p.text(j-1)] && !p.macroType(j) {
				params = j
				break
			}
			if p.match[j] > int32(j) {
				j = int(p.match[j])
			}
			continue
		}
		if p.match[j] > int32(j) {
			j = int(p.match[j])
		}
	}
	if params >= 0 {
		name := p.declName(params - 1)
		// a function: a body, or (in a class) a declaration
		body := p.is(stop, "}") || (p.is(stop, ";") && p.is(stop-1, "}"))
		qual := p.qualifier(name)
		if !body && !inClass {
			return stop + 1 // a prototype: the definition is elsewhere
		}
		if !inClass && name == params-1 && params-1 == start && qual == "" {
			return stop + 1 // NAME(…) alone: a macro's call
		}
		kind := KindFunction
		cont, par := container, parent
		if inClass {
			kind = KindMethod
		}
		if qual != "" {
			kind, cont, par = KindMethod, qual, -1
		}
		if p.is(name-1, "~") {
			// a destructor: named so, not as its class
			p.notRef[name] = true
			p.b.def("~"+p.text(name), kind, par, cont, int(p.t[start].start), p.end(stop), int(p.t[name-1].start))
			return stop + 1
		}
		p.def(name, kind, par, cont, start, stop)
		return stop + 1
	}
	// variables or fields: every name followed by = ; , [ : or {
	if p.is(start, "extern") && !inClass {
		return stop + 1
	}
	for j := i + 1; j <= stop && j < to; j++ {
		if p.is(j, "(") && (p.is(j+1, "*") || p.is(j+1, "&") || p.is(j+1, "^")) && p.match[j] > int32(j) {
			// (*name)(…): a pointer to a function, named inside
			m := int(p.match[j])
			if k := m - 1; p.ident(k) && !cKeywords[p.text(k)] {
				kind := KindVariable
				if inClass {
					kind = KindField
				}
				p.def(k, kind, parent, container, start, stop)
			}
			j = m
			if p.is(j+1, "(") && p.match[j+1] > int32(j+1) {
				j = int(p.match[j+1])
			}
			continue
		}
		if p.match[j] > int32(j) && !p.is(j, "[") && !p.is(j, "{") {
			j = int(p.match[j])
			continue
		}
		if !p.ident(j) || cKeywords[p.text(j)] {
			continue
		}
		next := j + 1
		if !(p.is(next, "=") || p.is(next, ";") || p.is(next, ",") || p.is(next, "[") || (p.is(next, ":") && inClass) || (p.is(next, "{") && p.cpp)) {
			continue
		}
		if p.is(j-1, ".") || p.is(j-1, "->") || p.is(j-1, "::") {
			continue
		}
		kind := KindVariable
		if inClass {
			kind = KindField
		}
		end := p.skipWithin(next, ",", ";")
		if end > stop {
			end = stop
		}
		p.def(j, kind, parent, container, start, end)
		j = end
	}
	return stop + 1
}

// cSuffixes may follow a function's parameters.
var cSuffixes = set("const", "volatile", "override", "final", "noexcept", "throw", "mutable", "try",
	"requires", "asm", "restrict")

// macroType reports whether the parenthesis at open is a macro's argument
// list in a type (Array(T) items;) rather than a function's parameters: a
// lower-case name that is not a qualifier follows it.
func (p *cParser) macroType(open int) bool {
	if p.match[open] < 0 {
		return false
	}
	next := int(p.match[open]) + 1
	if !p.ident(next) {
		return false
	}
	name := p.text(next)
	if cSuffixes[name] || strings.HasPrefix(name, "_") || strings.ToUpper(name) == name {
		return false
	}
	return true
}

// declName returns the token of the name a declarator ends with at j
// (foo, ~Foo, operator==, A::b), or -1.
func (p *cParser) declName(j int) int {
	if j < 0 || j >= len(p.t) {
		return -1
	}
	if p.ident(j) {
		if cKeywords[p.text(j)] && p.text(j) != "operator" {
			return -1
		}
		return j
	}
	// operator symbols: operator==, operator(), operator[]
	for k := j; k > j-4 && k >= 0; k-- {
		if p.is(k, "operator") {
			return k
		}
	}
	return -1
}

// qualifier is the class (or namespace) a qualified name A::B::name is
// in: "B"; "" when unqualified.
func (p *cParser) qualifier(name int) string {
	k := name - 1
	if p.is(k, "~") {
		k--
	}
	if !p.is(k, "::") {
		return ""
	}
	k--
	if p.is(k, ">") {
		// A<T>::name
		for d := 0; k >= 0; k-- {
			if p.is(k, ">") {
				d++
			} else if p.is(k, "<") {
				d--
				if d == 0 {
					k--
					break
				}
			}
		}
	}
	if p.ident(k) {
		return p.text(k)
	}
	return ""
}

// record reads a struct, union, class or enum at kw (the declaration
// starting at start). ok is false when it has no body here (a use of the
// type: the declaration is read as a function or a variable).
func (p *cParser) record(start, kw, to, parent int, container string, typedef bool) (next int, ok bool) {
	j := kw + 1
	if p.text(kw) == "enum" && (p.is(j, "class") || p.is(j, "struct")) {
		j++
	}
	for p.ident(j) && cAttributes[p.text(j)] {
		j++
		if p.is(j, "(") && p.match[j] > 0 {
			j = int(p.match[j]) + 1
		}
	}
	for p.is(j, "[") && p.match[j] > 0 {
		j = int(p.match[j]) + 1
	}
	name := -1
	if p.ident(j) {
		name = j
		j++
		for p.is(j, "::") && p.ident(j+1) {
			name = j + 1
			j += 2
		}
	}
	if p.is(j, "final") {
		j++
	}
	if p.is(j, "<") && p.cpp { // a specialisation
		j = p.angleEnd(j) + 1
	}
	if p.is(j, ":") { // bases, or an enum's type
		for j < to && !p.is(j, "{") && !p.is(j, ";") {
			if p.is(j, "<") {
				j = p.angleEnd(j)
			}
			j++
		}
	}
	if !p.is(j, "{") || p.match[j] < 0 {
		if p.is(j, ";") && name == j-1 {
			return j + 1, true // a forward declaration
		}
		return 0, false
	}
	close := int(p.match[j])
	stop := close
	if !p.is(close+1, ";") {
		stop = p.stmtStop(close+1, to)
	} else {
		stop = close + 1
	}
	kind := KindStruct
	switch p.text(kw) {
	case "class":
		kind = KindClass
	case "enum":
		kind = KindEnum
	}
	sym := -1
	cname := ""
	if name >= 0 {
		sym = p.def(name, kind, parent, container, start, close)
		cname = p.text(name)
	}
	if kind == KindEnum {
		p.enumerators(j, close, sym, cname)
	} else {
		p.decls(j+1, close, sym, cname, true)
	}
	// what follows the body: typedef names, or variables
	for k := close + 1; k < stop && k < to; k++ {
		if p.ident(k) && (p.is(k+1, ";") || p.is(k+1, ",") || p.is(k+1, "=") || p.is(k+1, "[")) && !cKeywords[p.text(k)] {
			kk := KindVariable
			switch {
			case typedef:
				kk = KindType
			case parent >= 0 && p.isClass(parent):
				kk = KindField
			}
			p.def(k, kk, parent, container, start, stop)
		}
		if p.match[k] > int32(k) {
			k = int(p.match[k])
		}
	}
	return stop + 1, true
}

func (p *cParser) isClass(sym int) bool {
	if sym < 0 || sym >= len(p.b.syms) {
		return false
	}
	k := p.b.syms[sym].Kind
	return k == KindStruct || k == KindClass
}

func (p *cParser) enumerators(open, close, parent int, container string) {
	for j := open + 1; j < close; j++ {
		if p.ident(j) && (p.is(j-1, "{") || p.is(j-1, ",")) {
			end := p.skipWithin(j, ",")
			if end > close {
				end = close
			}
			p.def(j, KindEnumMember, parent, container, j, end-1)
			j = end
		}
	}
}

// typedefName records the name a typedef (tokens start..stop) declares:
// the last name at depth 0, or a function pointer's (*name).
func (p *cParser) typedefName(start, stop, parent int, container string) {
	name := -1
	for j := start + 1; j < stop; j++ {
		if p.is(j, "(") && p.match[j] > int32(j) {
			m := int(p.match[j])
			if p.is(j+1, "*") || p.is(j+1, "^") {
				for k := j + 2; k < m; k++ {
					if p.ident(k) {
						name = k
					}
				}
				break
			}
			j = m
			continue
		}
		if p.is(j, "[") && p.match[j] > int32(j) {
			j = int(p.match[j])
			continue
		}
		if p.ident(j) && !cKeywords[p.text(j)] {
			name = j
		}
	}
	if name >= 0 {
		p.def(name, KindType, parent, container, start, stop)
	}
}
