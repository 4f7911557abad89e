package workforce

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tracking"
)

// fakeEditor answers every reverse call at once, from the disk: the editor
// of unit tests and benchmarks.
type fakeEditor struct {
	root string
	caps api.Caps
	// readFile, when set, replaces the answer to agent/readFile.
	readFile func(path string) (string, error)
}

func (f *fakeEditor) Caps() api.Caps { return f.caps }

func (f *fakeEditor) ReadFile(_ context.Context, path, _ string) (string, error) {
	if f.readFile != nil {
		return f.readFile(path)
	}
	b, err := os.ReadFile(filepath.Join(f.root, path))
	return string(b), err
}

func (f *fakeEditor) ApplyEdit(context.Context, api.ApplyWorkspaceEditParams, api.Wait) (api.ApplyWorkspaceEditResult, error) {
	return api.ApplyWorkspaceEditResult{}, fmt.Errorf("applyEdit: %w", api.ErrUnsupported)
}

func (f *fakeEditor) ShowMessageRequest(_ context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	return &p.Actions[0], nil
}

func (f *fakeEditor) RunCommand(context.Context, api.RunCommandParams) (api.RunCommandResult, error) {
	return api.RunCommandResult{ExitCode: 0, Output: "ok\n"}, nil
}

func (f *fakeEditor) Ask(context.Context, api.AskParams) (*string, error) {
	a := "yes"
	return &a, nil
}

func (f *fakeEditor) WorkDoneProgressCreate(context.Context, *api.ProgressToken) error {
	return fmt.Errorf("progress: %w", api.ErrUnsupported)
}

// fakeNotifier keeps the task updates.
type fakeNotifier struct {
	mu      sync.Mutex
	updates []api.TaskUpdateParams
	discard bool
}

func (n *fakeNotifier) TaskUpdate(_ context.Context, p *api.TaskUpdateParams) error {
	if n.discard {
		return nil
	}
	n.mu.Lock()
	n.updates = append(n.updates, *p)
	n.mu.Unlock()
	return nil
}

func (n *fakeNotifier) Progress(context.Context, *api.ProgressParams) error { return nil }

func (n *fakeNotifier) LogMessage(context.Context, api.MessageType, string) error { return nil }

// funcModel answers with a function of the request; it records the
// requests.
type funcModel struct {
	mu   sync.Mutex
	reqs []clients.Request
	fn   func(ctx context.Context, req *clients.Request) (*clients.Response, error)
}

func (m *funcModel) Complete(ctx context.Context, req *clients.Request, _ func(clients.Delta)) (*clients.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, *req)
	m.mu.Unlock()
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

func (m *funcModel) Model(string) (Model, string, error) { return m, "test:model", nil }

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
func newEngine(t testing.TB, m *funcModel, n *fakeNotifier, files map[string]string) (*Engine, string) {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return newEngineAt(t, m, n, root), root
}

// newEngineAt returns an Engine over the workspace root (symlinks resolved).
func newEngineAt(t testing.TB, m *funcModel, n *fakeNotifier, root string) *Engine {
	t.Helper()
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Root: root, Editor: &fakeEditor{root: root}, Notifier: n, Tracking: ws, Models: m})
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
