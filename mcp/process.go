package mcp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/shell"
)

// stderrKeep is how much of a server's stderr is kept, its end, to say why
// it failed.
const stderrKeep = 4 << 10

// process is a stdio server's process, supervised by internal/shell: in a
// group of its own with what it starts (a process group led by a watchdog
// on Unix, a job object on Windows), killed with the sidecar however the
// sidecar ends.
type process struct {
	*shell.Proc
	red *redact.Redactor
}

// startProcess starts a stdio server: its command with its args (${NAME}
// expanded from environ), in dir, in a process group of its own, with
// environ less every secret the Redactor knows plus the entry's env.
func startProcess(_ context.Context, cfg api.MCPServer, dir string, environ []string, red *redact.Redactor) (sdk.Transport, *process, error) {
	argv := make([]string, 0, 1+len(cfg.Args))
	argv = append(argv, shell.Expand(cfg.Command, environ))
	for _, a := range cfg.Args {
		argv = append(argv, shell.Expand(a, environ))
	}
	p, err := shell.Start(shell.ProcSpec{
		Argv: argv, Dir: dir, StderrKeep: stderrKeep,
		Env: shell.Environ(environ, red.Unset(nil), cfg.Env),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cannot run %q: %w", argv[0], err)
	}
	return &sdk.IOTransport{Reader: p.Stdout(), Writer: p.Stdin()}, &process{Proc: p, red: red}, nil
}

// stop ends the process group: SIGTERM, then SIGKILL after grace (at once
// when grace is 0; on Windows always at once), and waits for the leader.
// The leader may be gone while its children live on (npm exec's node): the
// group is killed either way.
func (p *process) stop(grace time.Duration) { p.Stop(grace) }

// exitReason says how the process ended, waiting up to wait for it to end;
// false when it has not.
func (p *process) exitReason(wait time.Duration) (string, bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.Exited():
	case <-t.C:
		return "", false
	}
	return p.red.String(p.ExitReason()), true
}

// explain adds the end of the server's stderr to an error of its start.
func (p *process) explain(err error) error {
	if t := p.StderrTail(); t != "" {
		return fmt.Errorf("%w; its output: %s", err, p.red.String(t))
	}
	return err
}
