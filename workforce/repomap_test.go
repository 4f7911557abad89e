package workforce

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// graphEngine is an Engine with a code graph of root.
func graphEngine(t *testing.T, m *funcModel, root string) (*Engine, *codegraph.Graph) {
	t.Helper()
	g, err := codegraph.New(codegraph.Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Root: root, Editor: headlesstest.New(root, api.Caps{}), Events: &fakeEvents{}, Tracking: ws, Models: m, Graph: g})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e, g
}

func TestRepoMap(t *testing.T) {
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	testkit.WriteFiles(t, root, map[string]string{
		"store.go": "package svc\n\ntype Store struct{}\n\nfunc (s *Store) Get(k string) string { return k }\n",
		"users.go": "package svc\n\nfunc User(s *Store) string { return s.Get(\"u\") }\n",
	})
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		switch {
		case req.Agent == clients.AgentCoordinator:
			return planOf(map[string]any{"id": "1", "content": "Add an Orders helper"}), nil
		case len(req.Messages) == 1:
			return &clients.Response{ToolCalls: []clients.ToolCall{call("write_file", map[string]any{
				"path": "orders.go", "content": "package svc\n\nfunc Orders(s *Store) string { return s.Get(\"o\") }\n"})}}, nil
		}
		return finish("added"), nil
	}}
	e, g := graphEngine(t, m, root)
	s := settings()
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "Add an Orders helper next to User"}, s)
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run: %v, %+v", err, res)
	}
	t.Run("the planner and the worker see the repo map", func(t *testing.T) {
		for _, agent := range []string{clients.AgentCoordinator, "1"} {
			reqs := m.requests(agent)
			if len(reqs) == 0 {
				t.Fatalf("%s made no request", agent)
			}
			// The map is tuned to the request and the subtask: it comes in
			// the agent's first message, after the shared system prompt.
			first := reqs[0].Messages[0].Text
			if !strings.Contains(first, "Repository map") || !strings.Contains(first, "store.go:\n") ||
				!strings.Contains(first, "5│func (s *Store) Get(k string) string { return k }") {
				t.Errorf("%s's first message has no repo map:\n%s", agent, first)
			}
			if strings.Contains(reqs[0].System, "Repository map") {
				t.Errorf("%s's system prompt holds the repo map", agent)
			}
		}
	})
	t.Run("a file a worker writes is in the graph at once", func(t *testing.T) {
		out, err := g.CodeGraph(testkit.Context(t), codegraph.Query{Symbol: "Orders"})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Nodes) < 2 || out.Nodes[1].ID != "orders.go#Orders" {
			t.Errorf("nodes %+v", out.Nodes)
		}
	})
	t.Run("an undo takes the file out of the graph again", func(t *testing.T) {
		u, err := e.Undo(testkit.Context(t), api.UndoParams{TaskID: res.TaskID}, s)
		if err != nil || !u.Undone {
			t.Fatalf("undo: %v, %+v", err, u)
		}
		if err := g.Current(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := g.CodeGraph(testkit.Context(t), codegraph.Query{Symbol: "Orders"}); !errors.Is(err, codegraph.ErrNotFound) {
			t.Errorf("Orders is still in the graph after the undo: %v", err)
		}
	})
	t.Run("repoMapTokens 0 leaves the map out", func(t *testing.T) {
		m.mu.Lock()
		m.reqs = nil
		m.mu.Unlock()
		s.RepoMapTokens = 0
		if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "Add an Orders helper next to User"}, s); err != nil {
			t.Fatal(err)
		}
		if first := m.requests(clients.AgentCoordinator)[0].Messages[0].Text; strings.Contains(first, "Repository map") {
			t.Errorf("a map with repoMapTokens 0:\n%s", first)
		}
	})
}
