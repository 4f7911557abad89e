//go:build unix

package shell

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// program writes an executable script at dir/name.
func program(t *testing.T, dir, name string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLookPathNeverResolvesThroughTheWorkspace(t *testing.T) {
	// This process runs in a workspace that planted the program in
	// node_modules/.bin, as editors start agentls in the workspace.
	ws := t.TempDir()
	program(t, filepath.Join(ws, "node_modules", ".bin"), "server")
	t.Chdir(ws)
	bin := t.TempDir()
	real := program(t, bin, "server")
	sep := string(filepath.ListSeparator)

	t.Run("skips a relative entry of PATH and finds the program in an absolute one after it", func(t *testing.T) {
		for _, path := range []string{
			"node_modules/.bin" + sep + bin,
			"." + sep + "node_modules/.bin" + sep + bin,
			sep + bin, // an empty entry is the current directory
		} {
			got, err := lookPath("server", path)
			if err != nil || got != real {
				t.Errorf("PATH=%s: got %q, %v; want %s", path, got, err, real)
			}
		}
	})
	t.Run("refuses a program only a relative entry of PATH finds, saying so", func(t *testing.T) {
		_, err := lookPath("server", "node_modules/.bin"+sep+t.TempDir())
		if !errors.Is(err, exec.ErrNotFound) || !strings.Contains(err.Error(), "relative entries are not searched") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("refuses a relative path to the program", func(t *testing.T) {
		for _, name := range []string{"node_modules/.bin/server", "./server"} {
			if got, err := lookPath(name, bin); err == nil {
				t.Errorf("%s resolved to %s", name, got)
			}
		}
	})
	t.Run("takes an absolute path as it is", func(t *testing.T) {
		if got, err := lookPath(real, ""); err != nil || got != real {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	t.Run("is what Start runs: the planted program never starts", func(t *testing.T) {
		t.Setenv("PATH", "node_modules/.bin")
		if p, err := Start(ProcSpec{Argv: []string{"server"}, Dir: ws}); err == nil {
			p.Stop(0)
			t.Fatal("Start ran the workspace's node_modules/.bin/server")
		}
	})
}
