// Package shell runs a command line the way agentls runs every command: with
// `sh -c`, stdout and stderr together, the head and the tail of the output
// kept (Output), in a process group of its own (Group) that is killed when
// the command's time is up, when its caller gives up, when the command ends
// (children it left in the background go with it) and when this process
// ends, even by kill -9. The command inherits this process's environment
// without the variables it is told to unset (the secrets, docs/PROTOCOL.md
// §4). The headless editor (answering agent/runCommand) and the sidecar
// (when the editor cannot run commands) share it.
//
// On Unix the group is a process group led by a small watchdog (`sh` waiting
// on a pipe only this process holds; when the pipe closes it kills its
// group). On Windows it is a job object that kills its processes when its
// last handle closes.
//
// Run is safe for concurrent use: each call has its own process group.
package shell

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

// drainAfterKill bounds the wait for the end of the output once the group
// is killed: only a process that left the group can still hold the pipe.
const drainAfterKill = 2 * time.Second

// Run runs command with `sh -c` in dir, in this process's environment
// without the variables named in unset. When timeout (0: none) passes or
// ctx ends, the whole process group is killed; TimedOut tells the first
// case. Children the command left in the background are killed with it when
// it ends. Output past MaxOutput keeps its first OutputHead and last
// OutputTail bytes around a Marker saying how many bytes were cut.
func Run(ctx context.Context, dir, command string, timeout time.Duration, unset []string) api.RunCommandResult {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out := NewOutput(OutputHead, OutputTail)
	code, killed, err := run(ctx, dir, command, unset, out, nil)
	if err != nil {
		return api.RunCommandResult{ExitCode: 127, Output: "cannot start sh: " + err.Error()}
	}
	timedOut := killed && errors.Is(ctx.Err(), context.DeadlineExceeded)
	return api.RunCommandResult{ExitCode: code, Output: out.String(), TimedOut: timedOut}
}

// run runs command in a new group and writes its output to out until the
// output ends. started, when set, is told the group once the command runs.
// killed tells that ctx ended before the command did. The error is for a
// command that could not be started.
func run(ctx context.Context, dir, command string, unset []string, out io.Writer, started func(*Group)) (code int, killed bool, err error) {
	g, err := NewGroup()
	if err != nil {
		return 0, false, err
	}
	defer g.Close()
	// The output pipe is ours: Wait does not close it, so every byte the
	// command wrote is read, up to the end of the output.
	r, w, err := os.Pipe()
	if err != nil {
		return 0, false, err
	}
	cmd := shellCommand(command)
	cmd.Dir = dir
	cmd.Env = redact.Environ(os.Environ(), unset)
	cmd.Stdout, cmd.Stderr = w, w
	err = g.Start(cmd)
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return 0, false, err
	}
	if started != nil {
		started(g)
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, r)
	}()
	stop := context.AfterFunc(ctx, g.Kill)
	err = cmd.Wait()
	killed = !stop()
	// The command has ended: what it left in the background goes too, and
	// the output ends once the last process holding it is gone.
	g.Kill()
	_ = r.SetReadDeadline(time.Now().Add(drainAfterKill))
	<-copied
	_ = r.Close()
	if err != nil {
		code = -1
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	}
	return code, killed, nil
}
