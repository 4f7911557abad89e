// Package shell runs a command line the way agentls runs every command: with
// `sh -c` in a process group of its own (on Windows, `cmd.exe /d /s /c` in a
// job object), stdout and stderr together and capped, and the whole group
// killed when the command's time is up or its caller gives up, so no child
// outlives a stopped task. The command inherits this process's environment
// without the variables it is told to unset (the secrets, docs/PROTOCOL.md
// §4). The headless editor (answering agent/runCommand) and the sidecar (when
// the editor cannot run commands) share it.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

// MaxOutput is where a command's output is cut (1 MiB).
const MaxOutput = 1 << 20

// Run runs command with `sh -c` in dir, in this process's environment
// without the variables named in unset. When timeout (0: none) passes or
// ctx ends, the whole process group is killed; TimedOut tells the first
// case. Children the command left in the background are killed with it when
// it ends. Output past MaxOutput is cut with a note saying how much.
func Run(ctx context.Context, dir, command string, timeout time.Duration, unset []string) api.RunCommandResult {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := shellCommand(command)
	cmd.Dir = dir
	cmd.Env = redact.Environ(os.Environ(), unset)
	out := &capBuffer{limit: MaxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// A background child holding the output open must not hold us once the
	// command itself has ended.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return api.RunCommandResult{ExitCode: 127, Output: "cannot start " + cmd.Args[0] + ": " + err.Error()}
	}
	killGroup := group(cmd.Process)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	timedOut := false
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup()
		err = <-done
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	}
	killGroup()
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	return api.RunCommandResult{ExitCode: code, Output: out.String(), TimedOut: timedOut}
}

type capBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	cut   int
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
	} else {
		if room > 0 {
			c.buf.Write(p[:room])
		}
		c.cut += len(p) - max(room, 0)
	}
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut > 0 {
		return c.buf.String() + fmt.Sprintf("\n[output cut: %d more bytes]\n", c.cut)
	}
	return c.buf.String()
}
