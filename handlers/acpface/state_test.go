//go:build unix

package acpface_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking/sessions"
)

// TestStateDirectoryIsTheUsersAlone runs a prompt that applies a change
// (so the sessions, the checkpoints and their blobs are written) in a state
// directory whose workspace levels an older release left open to others
// (its code graph's store made them 0755), and finds every directory in it
// 0700 and every file 0600.
func TestStateDirectoryIsTheUsersAlone(t *testing.T) {
	o := opts{files: map[string]string{"main.go": mainGo}, script: editScript("echo tested"), meta: map[string]any{"editMode": "apply"}}
	e := start(t, o)
	state := os.Getenv("AGENTLS_STATE_DIR")
	ws := sessions.WorkspaceDir(state, e.root)
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(ws), ws} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.initialize(t, o)
	s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.prompt(t, s.SessionID, acp.Text("Add a greet function"))
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	if m, _ := filepath.Glob(filepath.Join(ws, "checkpoints", "*", "blobs", "*")); len(m) == 0 {
		t.Fatal("no checkpoint was written")
	}
	for _, p := range testkit.NotPrivate(t, state) {
		t.Errorf("not private: %s", p)
	}
}

// TestStartRemovesCheckpointLeftovers plants the temporary file a kill -9
// leaves while a checkpoint's blob is written: the first session on the
// root starts the sweep that removes it, and leaves the blobs alone.
func TestStartRemovesCheckpointLeftovers(t *testing.T) {
	o := opts{files: map[string]string{"main.go": mainGo}, script: editScript("echo tested")}
	e := start(t, o)
	blobs := filepath.Join(sessions.WorkspaceDir(os.Getenv("AGENTLS_STATE_DIR"), e.root), "checkpoints", "s1", "blobs")
	leftover := filepath.Join(blobs, ".2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae.agentls-77.tmp")
	blob := filepath.Join(blobs, "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae")
	if err := os.MkdirAll(blobs, 0o700); err != nil {
		t.Fatal(err)
	}
	crash := time.Now().Add(-time.Hour)
	for _, p := range []string{leftover, blob} {
		if err := os.WriteFile(p, []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, crash, crash); err != nil {
			t.Fatal(err)
		}
	}
	e.initialize(t, o)
	if _, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root}); err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t)
	for {
		if _, err := os.Lstat(leftover); os.IsNotExist(err) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s is still there", leftover)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := os.Stat(blob); err != nil {
		t.Errorf("the blob beside it: %v", err)
	}
}
