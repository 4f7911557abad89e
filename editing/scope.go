package editing

import (
	"fmt"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/bmatcuk/doublestar/v4"
)

// Scope is an ordered list of workspace-relative doublestar patterns, each
// optionally negated with a leading "!" (doublestar has no negation of its
// own). A path is in the scope when the last pattern that matches it is not
// negated: ["src/**", "!src/gen/**"] holds src/a.go but not src/gen/b.go.
// Patterns are validated once, when the scope is compiled. A Scope is
// immutable and safe for concurrent use.
type Scope struct {
	rules []scopeRule
}

type scopeRule struct {
	pattern string // without the "!"
	negate  bool
	source  string // as written, for messages
}

// CompileScope validates patterns and returns their Scope. An empty list is a
// scope that holds nothing.
func CompileScope(patterns []string) (*Scope, error) {
	s := &Scope{rules: make([]scopeRule, 0, len(patterns))}
	for i, p := range patterns {
		r := scopeRule{pattern: p, source: p}
		if strings.HasPrefix(p, "!") {
			r.negate = true
			r.pattern = p[1:]
		}
		r.pattern = strings.TrimPrefix(r.pattern, "./")
		if err := api.ValidateGlob(r.pattern); err != nil {
			return nil, fmt.Errorf("pattern %d (%q): %w", i+1, p, err)
		}
		s.rules = append(s.rules, r)
	}
	return s, nil
}

// Match reports whether the workspace-relative slash path is in the scope and
// which pattern decided it ("" when none matched).
func (s *Scope) Match(path string) (bool, string) {
	for i := len(s.rules) - 1; i >= 0; i-- {
		r := s.rules[i]
		if ok, _ := doublestar.Match(r.pattern, path); ok {
			return !r.negate, r.source
		}
	}
	return false, ""
}

// Patterns returns the patterns as written.
func (s *Scope) Patterns() []string {
	out := make([]string, len(s.rules))
	for i, r := range s.rules {
		out[i] = r.source
	}
	return out
}
