package engines

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/internal/shell"
)

// process is an agent's process: in a process group of its own (with a
// watchdog that kills it when the sidecar dies, even by kill -9), its stdin
// and stdout the ACP connection, the end of its stderr kept for errors.
type process struct {
	cmd    *exec.Cmd
	group  *shell.Group
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *shell.Tail

	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // its exit, once exited is closed

	stopOnce sync.Once
}

// startProcess starts argv in dir with env, in a new process group.
func startProcess(argv []string, dir string, env []string) (*process, error) {
	g, err := shell.NewGroup()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	p := &process{cmd: cmd, group: g, stderr: &shell.Tail{Max: 4 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		g.Close()
		return nil, err
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		g.Close()
		return nil, err
	}
	if err := g.Start(cmd); err != nil {
		g.Close()
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid is the agent's process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the agent: SIGTERM to its group (and to the processes it
// started that left the group), up to grace for it to exit, then SIGKILL
// to all of them. Nothing it started is left running. It returns once the
// agent is reaped; stopping again does nothing.
func (p *process) stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		strays := strayDescendants(p.pid(), p.group.ID())
		p.group.Terminate()
		signalAll(strays, false)
		select {
		case <-p.exited:
		case <-time.After(grace):
		}
		// What is left, and what the agent's children started meanwhile.
		strays = append(strays, strayDescendants(p.pid(), p.group.ID())...)
		p.group.Kill()
		signalAll(strays, true)
		_ = p.stdin.Close()
		<-p.exited
		p.group.Close()
	})
}

// exitError describes how the process ended, with the end of its stderr.
func (p *process) exitError() error {
	select {
	case <-p.exited:
	default:
		return nil
	}
	msg := "it exited"
	if p.waitErr != nil {
		msg = "it exited: " + p.waitErr.Error()
	}
	if t := p.stderrTail(); t != "" {
		msg += "; its last output: " + t
	}
	return fmt.Errorf("%s", msg)
}

func (p *process) stderrTail() string {
	t := strings.Join(strings.Fields(p.stderr.String()), " ")
	if len(t) > 600 {
		t = "…" + t[len(t)-600:]
	}
	return t
}

// environ is the agent's environment: agentls's, without the secrets
// (unset) but the engine's own keys, then the entry's env with ${NAME}
// taken from agentls's environment.
func environ(base []string, unset, keys []string, extra map[string]string) []string {
	var drop []string
	for _, n := range unset {
		keep := false
		for _, k := range keys {
			if k == n {
				keep = true
			}
		}
		if !keep {
			drop = append(drop, n)
		}
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !contains(drop, name) {
			out = append(out, kv)
		}
	}
	for k, v := range extra {
		out = append(out, k+"="+shell.Expand(v, base))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// osEnviron is the sidecar's environment (tests replace nothing here; the
// Manager takes its own).
var osEnviron = os.Environ
