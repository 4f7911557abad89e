package core_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/core"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestLayout(t *testing.T) {
	t.Run("makes the workspace's directories 0700", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		t.Setenv("AGENTLS_STATE_DIR", state)
		l, err := core.LayoutOf("/some/root")
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Ensure(); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{state, filepath.Join(state, "workspaces"), l.Workspace} {
			if m := mode(t, d); m != 0o700 {
				t.Errorf("%s is %#o, want 0700", d, m)
			}
		}
		if filepath.Dir(l.Graph()) != l.Workspace || filepath.Dir(l.Bridge()) != state || filepath.Dir(l.Engines()) != state {
			t.Errorf("paths %s %s %s", l.Graph(), l.Bridge(), l.Engines())
		}
	})
	t.Run("closes the levels an older release left open, not the directory the user chose", func(t *testing.T) {
		state := t.TempDir()
		if err := os.Chmod(state, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("AGENTLS_STATE_DIR", state)
		l, _ := core.LayoutOf("/some/root")
		if err := os.MkdirAll(l.Workspace, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := l.Ensure(); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, state); m != 0o755 {
			t.Errorf("the chosen state directory became %#o", m)
		}
		for _, d := range []string{filepath.Join(state, "workspaces"), l.Workspace} {
			if m := mode(t, d); m != 0o700 {
				t.Errorf("%s is %#o, want 0700", d, m)
			}
		}
	})
	t.Run("closes the state directory agentls named", func(t *testing.T) {
		xdg := t.TempDir()
		t.Setenv("AGENTLS_STATE_DIR", "")
		t.Setenv("XDG_STATE_HOME", xdg)
		state := filepath.Join(xdg, "agentls")
		if err := os.Mkdir(state, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(state, 0o755); err != nil {
			t.Fatal(err)
		}
		l, _ := core.LayoutOf("/some/root")
		if l.State != state {
			t.Fatalf("state %s, want %s", l.State, state)
		}
		if err := l.Ensure(); err != nil {
			t.Fatal(err)
		}
		if m := mode(t, state); m != 0o700 {
			t.Errorf("%s is %#o, want 0700", state, m)
		}
	})
}
