package acpface

import (
	"context"
	"fmt"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
)

// workspace is what the sessions of one root share (package core): the
// root's tracking (heat map, intents, trace, the session store, usage)
// with its heat ticker, the model clients, the code graph, the bridge
// their engines reach the client's tools through, and the sweep of a
// crash's leftovers. It is opened by the first session on the root and
// closed with the server.
type workspace struct {
	root  string // its real path: the key of the server's workspaces
	core  *core.Workspace
	track *tracking.Workspace
}

// rootOf checks a session's cwd: an absolute path to a directory, as ACP
// requires. The Dir holds it as the client named it (the paths sent to the
// client are under that name) and as it really is (a symlinked cwd, such
// as macOS's temporary directory, is the same workspace as its target).
func rootOf(field, cwd string) (*contain.Dir, error) {
	if cwd == "" {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %q is required (the absolute path of the session's working directory)", field)
	}
	if !filepath.IsAbs(cwd) {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %q must be an absolute path, got %q", field, cwd)
	}
	dir, err := contain.New(filepath.Clean(cwd))
	if err != nil {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %q: %s is not a directory", field, filepath.Clean(cwd))
	}
	return dir, nil
}

// workspace returns the workspace of dir, opening it on first use: the
// sessions of one directory share it, whatever name their cwd gave it.
func (s *Server) workspace(dir *contain.Dir) (*workspace, error) {
	root := dir.Path()
	s.mu.Lock()
	w, closed := s.workspaces[root], s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, fmt.Errorf("workspace: %w", rpc.ErrClosed)
	case w != nil:
		return w, nil
	}
	w = &workspace{root: root}
	w.core = core.Open(core.Config{
		Dir:      dir,
		Settings: s.Settings,
		Getenv:   s.opts.Getenv,
		Redactor: s.opts.Redactor,
		Log:      s.log,
		Version:  s.opts.Version,
		Record:   s.opts.Record,
		Notices:  notices{s: s, ws: w},
	})
	track, err := w.core.Tracking()
	if err != nil {
		w.core.Close()
		return nil, fmt.Errorf("opening %s: %w", root, err)
	}
	w.track = track
	s.mu.Lock()
	other := s.workspaces[root]
	if other == nil && !s.closed {
		s.workspaces[root] = w
	}
	closed = s.closed
	s.mu.Unlock()
	if other != nil || closed {
		// Another session opened it meanwhile, or the server closed.
		w.core.Close()
		if closed {
			return nil, fmt.Errorf("workspace: %w", rpc.ErrClosed)
		}
		return other, nil
	}
	return w, nil
}

// notices are a workspace's notices as the ACP face shows them: warnings
// in every session open on the root; the heat map's ticker has no place in
// ACP (the heat of the files a tool call touched travels in the call's
// _meta.agentls.heat instead, docs/ACP.md), so its updates are dropped.
type notices struct {
	s  *Server
	ws *workspace
}

func (notices) HeatUpdate(context.Context, *api.HeatUpdateParams) error { return nil }

func (n notices) Warn(msg string) {
	n.s.log.Warn("warning", zap.String("root", n.ws.root), zap.String("warning", msg))
	for _, se := range n.s.allSessions() {
		if se.ws == n.ws {
			se.warn(msg)
		}
	}
}

// noticeUpdate is a warning as the client takes it: a notice where the
// client advertised session.notices, else a thought.
func (s *Server) noticeUpdate(msg string) acp.SessionUpdate {
	if s.client.Capabilities().Notices() {
		return acp.Notice{Severity: acp.SeverityWarning, Title: msg}
	}
	return acp.AgentThoughtChunk{Content: acp.Text("⚠ " + msg + "\n")}
}
