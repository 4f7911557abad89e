package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
	"github.com/agentls/agentls/workforce"
)

// openWorkspace opens the workspace of root (package core), once
// initialize has named it: the sweep of a crash's leftovers and the code
// graph start in the background; the rest is made on first use. The graph
// watches the disk itself unless the editor can watch files for agentls
// (editorWatches: initializedNote registers the watcher).
func (s *Server) openWorkspace(root string, editorWatches bool) (*core.Workspace, error) {
	dir, err := contain.New(root)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: the workspace root %s: %v", root, err)
	}
	return core.Open(core.Config{
		Dir:              dir,
		Settings:         s.Settings,
		Getenv:           s.opts.Getenv,
		Redactor:         s.opts.Redactor,
		Log:              s.log,
		Version:          s.opts.Version,
		Record:           s.opts.Record,
		Notices:          notices{s},
		BridgeExecutable: s.opts.bridgeExecutable,
		// The editor's language servers are asked first (agent/references,
		// agent/definition) when it declares them.
		LanguageServer: s.editor,
		EditorWatches:  editorWatches,
	}), nil
}

// workspace is the workspace initialize opened.
func (s *Server) workspace() (*core.Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ws == nil {
		return nil, fmt.Errorf("workspace: %w", errNotInitialized)
	}
	return s.ws, nil
}

// Tracking returns the workspace's tracking (heat map, intents, trace,
// sessions, usage), opening it on first use with the heat ticker, which
// sends agent/heatUpdate until the server closes.
func (s *Server) Tracking() (*tracking.Workspace, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	return ws.Tracking()
}

// Work returns the task engine, making it on first use.
func (s *Server) Work() (*workforce.Engine, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	s.workMu.Lock()
	defer s.workMu.Unlock()
	if s.tasks == nil {
		if s.tasks, err = ws.NewTasks(core.TasksConfig{Editor: s.editor, Events: s.events}); err != nil {
			return nil, err
		}
	}
	return s.tasks.Engine, nil
}

// engineIfAny returns the task engine when one was made (nil otherwise):
// for the notifications that only concern tasks already running.
func (s *Server) engineIfAny() *workforce.Engine {
	s.workMu.Lock()
	defer s.workMu.Unlock()
	if s.tasks == nil {
		return nil
	}
	return s.tasks.Engine
}

// interruptWork stops every running task because the editor went away:
// their sessions record them as interrupted.
func (s *Server) interruptWork() {
	ws, err := s.workspace()
	if err != nil {
		return
	}
	for _, id := range ws.Interrupt("the editor stopped reading") {
		s.log.Warn("task interrupted: the editor stopped reading", zap.String("task", id))
	}
}

// close ends what the server runs: the workspace (every task stopped and
// its session written, then the MCP servers, the recording, the code
// graph's last store and the tracking), and the calls the server made on
// its own.
func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	ws := s.ws
	s.mu.Unlock()
	s.endLife()
	if ws != nil {
		ws.Close()
	}
	s.calls.Wait()
}

// notices are the workspace's notices as the LSP face sends them: the heat
// map's changes as agent/heatUpdate, warnings as window/logMessage.
type notices struct{ s *Server }

func (n notices) HeatUpdate(ctx context.Context, p *api.HeatUpdateParams) error {
	return n.s.notifier.HeatUpdate(ctx, p)
}

func (n notices) Warn(msg string) { n.s.reportToUser(msg) }

// reportWait bounds how long a warning waits for room when the editor has
// not read the last 8 MiB agentls sent it: the callers (a model client's
// retry, the session store) must not block.
const reportWait = time.Second

// reportToUser shows a warning the person should see (window/logMessage).
func (s *Server) reportToUser(msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), reportWait)
	defer cancel()
	err := s.notifier.LogMessage(ctx, api.MessageTypeWarning, msg)
	switch {
	case err == nil:
	case errors.Is(err, rpc.ErrClosed):
		s.log.Debug("logMessage not sent", zap.Error(err))
	default:
		// In the log at least.
		s.log.Warn("warning not shown: the editor is not reading", zap.String("warning", msg), zap.Error(err))
	}
}
