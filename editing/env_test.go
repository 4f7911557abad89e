package editing

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

// recorder is an Observer that keeps what it hears.
type recorder struct {
	mu       sync.Mutex
	accesses []string // "agent action path"
	blocked  []string // "path: reason"
}

func (r *recorder) Access(who Actor, path, action string) {
	r.mu.Lock()
	r.accesses = append(r.accesses, who.AgentID+" "+action+" "+path)
	r.mu.Unlock()
}

func (r *recorder) Blocked(who Actor, path, reason string) {
	r.mu.Lock()
	r.blocked = append(r.blocked, path+": "+reason)
	r.mu.Unlock()
}

type env struct {
	root string
	ed   *headlesstest.Editor
	obs  *recorder
	ws   *Workspace
	warn []string
}

// newEnv makes a workspace in a temp dir over an in-process editor.
func newEnv(t *testing.T, caps api.Caps, mode string, zones api.Zones, files map[string]string) *env {
	t.Helper()
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	e := &env{root: root, ed: headlesstest.New(root, caps), obs: &recorder{}}
	if zones.Allow == nil && zones.Deny == nil {
		zones = api.DefaultSettings().Zones
	}
	ws, err := New(Config{
		Root: root, Zones: zones, EditMode: mode, Editor: e.ed, Observer: e.obs,
		Warn: func(ctx context.Context, msg string) { e.warn = append(e.warn, msg) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	return e
}

func (e *env) agent(mode string) *Agent { return e.ws.Task("t1", "add greet", mode).Agent("1") }

func (e *env) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
