//go:build windows

package testkit

import (
	"os/exec"
	"syscall"
)

// Alive reports whether process pid runs: whether it can still be opened
// and has no exit code yet.
func Alive(pid int) bool {
	const stillActive = 259
	h, err := syscall.OpenProcess(syscall.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer syscall.CloseHandle(h)
	var code uint32
	if err := syscall.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

// Group: Windows has no process groups to give a command; KillGroup kills
// the process alone.
func Group(*exec.Cmd) {}

// KillGroup kills cmd's process, once it started.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
