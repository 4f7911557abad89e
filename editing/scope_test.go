package editing

import "testing"

func TestScope(t *testing.T) {
	s, err := CompileScope([]string{"src/**", "!src/gen/**", "src/gen/keep.go", "./docs/*.md"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       bool
		rule       string
	}{
		{"holds a file under an included folder", "src/a/b.go", true, "src/**"},
		{"refuses a file under an excluded folder", "src/gen/x.go", false, "!src/gen/**"},
		{"lets a later pattern re-include an excluded file", "src/gen/keep.go", true, "src/gen/keep.go"},
		{"strips ./ from patterns", "docs/a.md", true, "./docs/*.md"},
		{"refuses what no pattern names", "main.go", false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, rule := s.Match(c.path)
			if got != c.want || rule != c.rule {
				t.Errorf("Match(%q) = %v, %q; want %v, %q", c.path, got, rule, c.want, c.rule)
			}
		})
	}
}

func TestCompileScopeRejectsBadPatterns(t *testing.T) {
	for _, p := range []string{"", "!", "/abs/**", "src/[a"} {
		if _, err := CompileScope([]string{p}); err == nil {
			t.Errorf("CompileScope(%q) succeeded; want an error", p)
		}
	}
}
