package codegraph

var luaKeywords = set("and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
	"in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while", "self", "require")

// lexLua lexes Lua: comments (-- and --[[ … ]]) dropped, strings (quoted,
// long brackets [[ … ]], [==[ … ]==]) opaque.
func lexLua(src []byte) []lexTok {
	out := make([]lexTok, 0, len(src)/5)
	i, line := 0, int32(0)
	emit := func(k tokKind, start, end int, ln int32) {
		out = append(out, lexTok{kind: k, start: int32(start), end: int32(end), line: ln})
	}
	// longBracket returns the level of a long bracket [==[ at j, or -1.
	longBracket := func(j int) int {
		if j >= len(src) || src[j] != '[' {
			return -1
		}
		k := j + 1
		for k < len(src) && src[k] == '=' {
			k++
		}
		if k < len(src) && src[k] == '[' {
			return k - j - 1
		}
		return -1
	}
	// skipLong skips a long bracket of level lv opening at j; the end.
	skipLong := func(j, lv int) int {
		j += lv + 2
		for j < len(src) {
			if src[j] == '\n' {
				line++
			}
			if src[j] == ']' {
				k := j + 1
				for k < len(src) && src[k] == '=' {
					k++
				}
				if k-j-1 == lv && k < len(src) && src[k] == ']' {
					return k + 1
				}
			}
			j++
		}
		return len(src)
	}
	if len(src) > 1 && src[0] == '#' && src[1] == '!' {
		for i < len(src) && src[i] != '\n' {
			i++
		}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			if lv := longBracket(i + 2); lv >= 0 {
				i = skipLong(i+2, lv)
				continue
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case isIdentStart(c) && c != '$':
			j := i
			for j < len(src) && isIdentChar(src[j]) && src[j] != '$' {
				j++
			}
			emit(tIdent, i, j, line)
			i = j
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			j := i
			for j < len(src) && (isIdentChar(src[j]) || src[j] == '.' || (src[j] == '+' || src[j] == '-') && (src[j-1]|0x20 == 'e' || src[j-1]|0x20 == 'p')) {
				j++
			}
			emit(tNumber, i, j, line)
			i = j
		case c == '"' || c == '\'':
			start, ln := i, line
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) {
					if src[i+1] == '\n' {
						line++
					}
					if src[i+1] == 'z' {
						// \z skips the blanks and newlines that follow
						i += 2
						for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
							if src[i] == '\n' {
								line++
							}
							i++
						}
						continue
					}
					i++
				}
				i++
			}
			if i < len(src) && src[i] == c {
				i++
			}
			emit(tString, start, i, ln)
		case c == '[' && longBracket(i) >= 0:
			start, ln := i, line
			i = skipLong(i, longBracket(i))
			emit(tString, start, i, ln)
		default:
			j := i + 1
			switch {
			case c == '.' && j < len(src) && src[j] == '.':
				j++
				if j < len(src) && src[j] == '.' {
					j++
				}
			case (c == ':' || c == '=' || c == '~' || c == '<' || c == '>' || c == '/') && j < len(src) && (src[j] == c || src[j] == '='):
				j++
			}
			emit(tPunct, i, j, line)
			i = j
		}
	}
	return out
}

// parseLua reads Lua: functions (function a.b:c(), local function f(),
// a.b = function() … end, local f = function() … end), their containers
// the tables they are put in; require. Blocks are matched to their end
// (function, if, do).
func parseLua(src []byte) *File {
	t := lexLua(src)
	p := &tokParser{toks: &toks{src: src, t: t}, b: newBuilder(src), notRef: make([]bool, len(t)), keywords: luaKeywords}
	p.matchBrackets()
	type block struct{ sym int }
	var stack []block
	var defs []int  // the indexes in stack of the functions' blocks
	var opens []int // the open brackets around the token
	for i := 0; i < len(p.t); i++ {
		var punct bool
		if opens, punct = p.openBrackets(opens, i); punct {
			continue
		}
		if !p.ident(i) || p.is(i-1, ".") || p.is(i-1, ":") {
			continue
		}
		switch p.text(i) {
		case "function":
			sym := -1
			parent := -1
			if n := len(defs); n > 0 {
				parent = stack[defs[n-1]].sym
			}
			first := i
			if p.is(i-1, "local") {
				first = i - 1
			}
			if p.ident(i + 1) {
				// function a.b:c(
				j := i + 1
				for p.ident(j) && (p.is(j+1, ".") || p.is(j+1, ":")) && p.ident(j+2) {
					j += 2
				}
				if p.is(j+1, "(") {
					kind := KindFunction
					if p.is(j-1, ":") {
						kind = KindMethod
					}
					sym = p.def(j, kind, parent, luaContainer(p, i+1, j), first, j)
					p.skip(i+1, j)
				}
			} else if p.is(i+1, "(") && p.is(i-1, "=") {
				// name = function(, a.b = function(, local name = function(
				n := i - 2
				if p.ident(n) && !luaKeywords[p.text(n)] {
					s := n
					for p.is(s-1, ".") && p.ident(s-2) {
						s -= 2
					}
					if p.is(s-1, "local") {
						s--
					}
					inTable := len(opens) > 0 && p.is(opens[len(opens)-1], "{")
					switch {
					case inTable && s == n && (p.is(s-1, "{") || p.is(s-1, ",") || p.is(s-1, ";")):
						// a table's field: t = { name = function() … end }
						cont := ""
						if o := opens[len(opens)-1]; p.is(o-1, "=") && p.ident(o-2) {
							cont = p.text(o - 2)
						}
						sym = p.def(n, KindFunction, parent, cont, n, n)
					case inTable:
					case s == 0 || p.t[s].line > p.t[s-1].line || p.is(s-1, ";") || p.is(s-1, ")") || p.is(s-1, "end") || p.is(s-1, "local") ||
						p.is(s-1, "then") || p.is(s-1, "do") || p.is(s-1, "else") || p.is(s-1, "repeat"):
						start := s
						cont := ""
						if p.is(s, "local") {
							start = s
							s++
						}
						if n > s {
							cont = luaContainer(p, s, n)
						}
						sym = p.def(n, KindFunction, parent, cont, start, n)
					}
				}
			}
			if sym >= 0 {
				defs = append(defs, len(stack))
			}
			stack = append(stack, block{sym: sym})
		case "if", "do":
			stack = append(stack, block{sym: -1})
		case "end":
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if top.sym >= 0 {
					p.b.setEnd(top.sym, p.end(i))
					defs = defs[:len(defs)-1]
				}
			}
		case "require":
			j := i + 1
			if p.is(j, "(") {
				j++
			}
			if j < len(p.t) && p.t[j].kind == tString {
				s := p.text(j)
				if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') {
					p.b.imp(s[1:len(s)-1], int(p.t[i].start))
				}
			}
		}
	}
	for _, blk := range stack {
		if blk.sym >= 0 {
			p.b.setEnd(blk.sym, len(src))
		}
	}
	p.refs(nil)
	return p.b.file(LangLua)
}

// luaContainer is the table a function is put in: the dotted names from
// token from to the one before the name at to ("a.b" for a.b.c, a.b:c).
func luaContainer(p *tokParser, from, to int) string {
	if to <= from {
		return ""
	}
	s := ""
	for j := from; j < to-1; j++ {
		if p.is(j, ":") {
			s += "."
			continue
		}
		s += p.text(j)
	}
	return s
}
