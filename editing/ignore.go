package editing

import (
	"bufio"
	"bytes"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignorer answers whether a path is ignored by the workspace's .gitignore
// files (the root's, every directory's on the way, and .git/info/exclude).
// It reads each .gitignore once, when first needed, through read (a
// workspace-relative name; nil or empty when there is none), and git's own
// files through git. It is used by one walk at a time and is not safe for
// concurrent use.
type ignorer struct {
	read  func(rel string) []byte
	git   func(rel string) []byte
	rules map[string][]ignoreRule // directory (rel, "." for the root) -> its rules
	cache map[string]bool         // directory -> ignored
}

type ignoreRule struct {
	pattern string // doublestar pattern, workspace-relative
	negate  bool
	dirOnly bool
}

func newIgnorer(read, git func(rel string) []byte) *ignorer {
	return &ignorer{read: read, git: git, rules: map[string][]ignoreRule{}, cache: map[string]bool{}}
}

// ignored reports whether rel (a directory when isDir) or a directory above
// it is ignored.
func (ig *ignorer) ignored(rel string, isDir bool) bool {
	dir := path.Dir(rel)
	if dir != "." && ig.dirIgnored(dir) {
		return true
	}
	return ig.match(rel, isDir)
}

func (ig *ignorer) dirIgnored(dir string) bool {
	if v, ok := ig.cache[dir]; ok {
		return v
	}
	parent := path.Dir(dir)
	v := (parent != "." && ig.dirIgnored(parent)) || ig.match(dir, true)
	ig.cache[dir] = v
	return v
}

// match applies the rules of every directory above rel, the root's first;
// the last matching rule decides.
func (ig *ignorer) match(rel string, isDir bool) bool {
	ignored := false
	apply := func(rules []ignoreRule) {
		for _, r := range rules {
			if r.dirOnly && !isDir {
				continue
			}
			if doublestar.MatchUnvalidated(r.pattern, rel) {
				ignored = !r.negate
			}
		}
	}
	apply(ig.rulesOf("."))
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			apply(ig.rulesOf(rel[:i]))
		}
	}
	return ignored
}

func (ig *ignorer) rulesOf(dir string) []ignoreRule {
	if r, ok := ig.rules[dir]; ok {
		return r
	}
	var rules []ignoreRule
	if dir == "." {
		rules = parseIgnore(".", ig.git(".git/info/exclude"))
	}
	rules = append(rules, parseIgnore(dir, ig.read(joinRel(dir, ".gitignore")))...)
	ig.rules[dir] = rules
	return rules
}

// parseIgnore turns the lines of dir's .gitignore into rules.
func parseIgnore(dir string, data []byte) []ignoreRule {
	var rules []ignoreRule
	prefix := ""
	if dir != "." {
		prefix = dir + "/"
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(strings.TrimSuffix(sc.Text(), "\r"), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.pattern = prefix + strings.TrimPrefix(line, "/")
		} else {
			r.pattern = prefix + "**/" + line
		}
		if !doublestar.ValidatePattern(r.pattern) {
			continue
		}
		rules = append(rules, r)
	}
	return rules
}
