package codegraph

import "strings"

var phpKeywords = set("abstract", "and", "array", "as", "break", "callable", "case", "catch", "class", "clone",
	"const", "continue", "declare", "default", "do", "echo", "else", "elseif", "empty", "enddeclare", "endfor",
	"endforeach", "endif", "endswitch", "endwhile", "enum", "extends", "final", "finally", "fn", "for",
	"foreach", "function", "global", "goto", "if", "implements", "include", "include_once", "instanceof",
	"insteadof", "interface", "isset", "list", "match", "namespace", "new", "or", "print", "private",
	"protected", "public", "readonly", "require", "require_once", "return", "static", "switch", "throw",
	"trait", "try", "unset", "use", "var", "while", "xor", "yield", "from", "self", "parent", "true", "false",
	"null", "TRUE", "FALSE", "NULL", "int", "float", "bool", "string", "void", "mixed", "never", "object",
	"iterable", "php", "die", "exit")

var phpModifiers = set("public", "protected", "private", "static", "var", "readonly", "final", "abstract")

// parsePHP reads PHP: namespaces, classes, interfaces, traits and enums,
// functions (at any depth, methods in a class-like body), class constants,
// properties and enum cases, top-level constants; use imports. Text
// outside <?php … ?> is skipped; variables are no references (they are
// the function's own), members after -> and :: are.
func parsePHP(src []byte) *File {
	p := &phpParser{tokParser: newTokParser(src, lexOptions{multiline: true, hashComment: true, heredoc: true, php: true}, phpKeywords)}
	p.run()
	p.phpRefs()
	p.b.pkg = firstNamespace(p.b.syms, `\`)
	return p.b.file(LangPHP)
}

type phpParser struct {
	*tokParser
}

// phpScope is a definition whose body is open: a class-like one (its
// members are methods and properties), a function, a namespace block.
type phpScope struct {
	sym       int
	name      string
	open      int // the body's {
	close     int // its }
	class     bool
	namespace bool
}

func (p *phpParser) run() {
	var scopes []phpScope
	var opens []int // the open brackets around the token
	ns, nsSym := "", -1
	for i := 0; i < len(p.t); i++ {
		for len(scopes) > 0 && i > scopes[len(scopes)-1].close {
			scopes = scopes[:len(scopes)-1]
		}
		var punct bool
		if opens, punct = p.openBrackets(opens, i); punct {
			continue
		}
		if p.t[i].kind != tIdent {
			continue
		}
		parent, container := nsSym, ns
		var top *phpScope
		if len(scopes) > 0 {
			top = &scopes[len(scopes)-1]
			parent, container = top.sym, top.name
		}
		// inBody: directly in the body of the innermost scope
		inBody := top != nil && len(opens) > 0 && opens[len(opens)-1] == top.open
		inClass := top != nil && top.class && inBody
		member := p.is(i-1, "->") || p.is(i-1, "::") || p.is(i-1, "\\")
		switch w := p.text(i); {
		case member:
		case w == "function":
			name := i + 1
			if p.is(name, "&") {
				name++
			}
			if !p.ident(name) || !p.is(name+1, "(") {
				continue
			}
			kind := KindFunction
			if inClass {
				kind = KindMethod
			}
			end := p.skipWithin(name+1, "{", ";")
			last := end
			if p.is(end, "{") && p.match[end] > int32(end) {
				last = int(p.match[end])
			}
			sym := p.def(name, kind, parent, container, p.modsStart(i), last)
			if p.is(end, "{") && last > end {
				scopes = append(scopes, phpScope{sym: sym, name: container, open: end, close: last})
			}
			i = name
		case w == "class" || w == "interface" || w == "trait" || w == "enum":
			if p.is(i-1, "new") || !p.ident(i+1) || phpKeywords[p.text(i+1)] && w != "enum" || w == "enum" && !p.is(i+2, "{") && !p.is(i+2, ":") && !p.is(i+2, "implements") {
				continue
			}
			kind := KindClass
			switch w {
			case "interface":
				kind = KindInterface
			case "trait":
				kind = KindTrait
			case "enum":
				kind = KindEnum
			}
			open := p.skipWithin(i+2, "{", ";")
			if !p.is(open, "{") || p.match[open] < int32(open) {
				continue
			}
			close := int(p.match[open])
			sym := p.def(i+1, kind, parent, container, p.modsStart(i), close)
			scopes = append(scopes, phpScope{sym: sym, name: p.text(i + 1), open: open, close: close, class: true})
			i++
		case w == "namespace" && (top == nil || top.namespace) && (p.ident(i+1) || p.is(i+1, "{")):
			end := p.skipWithin(i+1, ";", "{")
			var b strings.Builder
			for j := i + 1; j < end; j++ {
				b.WriteString(p.text(j))
			}
			name := b.String()
			if name == "" {
				ns, nsSym = "", -1
				continue
			}
			last := end
			if p.is(end, "{") && p.match[end] > int32(end) {
				last = int(p.match[end])
			} else {
				last = len(p.t) - 1
				// a namespace; statement runs to the next one
				for j := end + 1; j < len(p.t); j++ {
					if p.is(j, "namespace") && p.is(j-1, ";") || p.is(j, "namespace") && p.is(j-1, "}") {
						last = j - 1
						break
					}
				}
			}
			p.skip(i+1, end)
			sym := p.b.def(name, KindNamespace, -1, "", int(p.t[i].start), p.end(last), int(p.t[i+1].start))
			if p.is(end, "{") {
				scopes = append(scopes, phpScope{sym: sym, name: name, open: end, close: last, namespace: true})
			} else {
				ns, nsSym = name, sym
			}
			i = end
		case w == "use" && (top == nil || top.namespace && inBody) && !p.is(i-1, ")"):
			p.use(i)
		case (w == "require" || w == "require_once" || w == "include" || w == "include_once") && !inClass:
			p.include(i)
		case w == "const" && (top == nil || inClass || top.namespace && inBody):
			// const A = 1, B = 2; (a type may come first)
			end := p.skipTo(i, ";", "}")
			kind := KindConstant
			for j := i + 1; j < end; j++ {
				if p.ident(j) && p.is(j+1, "=") {
					p.def(j, kind, parent, container, p.modsStart(i), end)
					j = p.skipTo(j, ",", ";")
				}
			}
			i = end
		case w == "case" && inClass && p.ident(i+1) && (p.is(i+2, ";") || p.is(i+2, "=")):
			end := p.skipTo(i, ";", "}")
			p.def(i+1, KindEnumMember, parent, container, i, end)
			i = end
		case inClass && strings.HasPrefix(w, "$") && len(w) > 1 && p.propertyDecl(i, top.open):
			end := p.skipTo(i, ";", ",", "}")
			p.b.def(w[1:], KindField, parent, container, int(p.t[p.declStart(i, top.open)].start), p.end(end), int(p.t[i].start)+1)
			p.notRef[i] = true
		}
	}
}

// propertyDecl reports whether the variable at i is a property declared
// in a class body opened at open: modifiers (and a type) before it, or a
// comma after another property.
func (p *phpParser) propertyDecl(i, open int) bool {
	comma := false
	for j := i - 1; j > open; j-- {
		switch {
		case p.ident(j) && phpModifiers[p.text(j)]:
			return true
		case p.is(j, ","):
			// public $a = 1, $b: go on to the statement's start
			comma = true
			continue
		case p.is(j, "=") && comma:
			continue
		case p.is(j, ";"), p.is(j, "{"), p.is(j, "}"), p.is(j, "("), p.is(j, "="):
			return false
		}
		if p.is(j, ")") || p.is(j, "]") {
			if p.match[j] >= 0 {
				j = int(p.match[j])
			}
		}
	}
	return false
}

// declStart is the first token of the declaration holding token i, in a
// body opened at open.
func (p *phpParser) declStart(i, open int) int {
	j := i
	for j-1 > open && !p.is(j-1, ";") && !p.is(j-1, "{") && !p.is(j-1, "}") {
		j--
		if (p.is(j, ")") || p.is(j, "]")) && p.match[j] > int32(open) && p.match[j] < int32(j) {
			j = int(p.match[j])
		}
	}
	return j
}

// modsStart is the first token of the modifiers and attributes before i.
func (p *phpParser) modsStart(i int) int {
	for i > 0 {
		j := i - 1
		switch {
		case p.ident(j) && phpModifiers[p.text(j)]:
			i = j
			continue
		case p.is(j, "]") && p.match[j] > 0 && p.is(int(p.match[j])-1, "#"):
			i = int(p.match[j]) - 1
			continue
		}
		break
	}
	return i
}

// use records the imports of a use statement at i: use A\B; use A\B as C;
// use function A\f; use A\{B, C as D};
func (p *phpParser) use(i int) {
	end := p.skipTo(i, ";")
	p.skip(i+1, end)
	j := i + 1
	if p.is(j, "function") || p.is(j, "const") {
		j++
	}
	var prefix strings.Builder
	for ; j < end; j++ {
		switch {
		case p.is(j, "{") && p.match[j] > int32(j):
			// a group: each name with the prefix
			close := int(p.match[j])
			var b strings.Builder
			for k := j + 1; k <= close; k++ {
				if p.is(k, ",") || k == close {
					if b.Len() > 0 {
						p.b.imp(prefix.String()+b.String(), int(p.t[i].start))
					}
					b.Reset()
					continue
				}
				if p.is(k, "as") {
					k = p.skipTo(k, ",", "}") - 1
					continue
				}
				if p.is(k, "function") || p.is(k, "const") {
					continue
				}
				b.WriteString(p.text(k))
			}
			return
		case p.is(j, ","):
			p.b.imp(strings.TrimPrefix(prefix.String(), "\\"), int(p.t[i].start))
			prefix.Reset()
		case p.is(j, "as"):
			j = p.skipTo(j, ",", ";") - 1
		default:
			prefix.WriteString(p.text(j))
		}
	}
	if s := strings.TrimPrefix(prefix.String(), "\\"); s != "" && !strings.HasSuffix(s, "\\") {
		p.b.imp(s, int(p.t[i].start))
	}
}

// include records the file a require or include at i names when the
// expression is a literal path: 'lib/a.php' as written, __DIR__ . '/a.php'
// and dirname(__FILE__) . '/a.php' relative to the file's directory
// ("./a.php"). Anything else (a variable, a constant of the include path)
// is no import the graph can follow.
func (p *phpParser) include(i int) {
	j := i + 1
	if p.is(j, "(") && p.match[j] > int32(j) {
		j++
	}
	rel := false
	switch {
	case p.is(j, "__DIR__") && p.is(j+1, "."):
		j, rel = j+2, true
	case p.is(j, "dirname") && p.is(j+1, "(") && p.is(j+2, "__FILE__") && p.is(j+3, ")") && p.is(j+4, "."):
		j, rel = j+5, true
	}
	if j >= len(p.t) || p.t[j].kind != tString || !(p.is(j+1, ";") || p.is(j+1, ")")) {
		return
	}
	s := p.text(j)
	if len(s) < 2 || s[0] != s[len(s)-1] || (s[0] != '\'' && s[0] != '"') || strings.ContainsAny(s[1:len(s)-1], "$\\{") {
		return
	}
	s = s[1 : len(s)-1]
	if rel {
		if s = strings.TrimPrefix(s, "/"); !strings.HasPrefix(s, "../") {
			s = "./" + s
		}
	} else if !strings.Contains(s, "/") && !strings.Contains(s, ".") {
		return // not a file name: a use's namespace looks the same
	}
	p.b.imp(s, int(p.t[i].start))
}

// phpRefs records the references: every name that is not a keyword, a
// definition's name or a variable; a member after -> or ::, of the
// instance itself after $this-> or self::.
func (p *phpParser) phpRefs() {
	for i, t := range p.t {
		if t.kind != tIdent || p.notRef[i] || p.src[t.start] == '$' {
			continue
		}
		name := string(p.src[t.start:t.end])
		if p.keywords[name] {
			continue
		}
		qual := qualBare
		switch {
		case p.is(i-1, "->"):
			qual = qualMember
			if p.is(i-2, "$this") {
				qual = qualSelf
			}
		case p.is(i-1, "::"):
			qual = qualMember
			if p.is(i-2, "self") || p.is(i-2, "static") {
				qual = qualSelf
			}
		}
		p.b.refAt(name, qual, p.b.pos(int(t.start)), p.is(i+1, "("))
	}
}
