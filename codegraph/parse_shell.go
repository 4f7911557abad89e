package codegraph

var shKeywords = set("if", "then", "else", "elif", "fi", "case", "esac", "for", "while", "until", "do", "done",
	"in", "function", "select", "time", "coproc", "{", "}", "!", "[[", "]]")

// shLexer lexes a shell script (POSIX sh, bash): words (a word holding
// quotes or expansions is one opaque token; a plain name is an
// identifier), operators, and newlines, which end commands; comments and
// here-documents dropped. $( opens a command substitution whose commands
// are lexed as any others'.
type shLexer struct {
	src     []byte
	i       int
	line    int32
	toks    []lexTok
	pending []rbHeredoc
}

func lexShell(src []byte) []lexTok {
	l := &shLexer{src: src, toks: make([]lexTok, 0, len(src)/6)}
	l.run()
	return l.toks
}

func (l *shLexer) peek(n int) byte {
	if l.i+n < len(l.src) {
		return l.src[l.i+n]
	}
	return 0
}

func (l *shLexer) emit(k tokKind, start int, line int32) {
	l.toks = append(l.toks, lexTok{kind: k, start: int32(start), end: int32(l.i), line: line})
}

func isShMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

func (l *shLexer) run() {
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			start, line := l.i, l.line
			l.i++
			l.emit(tPunct, start, line)
			l.line++
			if len(l.pending) > 0 {
				l.heredocBodies()
			}
		case c == ' ' || c == '\t' || c == '\r':
			l.i++
		case c == '\\' && l.peek(1) == '\n':
			l.i += 2
			l.line++
		case c == '#':
			for l.i < len(src) && src[l.i] != '\n' {
				l.i++
			}
		case c == '$' && l.peek(1) == '(' && l.peek(2) != '(':
			start, line := l.i, l.line
			l.i += 2
			l.emit(tPunct, start, line)
		case c == '<' && l.peek(1) == '<' && l.peek(2) != '<':
			start, line := l.i, l.line
			l.i += 2
			l.emit(tPunct, start, line)
			l.heredoc()
		case isShMeta(c):
			start, line := l.i, l.line
			l.i++
			if l.i < len(src) && (src[l.i] == c && (c == '&' || c == '|' || c == ';' || c == '>' || c == '<') || c == '>' && src[l.i] == '&' || c == '&' && src[l.i] == '>') {
				l.i++
			}
			l.emit(tPunct, start, line)
		default:
			l.word()
		}
	}
}

// word lexes a word: an identifier when it is a plain name, else opaque.
func (l *shLexer) word() {
	src := l.src
	start, line := l.i, l.line
	plain := true
	for l.i < len(src) {
		c := src[l.i]
		if isShMeta(c) {
			break
		}
		switch {
		case c == '\\':
			plain = false
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i += 2
			continue
		case c == '\'':
			plain = false
			l.i++
			l.until('\'', false)
			continue
		case c == '"' || c == '`':
			plain = false
			l.i++
			l.until(c, true)
			continue
		case c == '$' && l.peek(1) == '\'':
			plain = false
			l.i += 2
			l.until('\'', true)
			continue
		case c == '$' && l.peek(1) == '(' && l.peek(2) != '(':
			if l.i > start {
				// the substitution is lexed on its own: end the word here
				l.emit(tString, start, line)
				return
			}
		case c == '$' && (l.peek(1) == '{' || l.peek(1) == '('):
			plain = false
			l.i += 2
			l.nested(src[l.i-1])
			continue
		case c == '$' || c == '{' || c == '}' || c == '[' || c == ']' || c == '*' || c == '?' || c == '=' || c == '~' || c == ',' || c == '!':
			plain = plain && (c == '{' || c == '}' || c == '!' || c == '[' || c == ']') && l.i == start
		}
		l.i++
	}
	if l.i == start {
		l.i++
	}
	k := tIdent
	if !plain {
		k = tString
	}
	l.emit(k, start, line)
}

// until skips to the closing quote q (escapes honoured when esc, $(…)
// and ${…} skipped whole inside double quotes).
func (l *shLexer) until(q byte, esc bool) {
	src := l.src
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.line++
		case c == '\\' && esc:
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i += 2
			continue
		case c == q:
			l.i++
			return
		case q == '"' && c == '$' && (l.peek(1) == '(' || l.peek(1) == '{'):
			l.i += 2
			l.nested(src[l.i-1])
			continue
		case q == '"' && c == '`':
			l.i++
			l.until('`', true)
			continue
		}
		l.i++
	}
}

// nested skips the body of $(…) or ${…} from just past its opening
// bracket, quotes and inner brackets included.
func (l *shLexer) nested(open byte) {
	src := l.src
	close := byte(')')
	if open == '{' {
		close = '}'
	}
	depth := 0
	for l.i < len(src) {
		c := src[l.i]
		switch {
		case c == '\n':
			l.line++
		case c == '\\':
			if l.peek(1) == '\n' {
				l.line++
			}
			l.i += 2
			continue
		case c == '\'' && open == '(':
			l.i++
			l.until('\'', false)
			continue
		case c == '"' || c == '`':
			l.i++
			l.until(c, true)
			continue
		case c == open:
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

// heredoc reads a here-document's delimiter after << (or <<-); its body
// is skipped at the end of the line.
func (l *shLexer) heredoc() {
	src := l.src
	indent := false
	if l.i < len(src) && src[l.i] == '-' {
		indent = true
		l.i++
	}
	for l.i < len(src) && (src[l.i] == ' ' || src[l.i] == '\t') {
		l.i++
	}
	var id []byte
	for l.i < len(src) && !isShMeta(src[l.i]) {
		c := src[l.i]
		switch c {
		case '\'', '"':
			l.i++
			for l.i < len(src) && src[l.i] != c && src[l.i] != '\n' {
				id = append(id, src[l.i])
				l.i++
			}
			if l.i < len(src) && src[l.i] == c {
				l.i++
			}
			continue
		case '\\':
			l.i++
			continue
		}
		id = append(id, c)
		l.i++
	}
	if len(id) > 0 {
		l.pending = append(l.pending, rbHeredoc{id: string(id), indent: indent})
	}
}

// heredocBodies skips the bodies of the here-documents opened on the line
// just ended.
func (l *shLexer) heredocBodies() {
	for _, h := range l.pending {
		indent := ""
		if h.indent {
			indent = "\t" // <<- strips leading tabs alone
		}
		l.i, l.line = skipHeredocBody(l.src, l.i, l.line, h.id, indent)
	}
	l.pending = l.pending[:0]
}

// parseShell reads a shell script: its functions (name () …, function
// name …, at any depth), the commands it runs as calls, and the files it
// sources (source f, . f) as imports.
func parseShell(src []byte) *File {
	t := lexShell(src)
	p := &shParser{toks: &toks{src: src, t: t}, b: newBuilder(src), notRef: make([]bool, len(t))}
	p.run()
	return p.b.file(LangShell)
}

type shParser struct {
	*toks
	b      *builder
	notRef []bool
}

// cmdStarts marks the tokens at the start of a command: after a newline,
// a command separator or an opening parenthesis, or after a reserved word
// (then, do, {…) that is itself at the start of one.
func (p *shParser) cmdStarts() []bool {
	cs := make([]bool, len(p.t))
	for i := range p.t {
		if i == 0 {
			cs[i] = true
			continue
		}
		if p.t[i-1].kind == tPunct {
			switch p.text(i - 1) {
			case "\n", ";", "&", "&&", "||", "|", "(", "$(", ";;", "|&", ")":
				cs[i] = true
			}
			continue
		}
		switch p.text(i - 1) {
		case "then", "do", "else", "elif", "if", "while", "until", "{", "}", "!", "time":
			cs[i] = cs[i-1]
		}
	}
	return cs
}

// shFunc is a function whose body is open: it closes at the brace or
// parenthesis that balances its opening one.
type shFunc struct {
	sym   int
	open  string
	depth int
}

func (p *shParser) run() {
	cmdStart := p.cmdStarts()
	var open []shFunc
	braces, parens := 0, 0
	for i := 0; i < len(p.t); i++ {
		t := p.t[i]
		switch {
		case t.kind == tPunct && p.is(i, "(") || p.is(i, "$("):
			parens++
		case t.kind == tPunct && p.is(i, ")"):
			parens--
			if n := len(open); n > 0 && open[n-1].open == "(" && parens == open[n-1].depth {
				p.b.setEnd(open[n-1].sym, int(t.end))
				open = open[:n-1]
			}
		case t.kind == tIdent && p.is(i, "{") && cmdStart[i]:
			braces++
		case t.kind == tIdent && p.is(i, "}") && (cmdStart[i] || p.is(i-1, ";") || p.is(i-1, "\n")):
			braces--
			if n := len(open); n > 0 && open[n-1].open == "{" && braces == open[n-1].depth {
				p.b.setEnd(open[n-1].sym, int(t.end))
				open = open[:n-1]
			}
		}
		if t.kind != tIdent || !cmdStart[i] {
			continue
		}
		name, first := -1, i
		switch {
		case p.is(i, "function") && p.ident(i+1) && !shKeywords[p.text(i+1)]:
			name = i + 1
		case !shKeywords[p.text(i)] && p.is(i+1, "(") && p.is(i+2, ")"):
			name = i
		}
		if name >= 0 {
			body := name + 1
			if p.is(body, "(") && p.is(body+1, ")") {
				body += 2
			}
			for p.is(body, "\n") {
				body++
			}
			parent := -1
			if len(open) > 0 {
				parent = open[len(open)-1].sym
			}
			p.notRef[name] = true
			sym := p.b.def(p.text(name), KindFunction, parent, "", int(p.t[first].start), p.end(body), int(p.t[name].start))
			switch {
			case p.is(body, "{") && p.ident(body):
				open = append(open, shFunc{sym: sym, open: "{", depth: braces})
				braces++
			case p.is(body, "(") && p.t[body].kind == tPunct:
				open = append(open, shFunc{sym: sym, open: "(", depth: parens})
				parens++
			}
			i = body
			continue
		}
		w := p.text(i)
		if (w == "source" || w == ".") && i+1 < len(p.t) && p.t[i+1].kind != tPunct {
			s := p.text(i + 1)
			if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
				s = s[1 : len(s)-1]
			}
			p.b.imp(s, int(t.start))
		}
		if shKeywords[w] || p.notRef[i] || !shName(w) {
			continue
		}
		p.b.refAt(w, qualBare, p.b.pos(int(t.start)), true)
	}
	for _, f := range open {
		p.b.setEnd(f.sym, len(p.src))
	}
}

// shName reports whether a command word may name a function: not a path,
// an assignment or a number.
func shName(w string) bool {
	if w == "" || isDigit(w[0]) || w == "." {
		return false
	}
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '/', '=', '[', ']', '{', '}', '!':
			return false
		}
	}
	return true
}
