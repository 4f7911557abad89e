package codegraph

// tokParser is what the recognisers of the token languages share: the
// lexed file, the builder, which identifiers are definition names or
// otherwise not references, and the references pass.
type tokParser struct {
	*toks
	b        *builder
	notRef   []bool // identifiers that are not references: definitions' names, import paths
	keywords map[string]bool
	stmtEnds []int32 // stmtEnd's answers plus one, by token; 0 unknown
}

func newTokParser(src []byte, opt lexOptions, keywords map[string]bool) *tokParser {
	ts := newToks(src, opt)
	return &tokParser{toks: ts, b: newBuilder(src), notRef: make([]bool, len(ts.t)), keywords: keywords}
}

// def records a definition whose name is token name, spanning tokens from
// first to last (inclusive).
func (p *tokParser) def(name int, kind Kind, parent int, container string, first, last int) int {
	if name < 0 || name >= len(p.t) {
		return -1
	}
	p.notRef[name] = true
	if p.src[p.t[name].start] == '$' && p.t[name].end-p.t[name].start > 1 && !p.ident(name-1) {
		// a Rust macro's metavariable ($name): no definition
		return -1
	}
	if first > name {
		first = name
	}
	if last < name {
		last = name
	}
	start := int(p.t[first].start)
	return p.b.def(p.text(name), kind, parent, container, start, p.end(last), int(p.t[name].start))
}

// skip marks tokens [from, to] as no references (an import's path).
func (p *tokParser) skip(from, to int) {
	for i := from; i <= to && i < len(p.t); i++ {
		if i >= 0 {
			p.notRef[i] = true
		}
	}
}

// refs records every identifier that is not a keyword nor marked as a
// definition's name; a call when an opening parenthesis follows (through
// generic arguments and a Rust macro's !).
func (p *tokParser) refs(callAfter func(i int) bool) {
	for i, t := range p.t {
		if t.kind != tIdent || p.notRef[i] {
			continue
		}
		name := string(p.src[t.start:t.end])
		if p.keywords[name] {
			continue
		}
		call := p.is(i+1, "(")
		if !call && callAfter != nil {
			call = callAfter(i)
		}
		p.b.refAt(name, tokQual(p.toks, i), p.b.pos(int(t.start)), call)
	}
}

// tokQual is the qualifier of the identifier at i in a token language: a
// member after ., ?., -> or ::, of the instance itself after self. or
// this. (qual.go), else a bare name.
func tokQual(ts *toks, i int) string {
	if i == 0 || ts.t[i-1].kind != tPunct {
		return qualBare
	}
	switch ts.text(i - 1) {
	case ".", "?.", "->":
		if ts.ident(i-2) && (ts.is(i-2, "self") || ts.is(i-2, "this")) && (i < 3 || !ts.is(i-3, ".")) {
			return qualSelf
		}
		return qualMember
	case "::":
		return qualMember
	}
	return qualBare
}

// angleEnd returns the index of the > closing the < at i (generic
// arguments), or i when there is none within reach.
func (p *tokParser) angleEnd(i int) int {
	if !p.is(i, "<") {
		return i
	}
	depth := 0
	for j := i; j < len(p.t) && j < i+256; j++ {
		switch {
		case p.is(j, "<"):
			depth++
		case p.is(j, ">"):
			depth--
			if depth == 0 {
				return j
			}
		case p.is(j, "->"), p.is(j, "=>"):
		case p.is(j, ";"), p.is(j, "{"), p.is(j, "}"):
			return i
		case p.match[j] > int32(j):
			j = int(p.match[j])
		}
	}
	return i
}

// newLine reports whether token j starts a later line than token j-1.
func (p *tokParser) newLine(j int) bool {
	return j > 0 && j < len(p.t) && p.t[j].line > p.t[j-1].line
}

// stmtEnd is the last token of the statement starting at i, for languages
// where a newline may end one (JavaScript, TypeScript): the ; at depth 0,
// the token before a closing bracket of the enclosing block, or the last
// token before a new line that cannot continue the statement.
//
// A statement's end is remembered for each token the scan stood on, which
// ends the same statement: a line of import import import … is scanned
// once, not once for each import.
func (p *tokParser) stmtEnd(i int) int {
	if i < 0 {
		i = 0
	}
	if i < len(p.stmtEnds) && p.stmtEnds[i] > 0 {
		return int(p.stmtEnds[i]) - 1
	}
	j := i
	end := len(p.t) - 1
scan:
	for j < len(p.t) {
		if p.is(j, ";") {
			end = j
			break
		}
		t := p.t[j]
		if t.kind == tPunct && t.end-t.start == 1 {
			switch p.src[t.start] {
			case '}', ')', ']':
				if p.match[j] < int32(i) {
					end = j - 1
					break scan
				}
			}
		}
		if j > i && p.newLine(j) && !p.continues(j-1, j) {
			end = j - 1
			break
		}
		if p.match[j] > int32(j) {
			j = int(p.match[j])
		}
		j++
	}
	if p.stmtEnds == nil {
		p.stmtEnds = make([]int32, len(p.t))
	}
	// the tokens the scan stood on: every one of them up to end starts a
	// statement ending there
	for k := i; k <= end && k < len(p.t); k++ {
		p.steps++
		p.stmtEnds[k] = int32(end) + 1
		if p.match[k] > int32(k) {
			k = int(p.match[k])
		}
	}
	return end
}

// continues reports whether the statement goes on from token a to token b
// on the next line: a ends in an operator, or b starts with one.
func (p *tokParser) continues(a, b int) bool {
	return p.endsOpen(a) || p.goesOn(b)
}

// endsOpen reports whether token a, ending a line, leaves the statement
// open: an operator, an opening bracket, a keyword that needs what follows.
func (p *tokParser) endsOpen(a int) bool {
	if p.t[a].kind == tPunct {
		switch p.text(a) {
		case ")", "]", "}", "++", "--", "!":
		default:
			return true
		}
	}
	if p.t[a].kind == tIdent {
		switch p.text(a) {
		case "extends", "implements", "as", "satisfies", "new", "return", "typeof", "keyof", "readonly", "in", "of":
			return true
		}
	}
	return false
}

// goesOn reports whether token b, starting a line, goes on with the
// statement before: an operator, a member access, a keyword between two
// operands.
func (p *tokParser) goesOn(b int) bool {
	if p.t[b].kind == tPunct {
		switch p.text(b) {
		case ".", "?.", "=>", "|", "&", "?", ":", "=", "==", "===", "!=", "!==", "&&", "||", "??", "+", "-", "*", "/", "%", "<", ">", "<=", ",", "(", "[":
			return true
		}
	}
	if p.t[b].kind == tIdent {
		switch p.text(b) {
		case "extends", "implements", "as", "satisfies", "in", "instanceof", "of", "keyof":
			return true
		}
	}
	return false
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// scanLimit bounds how far a recogniser looks for the end of a
// declaration's header: a real one is short, and a file of headers
// without bodies must not cost the square of its length.
const scanLimit = 256

// skipWithin is skipTo looking at no more than scanLimit tokens (brackets
// skipped whole count as one); len(t) when none of stops is found there.
func (ts *toks) skipWithin(i int, stops ...string) int {
	for n := 0; i < len(ts.t) && n < scanLimit; n++ {
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
	return len(ts.t)
}
