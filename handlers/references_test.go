package handlers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
)

// TestReferencesFromTheEditor holds agent/codeGraph to the editor's
// language server over real pipes: asked with agent/references when the
// editor declares it, never otherwise, and the graph answering when the
// editor has no language server for the file.
func TestReferencesFromTheEditor(t *testing.T) {
	files := map[string]string{
		"go.mod":       "module example.com/w\n\ngo 1.22\n",
		"one/one.go":   "package one\n\ntype Reader struct{}\n\nfunc Use(r Reader) {}\n",
		"two/two.go":   "package two\n\ntype Reader struct{}\n",
		"main/main.go": "package main\n\nimport \"example.com/w/one\"\n\nfunc main() { one.Use(one.Reader{}) }\n",
	}
	workspace := func(t *testing.T) string {
		root := t.TempDir()
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		for name, text := range files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	loc := func(root, path string, line, from, to uint32) api.Location {
		return api.Location{URI: fileuri.FromPath(filepath.Join(root, filepath.FromSlash(path))),
			Range: api.Range{Start: api.Position{Line: line, Character: from}, End: api.Position{Line: line, Character: to}}}
	}
	edges := func(t *testing.T, ed *headless.Editor, symbol string) map[string]api.CodeGraphEdge {
		t.Helper()
		var res api.CodeGraphResult
		if err := ed.Call(testkit.Context(t), api.MethodCodeGraph, api.CodeGraphParams{Symbol: symbol}, &res); err != nil {
			t.Fatal(err)
		}
		out := map[string]api.CodeGraphEdge{}
		for _, e := range res.Edges {
			if e.Kind == "references" || e.Kind == "calls" {
				out[e.From+" -> "+e.To] = e
			}
		}
		return out
	}

	t.Run("an editor that declares agent/references answers it, and its answer is the edges", func(t *testing.T) {
		root := workspace(t)
		caps := headless.FullCapabilities()
		caps.References, caps.Definition = true, true
		ed := start(t, headless.Options{Root: root, Serve: serveFunc(root), Caps: caps})
		var mu sync.Mutex
		var asked []api.ReferenceParams
		ed.Handle(api.MethodReferences, func(_ context.Context, raw json.RawMessage) (any, error) {
			var p api.ReferenceParams
			if err := json.Unmarshal(raw, &p); err != nil {
				return nil, err
			}
			mu.Lock()
			asked = append(asked, p)
			mu.Unlock()
			// one.Reader: its declaration, Use's parameter, main's literal
			return []api.Location{loc(root, "one/one.go", 2, 5, 11), loc(root, "one/one.go", 4, 11, 17), loc(root, "main/main.go", 4, 26, 32)}, nil
		})
		got := edges(t, ed, "one.Reader")
		for _, want := range []string{"one/one.go#Use -> one/one.go#Reader", "main/main.go#main -> one/one.go#Reader"} {
			if e, ok := got[want]; !ok || e.Provenance != api.ProvenanceLSP || e.Count != 1 {
				t.Errorf("%s: %+v (edges %v)", want, e, got)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(asked) != 1 || asked[0].TextDocument.URI != fileuri.FromPath(filepath.Join(root, "one", "one.go")) ||
			asked[0].Position != (api.Position{Line: 2, Character: 5}) || !asked[0].Context.IncludeDeclaration {
			t.Errorf("asked %+v", asked)
		}
	})
	t.Run("an editor without a language server for the file leaves the answer to the graph", func(t *testing.T) {
		root := workspace(t)
		caps := headless.FullCapabilities()
		caps.References, caps.Definition = true, true
		ed := start(t, headless.Options{Root: root, Serve: serveFunc(root), Caps: caps})
		got := edges(t, ed, "one.Reader")
		if e := got["main/main.go#main -> one/one.go#Reader"]; e.Provenance != api.ProvenanceResolved {
			t.Errorf("edges %v", got)
		}
		if _, ok := got["main/main.go#main -> two/two.go#Reader"]; ok {
			t.Errorf("another package's Reader: %v", got)
		}
		n := 0
		for _, c := range ed.ReverseCalls() {
			if c.Method == api.MethodReferences {
				n++
			}
		}
		if n != 1 {
			t.Errorf("agent/references asked %d times, want once", n)
		}
	})
	t.Run("an editor that does not declare it is never asked", func(t *testing.T) {
		root := workspace(t)
		ed := start(t, headless.Options{Root: root, Serve: serveFunc(root), Caps: headless.FullCapabilities()})
		got := edges(t, ed, "Reader")
		if e := got["main/main.go#main -> one/one.go#Reader"]; e.Provenance != api.ProvenanceResolved {
			t.Errorf("edges %v", got)
		}
		for _, c := range ed.ReverseCalls() {
			if c.Method == api.MethodReferences || c.Method == api.MethodDefinition {
				t.Errorf("asked %s", c.Method)
			}
		}
	})
}
