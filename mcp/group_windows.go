//go:build windows

package mcp

import (
	"os/exec"

	"github.com/agentls/agentls/internal/shell"
)

// procGroup is the job object a server runs in (shell.Group), with what it
// starts; the job dies with the sidecar.
type procGroup struct{ g *shell.Group }

// startInGroup starts cmd in a job object of its own.
func startInGroup(cmd *exec.Cmd) (procGroup, error) {
	g, err := shell.NewGroup()
	if err != nil {
		return procGroup{}, err
	}
	if err := g.Start(cmd); err != nil {
		g.Close()
		return procGroup{}, err
	}
	return procGroup{g: g}, nil
}

// terminate ends the job at once: Windows has no SIGTERM that a console
// process tree would get, so there is no grace to give.
func (g procGroup) terminate() { g.g.Close() }

// kill ends the job, the server's children included. It may follow
// terminate.
func (g procGroup) kill() { g.g.Close() }
