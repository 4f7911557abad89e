package codegraph

import "strings"

var javaKeywords = set("abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class",
	"const", "continue", "default", "do", "double", "else", "enum", "extends", "final", "finally", "float",
	"for", "goto", "if", "implements", "import", "instanceof", "int", "interface", "long", "native", "new",
	"package", "private", "protected", "public", "return", "short", "static", "strictfp", "super", "switch",
	"synchronized", "this", "throw", "throws", "transient", "try", "void", "volatile", "while", "var",
	"record", "yield", "sealed", "permits", "non", "true", "false", "null")

var javaModifiers = set("public", "protected", "private", "static", "final", "abstract", "native",
	"synchronized", "transient", "volatile", "strictfp", "default", "sealed", "non", "-")

// parseJava reads Java: classes, interfaces, enums (and their constants),
// records and annotation types, their methods, constructors and fields, at
// any depth; imports.
func parseJava(src []byte) *File {
	p := &javaParser{tokParser: newTokParser(src, lexOptions{textBlocks: true}, javaKeywords)}
	p.run()
	p.refs(nil)
	return p.b.file(LangJava)
}

type javaParser struct {
	*tokParser
}

func (p *javaParser) run() {
	for i := 0; i < len(p.t); i++ {
		if p.t[i].kind != tIdent {
			continue
		}
		switch p.text(i) {
		case "import":
			if p.stmtBoundary(i) {
				end := p.skipWithin(i, ";")
				var b strings.Builder
				for j := i + 1; j < end; j++ {
					if p.is(j, "static") && j == i+1 {
						continue
					}
					b.WriteString(p.text(j))
				}
				p.b.imp(b.String(), int(p.t[i].start))
				p.skip(i+1, end)
				i = end
			}
		case "package":
			if p.stmtBoundary(i) {
				end := p.skipWithin(i, ";")
				p.skip(i+1, end)
				i = end
			}
		case "class", "interface", "enum", "record":
			if p.is(i-1, ".") || !p.ident(i+1) || javaKeywords[p.text(i+1)] {
				continue
			}
			if p.text(i) == "record" && !p.is(i+2, "(") && !p.is(i+2, "<") {
				continue
			}
			if end := p.typeDecl(i, -1, ""); end > i {
				i = end // its members, nested types included, are recorded
			}
		}
	}
}

// stmtBoundary reports whether token i starts a statement.
func (p *javaParser) stmtBoundary(i int) bool {
	return i == 0 || p.is(i-1, ";") || p.is(i-1, "}") || p.is(i-1, "{")
}

// typeDecl records the type declared by the keyword at i and its members;
// parent is the enclosing type. It returns the closing brace of the body, or
// -1.
func (p *javaParser) typeDecl(i, parent int, container string) int {
	kind := KindClass
	switch p.text(i) {
	case "interface":
		kind = KindInterface
		if p.is(i-1, "@") {
			i--
		}
	case "enum":
		kind = KindEnum
	}
	name := i + 1
	if p.is(i, "@") {
		name = i + 2
	}
	open := p.skipWithin(name+1, "{", ";")
	if !p.is(open, "{") || p.match[open] < 0 {
		return -1
	}
	close := int(p.match[open])
	sym := p.def(name, kind, parent, container, p.modsStart(i), close)
	p.members(open+1, close, sym, p.text(name), kind == KindEnum)
	return close
}

// modsStart is the first token of the modifiers and annotations before i.
func (p *javaParser) modsStart(i int) int {
	for i > 0 {
		j := i - 1
		switch {
		case p.ident(j) && javaModifiers[p.text(j)]:
			i = j
			continue
		case p.is(j, ")") && p.match[j] >= 0:
			k := int(p.match[j])
			if p.ident(k-1) && p.annotationAt(k-1) >= 0 {
				i = p.annotationAt(k - 1)
				continue
			}
		case p.ident(j) && p.annotationAt(j) >= 0:
			i = p.annotationAt(j)
			continue
		}
		break
	}
	return i
}

// annotationAt returns the @ of an annotation whose last name token is
// j (@A, @a.b.C), or -1.
func (p *javaParser) annotationAt(j int) int {
	for p.ident(j) {
		if p.is(j-1, "@") {
			return j - 1
		}
		if p.is(j-1, ".") && p.ident(j-2) {
			j -= 2
			continue
		}
		return -1
	}
	return -1
}

// members records the members of a type body (tokens from..to, to being
// the closing brace).
func (p *javaParser) members(from, to, parent int, container string, enum bool) {
	i := from
	if enum {
		// the constants, up to the first ; at depth 0
		for i < to {
			if p.is(i, ";") {
				i++
				break
			}
			if p.is(i, "@") {
				i = p.skipAnnotation(i)
				continue
			}
			if p.ident(i) && (p.is(i-1, "{") || p.is(i-1, ",") || p.annotationEnds(i-1)) {
				end := p.skipWithin(i, ",", ";")
				if end > to {
					end = to
				}
				p.def(i, KindEnumMember, parent, container, i, end-1)
				i = end
				continue
			}
			if p.match[i] > int32(i) {
				i = int(p.match[i])
			}
			i++
		}
	}
	for i < to {
		start := i
		// annotations and modifiers
		for i < to {
			if p.is(i, "@") && !p.is(i+1, "interface") {
				i = p.skipAnnotation(i)
				continue
			}
			if p.ident(i) && javaModifiers[p.text(i)] || p.is(i, "-") {
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
			// an initializer block
			i = p.after(i)
			continue
		case p.is(i, "@") && p.is(i+1, "interface"), p.ident(i) && (p.text(i) == "class" || p.text(i) == "interface" || p.text(i) == "enum" || (p.text(i) == "record" && p.ident(i+1) && (p.is(i+2, "(") || p.is(i+2, "<")))):
			k := i
			if p.is(k, "@") {
				k++
			}
			end := p.skipWithin(k, "{", ";")
			if p.is(end, "{") {
				p.typeDecl(k, parent, container)
			}
			i = p.after(end)
			continue
		}
		// type parameters of a generic method
		if p.is(i, "<") {
			i = p.angleEnd(i) + 1
		}
		// the member: up to ( = ; or { at depth 0, generics skipped
		j := i
		for j < to {
			if p.is(j, "<") {
				j = p.angleEnd(j) + 1
				continue
			}
			if p.is(j, "(") || p.is(j, "=") || p.is(j, ";") || p.is(j, "{") || p.is(j, ",") {
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
		switch {
		case p.is(j, "(") && p.ident(j-1):
			// a method or constructor: up to its body or ;
			end := p.skipWithin(j, "{", ";")
			last := end
			if p.is(end, "{") && p.match[end] > 0 {
				last = int(p.match[end])
			}
			if last > to {
				last = to - 1
			}
			p.def(j-1, KindMethod, parent, container, start, last)
			i = last + 1
		case p.is(j, "=") || p.is(j, ";") || p.is(j, ","):
			// fields: a, b = 1, c;
			k := j
			name := j - 1
			for {
				end := p.skipWithin(k, ",", ";")
				if end > to {
					end = to
				}
				if p.ident(name) && !javaKeywords[p.text(name)] {
					p.def(name, KindField, parent, container, start, end)
				}
				if !p.is(end, ",") {
					k = end
					break
				}
				name = end + 1
				k = end + 2
				for p.is(k, "[") && p.match[k] > 0 {
					k = int(p.match[k]) + 1
				}
			}
			i = k + 1
		default:
			i = p.after(j)
		}
	}
}

// after is the token after the bracket group opened at i, or i+1.
func (p *javaParser) after(i int) int {
	if i >= len(p.t) {
		return i
	}
	if p.match[i] > int32(i) {
		return int(p.match[i]) + 1
	}
	return i + 1
}

func (p *javaParser) skipAnnotation(i int) int {
	i++
	if p.ident(i) {
		i++
	}
	for p.is(i, ".") && p.ident(i+1) {
		i += 2
	}
	if p.is(i, "(") {
		i = p.after(i)
	}
	return i
}

func (p *javaParser) annotationEnds(i int) bool {
	if p.is(i, ")") && p.match[i] >= 0 {
		i = int(p.match[i]) - 1
	}
	return p.annotationAt(i) >= 0
}
