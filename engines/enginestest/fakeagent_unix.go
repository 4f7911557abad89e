//go:build unix

package enginestest

import (
	"os"
	"os/exec"
	"syscall"
)

// escapedChild is a long sleep in a session of its own: a child that left
// the agent's process group, which a stop must still find and end.
func escapedChild() *exec.Cmd {
	cmd := exec.Command("sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd
}

// freeze stops the agent's own process: it reads nothing more and answers
// no signal it could catch.
func freeze() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
