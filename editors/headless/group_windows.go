//go:build windows

package headless

import (
	"os"
	"os/exec"
)

// ownGroup leaves the server as it is: Windows has no process groups to
// signal. What agentls starts runs in job objects that die with it
// (internal/shell), so killing the server is enough.
func ownGroup(*exec.Cmd) {}

// killGroup kills p.
func killGroup(p *os.Process) {
	_ = p.Kill()
}
