package headless

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/agentls/agentls/rpc"
)

// MaxCommandOutput is where a command's output is cut (docs/PROTOCOL.md §4).
const MaxCommandOutput = 1 << 20

// RunShell runs p.Command with `sh -c` in p.Cwd, stdout and stderr combined,
// bounded by p.TimeoutMs (0: unbounded) and by ctx. On either, the whole
// process group is killed. Output past MaxCommandOutput is cut with a note.
func RunShell(ctx context.Context, p rpc.RunCommandParams) rpc.RunCommandResult {
	if p.TimeoutMs > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMs)*time.Millisecond)
		defer cancel()
	}
	cmd := exec.Command("sh", "-c", p.Command)
	cmd.Dir = p.Cwd
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &cappedBuffer{limit: MaxCommandOutput}
	cmd.Stdout, cmd.Stderr = out, out
	// A background child that keeps the output open must not hold us up
	// once the command itself has ended.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		return rpc.RunCommandResult{ExitCode: 127, Output: "cannot start: " + err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	timedOut := false
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		err = <-done
		timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	}
	code := 0
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	return rpc.RunCommandResult{ExitCode: code, Output: out.String(), TimedOut: timedOut}
}

type cappedBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
	cut   int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
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

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut > 0 {
		return c.buf.String() + "\n[output cut: " + strconv.Itoa(c.cut) + " more bytes]\n"
	}
	return c.buf.String()
}
