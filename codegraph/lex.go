package codegraph

// A lexer for the C family (C, C++, Java, JavaScript, TypeScript, Rust, C#,
// PHP, Kotlin, Swift): the source as identifiers, punctuation, literals and
// (C) preprocessor lines, with comments dropped and every bracket matched.
// The languages' recognisers read definitions, imports and references off
// this stream; literals are opaque, so nothing inside a string or comment is
// ever taken for code.

import "strings"

type tokKind uint8

const (
	tIdent tokKind = iota + 1
	tPunct
	tString
	tNumber
	tDirective // a C preprocessor line, continuations included
)

type lexTok struct {
	kind       tokKind
	start, end int32
	line       int32
}

type lexOptions struct {
	preprocessor  bool // C, C++: # lines are directives
	nestedComment bool // Rust: /* /* */ */
	lifetimes     bool // Rust: 'a is a lifetime, not a character
	rustStrings   bool // Rust: r"…", r#"…"#, b"…", br"…"
	rawStrings    bool // C++: R"delim(…)delim"
	digitQuote    bool // C++: 1'000
	regex         bool // JavaScript: /…/flags where an expression starts
	templates     bool // JavaScript: `…${expr}…`
	textBlocks    bool // Java: """…""" (Kotlin, Swift, C# raw strings too)
	csharp        bool // C#: @"…" (verbatim), $"…", $@"…", @$"…"
	multiline     bool // PHP: quoted strings span lines; ' quotes a string
	hashComment   bool // PHP: # starts a comment (not #[, an attribute)
	heredoc       bool // PHP: <<<ID … ID, <<<'ID' … ID
	swiftRaw      bool // Swift: #"…"#, ##"…"##
	php           bool // PHP: only the text inside <?php … ?> is code
}

type lexer struct {
	src  []byte
	opt  lexOptions
	i    int
	line int32
	toks []lexTok
	// braces holds, for each open `${` of a template, the brace depth at
	// which it closes.
	tmpl  []int
	depth int
	steps int // bytes a look-ahead scanned
	// noRegex marks, by byte, the states of a regular expression's scan
	// known to reach the line's end unclosed: bit 1 outside a character
	// class, bit 2 inside one. A line of unclosed /[ is scanned once, not
	// once for each of its slashes.
	noRegex []uint8
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) emit(k tokKind, start int, line int32) {
	l.toks = append(l.toks, lexTok{kind: k, start: int32(start), end: int32(l.i), line: line})
}

func (l *lexer) peek(n int) byte {
	if l.i+n < len(l.src) {
		return l.src[l.i+n]
	}
	return 0
}

// lineStart reports whether only blanks precede i on its line.
func (l *lexer) lineStart(i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch l.src[j] {
		case ' ', '\t':
			continue
		case '\n':
			return true
		default:
			return false
		}
	}
	return true
}

func (l *lexer) run() {
	src := l.src
	if l.opt.php {
		l.skipHTML()
	}
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.line++
			l.i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.i++
		case c == '/' && l.peek(1) == '/':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '/' && l.peek(1) == '*':
			l.blockComment()
		case c == '#' && l.opt.preprocessor && l.lineStart(l.i):
			l.directive()
		case c == '?' && l.opt.php && l.peek(1) == '>':
			l.i += 2
			l.skipHTML()
		case c == '#' && l.opt.hashComment && l.peek(1) != '[':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case (c == '@' || c == '$') && l.opt.csharp && l.csharpString():
		case c == '#' && l.opt.swiftRaw && (l.peek(1) == '"' || l.peek(1) == '#') && l.swiftRawString():
		case c == '<' && l.opt.heredoc && l.peek(1) == '<' && l.peek(2) == '<' && l.phpHeredoc():
		case isIdentStart(c):
			if l.opt.rustStrings && l.rustString() {
				continue
			}
			if l.opt.rawStrings && l.cppRawString() {
				continue
			}
			start, line := l.i, l.line
			for l.i < len(src) && isIdentChar(src[l.i]) {
				l.i++
			}
			// C, C++: u8"…", L'…' are literals with a prefix.
			if l.i < len(src) && (src[l.i] == '"' || src[l.i] == '\'') && l.opt.preprocessor && l.i-start <= 2 {
				switch string(src[start:l.i]) {
				case "L", "u", "U", "u8":
					l.quoted(src[l.i])
					l.emit(tString, start, line)
					continue
				}
			}
			l.emit(tIdent, start, line)
		case c == '#' && isIdentStart(l.peek(1)):
			// JavaScript private names, Rust's #[…] and #!: the # alone.
			start, line := l.i, l.line
			l.i++
			if l.opt.templates {
				for l.i < len(src) && isIdentChar(src[l.i]) {
					l.i++
				}
				l.emit(tIdent, start, line)
			} else {
				l.emit(tPunct, start, line)
			}
		case isDigit(c) || (c == '.' && isDigit(l.peek(1))):
			l.number()
		case c == '"':
			start, line := l.i, l.line
			if l.opt.textBlocks && l.peek(1) == '"' && l.peek(2) == '"' {
				l.textBlock()
			} else {
				l.quoted('"')
			}
			l.emit(tString, start, line)
		case c == '\'':
			start, line := l.i, l.line
			if l.opt.lifetimes && l.lifetime() {
				l.emit(tPunct, start, line) // the quote; the name follows as an identifier
				continue
			}
			if l.opt.templates || l.opt.multiline {
				l.quoted('\'')
			} else {
				l.char()
			}
			l.emit(tString, start, line)
		case c == '`' && l.opt.templates:
			l.template()
		case c == '/' && l.opt.regex && l.regexAllowed():
			start, line := l.i, l.line
			if l.regexLiteral() {
				l.emit(tString, start, line)
			} else {
				l.i = start + 1
				l.emit(tPunct, start, line)
			}
		default:
			l.punct()
		}
	}
}

func (l *lexer) blockComment() {
	depth := 0
	for l.i < len(l.src) {
		switch {
		case l.src[l.i] == '/' && l.peek(1) == '*':
			depth++
			l.i += 2
			if !l.opt.nestedComment {
				depth = 1
			}
		case l.src[l.i] == '*' && l.peek(1) == '/':
			l.i += 2
			depth--
			if depth <= 0 || !l.opt.nestedComment {
				return
			}
		default:
			if l.src[l.i] == '\n' {
				l.line++
			}
			l.i++
		}
	}
}

func (l *lexer) directive() {
	start, line := l.i, l.line
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == '\\' && l.peek(1) == '\n' {
			l.i += 2
			l.line++
			continue
		}
		if c == '\\' && l.peek(1) == '\r' && l.peek(2) == '\n' {
			l.i += 3
			l.line++
			continue
		}
		if c == '/' && l.peek(1) == '*' {
			l.blockComment()
			continue
		}
		if c == '/' && l.peek(1) == '/' {
			for l.i < len(l.src) && l.src[l.i] != '\n' {
				l.i++
			}
			break
		}
		if c == '\n' {
			break
		}
		l.i++
	}
	l.emit(tDirective, start, line)
}

// quoted skips a literal closed by q on the same line (escapes allowed;
// a newline inside ends it, as compilers do).
func (l *lexer) quoted(q byte) {
	l.i++
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch c {
		case '\\':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i += 2
			continue
		case '\n':
			if (q != '"' || !l.opt.rustStrings) && !l.opt.multiline {
				return // unterminated: stop at the line's end
			}
			l.line++ // Rust and PHP strings span lines
		case q:
			l.i++
			return
		}
		l.i++
	}
}

// char skips a character literal 'x', '\n', '\u{1F600}'; a lone quote is
// punctuation.
func (l *lexer) char() {
	j := l.i + 1
	for j < len(l.src) && j-l.i < 16 {
		switch l.src[j] {
		case '\\':
			j += 2
			continue
		case '\'':
			l.i = j + 1
			return
		case '\n':
			l.i++
			return
		}
		j++
	}
	l.i++
}

// lifetime reports (and skips the quote of) a Rust lifetime 'a or label
// 'outer: a quote followed by an identifier not closed by a quote.
func (l *lexer) lifetime() bool {
	if !isIdentStart(l.peek(1)) {
		return false
	}
	j := l.i + 1
	for j < len(l.src) && isIdentChar(l.src[j]) {
		j++
	}
	if j < len(l.src) && l.src[j] == '\'' {
		return false // 'a' is a character
	}
	l.i++
	return true
}

func (l *lexer) textBlock() {
	l.i += 3
	for l.i < len(l.src) {
		c := l.src[l.i]
		if c == '\\' {
			l.i += 2
			continue
		}
		if c == '\n' {
			l.line++
		}
		if c == '"' && l.peek(1) == '"' && l.peek(2) == '"' {
			l.i += 3
			return
		}
		l.i++
	}
}

// rustString lexes r"…", r#"…"#, b"…", br#"…"#, b'x', c"…" at l.i.
func (l *lexer) rustString() bool {
	src := l.src
	j := l.i
	if src[j] == 'b' || src[j] == 'c' {
		j++
	}
	raw := false
	if j < len(src) && src[j] == 'r' {
		raw = true
		j++
	}
	if j == l.i {
		return false
	}
	hashes := 0
	for raw && j < len(src) && src[j] == '#' {
		hashes++
		j++
	}
	if j >= len(src) {
		return false
	}
	start, line := l.i, l.line
	switch {
	case src[j] == '"' && raw:
		j++
		for j < len(src) {
			if src[j] == '\n' {
				l.line++
			}
			if src[j] == '"' {
				k := 0
				for k < hashes && j+1+k < len(src) && src[j+1+k] == '#' {
					k++
				}
				if k == hashes {
					j += 1 + k
					break
				}
			}
			j++
		}
		l.i = j
	case src[j] == '"' && !raw && hashes == 0:
		l.i = j
		l.quoted('"')
	case src[j] == '\'' && !raw && src[l.i] == 'b' && j == l.i+1:
		l.i = j
		l.char()
	default:
		return false
	}
	l.emit(tString, start, line)
	return true
}

// skipHTML skips the text up to the next <?php, <?= or <? (PHP).
func (l *lexer) skipHTML() {
	src := l.src
	for l.i < len(src) {
		if src[l.i] == '\n' {
			l.line++
		}
		if src[l.i] == '<' && l.peek(1) == '?' {
			l.i += 2
			switch {
			case l.i+3 <= len(src) && string(src[l.i:l.i+3]) == "php":
				l.i += 3
			case l.i < len(src) && src[l.i] == '=':
				l.i++
			}
			return
		}
		l.i++
	}
}

// csharpString lexes a C# string with a prefix at l.i: @"…" (verbatim:
// "" is a quote, lines are spanned), $"…", $@"…", @$"…", $"""…""". It
// reports false, lexing nothing, when no string starts here.
func (l *lexer) csharpString() bool {
	src := l.src
	j := l.i
	verbatim := false
	for j < len(src) && j-l.i < 2 && (src[j] == '@' || src[j] == '$') {
		verbatim = verbatim || src[j] == '@'
		j++
	}
	for !verbatim && j < len(src) && src[j] == '$' && j-l.i < 4 {
		j++ // $$"""…""": raw, interpolated with more braces
	}
	if j >= len(src) || src[j] != '"' {
		return false
	}
	start, line := l.i, l.line
	l.i = j
	switch {
	case verbatim:
		l.i++
		for l.i < len(src) {
			c := src[l.i]
			if c == '\n' {
				l.line++
			}
			if c == '"' {
				if l.peek(1) == '"' {
					l.i += 2
					continue
				}
				l.i++
				break
			}
			l.i++
		}
	case l.peek(1) == '"' && l.peek(2) == '"':
		l.textBlock()
	default:
		l.quoted('"')
	}
	l.emit(tString, start, line)
	return true
}

// swiftRawString lexes a Swift raw string at l.i: #"…"#, ##"…"##, #"""…"""#.
// It reports false, lexing nothing, when no string starts here.
func (l *lexer) swiftRawString() bool {
	src := l.src
	j := l.i
	for j < len(src) && src[j] == '#' {
		j++
	}
	if j >= len(src) || src[j] != '"' {
		return false
	}
	closing := "\"" + string(src[l.i:j])
	if j+2 < len(src) && src[j+1] == '"' && src[j+2] == '"' {
		closing = "\"\"\"" + string(src[l.i:j])
		j += 2
	}
	l.rawString(j+1, closing)
	return true
}

// rawString lexes, as one string token starting at l.i, a raw string whose
// body starts at from and ends with closing (or at the end of the source).
func (l *lexer) rawString(from int, closing string) {
	src := l.src
	start, line := l.i, l.line
	for p := from; p < len(src); p++ {
		if src[p] == '\n' {
			l.line++
		}
		if src[p] == closing[0] && p+len(closing) <= len(src) && string(src[p:p+len(closing)]) == closing {
			l.i = p + len(closing)
			l.emit(tString, start, line)
			return
		}
	}
	l.i = len(src)
	l.emit(tString, start, line)
}

// phpHeredoc lexes a PHP heredoc or nowdoc at l.i (<<<ID, <<<"ID",
// <<<'ID', ending at a line whose first non-blank text is ID). It reports
// false, lexing nothing, when no heredoc starts here.
func (l *lexer) phpHeredoc() bool {
	src := l.src
	j := l.i + 3
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	q := byte(0)
	if j < len(src) && (src[j] == '\'' || src[j] == '"') {
		q = src[j]
		j++
	}
	k := j
	for k < len(src) && isIdentChar(src[k]) && src[k] != '$' {
		k++
	}
	if k == j || (q != 0 && (k >= len(src) || src[k] != q)) {
		return false
	}
	id := string(src[j:k])
	if q != 0 {
		k++
	}
	start, line := l.i, l.line
	// the body: from the next line to the line starting with id
	p := k
	for p < len(src) && src[p] != '\n' {
		p++
	}
	for p < len(src) {
		// src[p] is a newline
		l.line++
		p++
		b := p
		for b < len(src) && (src[b] == ' ' || src[b] == '\t') {
			b++
		}
		if b+len(id) <= len(src) && string(src[b:b+len(id)]) == id && (b+len(id) == len(src) || !isIdentChar(src[b+len(id)])) {
			l.i = b + len(id)
			l.emit(tString, start, line)
			return true
		}
		for p < len(src) && src[p] != '\n' {
			p++
		}
	}
	l.i = len(src)
	l.emit(tString, start, line)
	return true
}

// cppRawString lexes R"delim(…)delim" (with an optional u8, u, U, L
// prefix) at l.i.
func (l *lexer) cppRawString() bool {
	src := l.src
	j := l.i
	for j < len(src) && j-l.i < 3 && (src[j] == 'u' || src[j] == 'U' || src[j] == 'L' || src[j] == '8') {
		j++
	}
	if j+1 >= len(src) || src[j] != 'R' || src[j+1] != '"' {
		return false
	}
	k := j + 2
	for k < len(src) && src[k] != '(' && k-j < 20 && src[k] != '\n' {
		k++
	}
	if k >= len(src) || src[k] != '(' {
		return false
	}
	l.rawString(k+1, ")"+string(src[j+2:k])+"\"")
	return true
}

func (l *lexer) number() {
	start, line := l.i, l.line
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case isIdentChar(c) || c == '.':
			if c == '.' && l.peek(1) == '.' {
				goto done // 1..2 in Rust
			}
			l.i++
			if (c == 'e' || c == 'E' || c == 'p' || c == 'P') && l.i < len(src) && (src[l.i] == '+' || src[l.i] == '-') {
				l.i++
			}
		case c == '\'' && l.opt.digitQuote && l.i+1 < len(src) && isIdentChar(src[l.i+1]):
			l.i++
		default:
			goto done
		}
	}
done:
	l.emit(tNumber, start, line)
}

// template lexes a JavaScript template literal: its text as strings, the
// expressions in ${…} as tokens.
func (l *lexer) template() {
	start, line := l.i, l.line
	l.i++
	for l.i < len(l.src) {
		c := l.src[l.i]
		switch {
		case c == '\\':
			l.i += 2
			continue
		case c == '\n':
			l.line++
		case c == '`':
			l.i++
			l.emit(tString, start, line)
			return
		case c == '$' && l.peek(1) == '{':
			l.emit(tString, start, line)
			l.i += 2
			l.exprInTemplate()
			start, line = l.i, l.line
			continue
		}
		l.i++
	}
	l.emit(tString, start, line)
}

// exprInTemplate lexes the tokens of a ${…} up to its closing brace.
func (l *lexer) exprInTemplate() {
	depth := 0
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '}' && depth == 0:
			l.i++
			return
		case c == '{':
			depth++
			l.punct()
		case c == '}':
			depth--
			l.punct()
		case c == '`':
			l.template()
		case c == '\n':
			l.line++
			l.i++
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '/' && l.peek(1) == '/':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '/' && l.peek(1) == '*':
			l.blockComment()
		case isIdentStart(c):
			s, ln := l.i, l.line
			for l.i < len(src) && isIdentChar(src[l.i]) {
				l.i++
			}
			l.emit(tIdent, s, ln)
		case isDigit(c):
			l.number()
		case c == '"' || c == '\'':
			s, ln := l.i, l.line
			l.quoted(c)
			l.emit(tString, s, ln)
		default:
			l.punct()
		}
	}
}

// regexAllowed reports whether a / here starts a regular expression: where
// an expression may start, after punctuation other than a closing bracket
// or after a keyword like return.
func (l *lexer) regexAllowed() bool {
	if len(l.toks) == 0 {
		return true
	}
	t := l.toks[len(l.toks)-1]
	switch t.kind {
	case tNumber, tString:
		return false
	case tIdent:
		switch string(l.src[t.start:t.end]) {
		case "return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await":
			return true
		}
		return false
	case tPunct:
		switch l.src[t.start] {
		case ')', ']', '}':
			return false
		}
	}
	return true
}

// regexLiteral skips /…/flags on one line; false when the line ends first.
func (l *lexer) regexLiteral() bool {
	src := l.src
	j := l.i + 1
	class := false
	from := j
	for j < len(src) {
		l.steps++
		if l.noRegex != nil && l.noRegex[j]&regexState(class) != 0 {
			break // this scan joins one that failed
		}
		c := src[j]
		switch {
		case c == '\\':
			j += 2
			continue
		case c == '\n':
			l.regexFailed(from, j)
			return false
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			j++
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			l.i = j
			return true
		}
		j++
	}
	l.regexFailed(from, j)
	return false
}

func regexState(class bool) uint8 {
	if class {
		return 2
	}
	return 1
}

// regexFailed marks the states of the scan from..to, which found no
// closing slash, as failing: the scan is run again to know its states.
func (l *lexer) regexFailed(from, to int) {
	if l.noRegex == nil {
		l.noRegex = make([]uint8, len(l.src)+1)
	}
	class := false
	for j := from; j < to && j < len(l.src); j++ {
		l.steps++
		l.noRegex[j] |= regexState(class)
		switch l.src[j] {
		case '\\':
			j++
		case '[':
			class = true
		case ']':
			class = false
		}
	}
}

// multiPuncts are the punctuation tokens of more than one character, by
// their first: longest first.
var multiPuncts = [256][]string{
	':': {"::"},
	'-': {"->", "-=", "--"},
	'=': {"===", "==", "=>"},
	'.': {"..."},
	'!': {"!==", "!="},
	'<': {"<="},
	'&': {"&&", "&="},
	'|': {"||", "|="},
	'?': {"?.", "??"},
	'+': {"+=", "++"},
	'*': {"*="},
	'/': {"/="},
}

func (l *lexer) punct() {
	start, line := l.i, l.line
	rest := l.src[l.i:]
	for _, p := range multiPuncts[rest[0]] {
		if len(rest) >= len(p) && string(rest[:len(p)]) == p {
			l.i += len(p)
			l.emit(tPunct, start, line)
			return
		}
	}
	l.i++
	l.emit(tPunct, start, line)
}

// toks is a lexed file with its brackets matched.
type toks struct {
	src   []byte
	t     []lexTok
	match []int32 // for an open or close bracket, the index of its partner; -1 when unmatched
	// steps counts the looks at a token (is, ident) and the other steps
	// of the recognisers' scans: the work the file cost, which a hostile
	// file must not make more than a constant times its tokens.
	steps int
}

// tracedToks, when set (by tests), is given every lexed file, to read its
// steps after the recogniser ran.
var tracedToks func(*toks)

func newToks(src []byte, opt lexOptions) *toks {
	l := &lexer{src: src, opt: opt, toks: make([]lexTok, 0, len(src)/5)}
	l.run()
	ts := &toks{src: src, t: l.toks, steps: l.steps}
	ts.matchBrackets()
	if tracedToks != nil {
		tracedToks(ts)
	}
	return ts
}

// matchBrackets sets match from the tokens.
func (ts *toks) matchBrackets() {
	src := ts.src
	ts.match = make([]int32, len(ts.t))
	var stack []int32
	var open [3]int // the openers of each kind on the stack: { ( [
	for i := range ts.t {
		ts.match[i] = -1
		tk := ts.t[i]
		if tk.kind != tPunct || tk.end-tk.start != 1 {
			continue
		}
		switch c := src[tk.start]; c {
		case '{', '(', '[':
			stack = append(stack, int32(i))
			open[bracketKind(c)]++
		case '}', ')', ']':
			want := byte('{')
			switch c {
			case ')':
				want = '('
			case ']':
				want = '['
			}
			if open[bracketKind(want)] == 0 {
				continue // a stray closer: no opener to look for
			}
			// Pop to the nearest opener of the same kind: a stray closer
			// (a macro's half bracket) does not unbalance the rest. Each
			// opener is looked at once, when it is popped.
			for k := len(stack) - 1; k >= 0; k-- {
				ts.steps++
				o := src[ts.t[stack[k]].start]
				open[bracketKind(o)]--
				if o == want {
					ts.match[i], ts.match[stack[k]] = stack[k], int32(i)
					stack = stack[:k]
					break
				}
			}
		}
	}
}

// bracketKind numbers the openers { ( [ as 0, 1, 2.
func bracketKind(c byte) int {
	switch c {
	case '(':
		return 1
	case '[':
		return 2
	}
	return 0
}

func (ts *toks) text(i int) string {
	if i < 0 || i >= len(ts.t) {
		return ""
	}
	return string(ts.src[ts.t[i].start:ts.t[i].end])
}

// is reports whether token i is punctuation or an identifier reading s.
func (ts *toks) is(i int, s string) bool {
	ts.steps++
	if i < 0 || i >= len(ts.t) {
		return false
	}
	t := ts.t[i]
	return int(t.end-t.start) == len(s) && (t.kind == tPunct || t.kind == tIdent) && string(ts.src[t.start:t.end]) == s
}

func (ts *toks) ident(i int) bool {
	ts.steps++
	return i >= 0 && i < len(ts.t) && ts.t[i].kind == tIdent
}

// end is the byte offset just past token i (or the source's end).
func (ts *toks) end(i int) int {
	if i < 0 {
		return 0
	}
	if i >= len(ts.t) {
		return len(ts.src)
	}
	return int(ts.t[i].end)
}

// skipTo returns the index of the first token from i on that reads one of
// stops at bracket depth 0 (brackets are skipped whole), or len(t).
func (ts *toks) skipTo(i int, stops ...string) int {
	for i < len(ts.t) {
		for _, s := range stops {
			if ts.is(i, s) {
				return i
			}
		}
		if ts.match[i] > int32(i) {
			i = int(ts.match[i])
		}
		i++
	}
	return i
}

// skipHeredocBody skips, from i (the start of a line, line its number), the
// lines of a here-document's body up to and including the line that ends
// it: id alone, after any of the bytes of indent. It returns where the next
// line starts and its number (the end of src when id never comes). Ruby's
// and the shell's lexers share it.
func skipHeredocBody(src []byte, i int, line int32, id, indent string) (int, int32) {
	for i < len(src) {
		b := i
		for b < len(src) && strings.IndexByte(indent, src[b]) >= 0 {
			b++
		}
		e := b + len(id)
		done := e <= len(src) && string(src[b:e]) == id && (e == len(src) || src[e] == '\n' || src[e] == '\r')
		for i < len(src) && src[i] != '\n' {
			i++
		}
		if i < len(src) {
			i++
			line++
		}
		if done {
			break
		}
	}
	return i, line
}

// openBrackets keeps opens, the brackets open around the tokens read so far,
// as token i is read: an opening bracket is pushed, a closing one pops the
// stack back past its partner. It reports whether i is punctuation, which
// the declaration scanners (Kotlin, Swift, PHP, Lua) read no further.
func (t *toks) openBrackets(opens []int, i int) ([]int, bool) {
	if t.t[i].kind != tPunct {
		return opens, false
	}
	switch m := t.match[i]; {
	case m > int32(i):
		opens = append(opens, i)
	case m >= 0 && m < int32(i):
		for len(opens) > 0 && opens[len(opens)-1] >= int(m) {
			opens = opens[:len(opens)-1]
		}
	}
	return opens, true
}
