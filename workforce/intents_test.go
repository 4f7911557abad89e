package workforce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testkit"
)

// last returns the last task update the notifier kept.
func (n *fakeEvents) last() api.TaskUpdateParams {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.updates[len(n.updates)-1]
}

// kind returns the events of that kind the notifier kept, in order.
func (n *fakeEvents) kind(kind string) []api.TaskEvent {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []api.TaskEvent
	for _, u := range n.updates {
		if u.Event.Kind == kind {
			out = append(out, u.Event)
		}
	}
	return out
}

const intentsFile = `active_intents:
  - id: INT-001
    name: Greeting
    status: IN_PROGRESS
    owned_scope: ["a.txt"]
  - id: INT-000
    name: Setup
    status: completed
    owned_scope: ["setup/**"]
`

func TestIntentsAreNamedAndCompletedOnesRefused(t *testing.T) {
	files := map[string]string{".orchestration/active_intents.yaml": intentsFile}

	t.Run("the planner and the workers are told each intent: id, status, name and scope", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				return planOf(map[string]any{"id": "1", "content": "look"}), nil
			}
			return finish("looked"), nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, files)
		if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings()); err != nil {
			t.Fatal(err)
		}
		for _, agent := range []string{clients.AgentCoordinator, "1"} {
			reqs := m.requests(agent)
			if len(reqs) == 0 {
				t.Fatalf("%s was never asked", agent)
			}
			for _, want := range []string{"- INT-001 [IN_PROGRESS] Greeting; owned_scope: a.txt", "- INT-000 [completed, cannot be selected] Setup; owned_scope: setup/**"} {
				if !strings.Contains(reqs[0].System, want) {
					t.Errorf("the %s's prompt lacks %q:\n%s", agent, want, reqs[0].System)
				}
			}
		}
	})

	t.Run("agent/run refuses a completed intent, naming those that can be selected", func(t *testing.T) {
		e, _ := newEngine(t, &funcModel{fn: func(context.Context, *clients.Request) (*clients.Response, error) { return finish("x"), nil }}, &fakeEvents{}, files)
		_, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x", IntentID: "INT-000"}, settings())
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `intent "INT-000" (Setup) is completed: a completed intent cannot be selected; select one of "INT-001" (Greeting)`) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("select_intent refuses a completed intent, and the worker selects another", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			switch {
			case req.Agent == clients.AgentCoordinator:
				return planOf(map[string]any{"id": "1", "content": "edit a.txt"}), nil
			case len(req.Messages) == 1:
				return &clients.Response{ToolCalls: []clients.ToolCall{call("select_intent", map[string]any{"intent_id": "INT-000"})}}, nil
			case len(req.Messages) == 3:
				if r := req.Messages[2].ToolResults[0]; !r.IsError || !strings.Contains(r.Content, "cannot be selected") {
					return nil, errors.New("select_intent chose a completed intent: " + r.Content)
				}
				return &clients.Response{ToolCalls: []clients.ToolCall{call("select_intent", map[string]any{"intent_id": "INT-001"})}}, nil
			case len(req.Messages) == 5:
				return &clients.Response{ToolCalls: []clients.ToolCall{call("write_file", map[string]any{"path": "a.txt", "content": "b\n"})}}, nil
			}
			return finish("edited under INT-001"), nil
		}}
		n := &fakeEvents{}
		e, root := newEngine(t, m, n, files)
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		if err != nil || res.State != api.TaskDone || len(res.Changes) != 1 || !res.Changes[0].Applied {
			t.Fatalf("run = %+v, %v", res, err)
		}
		selected := n.kind(api.EventIntentSelected)
		if len(selected) != 1 || selected[0].Text != "INT-001" {
			t.Errorf("intentSelected events = %+v, want INT-001 alone", selected)
		}
		if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "b\n" {
			t.Errorf("a.txt = %q", got)
		}
	})
}
