package handlers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
)

// TestDiagnosticsFromTheEditor holds a worker's edits to the editor's
// diagnostics over real pipes: agent/diagnostics asked before and after
// the edit, the wait ended by agent/didChangeDiagnostics, and the error
// the edit introduced in its tool result.
func TestDiagnosticsFromTheEditor(t *testing.T) {
	const script = `{"agents": {"coordinator": [{"text": "one step"}], "1": [
	  {"toolCalls": [{"name": "read_file", "arguments": {"path": "main.go"}}]},
	  {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { BROKEN() }"}}]},
	  {"toolCalls": [{"name": "finish", "arguments": {"summary": "broke it"}}]}]}}`
	caps := headless.FullCapabilities()
	caps.Diagnostics = true
	r := startRun(t, runOpts{files: map[string]string{"main.go": "package main\n\nfunc main() {}\n"}, script: script, caps: &caps,
		options: map[string]any{"diagnostics": map[string]any{"waitMs": 300000}}})
	// The language server: an error at every BROKEN of main.go on disk.
	r.ed.Handle(api.MethodDiagnostics, func(_ context.Context, raw json.RawMessage) (any, error) {
		var p api.DiagnosticsParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		var items []api.DocumentDiagnostics
		for _, uri := range p.URIs {
			path, err := fileuri.ToPath(uri)
			if err != nil {
				return nil, err
			}
			b, _ := os.ReadFile(path)
			var ds []api.Diagnostic
			if i := strings.Index(string(b), "BROKEN"); i >= 0 {
				line := strings.Count(string(b[:i]), "\n")
				col := i - strings.LastIndex(string(b[:i]), "\n") - 1
				ds = append(ds, api.Diagnostic{Range: api.Range{Start: api.Position{Line: uint32(line), Character: uint32(col)}},
					Severity: api.SeverityError, Source: "compiler", Message: "undefined: BROKEN"})
			}
			items = append(items, api.DocumentDiagnostics{URI: uri, Diagnostics: ds})
		}
		return api.DiagnosticsResult{Items: items}, nil
	})
	t.Run("a notification that is not {uris} is ignored, and the server goes on", func(t *testing.T) {
		if err := r.ed.Notify(testkit.Context(t), api.MethodDidChangeDiagnostics, "x"); err != nil {
			t.Fatal(err)
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodPing, map[string]any{}, nil); err != nil {
			t.Fatalf("ping after it: %v", err)
		}
	})

	// The editor's language server publishes once the change is applied.
	published := make(chan error, 1)
	ctx := testkit.Context(t)
	go func() {
		_, err := r.ed.Await(ctx, func(n headless.Notification) bool {
			var u api.TaskUpdateParams
			return n.Method == api.MethodTaskUpdate && n.Decode(&u) == nil && u.Event.Kind == api.EventChangeApplied
		})
		if err == nil {
			err = r.ed.Notify(ctx, api.MethodDidChangeDiagnostics, api.DidChangeDiagnosticsParams{URIs: []string{fileuri.FromPath(filepath.Join(r.root, "main.go"))}})
		}
		published <- err
	}()
	res, err := r.run(t, api.RunParams{Prompt: "break it", TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-published; err != nil {
		t.Fatal(err)
	}
	var summary string
	for _, u := range r.updates(t, "t1") {
		if u.Event.Kind == api.EventToolResult && u.Event.Tool == "edit_file" {
			summary = u.Event.Summary
		}
	}
	if res.State != api.TaskDone || !strings.Contains(summary, "1 error new. main.go:3:15: error: undefined: BROKEN (compiler)") {
		t.Fatalf("state %s, edit_file's result: %q", res.State, summary)
	}
	var asked int
	for _, c := range r.ed.ReverseCalls() {
		if c.Method == api.MethodDiagnostics {
			asked++
		}
	}
	if asked != 2 {
		t.Errorf("agent/diagnostics asked %d times, want before and after the edit", asked)
	}
}
