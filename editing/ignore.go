package editing

import (
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignorer answers whether a workspace-relative path is ignored the way git
// ignores it (gitignore(5)): by the .gitignore of every directory above it,
// the repository's .git/info/exclude, and the core.excludesFile named in the
// repository's own .git/config. The user's global excludes (the global
// core.excludesFile, $XDG_CONFIG_HOME/git/ignore) are not read: walks would
// differ from one user to the next.
//
// Precedence is git's: within a file the last matching line wins; a deeper
// .gitignore wins over a shallower one, which wins over .git/info/exclude,
// which wins over core.excludesFile. A path below an ignored directory is
// ignored, whatever the rules say of it (git never looks inside).
//
// Each pattern is translated once into a doublestar pattern with git's
// meaning (wildmatch with WM_PATHNAME): escapes, "**" only as a whole
// segment, "a/**" for everything inside a but not a, classes with "!" or
// "^" and [:alpha:]-style names that never match "/", brace characters
// literal. Names are matched by character where git matches by byte: the
// two differ only on "?" and classes against non-ASCII names.
//
// Files are read through the functions given, which decide what may be read
// (walkFS: only from inside the workspace). Each is read once, when first
// needed. An ignorer serves one walk and is not safe for concurrent use.
type ignorer struct {
	// gitignore reads the .gitignore at a workspace-relative path.
	gitignore func(rel string) []byte
	// configured reads a file named by git's configuration: ".git/config",
	// ".git/info/exclude", or core.excludesFile's value (relative to the
	// workspace root, or absolute).
	configured func(p string) []byte

	base     []ignoreRule            // core.excludesFile's rules, then .git/info/exclude's
	baseRead bool                    // base is loaded
	rules    map[string][]ignoreRule // directory ("." for the root) -> its .gitignore's rules
	dirs     map[string]bool         // directory -> ignored (itself or one above it)
}

// ignoreRule is one pattern line of an ignore file.
type ignoreRule struct {
	dir      string // the directory of the file whose line it is ("." for the root)
	pattern  string // doublestar pattern, relative to dir (or a base name)
	basename bool   // the pattern has no "/": it matches the last name of a path
	negate   bool   // "!": re-include
	dirOnly  bool   // a trailing "/": only directories
}

func newIgnorer(gitignore, configured func(string) []byte) *ignorer {
	return &ignorer{gitignore: gitignore, configured: configured,
		rules: map[string][]ignoreRule{}, dirs: map[string]bool{}}
}

// ignored reports whether rel (a directory when isDir) or a directory above
// it is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	if isDir {
		return ig.dirIgnored(rel) // the same question, and its answer kept
	}
	if dir := path.Dir(rel); dir != "." && ig.dirIgnored(dir) {
		return true
	}
	return ig.match(rel, isDir)
}

func (ig *ignorer) dirIgnored(dir string) bool {
	if v, ok := ig.dirs[dir]; ok {
		return v
	}
	parent := path.Dir(dir)
	v := (parent != "." && ig.dirIgnored(parent)) || ig.match(dir, true)
	ig.dirs[dir] = v
	return v
}

// match applies the rules that bear on rel, the strongest first: the
// .gitignore files of the directories above it, the deepest first, then the
// base rules. The first rule that matches decides.
func (ig *ignorer) match(rel string, isDir bool) bool {
	for dir := path.Dir(rel); ; dir = path.Dir(dir) {
		if ignored, ok := matchRules(ig.rulesOf(dir), rel, isDir); ok {
			return ignored
		}
		if dir == "." {
			break
		}
	}
	ignored, _ := matchRules(ig.baseRules(), rel, isDir)
	return ignored
}

// matchRules returns what the last of rules matching rel says, and whether
// one matched.
func matchRules(rules []ignoreRule, rel string, isDir bool) (ignored, matched bool) {
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		name := rel
		switch {
		case r.basename:
			name = path.Base(rel)
		case r.dir != ".":
			name = rel[len(r.dir)+1:]
		}
		if doublestar.MatchUnvalidated(r.pattern, name) {
			return !r.negate, true
		}
	}
	return false, false
}

func (ig *ignorer) rulesOf(dir string) []ignoreRule {
	if r, ok := ig.rules[dir]; ok {
		return r
	}
	r := parseIgnore(dir, ig.gitignore(joinRel(dir, ".gitignore")))
	ig.rules[dir] = r
	return r
}

func (ig *ignorer) baseRules() []ignoreRule {
	if !ig.baseRead {
		ig.baseRead = true
		if p := excludesFile(ig.configured(".git/config")); p != "" {
			ig.base = parseIgnore(".", ig.configured(p))
		}
		ig.base = append(ig.base, parseIgnore(".", ig.configured(".git/info/exclude"))...)
	}
	return ig.base
}

// parseIgnore turns the lines of an ignore file of dir into rules, as git
// reads them: a UTF-8 BOM is skipped, lines end at "\n" (a "\r" before it is
// dropped), a line starting with "#" is a comment, unescaped trailing spaces
// are dropped, "!" negates, one trailing "/" means directories only, and a
// pattern holding a "/" is anchored to dir (one leading "/" is dropped) while
// one without matches a base name at any depth. Lines git would never match
// with (a trailing lone backslash, an unclosed class) are left out.
func parseIgnore(dir string, data []byte) []ignoreRule {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var rules []ignoreRule
	for len(data) > 0 {
		var line string
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = string(data[:i]), data[i+1:]
		} else {
			line, data = string(data), nil
		}
		line = strings.TrimSuffix(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		line = trimTrailingSpaces(line)
		r := ignoreRule{dir: dir}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = line[:len(line)-1]
		}
		if line == "" {
			continue
		}
		r.basename = !strings.Contains(line, "/")
		if !r.basename {
			line = strings.TrimPrefix(line, "/")
		}
		pattern, ok := wildmatchToDoublestar(line, r.basename)
		if !ok || !doublestar.ValidatePattern(pattern) {
			continue
		}
		r.pattern = pattern
		rules = append(rules, r)
	}
	return rules
}

// trimTrailingSpaces drops the trailing spaces of a line that no backslash
// escapes (git's trim_trailing_spaces; tabs stay).
func trimTrailingSpaces(s string) string {
	end := -1 // where the run of trailing spaces starts
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			if i >= len(s) {
				return s
			}
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return s[:end]
	}
	return s
}

// wildmatchToDoublestar translates a gitignore pattern (without its "!",
// trailing "/" or leading "/") into a doublestar pattern that matches the
// same paths. ok is false for a pattern git never matches with.
func wildmatchToDoublestar(p string, basename bool) (string, bool) {
	var sb strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '\\':
			if i+1 >= len(p) {
				return "", false
			}
			i++
			sb.WriteByte('\\')
			sb.WriteByte(p[i])
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			whole := j-i >= 2 && (i == 0 || p[i-1] == '/') && (j == len(p) || p[j] == '/')
			switch {
			case !whole || basename:
				sb.WriteByte('*')
			case j == len(p) && i > 0:
				// "a/**": everything inside a, not a itself (doublestar's
				// "a/**" also matches a).
				sb.WriteString("**/*")
			default:
				sb.WriteString("**")
			}
			i = j - 1
		case '[':
			class, end, ok := translateClass(p, i)
			if !ok {
				return "", false
			}
			sb.WriteString(class)
			i = end
		case '{', '}', ',':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		default:
			sb.WriteByte(c)
		}
	}
	return sb.String(), true
}

// posixClasses are the [:name:] classes of wildmatch, as ASCII ranges.
var posixClasses = map[string][][2]byte{
	"alnum":  {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}},
	"alpha":  {{'A', 'Z'}, {'a', 'z'}},
	"blank":  {{' ', ' '}, {'\t', '\t'}},
	"cntrl":  {{0x00, 0x1f}, {0x7f, 0x7f}},
	"digit":  {{'0', '9'}},
	"graph":  {{'!', '~'}},
	"lower":  {{'a', 'z'}},
	"print":  {{' ', '~'}},
	"punct":  {{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}},
	"space":  {{'\t', '\r'}, {' ', ' '}},
	"upper":  {{'A', 'Z'}},
	"xdigit": {{'0', '9'}, {'A', 'F'}, {'a', 'f'}},
}

// translateClass reads the bracket expression starting at p[start] == '['
// as wildmatch does, and writes it as a doublestar class whose every
// character is escaped and which never matches "/". It returns the class,
// the index of the closing "]", and false when the expression is malformed
// (git then never matches) or can match nothing but "/".
func translateClass(p string, start int) (string, int, bool) {
	i := start + 1
	if i >= len(p) {
		return "", 0, false
	}
	negated := p[i] == '!' || p[i] == '^'
	if negated {
		i++
	}
	var ranges [][2]byte
	var prev byte // the last single character, 0 after a range or a class
	hasPrev := false
	first := true
	for ; ; i++ {
		if i >= len(p) {
			return "", 0, false
		}
		c := p[i]
		if c == ']' && !first {
			break
		}
		first = false
		switch {
		case c == '\\':
			i++
			if i >= len(p) {
				return "", 0, false
			}
			c = p[i]
			ranges = append(ranges, [2]byte{c, c})
			prev, hasPrev = c, true
		case c == '-' && hasPrev && prev != 0 && i+1 < len(p) && p[i+1] != ']':
			i++
			hi := p[i]
			if hi == '\\' {
				i++
				if i >= len(p) {
					return "", 0, false
				}
				hi = p[i]
			}
			// The single character before the range is in the class on its
			// own already; the range adds the rest.
			ranges = append(ranges, [2]byte{prev, hi})
			prev, hasPrev = 0, false
		case c == '[' && i+1 < len(p) && p[i+1] == ':':
			end := strings.IndexByte(p[i+2:], ']')
			if end < 0 {
				return "", 0, false
			}
			body := p[i+2 : i+2+end]
			if !strings.HasSuffix(body, ":") {
				// Not a [:name:]: a plain "[" in the class.
				ranges = append(ranges, [2]byte{'[', '['})
				prev, hasPrev = '[', true
				continue
			}
			cls, ok := posixClasses[strings.TrimSuffix(body, ":")]
			if !ok {
				return "", 0, false
			}
			ranges = append(ranges, cls...)
			i += 2 + end
			prev, hasPrev = 0, false
		default:
			ranges = append(ranges, [2]byte{c, c})
			prev, hasPrev = c, true
		}
	}
	end := i
	// Take "/" out: with WM_PATHNAME a class never matches it.
	var kept [][2]byte
	for _, r := range ranges {
		lo, hi := r[0], r[1]
		if lo <= '/' && '/' <= hi {
			if lo < '/' {
				kept = append(kept, [2]byte{lo, '/' - 1})
			}
			if hi > '/' {
				kept = append(kept, [2]byte{'/' + 1, hi})
			}
			continue
		}
		kept = append(kept, r)
	}
	var sb strings.Builder
	sb.WriteByte('[')
	if negated {
		sb.WriteString(`!\/`)
	} else if len(kept) == 0 {
		return "", 0, false
	}
	for _, r := range kept {
		sb.WriteByte('\\')
		sb.WriteByte(r[0])
		if r[1] != r[0] {
			sb.WriteString(`-\`)
			sb.WriteByte(r[1])
		}
	}
	sb.WriteByte(']')
	return sb.String(), end, true
}

// excludesFile returns core.excludesFile as a repository's .git/config
// sets it (the last value wins), read as git's config parser reads it. It
// returns "" when the variable is unset or the file malformed (git then
// refuses it), or when it names a file in a home directory ("~/…"), which
// walks never read. include and includeIf are not followed.
func excludesFile(config []byte) string {
	c := &gitConfig{data: config}
	value := ""
	section := ""
	comment := false
	for {
		ch, ok := c.next()
		switch {
		case !ok:
			if strings.HasPrefix(value, "~") || strings.HasPrefix(value, "%(") {
				return ""
			}
			return value
		case ch == '\n':
			comment = false
		case comment || isConfigSpace(ch):
		case ch == '#' || ch == ';':
			comment = true
		case ch == '[':
			name, ok := c.section()
			if !ok {
				return ""
			}
			section = name
		case !isASCIILetter(ch):
			return ""
		default:
			name, v, ok := c.variable(ch)
			if !ok {
				return ""
			}
			if section == "core" && name == "excludesfile" {
				value = v
			}
		}
	}
}

// gitConfig reads a git config file as config.c does, character by
// character; "\r\n" reads as "\n", and the end as a last "\n".
type gitConfig struct {
	data []byte
	pos  int
	eof  bool
}

func (c *gitConfig) next() (byte, bool) {
	if c.pos >= len(c.data) {
		if c.eof {
			return 0, false
		}
		c.eof = true
		return '\n', true
	}
	ch := c.data[c.pos]
	c.pos++
	if ch == '\r' && c.pos < len(c.data) && c.data[c.pos] == '\n' {
		ch = '\n'
		c.pos++
	}
	return ch, true
}

func isConfigSpace(ch byte) bool { return strings.IndexByte(" \t\n\v\f\r", ch) >= 0 }

func isKeyChar(ch byte) bool {
	return isASCIILetter(ch) || (ch >= '0' && ch <= '9') || ch == '-'
}

// section reads a section header after its "[": the name in lower case,
// with ".subsection" when it has one.
func (c *gitConfig) section() (string, bool) {
	var name strings.Builder
	for {
		ch, ok := c.next()
		switch {
		case !ok || c.eof:
			return "", false
		case ch == ']':
			return name.String(), true
		case isConfigSpace(ch):
			return c.subsection(&name)
		case !isKeyChar(ch) && ch != '.':
			return "", false
		default:
			name.WriteByte(lowerASCII(ch))
		}
	}
}

// subsection reads ` "sub"]` after a section name.
func (c *gitConfig) subsection(name *strings.Builder) (string, bool) {
	ch, ok := c.next()
	for ok && isConfigSpace(ch) && ch != '\n' {
		ch, ok = c.next()
	}
	if !ok || ch != '"' {
		return "", false
	}
	name.WriteByte('.')
	for {
		ch, ok = c.next()
		if !ok || ch == '\n' {
			return "", false
		}
		if ch == '"' {
			break
		}
		if ch == '\\' {
			if ch, ok = c.next(); !ok || ch == '\n' {
				return "", false
			}
		}
		name.WriteByte(ch)
	}
	if ch, ok = c.next(); !ok || ch != ']' {
		return "", false
	}
	return name.String(), true
}

// variable reads a variable line from its first character: the name in
// lower case and the value ("" for a bare name, a boolean).
func (c *gitConfig) variable(first byte) (string, string, bool) {
	var name strings.Builder
	name.WriteByte(lowerASCII(first))
	var ch byte
	ok := true
	for {
		ch, ok = c.next()
		if !ok || c.eof || !isKeyChar(ch) {
			break
		}
		name.WriteByte(lowerASCII(ch))
	}
	for ok && (ch == ' ' || ch == '\t') {
		ch, ok = c.next()
	}
	if !ok || ch == '\n' {
		return name.String(), "", true
	}
	if ch != '=' {
		return "", "", false
	}
	v, good := c.value()
	return name.String(), v, good
}

// value reads a value to the end of its line: blanks around it dropped,
// blanks inside outside quotes each one space, quotes removed, \" \\ \n
// \t \b unescaped, a backslash before the end of the line continuing it,
// and # or ; outside quotes starting a comment.
func (c *gitConfig) value() (string, bool) {
	var sb strings.Builder
	quoted, comment := false, false
	spaces := 0
	for {
		ch, ok := c.next()
		switch {
		case !ok || ch == '\n':
			return sb.String(), !quoted
		case comment:
			continue
		case isConfigSpace(ch) && !quoted:
			if sb.Len() > 0 {
				spaces++
			}
			continue
		case !quoted && (ch == ';' || ch == '#'):
			comment = true
			continue
		}
		for ; spaces > 0; spaces-- {
			sb.WriteByte(' ')
		}
		switch ch {
		case '\\':
			esc, ok := c.next()
			if !ok {
				return "", false
			}
			switch esc {
			case '\n':
				continue
			case 't':
				sb.WriteByte('\t')
			case 'b':
				sb.WriteByte('\b')
			case 'n':
				sb.WriteByte('\n')
			case '\\', '"':
				sb.WriteByte(esc)
			default:
				return "", false
			}
		case '"':
			quoted = !quoted
		default:
			sb.WriteByte(ch)
		}
	}
}

func lowerASCII(ch byte) byte {
	if ch >= 'A' && ch <= 'Z' {
		return ch + 'a' - 'A'
	}
	return ch
}
