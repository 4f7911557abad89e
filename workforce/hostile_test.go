package workforce

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/editing/editingtest"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

// hostileCall is one tool call of the hostile table and what its result
// must say.
type hostileCall struct {
	c     editingtest.Case
	call  clients.ToolCall
	write bool
}

// runHostile sets up an engine over the hostile workspace whose one worker
// makes every call at once, as a model would; run runs it and returns the
// results in order. The worker runs them through its tool
// dispatcher, as it runs any model's calls.
func runHostile(t *testing.T, h *editingtest.Hostile, intent string, calls []hostileCall) (run func() []clients.ToolResult) {
	t.Helper()
	var results []clients.ToolResult
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		switch {
		case req.Agent == clients.AgentCoordinator:
			return &clients.Response{Text: "one step"}, nil
		case len(req.Messages) == 1:
			tc := make([]clients.ToolCall, len(calls))
			for i, c := range calls {
				tc[i] = c.call
			}
			return &clients.Response{ToolCalls: tc}, nil
		}
		results = req.Messages[len(req.Messages)-1].ToolResults
		return finish("tried"), nil
	}}
	e := newEngineAt(t, m, &fakeEvents{discard: true}, h.Root)
	return func() []clients.ToolResult {
		s := settings()
		s.Zones = h.Zones
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "escape", IntentID: intent}, s)
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if len(results) != len(calls) {
			t.Fatalf("%d results for %d calls", len(results), len(calls))
		}
		return results
	}
}

// snapshot maps every path under dir to its content or link target.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			out[p] = "-> " + target
			return err
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			out[p] = string(b)
			return err
		}
		out[p] = "dir"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSnapshot(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	for p, v := range before {
		if after[p] != v {
			t.Errorf("%s: %s changed from %q to %q", what, p, v, after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s: %s appeared", what, p)
		}
	}
}

// TestHostilePathsThroughTheTools runs editing's hostile-path table
// (editingtest) through the worker's file tools: every tool refuses every
// hostile path with its reason, listings and searches show nothing a read
// would refuse, no result holds a secret, and nothing on disk changes.
func TestHostilePathsThroughTheTools(t *testing.T) {
	for _, pass := range []struct {
		name   string
		intent bool
	}{
		{"without an intent, editing refuses with the rule", false},
		{"with an intent selected, writes are refused too", true},
	} {
		t.Run(pass.name, func(t *testing.T) {
			h := editingtest.New(t)
			intent := ""
			if pass.intent {
				intent = "hostile"
				yaml := "active_intents:\n  - id: hostile\n    name: Hostile\n    owned_scope: [" + `"` + strings.Join(h.Scope, `", "`) + `"` + "]\n"
				if err := os.MkdirAll(filepath.Join(h.Root, ".orchestration"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(h.Root, ".orchestration", "active_intents.yaml"), []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// The regex finds the secret without quoting it in "(no matches for …)".
			secretRE := editingtest.Secret[:3] + "[" + editingtest.Secret[3:4] + "]" + editingtest.Secret[4:]
			var calls []hostileCall
			for _, c := range h.Cases {
				if !c.Write {
					calls = append(calls,
						hostileCall{c: c, call: call("read_file", map[string]any{"path": c.Path})},
						hostileCall{c: c, call: call("list_files", map[string]any{"pattern": c.Path})},
						hostileCall{c: c, call: call("list_files", map[string]any{"pattern": c.Path + "/**"})},
						hostileCall{c: c, call: call("search_files", map[string]any{"regex": secretRE, "glob": c.Path})},
						hostileCall{c: c, call: call("search_files", map[string]any{"regex": secretRE, "glob": c.Path + "/**"})},
					)
				}
				if c.Write && !pass.intent {
					continue // without an owned scope, the write is allowed
				}
				calls = append(calls,
					hostileCall{c: c, write: true, call: call("write_file", map[string]any{"path": c.Path, "content": "overwritten\n"})},
					hostileCall{c: c, write: true, call: call("edit_file", map[string]any{"path": c.Path, "old_string": editingtest.Secret, "new_string": "x"})},
					hostileCall{c: c, write: true, call: call("delete_file", map[string]any{"path": c.Path})},
				)
			}
			// A listing may name only what read_file would read.
			ws, err := editing.New(editing.Config{Root: h.Root, Zones: h.Zones, Editor: headlesstest.New(h.Root, api.Caps{})})
			if err != nil {
				t.Fatal(err)
			}
			run := runHostile(t, h, intent, calls)
			parent := filepath.Dir(h.Root)
			before, beforeOut, beforeParent := snapshot(t, h.Root), snapshot(t, h.Outside), names(t, parent)

			results := run()

			for i, r := range results {
				hc := calls[i]
				name := hc.c.Name + ": " + hc.call.Name + " " + string(hc.call.Arguments)
				if strings.Contains(r.Content, editingtest.Secret) {
					t.Errorf("%s: the result holds the secret:\n%s", name, r.Content)
				}
				switch hc.call.Name {
				case "list_files":
					if r.IsError {
						continue // a pattern refused as such
					}
					for _, line := range strings.Split(r.Content, "\n") {
						if line == "" || strings.HasPrefix(line, "(") || strings.HasPrefix(line, "[") {
							continue
						}
						if _, err := ws.Access(editing.Actor{}, line, false, nil); err != nil {
							t.Errorf("%s: listed %s, which read_file refuses: %v", name, line, err)
						}
					}
				case "search_files":
					if !r.IsError && !strings.HasPrefix(r.Content, "(no matches") {
						t.Errorf("%s: found\n%s", name, r.Content)
					}
				default:
					says := strings.Contains(r.Content, hc.c.Reason)
					if pass.intent && hc.write {
						// The intent's gate refuses first what is not in the
						// owned scope as written; editing refuses the rest.
						says = says || strings.Contains(r.Content, "owned_scope")
					}
					if !r.IsError || !says {
						t.Errorf("%s = %q (error: %v); want an error saying %q", name, r.Content, r.IsError, hc.c.Reason)
					}
				}
			}
			sameSnapshot(t, "workspace", before, snapshot(t, h.Root))
			sameSnapshot(t, "outside", beforeOut, snapshot(t, h.Outside))
			sameSnapshot(t, "beside the workspace", beforeParent, names(t, parent))
		})
	}
}

// names maps the entries of dir to their kind.
func names(t *testing.T, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range ents {
		out[e.Name()] = e.Type().String()
	}
	return out
}
