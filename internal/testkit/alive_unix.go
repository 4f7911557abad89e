//go:build unix

package testkit

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether process pid runs; a zombie (ended, not yet
// waited for) does not.
func Alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: the signal said it is there
	}
	end := strings.LastIndexByte(string(data), ')')
	f := strings.Fields(string(data[end+1:]))
	return len(f) == 0 || f[0] != "Z"
}

// Group puts the command cmd is about to start in a process group of its
// own, so that KillGroup ends it with every child it starts.
func Group(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// KillGroup kills the process group Group made for cmd, once it started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
