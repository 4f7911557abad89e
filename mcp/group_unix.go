//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// procGroup is the process group a server leads.
type procGroup struct{ pgid int }

// startInGroup starts cmd as the leader of a new process group.
func startInGroup(cmd *exec.Cmd) (procGroup, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return procGroup{}, err
	}
	return procGroup{pgid: cmd.Process.Pid}, nil
}

// terminate asks the group to end (SIGTERM).
func (g procGroup) terminate() { _ = syscall.Kill(-g.pgid, syscall.SIGTERM) }

// kill ends the group (SIGKILL), the leader's children included.
func (g procGroup) kill() { _ = syscall.Kill(-g.pgid, syscall.SIGKILL) }
