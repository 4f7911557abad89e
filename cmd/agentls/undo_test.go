package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testkit"
)

// agentlsWithState runs the agentls binary in dir with the state directory state
// and returns its exit code, stdout and stderr.
func agentlsWithState(t *testing.T, dir, state string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(testkit.Context(t), binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTLS_STATE_DIR="+state)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

func TestAgentlsUndo(t *testing.T) {
	ran := func(t *testing.T) (dir, state string) {
		t.Helper()
		dir, state = exampleCopy(t), filepath.Join(t.TempDir(), "state")
		code, _, errs := agentlsWithState(t, dir, state, "run", "--yes", "--mode", "apply", "--model", "script:"+demoScriptPath(t), demoPrompt)
		if code != 0 || !strings.Contains(errs, "To take these changes back: agentls undo --task run-") {
			t.Fatalf("run: exit %d\n%s", code, errs)
		}
		return dir, state
	}
	read := func(t *testing.T, dir, name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	original := read(t, filepath.Join("..", "..", "examples", "greeter"), "greet.go")

	t.Run("takes the most recent task back and exits 0", func(t *testing.T) {
		dir, state := ran(t)
		code, out, errs := agentlsWithState(t, dir, state, "undo")
		if code != 0 || !strings.Contains(out, "greet.go: restored") || !strings.Contains(out, "farewell.go: deleted") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if read(t, dir, "greet.go") != original {
			t.Errorf("greet.go = %q", read(t, dir, "greet.go"))
		}
		if _, err := os.Stat(filepath.Join(dir, "farewell.go")); !os.IsNotExist(err) {
			t.Errorf("farewell.go is still there: %v", err)
		}
	})

	t.Run("refuses a file whose changed lines were changed since, exits 3, and undoes the rest with --partial", func(t *testing.T) {
		dir, state := ran(t)
		greet := strings.Replace(read(t, dir, "greet.go"), `name = "world"`, `name = "everyone"`, 1)
		if err := os.WriteFile(filepath.Join(dir, "greet.go"), []byte(greet), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errs := agentlsWithState(t, dir, state, "undo")
		if code != 3 || !strings.Contains(out, "NOT undone: greet.go: line 7 changed since the task wrote it") || !strings.Contains(errs, "--partial") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, "farewell.go")); err != nil {
			t.Fatalf("farewell.go was deleted although the undo was refused: %v", err)
		}
		code, out, errs = agentlsWithState(t, dir, state, "undo", "--partial")
		if code != 3 || !strings.Contains(out, "farewell.go: deleted") || read(t, dir, "greet.go") != greet {
			t.Fatalf("--partial: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
	})

	t.Run("exits 1 for a task it does not know and 2 for a bad flag", func(t *testing.T) {
		dir, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
		if code, _, errs := agentlsWithState(t, dir, state, "undo", "--task", "nope"); code != 1 || !strings.Contains(errs, "nope") {
			t.Errorf("unknown task: exit %d: %s", code, errs)
		}
		if code, _, errs := agentlsWithState(t, dir, state, "undo"); code != 1 || !strings.Contains(errs, "no task to undo") {
			t.Errorf("no task: exit %d: %s", code, errs)
		}
		if code, _, errs := agentlsWithState(t, dir, state, "undo", "--subtask", "1"); code != 2 || !strings.Contains(errs, "--subtask needs --task") {
			t.Errorf("--subtask alone: exit %d: %s", code, errs)
		}
	})
}
