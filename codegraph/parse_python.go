package codegraph

import "strings"

var pyKeywords = set("False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
	"in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with",
	"yield", "self", "cls", "match", "case", "print")

// pyTok is a Python token: an identifier, punctuation, a literal, or the
// start of a logical line (with its indentation).
type pyTok struct {
	kind       tokKind
	start, end int32
	line       int32
	first      bool  // the first token of a logical line
	indent     int32 // its indentation, when first
}

// lexPython lexes Python: comments dropped, strings (prefixed, triple
// quoted) opaque, logical lines (brackets and backslashes join physical
// lines) marked with their indentation.
func lexPython(src []byte) []pyTok {
	var out []pyTok
	i, line, depth := 0, int32(0), 0
	lineStart := true
	indent := int32(0)
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
			if depth == 0 {
				lineStart, indent = true, 0
			}
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f':
			if lineStart {
				if c == '\t' {
					indent = (indent/8 + 1) * 8
				} else if c == ' ' {
					indent++
				}
			}
			i++
			continue
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i++
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				i++
				line++
			}
			continue
		}
		t := pyTok{start: int32(i), line: line}
		if lineStart {
			t.first, t.indent = true, indent
			lineStart = false
		}
		switch {
		case isIdentStart(c) && c != '$':
			j := i
			for j < len(src) && isIdentChar(src[j]) && src[j] != '$' {
				j++
			}
			if j < len(src) && (src[j] == '"' || src[j] == '\'') && j-i <= 3 && isStringPrefix(src[i:j]) {
				t.kind = tString
				i, line = pyString(src, j, line)
			} else {
				t.kind = tIdent
				i = j
			}
		case c == '"' || c == '\'':
			t.kind = tString
			i, line = pyString(src, i, line)
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			t.kind = tNumber
			for i < len(src) && (isIdentChar(src[i]) || src[i] == '.') {
				i++
			}
		default:
			t.kind = tPunct
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				if depth > 0 {
					depth--
				}
			}
			if c == '-' && i+1 < len(src) && src[i+1] == '>' {
				i++
			}
			i++
		}
		t.end = int32(i)
		out = append(out, t)
	}
	return out
}

func isStringPrefix(b []byte) bool {
	for _, c := range b {
		switch c | 0x20 {
		case 'r', 'b', 'u', 'f', 't':
		default:
			return false
		}
	}
	return true
}

// pyString skips the string literal whose quote is at i.
func pyString(src []byte, i int, line int32) (int, int32) {
	q := src[i]
	triple := i+2 < len(src) && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
		for i < len(src) {
			switch {
			case src[i] == '\\':
				if i+1 < len(src) && src[i+1] == '\n' {
					line++
				}
				i += 2
				continue
			case src[i] == '\n':
				line++
			case src[i] == q && i+2 < len(src) && src[i+1] == q && src[i+2] == q:
				return i + 3, line
			}
			i++
		}
		return len(src), line
	}
	i++
	for i < len(src) {
		switch src[i] {
		case '\\':
			if i+1 < len(src) && src[i+1] == '\n' {
				line++
			}
			i += 2
			continue
		case '\n':
			return i, line // unterminated
		case q:
			return i + 1, line
		}
		i++
	}
	return len(src), line
}

type pyBlock struct {
	indent int32
	sym    int
	name   string
	class  bool
}

// parsePython reads Python: classes, functions and methods (their span
// is their indented block), module-level variables (constants when named
// in capitals) and class attributes; import and from … import.
func parsePython(src []byte) *File {
	b := newBuilder(src)
	t := lexPython(src)
	notRef := make([]bool, len(t))
	text := func(i int) string {
		if i < 0 || i >= len(t) {
			return ""
		}
		return string(src[t[i].start:t[i].end])
	}
	is := func(i int, s string) bool {
		return i >= 0 && i < len(t) && int(t[i].end-t[i].start) == len(s) && string(src[t[i].start:t[i].end]) == s
	}
	ident := func(i int) bool { return i >= 0 && i < len(t) && t[i].kind == tIdent }
	// lineEnd is the last token of the logical line starting at i.
	lineEnd := func(i int) int {
		j := i + 1
		for j < len(t) && !t[j].first {
			j++
		}
		return j - 1
	}
	var stack []pyBlock
	lastEnd := 0 // end of the last token of the previous logical line
	closeTo := func(indent int32) {
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			b.setEnd(stack[len(stack)-1].sym, lastEnd)
			stack = stack[:len(stack)-1]
		}
	}
	for i := 0; i < len(t); {
		end := lineEnd(i)
		if t[i].first {
			closeTo(t[i].indent)
		}
		j := i
		if is(j, "async") {
			j++
		}
		parent, container, inClass := -1, "", false
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			parent, container, inClass = top.sym, top.name, top.class
		}
		switch {
		case (is(j, "def") || is(j, "class")) && ident(j+1):
			kind := KindClass
			if is(j, "def") {
				kind = KindFunction
				if inClass {
					kind = KindMethod
				}
			}
			notRef[j+1] = true
			sym := b.def(text(j+1), kind, parent, container, int(t[i].start), int(t[end].end), int(t[j+1].start))
			// a one-line body (def f(): return 1) ends with the line
			stack = append(stack, pyBlock{indent: t[i].indent, sym: sym, name: text(j + 1), class: kind == KindClass})
		case is(j, "import"):
			k := j + 1
			for k <= end {
				var path strings.Builder
				for k <= end && (ident(k) || is(k, ".")) && !is(k, "as") {
					path.WriteString(text(k))
					notRef[k] = true
					k++
				}
				b.imp(path.String(), int(t[i].start))
				if is(k, "as") {
					k += 2
				}
				if !is(k, ",") {
					break
				}
				k++
			}
		case is(j, "from"):
			k := j + 1
			var path strings.Builder
			for k <= end && (ident(k) || is(k, ".")) && !is(k, "import") {
				path.WriteString(text(k))
				notRef[k] = true
				k++
			}
			mod := path.String()
			b.imp(mod, int(t[i].start))
			if strings.Trim(mod, ".") == "" && is(k, "import") {
				// from . import a, b: each may be a module
				for k++; k <= end; k++ {
					if ident(k) && !is(k-1, "as") {
						b.imp(mod+text(k), int(t[i].start))
					}
				}
			}
		case ident(j) && t[j].first && (len(stack) == 0 || inClass) && !pyKeywords[text(j)]:
			// NAME = …, NAME: T = …, A = B = …
			k := j
			for ident(k) && (is(k+1, "=") || is(k+1, ":")) && !is(k+2, "=") {
				name := text(k)
				kind := KindVariable
				switch {
				case inClass:
					kind = KindField
				case strings.ToUpper(name) == name && strings.ContainsAny(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
					kind = KindConstant
				}
				notRef[k] = true
				b.def(name, kind, parent, container, int(t[i].start), int(t[end].end), int(t[k].start))
				if !is(k+1, "=") || !ident(k+2) || !is(k+3, "=") {
					break
				}
				k += 2
			}
		}
		lastEnd = int(t[end].end)
		i = end + 1
	}
	closeTo(-1)
	for i, tk := range t {
		if tk.kind != tIdent || notRef[i] {
			continue
		}
		name := string(src[tk.start:tk.end])
		if pyKeywords[name] {
			continue
		}
		qual := qualBare
		if is(i-1, ".") {
			qual = qualMember
			if is(i-2, "self") && !is(i-3, ".") {
				qual = qualSelf
			}
		}
		b.refAt(name, qual, b.pos(int(tk.start)), is(i+1, "("))
	}
	return b.file(LangPython)
}
