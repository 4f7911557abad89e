package codegraph

import "strings"

var csKeywords = set("abstract", "as", "base", "bool", "break", "byte", "case", "catch", "char", "checked",
	"class", "const", "continue", "decimal", "default", "delegate", "do", "double", "else", "enum", "event",
	"explicit", "extern", "false", "finally", "fixed", "float", "for", "foreach", "goto", "if", "implicit",
	"in", "int", "interface", "internal", "is", "lock", "long", "namespace", "new", "null", "object",
	"operator", "out", "override", "params", "private", "protected", "public", "readonly", "ref", "return",
	"sbyte", "sealed", "short", "sizeof", "stackalloc", "static", "string", "struct", "switch", "this",
	"throw", "true", "try", "typeof", "uint", "ulong", "unchecked", "unsafe", "ushort", "using", "virtual",
	"void", "volatile", "while", "var", "async", "await", "get", "set", "init", "value", "where", "yield",
	"partial", "record", "dynamic", "nameof", "when", "required", "file", "scoped", "global", "nint", "nuint")

var csModifiers = set("public", "protected", "private", "internal", "static", "readonly", "virtual",
	"override", "abstract", "sealed", "async", "extern", "unsafe", "new", "partial", "const", "volatile",
	"required", "file", "fixed", "ref", "scoped")

// parseCSharp reads C#: namespaces (block and file-scoped), classes,
// structs, interfaces, records, enums (and their members) and delegates,
// their methods, constructors, properties, fields and events, at any
// depth; using directives.
func parseCSharp(src []byte) *File {
	p := &csParser{tokParser: newTokParser(src, lexOptions{preprocessor: true, textBlocks: true, csharp: true}, csKeywords)}
	p.scope(0, len(p.t), -1, "")
	p.refs(nil)
	p.b.pkg = firstNamespace(p.b.syms, ".")
	return p.b.file(LangCSharp)
}

type csParser struct {
	*tokParser
}

// scope reads the declarations of a compilation unit or namespace body,
// tokens [from, to).
func (p *csParser) scope(from, to, parent int, container string) {
	for i := from; i < to; i++ {
		if !p.ident(i) {
			if p.is(i, "[") {
				i = p.after(i) - 1 // an attribute
			}
			continue
		}
		switch p.text(i) {
		case "using":
			if p.is(i+1, "(") || p.is(i+1, "var") || p.is(i-1, "await") {
				continue
			}
			end := p.skipTo(i, ";", "{")
			if end > to {
				end = to
			}
			var b strings.Builder
			for j := i + 1; j < end; j++ {
				if (p.is(j, "static") || p.is(j, "global")) && j == i+1 {
					continue
				}
				if p.is(j, "=") {
					b.Reset() // using A = B.C;
					continue
				}
				b.WriteString(p.text(j))
			}
			p.b.imp(b.String(), int(p.t[i].start))
			p.skip(i+1, end)
			i = end
		case "namespace":
			j := i + 1
			for p.ident(j) && p.is(j+1, ".") {
				j += 2
			}
			if !p.ident(j) {
				continue
			}
			name := strings.Join(strings.Fields(strings.ReplaceAll(string(p.src[p.t[i+1].start:p.t[j].end]), ".", " . ")), "")
			switch {
			case p.is(j+1, "{") && p.match[j+1] > int32(j+1):
				close := int(p.match[j+1])
				sym := p.namespace(name, i, j, close, parent, container)
				p.scope(j+2, close, sym, name)
				i = close
			case p.is(j+1, ";"):
				sym := p.namespace(name, i, j, to-1, parent, container)
				p.scope(j+2, to, sym, name)
				return
			}
		case "class", "struct", "interface", "enum", "record", "delegate":
			if end := p.typeDecl(i, parent, container); end > i {
				i = end
			}
		}
	}
}

// namespace records the namespace declared by the keyword at i, whose
// dotted name ends at token last, spanning to token end.
func (p *csParser) namespace(name string, i, last, end, parent int, container string) int {
	p.skip(i+1, last)
	return p.b.def(name, KindNamespace, parent, container, int(p.t[i].start), p.end(end), int(p.t[i+1].start))
}

// typeDecl records the type declared by the keyword at i and its members;
// parent is the enclosing type or namespace. It returns the last token of
// the declaration, or -1 when there is none at i.
func (p *csParser) typeDecl(i, parent int, container string) int {
	if p.is(i-1, ".") || p.is(i+1, "(") && p.text(i) != "record" {
		return -1
	}
	kind := KindClass
	switch p.text(i) {
	case "struct":
		kind = KindStruct
		if p.is(i-1, "record") || p.is(i-1, "ref") {
			return -1 // record struct: read from record
		}
	case "interface":
		kind = KindInterface
	case "enum":
		kind = KindEnum
	case "delegate":
		kind = KindType
	}
	name := i + 1
	if p.text(i) == "record" && (p.is(name, "class") || p.is(name, "struct")) {
		if p.is(name, "struct") {
			kind = KindStruct
		}
		name++
	}
	if p.text(i) == "delegate" {
		// delegate R Name<T>(…);
		open := p.skipWithin(i, "(", ";", "{")
		if !p.is(open, "(") {
			return -1
		}
		name = open - 1
		if p.is(name, ">") {
			for k := name; k > i; k-- {
				if p.is(k, "<") && p.angleEnd(k) == name {
					name = k - 1
					break
				}
			}
		}
		if name <= i+1 || !p.ident(name) {
			return -1
		}
		end := p.skipTo(open, ";", "{", "}")
		p.def(name, kind, parent, container, p.modsStart(i), end)
		return end
	}
	if !p.ident(name) || csKeywords[p.text(name)] && p.text(name) != "record" {
		return -1
	}
	open := p.skipWithin(name+1, "{", ";", "}")
	switch {
	case p.is(open, ";"):
		p.def(name, kind, parent, container, p.modsStart(i), open)
		return open
	case !p.is(open, "{") || p.match[open] < 0:
		return -1
	}
	close := int(p.match[open])
	sym := p.def(name, kind, parent, container, p.modsStart(i), close)
	p.members(open+1, close, sym, p.text(name), kind == KindEnum)
	return close
}

// modsStart is the first token of the modifiers and attributes before i.
func (p *csParser) modsStart(i int) int {
	for i > 0 {
		j := i - 1
		switch {
		case p.ident(j) && (csModifiers[p.text(j)] || p.text(j) == "record" && p.text(i) != "record"):
			i = j
			continue
		case p.is(j, "]") && p.match[j] >= 0:
			i = int(p.match[j])
			continue
		}
		break
	}
	return i
}

// members records the members of a type body (tokens from..to, to being
// the closing brace).
func (p *csParser) members(from, to, parent int, container string, enum bool) {
	i := from
	if enum {
		for i < to {
			if p.is(i, "[") {
				i = p.after(i)
				continue
			}
			if p.ident(i) {
				end := p.skipTo(i, ",", "}")
				if end > to {
					end = to
				}
				p.def(i, KindEnumMember, parent, container, i, end-1)
				i = end
			}
			i++
		}
		return
	}
	for i < to {
		start := i
		// attributes and modifiers
		for i < to {
			if p.is(i, "[") {
				i = p.after(i)
				continue
			}
			if p.ident(i) && csModifiers[p.text(i)] {
				i++
				continue
			}
			break
		}
		if i >= to {
			return
		}
		switch {
		case p.is(i, ";"):
			i++
			continue
		case p.is(i, "{"):
			i = p.after(i)
			continue
		case p.is(i, "#"), p.t[i].kind == tDirective:
			i++
			continue
		case p.ident(i) && (p.text(i) == "class" || p.text(i) == "struct" || p.text(i) == "interface" || p.text(i) == "enum" || p.text(i) == "delegate" ||
			p.text(i) == "record" && (p.ident(i+1) && !p.is(i+2, "(") && !p.is(i+2, "{") && !p.is(i+2, ";") && !p.is(i+2, "=") || p.is(i+1, "class") || p.is(i+1, "struct"))):
			end := p.typeDecl(i, parent, container)
			if end < i {
				end = p.skipTo(i, ";", "{")
				if p.is(end, "{") {
					end = p.after(end) - 1
				}
			}
			i = end + 1
			continue
		}
		// the member: up to ( = ; { => or , at depth 0, generics skipped
		j := i
		for j < to {
			if p.is(j, "<") {
				j = p.angleEnd(j) + 1
				continue
			}
			if p.is(j, "(") || p.is(j, "=") || p.is(j, ";") || p.is(j, "{") || p.is(j, ",") || p.is(j, "=>") {
				break
			}
			if p.match[j] > int32(j) {
				j = int(p.match[j])
			}
			j++
		}
		if j >= to {
			return
		}
		name := j - 1
		if p.is(name, ">") {
			// Name<T>(…)
			for k := name - 1; k >= i; k-- {
				if p.is(k, "<") && p.angleEnd(k) == name {
					name = k - 1
					break
				}
			}
		}
		switch {
		case p.is(j, "(") && j > i:
			// a method, constructor, operator or destructor: up to its body or ;
			end := p.skipTo(j, "{", ";", "=>")
			if p.is(end, "=>") {
				end = p.skipTo(end, ";")
			}
			last := end
			if p.is(end, "{") && p.match[end] > 0 {
				last = int(p.match[end])
			}
			if last >= to {
				last = to - 1
			}
			if name >= i && p.ident(name) && !p.is(name-1, "operator") && !p.is(name-1, "~") && !p.is(name, "this") && !p.is(name, "operator") {
				p.def(name, KindMethod, parent, container, start, last)
			}
			i = last + 1
		case (p.is(j, "{") || p.is(j, "=>")) && j > i && p.ident(j-1) && !p.is(j-1, "this"):
			// a property (or an event with accessors)
			last := j
			if p.is(j, "{") {
				last = p.after(j) - 1
				if p.is(last+1, "=") {
					last = p.skipTo(last+1, ";")
				}
			} else {
				last = p.skipTo(j, ";")
			}
			if last >= to {
				last = to - 1
			}
			p.def(j-1, KindField, parent, container, start, last)
			i = last + 1
		case (p.is(j, "=") || p.is(j, ";") || p.is(j, ",")) && j > i:
			// fields: a, b = 1, c;
			k := j
			name := j - 1
			for {
				end := p.skipTo(k, ",", ";")
				if end > to {
					end = to
				}
				if p.ident(name) && !csKeywords[p.text(name)] {
					p.def(name, KindField, parent, container, start, end)
				}
				if !p.is(end, ",") {
					k = end
					break
				}
				name = end + 1
				k = end + 2
			}
			i = k + 1
		default:
			i = p.after(j)
		}
	}
}

// after is the token after the bracket group opened at i, or i+1.
func (p *csParser) after(i int) int {
	if p.match[i] > int32(i) {
		return int(p.match[i]) + 1
	}
	return i + 1
}
