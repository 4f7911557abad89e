package core

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/tracking/sessions"
)

// Layout is where agentls keeps the state of one workspace (docs/PROTOCOL.md
// §6): the one place that names its paths.
//
//	<state>/workspaces/<first 16 hex of sha256(root)>/   Workspace
//	    sessions.json, sessions/, sessions.lock, owners/  the sessions (tracking/sessions)
//	    checkpoints/                                      what undoes a task (tracking/checkpoint)
//	    codegraph.bin                                     the code graph (Graph)
//	    mcp/                                              where stdio MCP servers run (MCP)
//	<state>/bridge/<pid>.sock                             the MCP bridge (Bridge)
//	<state>/engines/wt-*/                                 the isolated engines' worktrees (Engines)
//
// Every directory agentls makes there is private to the user (0700) and
// every file it writes is 0600.
type Layout struct {
	// State is the state directory: $AGENTLS_STATE_DIR, else
	// $XDG_STATE_HOME/agentls, else ~/.local/state/agentls.
	State string
	// Workspace is the workspace's own directory in it.
	Workspace string
	// chosen: State is $AGENTLS_STATE_DIR, a directory the user chose
	// (and may share), not one agentls named.
	chosen bool
}

// DirPerm is the mode of every directory agentls makes in its state
// directory.
const DirPerm = 0o700

// LayoutOf is the Layout of the workspace whose real path is root, in the
// state directory this process's environment names.
func LayoutOf(root string) (Layout, error) {
	state, err := sessions.StateDir(os.Getenv, os.UserHomeDir)
	if err != nil {
		return Layout{}, fmt.Errorf("state directory: %w", err)
	}
	return Layout{State: state, Workspace: sessions.WorkspaceDir(state, root), chosen: os.Getenv("AGENTLS_STATE_DIR") != ""}, nil
}

// Graph is the code graph's file.
func (l Layout) Graph() string { return filepath.Join(l.Workspace, "codegraph.bin") }

// MCP is where the stdio MCP servers whose entry names no cwd run: a
// directory of agentls's own, never the workspace.
func (l Layout) MCP() string { return filepath.Join(l.Workspace, "mcp") }

// Bridge is the directory of the MCP bridge's socket.
func (l Layout) Bridge() string { return filepath.Join(l.State, "bridge") }

// Engines is where isolated engines get their worktrees.
func (l Layout) Engines() string { return filepath.Join(l.State, "engines") }

// Ensure makes the workspace's directory and those above it in the state
// directory, each 0700; those of them that an older release made open to
// others (0755) are closed to them.
func (l Layout) Ensure() error {
	if err := os.MkdirAll(l.Workspace, DirPerm); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	// A state directory the user chose ($AGENTLS_STATE_DIR) may be one
	// they share: only the levels agentls named in it are tightened.
	dirs := []string{filepath.Dir(l.Workspace), l.Workspace}
	if !l.chosen {
		dirs = append(dirs, l.State)
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(d, DirPerm); err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	return nil
}
