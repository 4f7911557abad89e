//go:build unix

package shell

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// shellCommand is `sh -c command`.
func shellCommand(command string) *exec.Cmd {
	return exec.Command("sh", "-c", command)
}

// watchdogScript waits for the end of its input, which is a pipe only this
// process holds the other end of, and then kills its whole process group.
// The kernel closes that end whatever way this process ends, kill -9
// included, so a command never outlives the process that ran it. It
// ignores SIGTERM, so that Terminate asks the group's processes to end and
// leaves the watchdog to kill what does not.
const watchdogScript = "trap '' TERM ; read _ ; kill -KILL 0"

// A Group is a process group of its own, led by a watchdog, that the
// processes started into it (StartInGroup) and all their children belong
// to. Kill ends them all; so does the end of this process, however it
// ends.
type Group struct {
	watchdog *exec.Cmd
	leash    *os.File // the watchdog's input: closing it kills the group
	pgid     int

	mu     sync.Mutex
	closed bool // the watchdog is reaped: pgid may name another group now
}

// NewGroup starts a watchdog in a new process group.
func NewGroup() (*Group, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("process group: %w", err)
	}
	wd := exec.Command("sh", "-c", watchdogScript)
	wd.Stdin = r
	wd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = wd.Start()
	_ = r.Close()
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("process group: starting its watchdog: %w", err)
	}
	return &Group{watchdog: wd, leash: w, pgid: wd.Process.Pid}, nil
}

// Start starts cmd in the group. It sets cmd.SysProcAttr.
func (g *Group) Start(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pgid = g.pgid
	return cmd.Start()
}

// ID is the process group's id.
func (g *Group) ID() int { return g.pgid }

// Kill sends SIGKILL to every process of the group, the watchdog included.
// After Close it does nothing.
func (g *Group) Kill() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	if err := syscall.Kill(-g.pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		// The group cannot be signalled (it should always be ours): let
		// the watchdog do it.
		_ = g.leash.Close()
	}
}

// Terminate sends SIGTERM to every process of the group but the watchdog,
// asking them to end; Kill ends what does not. After Close it does nothing.
func (g *Group) Terminate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	_ = syscall.Kill(-g.pgid, syscall.SIGTERM)
}

// Close kills the group and reaps the watchdog. Processes of the group
// started with exec.Cmd are reaped by their own Wait. Closing again does
// nothing.
func (g *Group) Close() {
	g.Kill()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return
	}
	g.closed = true
	_ = g.leash.Close()
	_ = g.watchdog.Wait()
}
