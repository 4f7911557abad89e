//go:build unix

package shell

import (
	"os"
	"os/exec"
	"syscall"
)

// shellCommand runs line with `sh -c` as the leader of a new process group.
func shellCommand(line string) *exec.Cmd {
	cmd := exec.Command("sh", "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// group returns what kills the process group p leads: p and every child it
// started, those it left in the background included. It may be called more
// than once.
func group(p *os.Process) (kill func()) {
	pid := p.Pid
	return func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }
}
