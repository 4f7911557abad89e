package editing

import (
	"errors"
	"strings"
	"testing"
)

func TestReplaceStages(t *testing.T) {
	cases := []struct {
		name, content, old, new string
		all                     bool
		want, stage             string
	}{
		{"matches exactly", "a\nfoo(1)\nb\n", "foo(1)", "foo(2)", false, "a\nfoo(2)\nb\n", StageExact},
		{"replaces every exact occurrence with replace_all", "x x x\n", "x", "y", true, "y y y\n", StageExact},
		{"matches ignoring trailing whitespace", "if a {  \n\treturn\t\n}\n", "if a {\n\treturn\n}\n", "if b {\n\treturn\n}\n", false, "if b {\n\treturn\n}\n", StageTrailing},
		{"matches LF old_string in a CRLF file and keeps CRLF", "a\r\nb\r\nc\r\n", "a\nb\n", "A\nB\n", false, "A\r\nB\r\nc\r\n", StageTrailing},
		{"matches ignoring indentation and re-indents", "func f() {\n\t\tif x {\n\t\t\ty()\n\t\t}\n}\n", "if x {\n    y()\n}", "if x {\n    z()\n    y()\n}", false, "func f() {\n\t\tif x {\n\t\t    z()\n\t\t    y()\n\t\t}\n}\n", StageIndent},
		{"keeps the line break when old_string has none", "  a\n  b\n", "a", "c", false, "  c\n  b\n", StageExact},
		{"deletes whole lines when old_string ends with a newline", "a  \nb\nc\n", "a\nb\n", "", false, "c\n", StageTrailing},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Replace("f.go", c.content, c.old, c.new, c.all)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != c.want || r.Stage != c.stage {
				t.Errorf("Replace = %q (%s), want %q (%s)", r.Content, r.Stage, c.want, c.stage)
			}
		})
	}
}

func TestReplaceRefusals(t *testing.T) {
	cases := []struct {
		name, content, old, new string
		want                    error
		says                    []string
	}{
		{"refuses an ambiguous exact match with its lines", "x()\ny\nx()\n", "x()", "z()", ErrAmbiguous,
			[]string{"occurs 2 times", "lines 1, 3", "replace_all"}},
		{"refuses an ambiguous whitespace-insensitive match", "  a  \nb\n\ta\n b\n", "a\nb", "c", ErrAmbiguous,
			[]string{"occurs 2 times", "ignoring indentation", "lines 1, 3"}},
		{"refuses an empty old_string", "a\n", "", "b", ErrNoMatch, []string{"write_file"}},
		{"refuses a no-op edit", "a\n", "a", "a", ErrNoChange, nil},
		{"shows the closest region on a miss", "func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n", "func b() {\n\treturn 3\n}", "x", ErrNoMatch,
			[]string{"closest part of the file is lines 5-7", "5\tfunc b() {", `line 6: old_string has "\treturn 3", the file has "\treturn 2"`, "Read the file again"}},
		{"says when old_string is longer than the file", "a\n", "a\nb\nc", "x", ErrNoMatch, []string{"old_string has 3 lines, the file only 1"}},
		{"says when the file is empty", "", "a", "b", ErrNoMatch, []string{"is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Replace("f.go", c.content, c.old, c.new, false)
			if !errors.Is(err, c.want) {
				t.Fatalf("Replace = %v, want %v", err, c.want)
			}
			for _, s := range c.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}
