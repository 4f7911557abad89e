//go:build windows

package enginestest

import "os/exec"

// escapedChild is a long wait in a process of its own (Windows has no
// sessions to leave: the engine's job object holds it).
func escapedChild() *exec.Cmd { return exec.Command("timeout", "/t", "300", "/nobreak") }

// freeze: Windows cannot stop a process by a signal; the caller then
// blocks forever, reading nothing more.
func freeze() {}
