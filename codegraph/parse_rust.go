package codegraph

import "strings"

var rustKeywords = set("as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
	"extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub",
	"ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use",
	"where", "while", "union", "macro_rules", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
	"u32", "u64", "u128", "usize", "f32", "f64", "bool", "char", "str")

// parseRust reads Rust: functions (methods in impls and traits, named by
// the impl's type or the trait), structs and their fields, enums and their
// variants, unions, traits, type aliases, consts, statics, modules and
// macro_rules!; use, extern crate and mod declarations as imports.
func parseRust(src []byte) *File {
	p := &rustParser{tokParser: newTokParser(src, lexOptions{nestedComment: true, lifetimes: true, rustStrings: true}, rustKeywords)}
	p.run()
	p.refs(func(i int) bool {
		if p.is(i+1, "!") && (p.is(i+2, "(") || p.is(i+2, "[") || p.is(i+2, "{")) {
			return true // a macro call
		}
		// f::<T>(…)
		return p.is(i+1, "::") && p.is(i+2, "<") && p.is(p.angleEnd(i+2)+1, "(")
	})
	return p.b.file(LangRust)
}

type rustScope struct {
	open, close int
	sym         int
	name        string
	kind        byte // 'i' impl, 't' trait, 'm' module, 'b' other block
}

type rustParser struct {
	*tokParser
	scopes []rustScope
}

func (p *rustParser) top() *rustScope {
	if len(p.scopes) == 0 {
		return nil
	}
	return &p.scopes[len(p.scopes)-1]
}

// itemStart is the first token of the item whose keyword is at i:
// visibility, qualifiers and attributes before it belong to it.
func (p *rustParser) itemStart(i int) int {
	for i > 0 {
		j := i - 1
		switch {
		case p.ident(j) && (p.text(j) == "pub" || p.text(j) == "async" || p.text(j) == "const" || p.text(j) == "unsafe" || p.text(j) == "extern" || p.text(j) == "default"):
			i = j
			continue
		case j >= 0 && p.t[j].kind == tString && p.is(j-1, "extern"):
			i = j
			continue
		case p.is(j, ")") && p.match[j] > 0 && p.is(int(p.match[j])-1, "pub"):
			i = int(p.match[j]) - 1
			continue
		case p.is(j, "]") && p.match[j] > 0 && (p.is(int(p.match[j])-1, "#") || p.is(int(p.match[j])-2, "#")):
			k := int(p.match[j]) - 1
			if p.is(k, "!") {
				k--
			}
			i = k
			continue
		}
		break
	}
	return i
}

// itemEnd is the last token of an item whose header starts at i: its
// body's closing brace, or its ;. It looks no further than scanLimit
// tokens (brackets skipped whole count as one): a header is short.
func (p *rustParser) itemEnd(i int) (end, open int) {
	j := i
	for n := 0; j < len(p.t); n++ {
		if n == scanLimit {
			return j - 1, -1
		}
		switch {
		case p.is(j, ";"):
			return j, -1
		case p.is(j, "{"):
			if p.match[j] > int32(j) {
				return int(p.match[j]), j
			}
			return j, -1
		case p.is(j, "}"):
			return j - 1, -1
		case p.is(j, "<"):
			j = p.angleEnd(j)
		case p.is(j, "->"):
		case p.match[j] > int32(j):
			j = int(p.match[j])
		}
		j++
	}
	return len(p.t) - 1, -1
}

func (p *rustParser) push(open, sym int, name string, kind byte) {
	if open >= 0 && p.match[open] > int32(open) {
		p.scopes = append(p.scopes, rustScope{open: open, close: int(p.match[open]), sym: sym, name: name, kind: kind})
	}
}

func (p *rustParser) run() {
	for i := 0; i < len(p.t); i++ {
		for s := p.top(); s != nil && i > s.close; s = p.top() {
			p.scopes = p.scopes[:len(p.scopes)-1]
		}
		if p.is(i, "{") && p.match[i] > int32(i) {
			if s := p.top(); s == nil || s.open != i {
				p.push(i, -1, "", 'b')
			}
			continue
		}
		if p.t[i].kind != tIdent || p.is(i-1, ".") || p.is(i-1, "::") {
			continue
		}
		s := p.top()
		direct := s != nil && (s.kind == 'i' || s.kind == 't')
		parent, container := -1, ""
		if s != nil && s.kind != 'b' {
			parent, container = s.sym, s.name
		}
		switch p.text(i) {
		case "fn":
			if !p.ident(i + 1) {
				continue
			}
			kind := KindFunction
			if direct {
				kind = KindMethod
			}
			end, open := p.itemEnd(i + 2)
			sym := p.def(i+1, kind, parent, container, p.itemStart(i), end)
			if open >= 0 {
				p.push(open, sym, "", 'b')
				i = open
			}
		case "struct", "union", "enum", "trait", "type", "mod":
			if !p.ident(i+1) || (p.text(i) == "union" && !p.is(i+2, "{") && !p.is(i+2, "<")) {
				continue
			}
			kind := map[string]Kind{"struct": KindStruct, "union": KindStruct, "enum": KindEnum, "trait": KindTrait, "type": KindType, "mod": KindModule}[p.text(i)]
			end, open := p.itemEnd(i + 2)
			if p.text(i) == "type" {
				end = p.skipWithin(i, ";")
				open = -1
			}
			sym := p.def(i+1, kind, parent, container, p.itemStart(i), end)
			name := p.text(i + 1)
			switch {
			case p.text(i) == "mod" && open < 0:
				p.b.imp("mod "+name, int(p.t[i].start))
			case p.text(i) == "mod":
				p.push(open, sym, name, 'm')
				i = open
			case p.text(i) == "trait" && open >= 0:
				p.push(open, sym, name, 't')
				i = open
			case open >= 0 && (kind == KindStruct || kind == KindEnum):
				p.fields(open, sym, name, kind == KindEnum)
			}
		case "const", "static":
			n := i + 1
			if p.is(n, "mut") {
				n++
			}
			if !p.ident(n) || !p.is(n+1, ":") {
				continue
			}
			kind := KindConstant
			if p.text(i) == "static" {
				kind = KindVariable
			}
			p.def(n, kind, parent, container, p.itemStart(i), p.skipWithin(n, ";"))
		case "impl":
			if !p.stmtLike(i) {
				continue
			}
			end, open := p.itemEnd(i + 1)
			_ = end
			if open < 0 {
				continue
			}
			p.push(open, -1, p.implType(i+1, open), 'i')
			i = open
		case "macro_rules":
			if p.is(i+1, "!") && p.ident(i+2) {
				end, _ := p.itemEnd(i + 3)
				if p.is(i+3, "(") || p.is(i+3, "[") {
					end = p.skipWithin(i+3, ";")
				}
				p.def(i+2, KindMacro, parent, container, p.itemStart(i), end)
			}
		case "use":
			if !p.stmtLike(i) {
				continue
			}
			end := p.skipWithin(i, ";")
			var b strings.Builder
			for j := i + 1; j < end; j++ {
				b.WriteString(p.text(j))
			}
			p.b.imp(b.String(), int(p.t[i].start))
			p.skip(i+1, end)
			i = end
		case "extern":
			if p.is(i+1, "crate") && p.ident(i+2) {
				p.b.imp(p.text(i+2), int(p.t[i].start))
				p.skip(i+2, i+2)
			}
		}
	}
}

// stmtLike reports whether token i starts an item (after ; { } an
// attribute or a visibility).
func (p *rustParser) stmtLike(i int) bool {
	return i == 0 || p.is(i-1, ";") || p.is(i-1, "{") || p.is(i-1, "}") || p.is(i-1, "]") || p.is(i-1, "pub") || p.is(i-1, ")") || p.is(i-1, "unsafe")
}

// implType is the name of the type an impl (header from i to the brace at
// open) is for: impl<T> Trait for path::Type<T> gives "Type".
func (p *rustParser) implType(i, open int) string {
	if p.is(i, "<") {
		i = p.angleEnd(i) + 1
	}
	last := ""
	for j := i; j < open; j++ {
		switch {
		case p.is(j, "for"):
			last = ""
		case p.is(j, "where"):
			return last
		case p.is(j, "<"):
			j = p.angleEnd(j)
		case p.ident(j) && !rustKeywords[p.text(j)] || p.is(j, "Self"):
			last = p.text(j)
		}
	}
	return last
}

// fields records a struct's named fields or an enum's variants, in the
// braces at open.
func (p *rustParser) fields(open, parent int, container string, enum bool) {
	close := int(p.match[open])
	j := open + 1
	for j < close {
		start := j
		for {
			if p.is(j, "#") && p.is(j+1, "[") && p.match[j+1] > 0 {
				j = int(p.match[j+1]) + 1
				continue
			}
			if p.is(j, "pub") {
				j++
				if p.is(j, "(") && p.match[j] > 0 {
					j = int(p.match[j]) + 1
				}
				continue
			}
			break
		}
		end := p.skipWithin(j, ",")
		if end > close {
			end = close
		}
		if p.ident(j) {
			switch {
			case enum:
				p.def(j, KindEnumMember, parent, container, start, end-1)
			case p.is(j+1, ":"):
				p.def(j, KindField, parent, container, start, end-1)
			}
		}
		j = end + 1
	}
}
