package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
)

// graphFile is the code graph's file in the workspace's state directory
// (docs/PROTOCOL.md §6).
const graphFile = "codegraph.bin"

// graphService owns the workspace's code graph: built in the background
// from initialize on (initialize never waits for it), kept current from the
// editor's notifications and agentls's own writes, stored in the state
// directory. The server's close cancels it and waits for its last store.
type graphService struct {
	mu     sync.Mutex
	g      *codegraph.Graph
	err    error
	ctx    context.Context // ends when the server closes
	cancel context.CancelFunc
	done   chan struct{}
	closed bool
	calls  sync.WaitGroup // the watcher registration
}

// startGraph starts the code graph of root in the background.
func (s *Server) startGraph(root string, zones api.Zones) {
	gs := &s.graph
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.closed || gs.done != nil {
		return
	}
	state := ""
	if dir, err := tracking.WorkspaceStateDir(root); err == nil {
		state = filepath.Join(dir, graphFile)
	} else {
		s.log.Warn("code graph not kept between runs", zap.Error(err))
	}
	// The editor's language servers are asked first (agent/references,
	// agent/definition) when it declares them.
	g, err := codegraph.New(codegraph.Config{Root: root, Zones: zones, StateFile: state, Logger: s.log, Server: s.editor})
	if err != nil {
		gs.err = err
		s.log.Warn("code graph unavailable", zap.Error(err))
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	gs.g, gs.ctx, gs.cancel, gs.done = g, ctx, cancel, make(chan struct{})
	go func() {
		defer close(gs.done)
		if err := g.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Warn("code graph incomplete", zap.Error(err))
		}
	}()
}

// Graph returns the workspace's code graph, nil before initialize or when
// it could not be made.
func (s *Server) Graph() *codegraph.Graph {
	gs := &s.graph
	gs.mu.Lock()
	defer gs.mu.Unlock()
	return gs.g
}

// closeGraph stops the graph and waits for its last store.
func (s *Server) closeGraph() {
	gs := &s.graph
	gs.mu.Lock()
	gs.closed = true
	cancel, done := gs.cancel, gs.done
	gs.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	gs.calls.Wait()
}

func (s *Server) codeGraph(ctx context.Context, raw json.RawMessage) (any, error) {
	var p api.CodeGraphParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if p.Path == "" && p.Symbol == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: give "path" (workspace-relative), "symbol", or both`)
	}
	depth := 1
	if p.Depth != nil {
		depth = *p.Depth
		if depth < 1 || depth > 3 {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: depth: must be a whole number from 1 to 3, got %d", depth)
		}
	}
	g := s.Graph()
	if g == nil {
		s.graph.mu.Lock()
		err := s.graph.err
		s.graph.mu.Unlock()
		return nil, fmt.Errorf("%s: the code graph is unavailable: %v", api.MethodCodeGraph, err)
	}
	rel := p.Path
	if rel != "" {
		var err error
		if rel, err = s.graphPath(rel); err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: path: %v", err)
		}
	}
	res, err := g.CodeGraph(ctx, codegraph.Query{Path: rel, Symbol: p.Symbol, Depth: depth})
	switch {
	case errors.Is(err, codegraph.ErrNotFound), errors.Is(err, codegraph.ErrInvalid):
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", api.MethodCodeGraph, err)
	}
	return res, nil
}

// graphPath turns a path or file:// URI the editor names into the
// workspace-relative path the graph knows.
func (s *Server) graphPath(p string) (string, error) {
	root := s.Root()
	if strings.HasPrefix(p, "file:") {
		abs, err := fileuri.ToPath(p)
		if err != nil {
			return "", err
		}
		p = abs
	}
	if filepath.IsAbs(p) {
		dir, err := contain.New(root)
		if err != nil {
			return "", err
		}
		rp, err := dir.Resolve(p)
		if err != nil {
			return "", fmt.Errorf("%s is outside the workspace %s", p, root)
		}
		p = rp.Rel
	}
	p = filepath.ToSlash(filepath.Clean(filepath.FromSlash(p)))
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%s is outside the workspace", p)
	}
	return p, nil
}

// graphChanged tells the graph of files the editor changed, by URI.
func (s *Server) graphChanged(uris ...string) {
	g := s.Graph()
	if g == nil {
		return
	}
	var rels []string
	for _, u := range uris {
		rel, err := s.graphPath(u)
		if err != nil {
			s.log.Debug("code graph: change outside the workspace ignored", zap.String("uri", u), zap.Error(err))
			continue
		}
		rels = append(rels, rel)
	}
	g.Changed(rels...)
}

func (s *Server) didChangeWatchedFiles(_ context.Context, raw json.RawMessage) {
	var p api.DidChangeWatchedFilesParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		s.log.Debug("didChangeWatchedFiles: bad params", zap.Error(err))
		return
	}
	uris := make([]string, 0, len(p.Changes))
	for _, c := range p.Changes {
		uris = append(uris, c.URI)
	}
	s.graphChanged(uris...)
}

// didTextDocument handles didSave (and didOpen, didClose, didChange from a
// client that sends them anyway): the file on disk is read again when it
// changed (size, time, then content decide).
func (s *Server) didTextDocument(_ context.Context, raw json.RawMessage) {
	var p api.TextDocumentParams
	if err := json.Unmarshal(raw, &p); err != nil || p.TextDocument.URI == "" {
		return
	}
	s.graphChanged(p.TextDocument.URI)
}

// initializedNote registers a watcher of every file of the workspace when
// the client can watch files for agentls (workspace.didChangeWatchedFiles
// .dynamicRegistration): the graph then hears of changes made outside
// agentls and the editor (a git checkout, a build).
func (s *Server) initializedNote(_ context.Context, _ json.RawMessage) {
	if !s.editor.Caps().WatchFiles {
		return
	}
	params := api.RegistrationParams{Registrations: []api.Registration{{
		ID:     "agentls-watch-files",
		Method: api.MethodDidChangeWatchedFiles,
		RegisterOptions: api.DidChangeWatchedFilesRegistrationOptions{
			Watchers: []api.FileSystemWatcher{{GlobPattern: "**/*"}},
		},
	}}}
	// The reply is not waited for here: notifications are handled one at
	// a time, and the client may answer after it sent others. The call
	// belongs to the graph service: the server's close ends and awaits it.
	gs := &s.graph
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.closed || gs.ctx == nil {
		return
	}
	gs.calls.Add(1)
	go func(parent context.Context) {
		defer gs.calls.Done()
		callCtx, cancel := context.WithTimeout(parent, 30*time.Second)
		defer cancel()
		if err := s.conn.Call(callCtx, api.MethodRegisterCapability, params, nil); err != nil {
			s.log.Info("file watching not registered: the code graph follows saves and agentls's own writes", zap.Error(err))
		}
	}(gs.ctx)
}
