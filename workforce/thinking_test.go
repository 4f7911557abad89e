package workforce

import (
	"context"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/testkit"
)

func TestThinking(t *testing.T) {
	const key = "sk-think-0123456789abcdef"
	signed := []clients.ThinkingBlock{{Text: "Plan: read, then finish.", Signature: "sig-1"}}
	run := func(t *testing.T, enabled bool) (*funcModel, *fakeEvents, *api.RunResult, *Engine) {
		m := &funcModel{
			stream: func(req *clients.Request, onDelta func(clients.Delta)) {
				if req.Thinking == nil || len(req.Messages) != 1 {
					return // each agent's first call thinks
				}
				// The key is split across two pieces: it is redacted whole;
				// the last piece ends as the key starts, and is held back
				// until the text shows it is not the key.
				for _, piece := range []string{"Plan: read, ", "then finish. " + key[:8], key[8:] + " is the key. sk", ""} {
					onDelta(clients.Delta{Thinking: piece})
				}
				onDelta(clients.Delta{Text: "Reading."})
			},
			fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
				switch {
				case req.Agent == clients.AgentCoordinator:
					return planOf(map[string]any{"id": "1", "content": "read"}), nil
				case len(req.Messages) == 1:
					return &clients.Response{Text: "Reading.", Thinking: signed, ToolCalls: []clients.ToolCall{call("list_files", map[string]any{})}}, nil
				}
				return finish("read"), nil
			},
		}
		n := &fakeEvents{}
		e, _ := newEngine(t, m, n, map[string]string{"main.go": "package main\n"})
		red := redact.New()
		red.Add("TEST_API_KEY", key)
		e.cfg.Redactor = red
		s := settings()
		s.Thinking = api.Thinking{Enabled: enabled, BudgetTokens: 2048}
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "read"}, s)
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		return m, n, res, e
	}
	t.Run("with the setting", func(t *testing.T) {
		m, n, res, e := run(t, true)
		t.Run("asks every agent for thinking with the budget", func(t *testing.T) {
			for _, agent := range []string{clients.AgentCoordinator, "1"} {
				if r := m.requests(agent)[0]; r.Thinking == nil || r.Thinking.BudgetTokens != 2048 {
					t.Errorf("%s asked %+v", agent, r.Thinking)
				}
			}
		})
		var worker []string
		var order []string
		n.mu.Lock()
		for _, u := range n.updates {
			if u.TaskID != res.TaskID || u.Event.SubtaskID != "1" {
				continue
			}
			switch u.Event.Kind {
			case api.EventThinking:
				worker = append(worker, u.Event.Text)
				order = append(order, "thinking")
			case api.EventMessageDelta:
				order = append(order, "delta")
			}
		}
		n.mu.Unlock()
		t.Run("streams the worker's thinking as thinking events, secrets redacted", func(t *testing.T) {
			got := strings.Join(worker, "")
			if got != "Plan: read, then finish. [redacted TEST_API_KEY] is the key. sk" || strings.Contains(got, key[:8]) {
				t.Errorf("thinking = %q", worker)
			}
		})
		t.Run("sends the whole thinking before the text that follows it", func(t *testing.T) {
			if len(order) < 2 || order[len(order)-1] != "delta" || strings.Count(strings.Join(order, ","), "delta") != 1 {
				t.Errorf("order = %v", order)
			}
		})
		t.Run("gives the model its thinking back in the turn that follows", func(t *testing.T) {
			r := m.requests("1")[1]
			if a := r.Messages[1]; a.Role != clients.RoleAssistant || len(a.Thinking) != 1 || a.Thinking[0].Signature != "sig-1" {
				t.Errorf("assistant message = %+v", a)
			}
		})
		t.Run("keeps no thinking in the session", func(t *testing.T) {
			ses, err := e.cfg.Tracking.Sessions.Session(res.SessionID)
			if err != nil {
				t.Fatal(err)
			}
			if b := string(mustJSON(t, ses)); strings.Contains(b, "Plan: read") || !strings.Contains(b, "Reading.") {
				t.Errorf("the session holds thinking, or not the answer: %s", b)
			}
		})
	})
	t.Run("without it asks for none and streams none", func(t *testing.T) {
		m, n, res, _ := run(t, false)
		if r := m.requests("1")[0]; r.Thinking != nil {
			t.Errorf("asked %+v", r.Thinking)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, u := range n.updates {
			if u.TaskID == res.TaskID && u.Event.Kind == api.EventThinking {
				t.Errorf("thinking event %+v", u.Event)
			}
		}
	})
}
