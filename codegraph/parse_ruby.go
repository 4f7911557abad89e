package codegraph

import "strings"

var rbKeywords = set("BEGIN", "END", "alias", "and", "begin", "break", "case", "class", "def", "defined",
	"do", "else", "elsif", "end", "ensure", "false", "for", "if", "in", "module", "next", "nil", "not", "or",
	"redo", "rescue", "retry", "return", "self", "super", "then", "true", "undef", "unless", "until", "when",
	"while", "yield", "__FILE__", "__LINE__", "__dir__", "__method__", "require", "require_relative",
	"attr_reader", "attr_writer", "attr_accessor", "private", "public", "protected", "include", "extend",
	"raise", "puts", "lambda", "proc", "loop", "new")

// rbValueWords are the keywords after which a word is an argument or a
// modifier (return if x), as after a value.
var rbValueWords = set("end", "self", "nil", "true", "false", "return", "break", "next", "redo", "retry",
	"super", "yield", "__method__", "__FILE__", "__LINE__", "__dir__")

const tLabel tokKind = 100 // Ruby: a hash key or keyword argument (key:), a symbol (:key)

// rbLexer lexes Ruby: comments, =begin blocks and __END__ dropped,
// strings (interpolated, %-literals, heredocs), regular expressions and
// symbols opaque, instance, class and global variables as identifiers.
type rbLexer struct {
	src   []byte
	i     int
	line  int32
	toks  []lexTok
	first []bool // the token is the first of its line
	// heredocs waiting for the end of the line: their terminators
	pending []rbHeredoc
	newLine bool
}

type rbHeredoc struct {
	id     string
	indent bool // <<- or <<~: the terminator may be indented
}

func lexRuby(src []byte) ([]lexTok, []bool) {
	l := &rbLexer{src: src, toks: make([]lexTok, 0, len(src)/5), newLine: true}
	l.run()
	return l.toks, l.first
}

func (l *rbLexer) peek(n int) byte {
	if l.i+n < len(l.src) && l.i+n >= 0 {
		return l.src[l.i+n]
	}
	return 0
}

func (l *rbLexer) emit(k tokKind, start int, line int32) {
	l.toks = append(l.toks, lexTok{kind: k, start: int32(start), end: int32(l.i), line: line})
	l.first = append(l.first, l.newLine)
	l.newLine = false
}

// valueBefore reports whether the last token ends a value (so that / is a
// division, % a modulo, << a shift, ? a ternary).
func (l *rbLexer) valueBefore() bool {
	if len(l.toks) == 0 || l.newLine {
		return false
	}
	t := l.toks[len(l.toks)-1]
	switch t.kind {
	case tNumber, tString, tLabel:
		return true
	case tIdent:
		w := string(l.src[t.start:t.end])
		return !rbKeywords[w] || rbValueWords[w]
	case tPunct:
		switch l.src[t.start] {
		case ')', ']', '}':
			return true
		}
	}
	return false
}

// argStart reports whether a literal may start here after a word: a space
// before and none after (puts %w[a], split /,/).
func (l *rbLexer) argStart() bool {
	if len(l.toks) == 0 || l.toks[len(l.toks)-1].kind != tIdent {
		return false
	}
	b, a := l.peek(-1), l.peek(1)
	return (b == ' ' || b == '\t') && a != ' ' && a != '\t' && a != '=' && a != '\n'
}

func (l *rbLexer) run() {
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.i++
			l.line++
			l.newLine = true
			if len(l.pending) > 0 {
				l.heredocBodies()
			}
			if l.lineIs("=begin") {
				l.skipBegin()
			}
			if l.lineIs("__END__") && (l.i+7 == len(src) || src[l.i+7] == '\n' || src[l.i+7] == '\r') {
				return
			}
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '\\' && (l.peek(1) == '\n' || l.peek(1) == '\r'):
			l.i++ // a continued line: the newline is no statement's end
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
			if l.i < len(src) {
				l.i++
				l.line++
			}
		case c == '#':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case l.i == 0 && l.lineIs("=begin"):
			l.skipBegin()
		case isIdentStart(c) && c != '$' || c == '@' || c == '$' && l.i+1 < len(src):
			l.word()
		case isDigit(c):
			start, line := l.i, l.line
			for l.i < len(src) && (isIdentChar(src[l.i]) || src[l.i] == '.' && l.i+1 < len(src) && isDigit(src[l.i+1])) {
				l.i++
			}
			l.emit(tNumber, start, line)
		case c == '"' || c == '\'' || c == '`':
			start, line := l.i, l.line
			l.i++
			l.str(c, 0, c != '\'')
			l.emit(tString, start, line)
		case c == ':' && l.peek(1) == ':':
			start, line := l.i, l.line
			l.i += 2
			l.emit(tPunct, start, line)
		case c == ':' && (l.peek(1) == '"' || l.peek(1) == '\''):
			start, line := l.i, l.line
			l.i += 2
			l.str(src[l.i-1], 0, src[l.i-1] == '"')
			l.emit(tLabel, start, line)
		case c == ':' && (isIdentStart(l.peek(1)) || l.peek(1) == '@') && !l.valueBeforeTernary():
			start, line := l.i, l.line
			l.i++
			if src[l.i] == '$' && l.i+1 < len(src) && !isIdentChar(src[l.i+1]) && src[l.i+1] != '\n' {
				l.i += 2 // :$/, :$; — a special global's symbol
				l.emit(tLabel, start, line)
				continue
			}
			for l.i < len(src) && (isIdentChar(src[l.i]) || src[l.i] == '@') {
				l.i++
			}
			if l.i < len(src) && (src[l.i] == '?' || src[l.i] == '!' || src[l.i] == '=') && (l.i+1 >= len(src) || src[l.i+1] != '=' && src[l.i+1] != '>') {
				l.i++
			}
			l.emit(tLabel, start, line)
		case (c == '/' || c == '%' || c == '<' || c == '?' || c == '!' || c == '=' || c == '[' || c == '-' || c == '+' || c == '*' || c == '~' || c == '^' || c == '&' || c == '|' || c == '>') && (l.lastIs("def") || l.lastIs("alias") || l.lastIs(".") && len(l.toks) > 2 && l.isTok(len(l.toks)-3, "def")):
			// an operator method's name: def /(x), def fmt.%(x)
			start, line := l.i, l.line
			l.i++
			for l.i < len(src) && l.i-start < 3 && strings.IndexByte("=<>~*@[]", src[l.i]) >= 0 {
				l.i++
			}
			l.emit(tPunct, start, line)
		case c == ':' && strings.IndexByte("%+-*/<>=![~^&|", l.peek(1)) >= 0 && l.peek(1) != 0 && !l.valueBefore():
			// an operator's symbol: :%, :<=>, :[]=
			start, line := l.i, l.line
			l.i += 2
			for l.i < len(src) && l.i-start < 4 && strings.IndexByte("+-*/<>=!]~@", src[l.i]) >= 0 {
				l.i++
			}
			l.emit(tLabel, start, line)
		case c == '%' && l.percentLiteral():
		case c == '/' && (!l.valueBefore() || l.argStart()):
			start, line := l.i, l.line
			l.i++
			l.str('/', 0, true)
			for l.i < len(src) && isIdentChar(src[l.i]) {
				l.i++
			}
			l.emit(tString, start, line)
		case c == '<' && l.peek(1) == '<' && l.heredoc():
		case c == '?' && !l.valueBefore() && l.i+1 < len(src) && src[l.i+1] != ' ' && src[l.i+1] != '\n' && (l.i+2 >= len(src) || !isIdentChar(src[l.i+2]) || src[l.i+1] == '\\'):
			// a character literal: ?a, ?\n
			start, line := l.i, l.line
			l.i += 2
			if src[l.i-1] == '\\' && l.i < len(src) {
				l.i++
			}
			l.emit(tString, start, line)
		default:
			start, line := l.i, l.line
			l.i++
			// the two- and three-character operators that matter here
			for _, op := range []string{"**=", "<=>", "===", "...", "&.", "->", "=>", "==", "!=", "||", "&&", "<<", "..", "+=", "-=", "||=", "&&="} {
				if strings.HasPrefix(string(src[start:min(start+3, len(src))]), op) {
					l.i = start + len(op)
					break
				}
			}
			l.emit(tPunct, start, line)
		}
	}
}

// valueBeforeTernary reports whether a : here is the else of a ternary
// (a ? b :c) rather than a symbol: a value just before, with a space.
func (l *rbLexer) valueBeforeTernary() bool {
	return l.valueBefore() && (l.peek(-1) != ' ' && l.peek(-1) != '\t' && l.peek(-1) != '(' && l.peek(-1) != ',' || l.lastIs("?"))
}

func (l *rbLexer) isTok(i int, s string) bool {
	t := l.toks[i]
	return string(l.src[t.start:t.end]) == s
}

func (l *rbLexer) lastIs(s string) bool {
	if len(l.toks) == 0 {
		return false
	}
	t := l.toks[len(l.toks)-1]
	return string(l.src[t.start:t.end]) == s
}

// lineIs reports whether the line at l.i starts with s.
func (l *rbLexer) lineIs(s string) bool {
	return l.i+len(s) <= len(l.src) && string(l.src[l.i:l.i+len(s)]) == s
}

// skipBegin skips a =begin … =end block from its first line.
func (l *rbLexer) skipBegin() {
	for l.i < len(l.src) {
		if l.lineIs("=end") {
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
			return
		}
		for l.i < len(l.src) && l.src[l.i] != '\n' {
			l.i++
		}
		if l.i < len(l.src) {
			l.i++
			l.line++
		}
	}
}

// word lexes an identifier, constant, @variable, $variable, a method name
// ending in ? or !, or a label (key:).
func (l *rbLexer) word() {
	src := l.src
	start, line := l.i, l.line
	if src[l.i] == '$' {
		l.i++
		if l.i < len(src) && !isIdentStart(src[l.i]) {
			l.i++ // $0, $!, $:
			l.emit(tIdent, start, line)
			return
		}
	}
	for l.i < len(src) && src[l.i] == '@' {
		l.i++
	}
	for l.i < len(src) && isIdentChar(src[l.i]) && src[l.i] != '$' {
		l.i++
	}
	if l.i < len(src) && (src[l.i] == '?' || src[l.i] == '!') && (l.i+1 >= len(src) || src[l.i+1] != '=' || l.i+2 < len(src) && src[l.i+2] == '=') && src[start] != '@' && src[start] != '$' {
		if !(src[l.i] == '?' && l.i+1 < len(src) && src[l.i+1] == ':' || src[l.i] == '?' && l.i+1 < len(src) && (src[l.i+1] == ' ' && l.ternaryAhead())) {
			l.i++
		}
	}
	if l.i < len(src) && src[l.i] == ':' && (l.i+1 >= len(src) || src[l.i+1] != ':') && !(len(l.toks) > 0 && l.lastIs("?")) {
		l.i++
		l.emit(tLabel, start, line)
		return
	}
	l.emit(tIdent, start, line)
}

// ternaryAhead reports whether a word? followed by a space is a
// condition (x ? a : b): a : follows on the line.
func (l *rbLexer) ternaryAhead() bool {
	for j := l.i + 1; j < len(l.src) && l.src[j] != '\n'; j++ {
		if l.src[j] == ':' && (j+1 >= len(l.src) || l.src[j+1] == ' ') {
			return true
		}
	}
	return false
}

// str skips a literal from just past its opening delimiter to its close
// (open is the opening bracket when close is its partner, for nesting),
// interpolations #{…} included when interp.
func (l *rbLexer) str(close, open byte, interp bool) {
	src := l.src
	depth := 0
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\\':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i += 2
			continue
		case c == '\n':
			l.line++
		case interp && c == '#' && l.peek(1) == '{':
			l.i += 2
			l.interpolation()
			continue
		case open != 0 && c == open:
			depth++
		case c == close:
			if depth == 0 {
				l.i++
				return
			}
			depth--
		}
		l.i++
	}
}

// interpolation skips the code of a #{…} up to its closing brace.
func (l *rbLexer) interpolation() {
	src := l.src
	depth := 0
	for l.i < len(src) {
		c := src[l.i]
		switch c {
		case '\\':
			l.i += 2
			continue
		case '\n':
			l.line++
		case '{':
			depth++
		case '}':
			if depth == 0 {
				l.i++
				return
			}
			depth--
		case '"', '\'', '`':
			l.i++
			l.str(c, 0, c != '\'')
			continue
		case '$':
			l.i += 2 // $', $": a global, no quote
			continue
		case '%':
			// a %-literal with a bracket: %r[…], %w(…)
			j := l.i + 1
			if j < len(src) && strings.IndexByte("qQwWiIrsx", src[j]) >= 0 {
				j++
			}
			if j < len(src) && strings.IndexByte("([{<", src[j]) >= 0 {
				open := src[j]
				close := map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>'}[open]
				l.i = j + 1
				l.str(close, open, true)
				continue
			}
		case '/':
			// a regular expression where an argument starts
			k := l.i - 1
			for k > 0 && (src[k] == ' ' || src[k] == '\t') {
				k--
			}
			if k >= 0 && strings.IndexByte("(,=~|&!{[", src[k]) >= 0 {
				l.i++
				l.str('/', 0, true)
				continue
			}
		}
		l.i++
	}
}

// percentLiteral lexes %w[…], %q(…), %(…), %r{…} and their kin at l.i.
func (l *rbLexer) percentLiteral() bool {
	src := l.src
	if l.valueBefore() && !l.argStart() {
		return false
	}
	j := l.i + 1
	interp := true
	if j < len(src) && strings.IndexByte("qQwWiIrsx", src[j]) >= 0 {
		interp = src[j] != 'q' && src[j] != 'w' && src[j] != 'i' && src[j] != 's'
		j++
	}
	if j >= len(src) {
		return false
	}
	d := src[j]
	if isIdentChar(d) || d == ' ' || d == '\n' || d == '\t' || d == '\r' || d == '=' && j == l.i+1 {
		return false
	}
	var open, close byte = 0, d
	switch d {
	case '(':
		open, close = '(', ')'
	case '[':
		open, close = '[', ']'
	case '{':
		open, close = '{', '}'
	case '<':
		open, close = '<', '>'
	}
	start, line := l.i, l.line
	l.i = j + 1
	l.str(close, open, interp)
	l.emit(tString, start, line)
	return true
}

// heredoc lexes the opening of a heredoc (<<ID, <<-ID, <<~ID, quoted IDs)
// at l.i; its body is skipped at the end of the line.
func (l *rbLexer) heredoc() bool {
	src := l.src
	j := l.i + 2
	indent := false
	if j < len(src) && (src[j] == '-' || src[j] == '~') {
		indent = true
		j++
	} else if l.valueBefore() && !l.argStart() {
		return false
	}
	q := byte(0)
	if j < len(src) && (src[j] == '"' || src[j] == '\'' || src[j] == '`') {
		q = src[j]
		j++
	}
	k := j
	for k < len(src) && (isIdentChar(src[k]) && src[k] != '$' || q != 0 && src[k] != q && src[k] != '\n') {
		k++
	}
	if k == j || q != 0 && (k >= len(src) || src[k] != q) {
		return false
	}
	if q == 0 && !indent && !(src[j] >= 'A' && src[j] <= 'Z' || src[j] == '_') {
		return false
	}
	id := string(src[j:k])
	if q != 0 {
		k++
	}
	start, line := l.i, l.line
	l.i = k
	l.pending = append(l.pending, rbHeredoc{id: id, indent: indent})
	l.emit(tString, start, line)
	return true
}

// heredocBodies skips the bodies of the heredocs opened on the line just
// ended, l.i being at the start of the next.
func (l *rbLexer) heredocBodies() {
	for _, h := range l.pending {
		indent := ""
		if h.indent {
			indent = " \t" // <<~ and <<- allow spaces and tabs before the end
		}
		l.i, l.line = skipHeredocBody(l.src, l.i, l.line, h.id, indent)
	}
	l.pending = l.pending[:0]
}

// parseRuby reads Ruby: classes and modules (A::B too), methods (def,
// def self.x, operators, setters; endless ones), constants; require and
// require_relative. Blocks are matched to their end by the keywords that
// open one (a modifier if or while opens none).
func parseRuby(src []byte) *File {
	t, first := lexRuby(src)
	p := &rbParser{toks: &toks{src: src, t: t}, first: first, b: newBuilder(src)}
	p.matchBrackets()
	p.notRef = make([]bool, len(t))
	p.run()
	p.rbRefs()
	return p.b.file(LangRuby)
}

type rbParser struct {
	*toks
	first  []bool
	b      *builder
	notRef []bool
}

// rbBlock is a block waiting for its end: a definition's (sym >= 0) or
// another's (if, do, begin…).
type rbBlock struct {
	sym   int
	name  string // a class or module: its name, for its members
	class bool
}

// stmtStart reports whether a keyword at i starts an expression (so that
// if, unless, while and until open a block) rather than being a modifier.
func (p *rbParser) stmtStart(i int) bool {
	if i == 0 || p.first[i] {
		return true
	}
	t := p.t[i-1]
	switch t.kind {
	case tNumber, tString, tLabel:
		return t.kind == tLabel && p.src[t.start] != ':' // key: if x … end
	case tIdent:
		w := p.text(i - 1)
		return rbKeywords[w] && !rbValueWords[w]
	case tPunct:
		switch p.src[t.start] {
		case ')', ']', '}':
			return false
		}
	}
	return true
}

func (p *rbParser) run() {
	var stack []rbBlock
	var defs []int  // the indexes in stack of the definitions' blocks
	loopDo := false // a while, until or for whose do is still to come on the line
	for i := 0; i < len(p.t); i++ {
		if p.first[i] || p.is(i-1, ";") {
			loopDo = false
		}
		if p.t[i].kind != tIdent {
			continue
		}
		if p.is(i-1, ".") || p.is(i-1, "&.") || p.is(i-1, "::") && p.text(i) != "class" {
			continue
		}
		parent, container, inClass := -1, "", false
		if n := len(defs); n > 0 {
			d := stack[defs[n-1]]
			parent, container, inClass = d.sym, d.name, d.class
		}
		switch w := p.text(i); w {
		case "class", "module":
			if p.is(i-1, "::") {
				continue
			}
			if p.is(i+1, "<<") {
				stack = append(stack, rbBlock{sym: -1})
				continue
			}
			j := i + 1
			if p.is(j, "::") {
				j++
			}
			for p.ident(j) && p.is(j+1, "::") && p.ident(j+2) {
				j += 2
			}
			if !p.ident(j) {
				stack = append(stack, rbBlock{sym: -1})
				continue
			}
			kind := KindClass
			if w == "module" {
				kind = KindModule
			}
			for k := i + 1; k < j; k++ {
				p.notRef[k] = true // the names of A::B are the definition's
			}
			sym := p.def(j, kind, parent, container, i)
			defs = append(defs, len(stack))
			stack = append(stack, rbBlock{sym: sym, name: p.text(j), class: true})
			i = j
		case "def":
			j := i + 1
			singleton := false
			// def self.x, def Obj.x
			if p.ident(j) && (p.is(j+1, ".") || p.is(j+1, "::")) && j+2 < len(p.t) && p.t[j+2].line == p.t[j].line {
				j += 2
				singleton = true
			}
			name, last := p.defName(j)
			if name == "" {
				stack = append(stack, rbBlock{sym: -1})
				continue
			}
			kind := KindFunction
			if inClass || singleton {
				kind = KindMethod
			}
			for k := j; k <= last; k++ {
				p.notRef[k] = true
			}
			sym := p.b.def(name, kind, parent, container, int(p.t[i].start), p.end(last), int(p.t[j].start))
			k := last + 1
			if p.is(k, "(") && p.match[k] > int32(k) {
				k = int(p.match[k]) + 1
			}
			if p.is(k, "=") && p.t[k].line == p.t[last].line {
				// endless: def x = expr, to the line's end
				e := k
				for e+1 < len(p.t) && !p.first[e+1] && !p.is(e+1, ";") {
					e++
				}
				p.b.setEnd(sym, p.end(e))
				i = last
				continue
			}
			defs = append(defs, len(stack))
			stack = append(stack, rbBlock{sym: sym})
			i = last
		case "if", "unless", "while", "until":
			if p.stmtStart(i) {
				stack = append(stack, rbBlock{sym: -1})
				loopDo = w == "while" || w == "until"
			}
		case "for":
			if p.stmtStart(i) {
				stack = append(stack, rbBlock{sym: -1})
				loopDo = true
			}
		case "case", "begin":
			stack = append(stack, rbBlock{sym: -1})
		case "do":
			if loopDo {
				loopDo = false
				continue
			}
			stack = append(stack, rbBlock{sym: -1})
		case "end":
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if top.sym >= 0 {
					p.b.setEnd(top.sym, p.end(i))
					defs = defs[:len(defs)-1]
				}
			}
		case "require", "require_relative", "load":
			j := i + 1
			if p.is(j, "(") {
				j++
			}
			if j < len(p.t) && p.t[j].kind == tString {
				s := p.text(j)
				if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && !strings.Contains(s, "#{") {
					path := s[1 : len(s)-1]
					if w == "require_relative" && !strings.HasPrefix(path, ".") {
						path = "./" + path
					}
					p.b.imp(path, int(p.t[i].start))
				}
			}
		default:
			// CONSTANT = value, at the start of a statement
			if w[0] >= 'A' && w[0] <= 'Z' && p.is(i+1, "=") && (i == 0 || p.first[i] || p.is(i-1, ";")) {
				e := i + 1
				for e+1 < len(p.t) && !p.first[e+1] {
					e++
				}
				p.b.setEnd(p.def(i, KindConstant, parent, container, i), p.end(e))
			}
		}
	}
	// blocks left open (a file cut short): to the end of the file
	for _, blk := range stack {
		if blk.sym >= 0 {
			p.b.setEnd(blk.sym, len(p.src))
		}
	}
}

// def records the definition named by token name, starting at token first;
// its end is set when its block closes.
func (p *rbParser) def(name int, kind Kind, parent int, container string, first int) int {
	p.notRef[name] = true
	return p.b.def(p.text(name), kind, parent, container, int(p.t[first].start), p.end(name), int(p.t[name].start))
}

// defName reads the name of a def from token j: a word (with ? ! or =
// for a setter), an operator, a keyword used as a name; and the last
// token of the name.
func (p *rbParser) defName(j int) (string, int) {
	if j >= len(p.t) {
		return "", j
	}
	t := p.t[j]
	switch t.kind {
	case tIdent:
		// a setter: name= directly followed, then ( or a parameter
		if p.is(j+1, "=") && p.t[j+1].start == t.end && j+2 < len(p.t) && (p.is(j+2, "(") || p.t[j+2].line == t.line && p.t[j+2].kind == tIdent) {
			return p.text(j) + "=", j + 1
		}
		return p.text(j), j
	case tLabel:
		s := p.text(j)
		if strings.HasSuffix(s, ":") {
			return "", j // def x: is no method
		}
		return "", j
	case tPunct:
		// an operator: the punctuation up to ( or the line's end
		var b strings.Builder
		k := j
		for k < len(p.t) && p.t[k].kind == tPunct && p.t[k].line == t.line && !p.is(k, "(") && !p.is(k, ";") && (k == j || p.t[k].start == p.t[k-1].end) {
			b.WriteString(p.text(k))
			k++
		}
		if p.is(k, "@") && p.t[k].start == p.t[k-1].end {
			b.WriteString("@") // -@, +@: the unary operators
			k++
		}
		if p.is(j, "[") && p.is(j+1, "]") && k == j+1 {
			k = j + 2
			b.WriteString("]")
		}
		if b.Len() == 0 || b.Len() > 4 {
			return "", j
		}
		return b.String(), k - 1
	}
	return "", j
}

// rbRefs records the references: words that are not keywords, definitions'
// names or variables (@x, @@x, $x); a member after . or &. or ::, of the
// instance itself after self.
func (p *rbParser) rbRefs() {
	for i, t := range p.t {
		if t.kind != tIdent || p.notRef[i] || p.src[t.start] == '@' || p.src[t.start] == '$' {
			continue
		}
		name := string(p.src[t.start:t.end])
		if rbKeywords[name] {
			continue
		}
		qual := qualBare
		if p.is(i-1, ".") || p.is(i-1, "&.") || p.is(i-1, "::") {
			qual = qualMember
			if p.is(i-2, "self") && p.is(i-1, ".") {
				qual = qualSelf
			}
			if p.is(i-1, "::") && name[0] >= 'A' && name[0] <= 'Z' {
				qual = qualBare // A::B names B
			}
		}
		p.b.refAt(name, qual, p.b.pos(int(t.start)), p.is(i+1, "(") && p.t[i+1].start == t.end)
	}
}
