package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/shell"
)

// stderrKeep is how much of a server's stderr is kept, its end, to say why
// it failed.
const stderrKeep = 4 << 10

// process is a stdio server's process, in a group of its own with what it
// starts (procGroup: a process group on Unix, a job object on Windows).
type process struct {
	cmd    *exec.Cmd
	group  procGroup
	stderr *shell.Tail
	red    *redact.Redactor
	exited chan struct{} // closed once Wait returned
	err    error         // Wait's error; read after exited is closed
	pipes  []*os.File    // our ends, closed by stop whoever else closed them
}

// startProcess starts a stdio server: its command with its args (${NAME}
// expanded from environ), in dir, in a process group of its own, with
// environ less every secret the Redactor knows plus the entry's env.
func startProcess(_ context.Context, cfg api.MCPServer, dir string, environ []string, red *redact.Redactor) (sdk.Transport, *process, error) {
	args := make([]string, len(cfg.Args))
	for i, a := range cfg.Args {
		args[i] = shell.Expand(a, environ)
	}
	cmd := exec.Command(shell.Expand(cfg.Command, environ), args...)
	cmd.Dir = dir
	cmd.Env = serverEnv(cfg, environ, red)
	// Our own pipes: Wait never closes the ends the session reads and
	// writes.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	p := &process{cmd: cmd, stderr: &shell.Tail{Max: stderrKeep}, red: red, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	// A child that keeps stderr open must not hold Wait once the group is
	// killed.
	cmd.WaitDelay = time.Second
	group, err := startInGroup(cmd)
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, nil, fmt.Errorf("cannot run %q: %w", cmd.Path, err)
	}
	inR.Close()
	outW.Close()
	p.group = group
	p.pipes = []*os.File{outR, inW}
	go func() {
		// Ends when the process does; stop always kills the group.
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return &sdk.IOTransport{Reader: outR, Writer: inW}, p, nil
}

// serverEnv is the environment of a stdio server: the sidecar's without the
// secrets agentls knows of (the provider keys it resolved, variables named
// like *_TOKEN, …), then the entry's env, which may name any of them again.
func serverEnv(cfg api.MCPServer, environ []string, red *redact.Redactor) []string {
	env := redact.Environ(environ, red.Unset(nil))
	if len(cfg.Env) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(cfg.Env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := cfg.Env[name]; !over {
			out = append(out, kv)
		}
	}
	for k, v := range cfg.Env {
		out = append(out, k+"="+shell.Expand(v, environ))
	}
	return out
}

// stop ends the process group: SIGTERM, then SIGKILL after grace (at once
// when grace is 0; on Windows always at once), and waits for the leader.
func (p *process) stop(grace time.Duration) {
	if grace > 0 {
		p.group.terminate()
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
	}
	// The leader may be gone while its children live on (npm exec's node):
	// the group is killed either way.
	p.group.kill()
	<-p.exited
	for _, f := range p.pipes {
		_ = f.Close()
	}
}

// exitReason says how the process ended, waiting up to wait for it to end;
// false when it has not.
func (p *process) exitReason(wait time.Duration) (string, bool) {
	select {
	case <-p.exited:
	case <-time.After(wait):
		return "", false
	}
	r := "it exited"
	var ee *exec.ExitError
	switch {
	case p.err == nil:
		r = "it exited with status 0"
	case errors.As(p.err, &ee):
		r = "it exited: " + ee.String()
	default:
		r = "it exited: " + p.err.Error()
	}
	if t := p.stderrTail(); t != "" {
		r += "; its last output: " + t
	}
	return r, true
}

// explain adds the end of the server's stderr to an error of its start.
func (p *process) explain(err error) error {
	if t := p.stderrTail(); t != "" {
		return fmt.Errorf("%w; its output: %s", err, t)
	}
	return err
}

func (p *process) stderrTail() string {
	t := strings.TrimSpace(p.stderr.String())
	if len(t) > 600 {
		t = "…" + t[len(t)-600:]
	}
	return p.red.String(strings.Join(strings.Fields(t), " "))
}
