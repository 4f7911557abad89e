package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/rpc"
)

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
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	g, err := ws.Graph()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", api.MethodCodeGraph, err)
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

// graph is the workspace's code graph, nil before initialize or when it
// could not be made.
func (s *Server) graph() *codegraph.Graph {
	ws, err := s.workspace()
	if err != nil {
		return nil
	}
	g, _ := ws.Graph()
	return g
}

// graphChanged tells the graph of files the editor changed, by URI.
func (s *Server) graphChanged(uris ...string) {
	g := s.graph()
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
// agentls and the editor (a git checkout, a build). When the client cannot,
// or refuses the registration, the graph watches the disk itself
// (core.Workspace.WatchDisk).
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
	// belongs to the server: its close ends and awaits it.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ws == nil {
		return
	}
	if _, err := s.ws.Graph(); err != nil {
		return // nothing would hear of the changes
	}
	ws := s.ws
	s.calls.Go(func() {
		callCtx, cancel := context.WithTimeout(s.life, 30*time.Second)
		defer cancel()
		if err := s.conn.Call(callCtx, api.MethodRegisterCapability, params, nil); err != nil {
			if s.life.Err() != nil {
				return
			}
			// the graph watches the disk itself instead
			s.log.Info("file watching not registered: the code graph watches the workspace itself", zap.Error(err))
			ws.WatchDisk()
		}
	})
}
