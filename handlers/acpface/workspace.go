package acpface

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/mcp/bridge"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
	"github.com/agentls/agentls/workforce"
)

// workspace is what the sessions of one root share: the root's tracking
// (heat map, intents, trace, the session store, usage) with its heat
// ticker, the model clients, the code graph (built in the background and
// kept in the state directory, as the LSP face keeps it), and the sweep of a crash's leftovers. It is
// opened by the first session on the root and closed with the server.
type workspace struct {
	root   string
	track  *tracking.Workspace
	models *workforce.Models
	graph  *codegraph.Graph // nil when it could not be made
	bridge *bridge.Listener // the editor's tools for its sessions' engines

	cancel context.CancelFunc
	done   sync.WaitGroup // the heat ticker and the sweep
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
	zones := s.Settings().Zones
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("workspace: %w", rpc.ErrClosed)
	}
	if w := s.workspaces[root]; w != nil {
		return w, nil
	}
	w := &workspace{root: root}
	track, err := tracking.Open(tracking.Config{
		Root:     root,
		Trace:    func() *bool { return s.Settings().Trace },
		Heat:     noHeat{},
		Report:   func(msg string) { s.warnRoot(root, msg) },
		Logger:   s.log,
		Redactor: s.opts.Redactor,
	})
	if err != nil {
		s.log.Error("tracking unavailable", zap.String("root", root), zap.Error(err))
		return nil, fmt.Errorf("opening %s: %w", root, err)
	}
	w.track = track
	w.bridge = s.newBridge(root, track.StateDir)
	onRetry := func(ev clients.RetryEvent) { s.warnRoot(root, "agentls: "+ev.Message()) }
	w.models = workforce.NewModels(s.opts.Getenv, root, s.opts.Record, onRetry, s.log, s.opts.Redactor)
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.done.Go(func() { _ = track.Run(ctx) })
	w.graph = s.startGraph(ctx, &w.done, root, zones)
	w.done.Go(func() {
		removed, err := fsutil.SweepTemps(ctx, root, fsutil.SweepOptions{Legacy: tracking.RewrittenFiles()})
		if len(removed) > 0 {
			s.log.Info("removed temporary files left by a crash", zap.Strings("files", removed))
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("leftover sweep incomplete", zap.Error(err))
		}
	})
	s.workspaces[root] = w
	return w, nil
}

// startGraph makes root's code graph and builds it in the background, on a
// goroutine of done that ends with ctx. It returns nil, logged, when the
// graph cannot be made: the workers then go without the repo map and the
// graph's tools say why.
func (s *Server) startGraph(ctx context.Context, done *sync.WaitGroup, root string, zones api.Zones) *codegraph.Graph {
	state := ""
	if dir, err := tracking.WorkspaceStateDir(root); err == nil {
		state = filepath.Join(dir, graphFile)
	} else {
		s.log.Warn("code graph not kept between runs", zap.Error(err))
	}
	g, err := codegraph.New(codegraph.Config{Root: root, Zones: zones, StateFile: state, Logger: s.log})
	if err != nil {
		s.log.Warn("code graph unavailable", zap.String("root", root), zap.Error(err))
		return nil
	}
	done.Go(func() {
		if err := g.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("code graph incomplete", zap.String("root", root), zap.Error(err))
		}
	})
	return g
}

// graphFile is the code graph's file in the workspace's state directory,
// the one the LSP face keeps (docs/PROTOCOL.md §6).
const graphFile = "codegraph.bin"

// close stops the ticker and the sweep, writes the recording, and closes
// the tracking: the tasks still going are marked interrupted. The sessions
// on the root have closed before.
func (w *workspace) close() {
	w.bridge.Close()
	w.cancel()
	w.done.Wait()
	_ = w.models.Close()
	_ = w.track.Close()
}

// noHeat drops the heat ticker's updates: ACP has no place for them. The
// heat of the files a tool call touched travels in the call's
// _meta.agentls.heat instead (docs/ACP.md).
type noHeat struct{}

func (noHeat) HeatUpdate(context.Context, *api.HeatUpdateParams) error { return nil }

// warnRoot shows a warning (a retry, a damaged session file) in every
// session open on root.
func (s *Server) warnRoot(root, msg string) {
	msg = s.opts.Redactor.String(msg)
	s.log.Warn("warning", zap.String("root", root), zap.String("warning", msg))
	for _, se := range s.allSessions() {
		if se.ws.root == root {
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
