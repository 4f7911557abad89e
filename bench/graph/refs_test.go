package main

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/agentls/agentls/codegraph"
)

// TestOracle holds the oracle to what the compiler would call references,
// on a tree where a guess by name would be wrong, and the graph to it.
func TestOracle(t *testing.T) {
	tree := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":       "module std\n",
		"fmt/print.go": "package fmt\n\nfunc Errorf(f string) error { return nil }\n\nfunc wrap() error { return Errorf(\"x\") }\n",
		"fmt/fmt_test.go": "package fmt_test\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n" +
			"func TestErrorf(t *testing.T) {\n\tt.Errorf(\"no\")\n\t_ = fmt.Errorf(\"yes\")\n}\n",
		"testing/testing.go": "package testing\n\ntype T struct{}\n\nfunc (*T) Errorf(f string) {}\n",
		"use/use.go": "package use\n\nimport f \"fmt\"\n\nfunc a() error {\n\tErrorf := 1\n\t_ = Errorf\n\treturn f.Errorf(\"alias\")\n}\n\n" +
			"func b() {\n\tfmt := struct{ Errorf int }{}\n\t_ = fmt.Errorf\n}\n",
	} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := codegraph.New(codegraph.Config{Root: tree})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := parseTree(tree, g)
	if err != nil {
		t.Fatal(err)
	}
	packageNames(files)
	target, ok := find(files, "fmt", "Errorf")
	if !ok {
		t.Fatal("fmt.Errorf not found")
	}
	list := func(m map[place]bool) []place {
		var out []place
		for p := range m {
			out = append(out, p)
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].path != out[j].path {
				return out[i].path < out[j].path
			}
			return out[i].line < out[j].line
		})
		return out
	}
	want := []place{{"fmt/fmt_test.go", 9, 9}, {"fmt/print.go", 4, 27}, {"use/use.go", 7, 10}}
	oracle := oracleRefs(files, target)
	if got := list(oracle); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("the oracle's references = %v, want %v", got, want)
	}
	graph, provs, err := graphRefs(ctx, g, target)
	if err != nil {
		t.Fatal(err)
	}
	if got := list(graph); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || provs["resolved"] != 3 {
		t.Errorf("the graph's references = %v (%v), want %v", got, provs, want)
	}
}
