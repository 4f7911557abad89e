//go:build windows

package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// TestHelperProcess is the process the tests' commands start: it says it
// has started in the file AGENTLS_SHELL_HELPER names, then waits to be
// killed.
func TestHelperProcess(t *testing.T) {
	ready := os.Getenv("AGENTLS_SHELL_HELPER")
	if ready == "" {
		t.Skip("started by the tests, as a process a command starts")
	}
	if err := os.WriteFile(ready, []byte("started"), 0o600); err != nil {
		os.Exit(2)
	}
	time.Sleep(time.Hour)
	os.Exit(3)
}

func TestRunOnWindows(t *testing.T) {
	t.Run("runs the line with cmd.exe and returns its output and exit code", func(t *testing.T) {
		res := Run(context.Background(), t.TempDir(), `echo out & echo err 1>&2 & exit /b 3`, time.Minute, nil)
		if res.ExitCode != 3 || !strings.Contains(res.Output, "out") || !strings.Contains(res.Output, "err") || res.TimedOut {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("leaves out the variables to unset", func(t *testing.T) {
		t.Setenv("SHELL_TEST_API_KEY", "kept-from-commands")
		t.Setenv("SHELL_TEST_OTHER", "inherited")
		res := Run(context.Background(), t.TempDir(), `echo key=%SHELL_TEST_API_KEY% other=%SHELL_TEST_OTHER%`, time.Minute, []string{"SHELL_TEST_API_KEY"})
		if res.ExitCode != 0 || strings.TrimSpace(res.Output) != "key=%SHELL_TEST_API_KEY% other=inherited" {
			t.Fatalf("got %+v", res)
		}
	})
	t.Run("kills what the command started when its caller gives up", func(t *testing.T) {
		dir := t.TempDir()
		ready := filepath.Join(dir, "ready")
		t.Setenv("AGENTLS_SHELL_HELPER", ready)
		// cmd.exe starts the helper as its own child: killing cmd.exe
		// alone would leave it running.
		line := `"` + os.Args[0] + `" -test.run=TestHelperProcess$`
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, dir, line, 0, nil)
		}()
		waitUntil(t, "the helper to start", func() bool {
			_, err := os.Stat(ready)
			return err == nil
		})
		if n := len(helpers(t)); n != 1 {
			t.Fatalf("%d helpers run, want 1", n)
		}
		cancel()
		<-done
		waitUntil(t, "the helper to be killed", func() bool { return len(helpers(t)) == 0 })
	})
}

// helpers lists the processes of this test's executable but this one.
func helpers(t *testing.T) []uint32 {
	t.Helper()
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(snap)
	exe := filepath.Base(os.Args[0])
	var pids []uint32
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err := windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		if strings.EqualFold(windows.UTF16ToString(e.ExeFile[:]), exe) && e.ProcessID != uint32(os.Getpid()) {
			pids = append(pids, e.ProcessID)
		}
	}
	return pids
}

// waitUntil polls cond until it holds, for at most 30 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
