package editing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

func numbered(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func TestRead(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"big.txt":   numbered(5000),
		"long.txt":  strings.Repeat("é", 3000) + "\n",
		"bin.dat":   "PK\x03\x04\x00\x00binary",
		"latin.txt": "caf\xe9\n",
		"empty.txt": "",
		"dir/x.txt": "x\n",
	})
	a := e.agent("")
	t.Run("reads a whole small file", func(t *testing.T) {
		r, err := a.Read(ctx, "a.txt", 0, 0)
		if err != nil || r.Text != "one\ntwo\nthree\n" || r.Lines != 3 || r.Truncated {
			t.Fatalf("Read = %+v, %v", r, err)
		}
	})
	t.Run("reads the open buffer with unsaved edits", func(t *testing.T) {
		e.ed.OpenBuffer(e.ws.Root()+"/a.txt", "unsaved\n")
		defer e.ed.CloseBuffer(e.ws.Root() + "/a.txt")
		r, err := a.Read(ctx, "a.txt", 0, 0)
		if err != nil || r.Content != "unsaved\n" {
			t.Fatalf("Read = %+v, %v", r, err)
		}
	})
	t.Run("reads a window with offset and limit", func(t *testing.T) {
		r, err := a.Read(ctx, "big.txt", 10, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := "line 10\nline 11\nline 12\n[lines 10-12 of 5000 shown; read on with offset 13]"
		if r.Text != want || r.From != 10 || r.To != 12 || !r.Truncated {
			t.Fatalf("Text = %q (%d-%d), want %q", r.Text, r.From, r.To, want)
		}
	})
	t.Run("cuts a huge file with a note", func(t *testing.T) {
		r, err := a.Read(ctx, "big.txt", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if r.To != 2000 || !strings.HasSuffix(r.Text, "[lines 1-2000 of 5000 shown; read on with offset 2001]") {
			t.Fatalf("To = %d, tail %q", r.To, r.Text[len(r.Text)-80:])
		}
	})
	t.Run("cuts a long line on a rune boundary", func(t *testing.T) {
		r, err := a.Read(ctx, "long.txt", 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(r.Text, "… [line cut]") || !strings.Contains(r.Text, "long lines cut") || !utf8Valid(r.Text) {
			t.Fatalf("Text = %q", r.Text[len(r.Text)-100:])
		}
	})
	t.Run("says when the offset is past the end", func(t *testing.T) {
		r, err := a.Read(ctx, "a.txt", 9, 0)
		if err != nil || !strings.Contains(r.Text, "past the end") {
			t.Fatalf("Read = %+v, %v", r, err)
		}
	})
	t.Run("reads an empty file", func(t *testing.T) {
		r, err := a.Read(ctx, "empty.txt", 0, 0)
		if err != nil || r.Text != "(empty file)" {
			t.Fatalf("Read = %+v, %v", r, err)
		}
	})
	for _, c := range []struct {
		name, path string
		want       error
	}{
		{"refuses a binary file", "bin.dat", ErrBinary},
		{"refuses a file that is not UTF-8", "latin.txt", ErrBinary},
		{"refuses a directory", "dir", ErrIsDir},
		{"reports a missing file", "nope.txt", ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := a.Read(ctx, c.path, 0, 0); !errors.Is(err, c.want) {
				t.Fatalf("Read(%q) = %v, want %v", c.path, err, c.want)
			}
		})
	}
	t.Run("falls back to the disk without agent/readFile", func(t *testing.T) {
		caps := headlesstest.AllCaps()
		caps.ReadFile = false
		e2 := newEnv(t, caps, api.EditApply, api.Zones{}, map[string]string{"a.txt": "disk\n"})
		r, err := e2.agent("").Read(ctx, "a.txt", 0, 0)
		if err != nil || r.Content != "disk\n" {
			t.Fatalf("Read = %+v, %v", r, err)
		}
	})
	t.Run("reports reads to the observer", func(t *testing.T) {
		if !contains(e.obs.accesses, "1 read a.txt") {
			t.Fatalf("accesses = %q", e.obs.accesses)
		}
	})
}

func utf8Valid(s string) bool { return !isBinary(s) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func listEnv(t *testing.T) *env {
	files := testkit.ReadArchive(t, "testdata/list.txtar").Files
	files["bin/tool"] = "\x00\x01TODO"
	return newEnv(t, headlesstest.AllCaps(), api.EditApply,
		api.Zones{Allow: []string{"**"}, Deny: []string{"**/.git/**", "secrets/**"}}, files)
}

func TestList(t *testing.T) {
	ctx := context.Background()
	e := listEnv(t)
	a := e.agent("")
	cases := []struct {
		name, pattern string
		want          []string
	}{
		{"lists every visible file", "", []string{".gitignore", "bin/tool", "docs/build/page.md", "keep.log", "main.go", "pkg/.gitignore", "pkg/a.go", "pkg/b_test.go"}},
		{"matches a name at any depth", "*.go", []string{"main.go", "pkg/a.go", "pkg/b_test.go"}},
		{"lists every file once for **", "**", []string{".gitignore", "bin/tool", "docs/build/page.md", "keep.log", "main.go", "pkg/.gitignore", "pkg/a.go", "pkg/b_test.go"}},
		{"lists every file once for **/** and ./**", "./**/**", []string{".gitignore", "bin/tool", "docs/build/page.md", "keep.log", "main.go", "pkg/.gitignore", "pkg/a.go", "pkg/b_test.go"}},
		{"matches once through repeated **", "**/**/*.go", []string{"main.go", "pkg/a.go", "pkg/b_test.go"}},
		{"matches a doublestar pattern", "pkg/**/*_test.go", []string{"pkg/b_test.go"}},
		{"leaves out an ignored directory named directly", "node_modules/**", nil},
		{"leaves out a nested ignore", "pkg/gen/*.go", nil},
		{"leaves out .git named directly", ".git/*", nil},
		{"leaves out a denied zone named directly", "secrets/*", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := a.List(ctx, c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.Paths) != fmt.Sprint(c.want) {
				t.Errorf("List(%q) = %q, want %q", c.pattern, r.Paths, c.want)
			}
		})
	}
	t.Run("bounds the output and counts what it left out", func(t *testing.T) {
		files := map[string]string{}
		for i := 0; i < 30; i++ {
			files[fmt.Sprintf("f%02d.txt", i)] = "x\n"
		}
		e2 := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, files)
		e2.ws.limits.ListEntries = 10
		r, err := e2.agent("").List(ctx, "*.txt")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Paths) != 10 || r.Omitted != 20 || !strings.HasSuffix(r.Text, "[20 further files not shown; narrow the pattern]") {
			t.Fatalf("List = %d paths, %d omitted, %q", len(r.Paths), r.Omitted, r.Text)
		}
	})
	t.Run("rejects a bad pattern", func(t *testing.T) {
		for _, p := range []string{"src/[a", "/etc/*", "../*"} {
			if _, err := a.List(ctx, p); !errors.Is(err, ErrBadPattern) {
				t.Errorf("List(%q) = %v, want ErrBadPattern", p, err)
			}
		}
	})
	t.Run("stops when the context ends", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := a.List(cctx, ""); !errors.Is(err, context.Canceled) {
			t.Fatalf("List = %v, want context.Canceled", err)
		}
	})
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	e := listEnv(t)
	a := e.agent("")
	t.Run("finds matches as path:line: text in visible text files only", func(t *testing.T) {
		r, err := a.Search(ctx, `TODO`, "")
		if err != nil {
			t.Fatal(err)
		}
		want := "docs/build/page.md:1: TODO nested build is not anchored\npkg/a.go:2: // TODO: a"
		if r.Text != want {
			t.Fatalf("Text = %q, want %q", r.Text, want)
		}
		if !contains(e.obs.accesses, "1 search pkg/a.go") {
			t.Errorf("accesses = %q", e.obs.accesses)
		}
	})
	t.Run("filters by glob and honours regex flags", func(t *testing.T) {
		r, err := a.Search(ctx, `(?i)todo`, "*_test.go")
		if err != nil || r.Text != "pkg/b_test.go:2: // todo lowercase" {
			t.Fatalf("Search = %q, %v", r.Text, err)
		}
	})
	t.Run("caps matches with a count of the rest", func(t *testing.T) {
		e2 := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"a.txt": numbered(50)})
		e2.ws.limits.SearchMatches = 5
		r, err := e2.agent("").Search(ctx, `^line`, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Matches) != 5 || r.Omitted != 45 || !strings.HasSuffix(r.Text, "[45 more matches not shown; narrow the regex or the glob]") {
			t.Fatalf("Search = %d matches, %d omitted: %q", len(r.Matches), r.Omitted, r.Text)
		}
	})
	t.Run("says when nothing matches", func(t *testing.T) {
		r, err := a.Search(ctx, `nothing-like-this`, "")
		if err != nil || r.Text != `(no matches for "nothing-like-this")` {
			t.Fatalf("Search = %q, %v", r.Text, err)
		}
	})
	t.Run("rejects a bad regex", func(t *testing.T) {
		if _, err := a.Search(ctx, `(`, ""); !errors.Is(err, ErrBadPattern) {
			t.Fatalf("Search = %v, want ErrBadPattern", err)
		}
	})
}
