package workforce

import (
	"context"
	"regexp"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// repeated matches a tool result whose first words say the same thing twice
// ("Not applied: not applied: …", "Error: Error: …").
var repeated = regexp.MustCompile(`(?i)^\s*(error|not applied)\s*:\s*(error|not applied)\b`)

// TestNoToolResultRepeatsItsPrefix holds every refusal a model or an engine
// reads to saying what it is once: a change the editor did not apply, one
// the person rejected, a bad call.
func TestNoToolResultRepeatsItsPrefix(t *testing.T) {
	cases := []struct {
		name  string
		setup func(*headlesstest.Editor, *api.Settings)
		call  clients.ToolCall
	}{
		{"a change the editor did not apply", func(ed *headlesstest.Editor, _ *api.Settings) { ed.Refuse("the file is read-only") },
			call("write_file", map[string]any{"path": "new.txt", "content": "new\n"})},
		{"a change the person rejected", func(ed *headlesstest.Editor, s *api.Settings) {
			s.EditMode = api.EditPropose
			ed.Refuse("Rejected")
		}, call("write_file", map[string]any{"path": "new.txt", "content": "new\n"})},
		{"a change that failed on the way", func(ed *headlesstest.Editor, _ *api.Settings) { ed.FailApply(api.ErrTimeout) },
			call("write_file", map[string]any{"path": "new.txt", "content": "new\n"})},
		{"a call with bad arguments", func(*headlesstest.Editor, *api.Settings) {}, call("read_file", map[string]any{"nope": 1})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			testkit.WriteFiles(t, root, map[string]string{"a.txt": "old\n"})
			ed := headlesstest.New(root, headlesstest.AllCaps())
			st := settings()
			c.setup(ed, &st)
			var results []clients.ToolResult
			m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
				switch {
				case req.Agent == clients.AgentCoordinator:
					return &clients.Response{Text: "one step"}, nil
				case len(req.Messages) == 1:
					cl := c.call
					cl.ID = "call_1"
					return &clients.Response{ToolCalls: []clients.ToolCall{cl}}, nil
				}
				results = req.Messages[len(req.Messages)-1].ToolResults
				return finish("done"), nil
			}}
			ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(Config{Root: root, Editor: ed, Events: &fakeEvents{}, Tracking: ws, Models: m})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "change a.txt"}, st); err != nil {
				t.Fatal(err)
			}
			if len(results) != 1 || !results[0].IsError {
				t.Fatalf("results %+v: want one failed result", results)
			}
			got := results[0].Content
			if repeated.MatchString(got) {
				t.Errorf("the result repeats its prefix: %q", got)
			}
		})
	}
}
