//go:build unix

package handlers_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// The sidecar's own runner, with a POSIX shell, a fifo and signals.
func TestRunControlsOwnRunner(t *testing.T) {
	t.Run("stops during a command the sidecar runs itself and kills its process", func(t *testing.T) {
		dir := t.TempDir()
		fifo := filepath.Join(dir, "pid")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "cmd"}]}}]}],
		  "1": [{"toolCalls": [{"name": "run_command", "arguments": {"command": "echo $$ > ` + fifo + `; exec sleep 60"}}]}]}}`
		caps := headless.FullCapabilities()
		caps.RunCommand = false
		r := startRun(t, runOpts{script: script, caps: &caps})
		out := r.runAsync(t, api.RunParams{Prompt: "cmd", TaskID: "t"})
		pidc := make(chan int, 1)
		go func() {
			b, _ := os.ReadFile(fifo) // blocks until the shell writes
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			pidc <- pid
		}()
		pid := within(t, 10*time.Second, pidc)
		if pid <= 0 {
			t.Fatal("no pid from the command")
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		o := within(t, time.Second, out)
		if o.err != nil || o.res.State != api.TaskStopped {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("the command's process %d is still there", pid)
		}
	})
}
