package codegraph

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

// callers writes a module whose package lib defines Target, n files of
// package c that call it once each, and a file after them (in path order)
// that calls another definition of the name.
func callers(t *testing.T, n int) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/p\n")
	writeFile(t, root, "lib/lib.go", "package lib\n\nfunc Target() {}\n")
	writeFile(t, root, "other/other.go", "package other\n\nfunc Target() {}\n")
	for i := range n {
		writeFile(t, root, fmt.Sprintf("c/f%03d.go", i),
			fmt.Sprintf("package c\n\nimport \"example.com/p/lib\"\n\nfunc F%d() { lib.Target() }\n", i))
	}
	writeFile(t, root, "z/z.go", "package z\n\nimport \"example.com/p/other\"\n\nfunc Z() { other.Target() }\n")
	return root
}

func shownCalls(res *api.CodeGraphResult) int {
	n := 0
	for _, e := range res.Edges {
		if e.Kind == "calls" {
			n += e.Count
		}
	}
	return n
}

// TestCutAnswerSaysWhatItLeft: a symbol's answer stops reading the files
// that refer to it once it is full, and says so: truncated, the
// references found in the files it read and left out (omitted), and the
// files it did not read (unread), which the index of names says refer to
// the name, whichever definition they mean.
func TestCutAnswerSaysWhatItLeft(t *testing.T) {
	t.Run("cut", func(t *testing.T) {
		g := start(t, Config{Root: callers(t, 600)})
		res, err := g.CodeGraph(context.Background(), Query{Symbol: "lib.Target"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.Unread == 0 || len(res.Nodes) > maxNodes {
			t.Fatalf("truncated %v, unread %d, %d nodes; want a cut answer with files unread", res.Truncated, res.Unread, len(res.Nodes))
		}
		// every call to lib.Target is shown, omitted, or in a file unread;
		// z/z.go, unread, calls the other Target
		if shown := shownCalls(res); shown+res.Omitted+res.Unread != 601 {
			t.Errorf("%d calls shown, %d omitted, %d files unread; want 600 calls and z/z.go in all", shown, res.Omitted, res.Unread)
		}
		for _, n := range res.Nodes {
			if n.Path == "z/z.go" {
				t.Errorf("z/z.go, after the cut, is a node")
			}
		}
	})
	t.Run("whole", func(t *testing.T) {
		g := start(t, Config{Root: callers(t, 100)})
		res, err := g.CodeGraph(context.Background(), Query{Symbol: "lib.Target"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Truncated || res.Unread != 0 || res.Omitted != 0 || shownCalls(res) != 100 {
			t.Errorf("truncated %v, unread %d, omitted %d, %d calls shown; want all 100 calls and no cut",
				res.Truncated, res.Unread, res.Omitted, shownCalls(res))
		}
	})
	t.Run("references are all read", func(t *testing.T) {
		g := start(t, Config{Root: callers(t, 600)})
		refs, n, err := g.References(context.Background(), "Target", "lib/lib.go", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if n != 600 || len(refs) != 600 {
			t.Errorf("%d references (%d listed), want 600", n, len(refs))
		}
	})
}

// naiveGroups is groupPaths as a map of appends, path by path.
func naiveGroups(paths []string, key func(string) string) map[string][]string {
	out := map[string][]string{}
	for _, p := range paths {
		k := key(p)
		if k == "" {
			k = "."
		}
		out[k] = append(out[k], p)
	}
	return out
}

func TestGroupPathsByRuns(t *testing.T) {
	dirOf := func(p string) string { return p[:max(strings.LastIndexByte(p, '/'), 0)] }
	// a directory's files with a subdirectory's sorted among them
	paths := []string{"a.go", "d/a.go", "d/b/x.go", "d/b/y.go", "d/c.go", "d/c/z.go", "d/e.go", "e/b/x.go", "main.go"}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		paths = append(paths, fmt.Sprintf("r%d/s%d/f%d.go", r.IntN(5), r.IntN(5), i%37))
	}
	sort.Strings(paths)
	paths = slices.Compact(paths)
	for name, key := range map[string]func(string) string{"dir": dirOf, "base": path.Base} {
		got, want := groupPaths(paths, key), naiveGroups(paths, key)
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("by %s: groupPaths differs from a group made path by path", name)
		}
		// an append to one group never writes over the next
		for k := range got {
			next := append(got[k], "new")
			if !slices.Equal(next[:len(next)-1], want[k]) {
				t.Errorf("by %s: an append to %s changed it", name, k)
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("by %s: an append to a group changed another", name)
		}
	}
}

// TestIndexByFileNameMadeWhenNeeded: the index by file name, made when a
// query first needs it, is the one a start would have made, and stays
// current with the changes after it, as one made before them.
func TestIndexByFileNameMadeWhenNeeded(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "lib/a/util.lua", "return {}\n")
	writeFile(t, root, "lib/b/util.lua", "return {}\n")
	writeFile(t, root, "main.lua", "local u = require \"a.util\"\n")
	state := t.TempDir() + "/graph.bin"
	start(t, Config{Root: root, StateFile: state}) // stores the graph
	ctx := context.Background()
	eager := func(g *Graph) map[string][]string {
		paths := slices.Sorted(maps.Keys(g.files))
		return groupPaths(paths, path.Base)
	}
	sorted := func(m map[string][]string) map[string][]string {
		out := map[string][]string{}
		for k, v := range m {
			out[k] = slices.Sorted(slices.Values(v))
		}
		return out
	}
	for _, made := range []bool{false, true} {
		g := start(t, Config{Root: root, StateFile: state})
		g.mu.RLock()
		loaded := g.bases == nil
		if made {
			g.byBase()
		}
		g.mu.RUnlock()
		if !loaded {
			t.Fatalf("the index by file name was made at the start")
		}
		writeFile(t, root, "lib/c/util.lua", "return {}\n")
		g.Changed("lib/c/util.lua")
		if err := g.Current(ctx); err != nil {
			t.Fatal(err)
		}
		g.mu.RLock()
		if made == (g.bases == nil) {
			t.Errorf("made %v before the change: the index is made after it: %v", made, g.bases != nil)
		}
		got, want := sorted(g.byBase()), eager(g)
		g.mu.RUnlock()
		if !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("made %v before the change: %v, want %v", made, got, want)
		}
		if len(got["util.lua"]) != 3 {
			t.Errorf("made %v before the change: util.lua in %v, want 3 files", made, got["util.lua"])
		}
	}
}

func TestDirOfIsPathDir(t *testing.T) {
	for _, p := range []string{"a.go", "a/b.go", "a/b/c.go", ".a/b.go", "a/.b/c.go", "a//b.go", "./a.go", "a/../b.go",
		"/a.go", "/", "", "a/", "a/b/", "..", "../a.go", "a/./b.go", ".git/x", "a.b/c.d/e"} {
		if got, want := dirOf(p), path.Dir(p); got != want {
			t.Errorf("dirOf(%q) = %q, want %q", p, got, want)
		}
	}
}
