package handlers_test

import (
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// TestServerReleasesItsSessionOwnership: a sidecar holds an owner lock on
// the workspace's session store while it serves, so that a sidecar of
// another editor on the workspace lists its running tasks as running. It
// must let go of it however the server ends, or those tasks would never
// show as interrupted.
func TestServerReleasesItsSessionOwnership(t *testing.T) {
	ends := []struct {
		name string
		end  func(t *testing.T, ed *headless.Editor)
	}{
		{"after shutdown and exit", func(t *testing.T, ed *headless.Editor) {
			if c, err := ed.Shutdown(testkit.Context(t)); err != nil || c != 0 {
				t.Fatalf("exit %d, %v", c, err)
			}
		}},
		{"when the editor stops sending", func(t *testing.T, ed *headless.Editor) {
			ed.Close()
			if c, err := ed.Wait(testkit.Context(t)); err != nil || c != 1 {
				t.Fatalf("exit %d, %v", c, err)
			}
		}},
	}
	for _, e := range ends {
		t.Run("the owner lock is released "+e.name, func(t *testing.T) {
			state := t.TempDir()
			t.Setenv("AGENTLS_STATE_DIR", state)
			ed := start(t, headless.Options{})
			var res api.SessionsResult
			if err := ed.Call(testkit.Context(t), api.MethodSessions, nil, &res); err != nil {
				t.Fatal(err)
			}
			pattern := filepath.Join(state, "workspaces", "*", "owners", "*.lock")
			if held, _ := filepath.Glob(pattern); len(held) != 1 {
				t.Fatalf("owner files while serving: %v, want one", held)
			}
			e.end(t, ed)
			if held, _ := filepath.Glob(pattern); len(held) != 0 {
				t.Errorf("owner files after the server ended: %v", held)
			}
		})
	}
}
