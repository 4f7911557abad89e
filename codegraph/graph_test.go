package codegraph

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*.txtar")

// archive is a txtar file: a comment, then files ("-- name --" lines).
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct {
	name string
	data string
}

func readArchive(t *testing.T, path string) *archive {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &archive{}
	var cur *archiveFile
	for _, line := range strings.SplitAfter(string(data), "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			a.files = append(a.files, archiveFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])})
			cur = &a.files[len(a.files)-1]
			continue
		}
		if cur == nil {
			a.comment += line
		} else {
			cur.data += line
		}
	}
	return a
}

func (a *archive) format() string {
	var b strings.Builder
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
	}
	return b.String()
}

// workspace writes the archive's files (but want) to a new directory.
func (a *archive) workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range a.files {
		if f.name == "want" {
			continue
		}
		writeFile(t, dir, f.name, f.data)
	}
	return dir
}

func writeFile(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// start builds the graph of root and returns it current; Run ends with the
// test.
func start(t *testing.T, cfg Config) *Graph {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	return g
}

// dump writes the graph as text: per file its definitions, its imports
// with the files they lead to, and its references that resolve to a
// definition of the workspace.
func dump(g *Graph) string {
	g.mu.RLock()
	defer g.mu.RUnlock()
	paths := make([]string, 0, len(g.files))
	for p := range g.files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		f := g.files[p]
		fmt.Fprintf(&b, "== %s (%s)\n", p, f.Lang)
		if f.Err != "" {
			fmt.Fprintf(&b, "error %s\n", f.Err)
		}
		for _, s := range f.Symbols() {
			fmt.Fprintf(&b, "def %s %s %d:%d-%d:%d\n", s.Kind, s.Qualified(), s.Start.Line+1, s.Start.Col, s.End.Line+1, s.End.Col)
		}
		for _, imp := range f.Imports {
			var to []string
			for _, t := range g.importTargets(f, imp) {
				to = append(to, t.Path)
			}
			if len(to) == 0 {
				to = []string{"(outside)"}
			}
			sort.Strings(to)
			fmt.Fprintf(&b, "import %s -> %s\n", imp.Path, strings.Join(to, " "))
		}
		v := g.newView()
		sc := v.scopeOf(f)
		for _, r := range f.Refs() {
			ds, prov := v.resolve(sc, r.Name, r.Qual)
			if len(ds) == 0 {
				continue
			}
			var to []string
			for _, d := range ds {
				to = append(to, symID(d.f, int(d.i)))
			}
			kind := "ref"
			if r.Call {
				kind = "call"
			}
			fmt.Fprintf(&b, "%s %s %d:%d -> %s (%s)\n", kind, r.Name, r.Pos.Line+1, r.Pos.Col, strings.Join(to, " "), prov)
		}
	}
	return b.String()
}

// TestLanguages holds each language's fixture to its want section: the
// definitions with their kinds and spans, the imports and the files they
// lead to, the references and calls and the definitions they resolve to.
// go test ./codegraph -run TestLanguages -update rewrites the sections.
func TestLanguages(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) < 6 {
		t.Fatalf("fixtures: %v, %d found", err, len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a := readArchive(t, file)
			g := start(t, Config{Root: a.workspace(t)})
			got := dump(g)
			var want *archiveFile
			for i := range a.files {
				if a.files[i].name == "want" {
					want = &a.files[i]
				}
			}
			if *update {
				if want == nil {
					a.files = append(a.files, archiveFile{name: "want"})
					want = &a.files[len(a.files)-1]
				}
				want.data = got
				if err := os.WriteFile(file, []byte(a.format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want == nil {
				t.Fatalf("%s has no want section; run with -update", file)
			}
			if got != want.data {
				t.Errorf("the graph of %s differs from its want section:\n%s", file, lineDiff(want.data, got))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w := strings.Split(want, "\n")
	g := strings.Split(got, "\n")
	inW, inG := map[string]int{}, map[string]int{}
	for _, l := range w {
		inW[l]++
	}
	for _, l := range g {
		inG[l]++
	}
	var b strings.Builder
	for _, l := range w {
		if inG[l] == 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		} else {
			inG[l]--
		}
	}
	for _, l := range g {
		if inW[l] == 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		} else {
			inW[l]--
		}
	}
	return b.String()
}

var _ = api.DefaultSettings
