package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking/sessions"
)

// awaitPath waits until a path matching pattern exists.
func awaitPath(t *testing.T, pattern string) {
	t.Helper()
	ctx := testkit.Context(t)
	for {
		if m, _ := filepath.Glob(pattern); len(m) > 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("nothing matches %s", pattern)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestStateDirectoryIsTheUsersAlone runs a task that applies changes (so
// the sessions, the checkpoints and their blobs are written) after the code
// graph was first stored, and finds every directory agentls made in the
// state directory 0700 and every file 0600.
func TestStateDirectoryIsTheUsersAlone(t *testing.T) {
	o := fixture(t, "demo")
	o.files["greet.go"] = "package greet\n\nfunc Greet() string { return \"hello\" }\n" // something for the graph
	r := startRun(t, o)
	state := os.Getenv("AGENTLS_STATE_DIR")
	// The graph is stored once built, before any task opens the sessions.
	awaitPath(t, filepath.Join(state, "workspaces", "*", "codegraph.bin"))
	res, err := r.run(t, api.RunParams{Prompt: "rename and document", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	awaitPath(t, filepath.Join(state, "workspaces", "*", "checkpoints", "*", "blobs", "*"))
	for _, p := range testkit.NotPrivate(t, state) {
		t.Errorf("not private: %s", p)
	}
}

// TestStartRemovesCheckpointLeftovers plants the temporary file a kill -9
// leaves while a checkpoint's blob is written, and starts a server: its
// start-up sweep removes it, and leaves the blobs alone.
func TestStartRemovesCheckpointLeftovers(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	t.Setenv("AGENTLS_STATE_DIR", state)
	root, err := filepath.EvalSymlinks(workspace(t, map[string]string{"main.go": "package main\n"}))
	if err != nil {
		t.Fatal(err)
	}
	blobs := filepath.Join(sessions.WorkspaceDir(state, root), "checkpoints", "s1", "blobs")
	leftover := filepath.Join(blobs, ".5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8.agentls-2851.tmp")
	blob := filepath.Join(blobs, "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8")
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
	start(t, headless.Options{Root: root})
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
