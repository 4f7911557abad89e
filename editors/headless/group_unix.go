//go:build unix

package headless

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes the server the leader of a process group of its own, so
// that killGroup reaches what it started too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group p leads.
func killGroup(p *os.Process) {
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
}
