package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	t.Run("returns combined output and the exit code", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "echo out; echo err >&2; exit 3", 10*time.Second, nil)
		if res.ExitCode != 3 || !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") || res.TimedOut {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("kills the whole process group at the timeout", func(t *testing.T) {
		dir := t.TempDir()
		res := Run(ctx, dir, "(sleep 0.3; touch late) & sleep 30", 100*time.Millisecond, nil)
		if !res.TimedOut {
			t.Fatalf("got %+v", res)
		}
		time.Sleep(500 * time.Millisecond) // longer than the child would have taken
		if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
			t.Fatal("a child outlived the command")
		}
	})
	t.Run("cuts output past the limit and says so", func(t *testing.T) {
		res := Run(ctx, t.TempDir(), "head -c 1100000 /dev/zero | tr '\\0' x", 10*time.Second, nil)
		if len(res.Output) > MaxOutput+100 || !strings.Contains(res.Output, "output cut") {
			t.Fatalf("output of %d bytes", len(res.Output))
		}
	})
}

func TestRunKillsWhatTheCommandLeftBehind(t *testing.T) {
	dir := t.TempDir()
	res := Run(context.Background(), dir, "(sleep 0.3; touch late) >/dev/null 2>&1 & echo started", 10*time.Second, nil)
	if res.ExitCode != 0 || !strings.Contains(res.Output, "started") {
		t.Fatalf("got %+v", res)
	}
	time.Sleep(500 * time.Millisecond) // longer than the background child would have taken
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Fatal("a background child outlived its command")
	}
}

func TestRunLeavesOutTheVariablesToUnset(t *testing.T) {
	t.Setenv("SHELL_TEST_API_KEY", "kept-from-commands")
	t.Setenv("SHELL_TEST_OTHER", "inherited")
	res := Run(context.Background(), t.TempDir(), "echo \"key=$SHELL_TEST_API_KEY other=$SHELL_TEST_OTHER\"", 10*time.Second, []string{"SHELL_TEST_API_KEY"})
	if res.ExitCode != 0 || strings.TrimSpace(res.Output) != "key= other=inherited" {
		t.Fatalf("got %+v", res)
	}
}
