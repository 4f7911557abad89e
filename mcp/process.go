package mcp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

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
// expanded from environ), in dir (never the workspace: Manager.workDir),
// in a process group of its own, with environ less every secret the
// Redactor knows plus the entry's env. The program is resolved by
// shell.LookPath, never through dir or a relative entry of PATH.
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

// workDir is the directory a stdio server runs in: the entry's cwd, ${NAME}
// expanded, which must then be an absolute path to a directory; without
// one, agentls's own (ownDir). Never the workspace, unless the entry names
// it whole.
func (m *Manager) workDir(cfg api.MCPServer) (string, error) {
	if cfg.Cwd == "" {
		return m.ownDir()
	}
	dir := shell.Expand(cfg.Cwd, m.opts.Environ)
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("its cwd %q is %q once expanded, not an absolute path: agentls takes a server's directory only whole, never against the workspace", cfg.Cwd, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("its cwd: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("its cwd %s is not a directory", dir)
	}
	return dir, nil
}

// ownDir is agentls's own directory for stdio servers: Options.Dir, made
// (mode 0700) when missing and refused when it is not a directory of its
// own (a symlink); without one, a private temporary directory made once
// and removed by Close.
func (m *Manager) ownDir() (string, error) {
	if dir := m.opts.Dir; dir != "" {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("agentls's directory for MCP servers, %q, is not an absolute path (is AGENTLS_STATE_DIR relative?)", dir)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("agentls's directory for MCP servers: %w", err)
		}
		fi, err := os.Lstat(dir)
		if err != nil {
			return "", fmt.Errorf("agentls's directory for MCP servers: %w", err)
		}
		if !fi.IsDir() {
			return "", fmt.Errorf("agentls's directory for MCP servers, %s, is not a directory but a %s: remove it and agentls makes it anew", dir, fi.Mode().Type())
		}
		return dir, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", ErrClosed
	}
	if m.tmpDir == "" {
		d, err := os.MkdirTemp("", "agentls-mcp-")
		if err != nil {
			return "", fmt.Errorf("a directory for MCP servers: %w", err)
		}
		m.tmpDir = d
	}
	return m.tmpDir, nil
}

// removeTmpDir removes the private directory ownDir made, if any, once
// every server has stopped.
func (m *Manager) removeTmpDir() {
	m.mu.Lock()
	dir := m.tmpDir
	m.tmpDir = ""
	m.mu.Unlock()
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		m.log.Warn("the MCP servers' temporary directory was not removed", zap.Error(err))
	}
}
