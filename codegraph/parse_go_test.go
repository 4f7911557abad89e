package codegraph

import (
	"strings"
	"testing"
)

// TestGoRecoversFromBytesGoRefuses: a byte Go does not allow (Latin-1
// text in a comment, a NUL in a string) costs a file none of its
// definitions, their places are those of the text as it is, and the
// file's error says where the byte is.
func TestGoRecoversFromBytesGoRefuses(t *testing.T) {
	const body = "package p\n\nimport \"fmt\"\n\n// T is a type.\ntype T struct{ X int }\n\nfunc (t T) M() { fmt.Println(t.X) }\n\nfunc F() T { return T{} }\n"
	clean := parseSafely(LangGo, "p.go", []byte(body))
	if clean.Err != "" || len(clean.Symbols()) != 4 {
		t.Fatalf("the clean file: error %q, %d definitions, want none and 4", clean.Err, len(clean.Symbols()))
	}
	for _, c := range []struct{ name, text, where string }{
		{"a Latin-1 letter in the header comment", "// Copyright \xa9 Ren\xe9\n" + body, "p.go:1:14:"},
		{"a Latin-1 letter in a comment further down", strings.Replace(body, "is a type", "is a caf\xe9 type", 1), "p.go:5:14:"},
		{"a NUL byte in a string", body + "\nvar s = \"a\x00b\"\n", "p.go:12:11:"},
		{"a NUL byte between declarations", strings.Replace(body, "\nfunc F", "\x00\nfunc F", 1), "p.go:9:1:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := parseSafely(LangGo, "p.go", []byte(c.text))
			if !strings.HasPrefix(f.Err, c.where) {
				t.Errorf("error %q, want one at %s", f.Err, c.where)
			}
			// the same definitions as the clean file's, at the places the
			// text has them (lsppos positions of the text as it is)
			want := map[string]bool{}
			for _, s := range clean.Symbols() {
				want[s.Qualified()] = true
			}
			if strings.Contains(c.text, "var s") {
				want["s"] = true
			}
			// where each name is: a text before it
			at := map[string]string{"T": "type ", "T.X": "struct{ ", "T.M": "(t T) ", "F": "func ", "s": "var "}
			b := newBuilder([]byte(c.text))
			for _, s := range f.Symbols() {
				if !want[s.Qualified()] {
					t.Errorf("a definition %s the clean file does not have", s.Qualified())
				}
				delete(want, s.Qualified())
				off := strings.Index(c.text, at[s.Qualified()]+s.Name) + len(at[s.Qualified()])
				if got := b.pos(off); got != s.Sel {
					t.Errorf("%s named at %+v, the text has it at %+v", s.Qualified(), s.Sel, got)
				}
			}
			for q := range want {
				t.Errorf("%s is lost", q)
			}
			refs := 0
			for _, r := range f.Refs() {
				if r.Name == "Println" && r.Qual != "" {
					refs++
				}
			}
			if refs != 1 {
				t.Errorf("%d references to fmt.Println, want 1", refs)
			}
		})
	}
}
