package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/rpc"
)

type lifecycle int

const (
	stateNew          lifecycle = iota // nothing yet: only initialize and exit
	stateInitializing                  // initialize received, not yet answered
	stateInitialized                   // initialize answered
	stateShutdown                      // shutdown received: only exit
)

var (
	errNotInitialized = errors.New("not initialized")
	errShuttingDown   = errors.New("shutting down")
)

// awaitReady holds a request that arrived while initialize was still being
// answered until it has been, so it sees the negotiated state.
func (s *Server) awaitReady(ctx context.Context) error {
	s.mu.Lock()
	ready, state := s.ready, s.state
	s.mu.Unlock()
	if state == stateInitialized || state == stateShutdown {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func (s *Server) initialize(_ context.Context, raw json.RawMessage) (any, error) {
	var p api.InitializeParams
	err := rpc.DecodeParams(raw, &p)
	var settings api.Settings
	var unknown []string
	var root string
	if err == nil {
		settings, unknown, err = api.ApplySettings(s.opts.Base, p.InitializationOptions)
		var se *api.SettingsError
		if errors.As(err, &se) {
			err = api.Errorf(api.CodeInvalidParams, "invalid params: initializationOptions.%s", se.Error())
		}
	}
	if err == nil {
		root, err = workspaceRoot(p, s.opts.Cwd)
	}
	var ws *core.Workspace
	if err == nil {
		// Opened before initialize is answered: a request that arrives
		// meanwhile waits for it (awaitReady) and finds it.
		s.mu.Lock()
		s.settings = settings
		s.mu.Unlock()
		ws, err = s.openWorkspace(root, p.Capabilities.Flatten().WatchFiles)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.state = stateNew // the client may try again
		s.settings = s.opts.Base
		return nil, err
	}
	if s.closed {
		defer ws.Close()
		return nil, fmt.Errorf("initialize: %w", rpc.ErrClosed)
	}
	s.ws, s.root = ws, root
	if p.ClientInfo != nil {
		s.client = *p.ClientInfo
	}
	s.editor.SetCaps(p.Capabilities.Flatten())
	s.editor.SetTimeouts(settings.Timeouts)
	if s.state == stateInitializing {
		s.state = stateInitialized
	}
	close(s.ready)
	s.log.Info("initialized",
		zap.String("root", root),
		zap.String("client", s.client.Name),
		zap.Any("caps", p.Capabilities.Flatten()),
		zap.String("editMode", settings.EditMode))
	if len(unknown) > 0 {
		s.log.Warn("initializationOptions: unknown keys ignored", zap.Strings("keys", unknown))
	}
	return &api.InitializeResult{
		ServerInfo: api.ServerInfo{Name: "agentls", Version: s.opts.Version},
		Capabilities: api.ServerCapabilities{
			// A save is all the code graph needs from the editor's
			// buffers: what is unsaved reaches it through agentls's own
			// edits (docs/PROTOCOL.md §2).
			TextDocumentSync: &api.TextDocumentSyncOptions{Save: api.SaveOptions{IncludeText: false}},
			Experimental:     api.ServerExperimental{Agent: api.AgentServerCapabilities{Version: 1, Attachments: true}},
		},
	}, nil
}

// workspaceRoot picks rootUri, else the first workspace folder, else rootPath,
// else cwd (docs/PROTOCOL.md §1), and checks it is a directory.
func workspaceRoot(p api.InitializeParams, cwd string) (string, error) {
	var root, field string
	switch {
	case p.RootURI != nil && *p.RootURI != "":
		field = "rootUri"
		path, err := fileuri.ToPath(*p.RootURI)
		if err != nil {
			return "", api.Errorf(api.CodeInvalidParams, "invalid params: rootUri: %v", err)
		}
		root = path
	case len(p.WorkspaceFolders) > 0:
		field = "workspaceFolders[0].uri"
		path, err := fileuri.ToPath(p.WorkspaceFolders[0].URI)
		if err != nil {
			return "", api.Errorf(api.CodeInvalidParams, "invalid params: workspaceFolders[0].uri: %v", err)
		}
		root = path
	case p.RootPath != nil && *p.RootPath != "":
		field, root = "rootPath", *p.RootPath
	default:
		field, root = "the working directory", cwd
	}
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", api.Errorf(api.CodeInvalidParams, "invalid params: no workspace root given and the working directory is unknown: %v", err)
		}
		root = wd
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", api.Errorf(api.CodeInvalidParams, "invalid params: %s: %v", field, err)
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.IsDir() {
		return "", api.Errorf(api.CodeInvalidParams, "invalid params: %s: %s is not a directory", field, abs)
	}
	return abs, nil
}

func (s *Server) shutdown(_ context.Context, _ json.RawMessage) (any, error) {
	// Gate refuses every request after shutdown; running tasks are stopped
	// (their agent/run answers "stopped") and their sessions written.
	s.log.Info("shutdown")
	if ws, err := s.workspace(); err == nil {
		ws.StopTasks()
	}
	return nil, nil
}

func (s *Server) exitNote(_ context.Context, _ json.RawMessage) {
	code := 1
	if s.ShutDown() {
		code = 0
	}
	s.exitOnce.Do(func() { s.exit <- code })
}

func (s *Server) didChangeConfiguration(ctx context.Context, raw json.RawMessage) {
	var p struct {
		Settings struct {
			Agentls json.RawMessage `json:"agentls"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || len(p.Settings.Agentls) == 0 {
		return // not ours, or not pushed: nothing to change
	}
	s.mu.Lock()
	old := s.settings
	s.mu.Unlock()
	next, unknown, err := api.ApplySettings(old, p.Settings.Agentls)
	if err != nil {
		msg := fmt.Sprintf("agentls: settings not changed: %v", err)
		s.log.Warn("didChangeConfiguration refused", zap.Error(err))
		if nerr := s.notifier.ShowMessage(ctx, api.MessageTypeError, msg); nerr != nil {
			s.log.Debug("showMessage not sent", zap.Error(nerr))
		}
		return
	}
	if len(unknown) > 0 {
		s.log.Warn("settings.agentls: unknown keys ignored", zap.Strings("keys", unknown))
	}
	s.mu.Lock()
	s.settings = next
	s.mu.Unlock()
	s.editor.SetTimeouts(next.Timeouts)
	if ws, err := s.workspace(); err == nil {
		ws.Tune(next)
	}
	s.log.Info("settings changed")
}
