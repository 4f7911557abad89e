package workforce

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// fakeEvents keeps the task updates (as agent/taskUpdate's params) and
// every event.
type fakeEvents struct {
	mu      sync.Mutex
	updates []api.TaskUpdateParams
	events  []Event
	discard bool
}

func (n *fakeEvents) Event(_ context.Context, ev Event) error {
	if n.discard {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.events = append(n.events, ev)
	if ev.Update != nil {
		n.updates = append(n.updates, api.TaskUpdateParams{TaskID: ev.TaskID, SessionID: ev.SessionID, Seq: ev.Seq, State: ev.State, Subtasks: ev.Subtasks, Event: *ev.Update})
	}
	return nil
}

// funcModel answers with a function of the request; it records the
// requests.
type funcModel struct {
	mu   sync.Mutex
	reqs []clients.Request
	fn   func(ctx context.Context, req *clients.Request) (*clients.Response, error)
	// stream, when set, streams the deltas of a call before fn answers it.
	stream func(req *clients.Request, onDelta func(clients.Delta))
}

func (m *funcModel) Complete(ctx context.Context, req *clients.Request, onDelta func(clients.Delta)) (*clients.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, *req)
	m.mu.Unlock()
	if m.stream != nil && onDelta != nil {
		m.stream(req, onDelta)
	}
	return m.fn(ctx, req)
}

func (m *funcModel) requests(agent string) []clients.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []clients.Request
	for _, r := range m.reqs {
		if r.Agent == agent {
			out = append(out, r)
		}
	}
	return out
}

func (m *funcModel) Model(string, string) (Model, string, error) { return m, "test:model", nil }

func call(name string, args any) clients.ToolCall {
	b, _ := json.Marshal(args)
	return clients.ToolCall{ID: name, Name: name, Arguments: b}
}

func planOf(subs ...map[string]any) *clients.Response {
	return &clients.Response{ToolCalls: []clients.ToolCall{call("plan", map[string]any{"subtasks": subs})}}
}

func finish(summary string) *clients.Response {
	return &clients.Response{ToolCalls: []clients.ToolCall{call("finish", map[string]any{"summary": summary})}}
}

// newEngine returns an Engine over a temporary workspace with files.
func newEngine(t testing.TB, m *funcModel, n *fakeEvents, files map[string]string) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	testkit.WriteFiles(t, root, files)
	return newEngineAt(t, m, n, root), root
}

// newEngineAt returns an Engine over the workspace root (symlinks resolved).
func newEngineAt(t testing.TB, m *funcModel, n *fakeEvents, root string) *Engine {
	t.Helper()
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Root: root, Editor: headlesstest.New(root, api.Caps{}), Events: n, Tracking: ws, Models: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func settings() api.Settings {
	s := api.DefaultSettings()
	s.EditMode = api.EditApply
	s.Commands = api.CommandsAllow
	return s
}
