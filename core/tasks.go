package core

import (
	"context"
	"encoding/json"
	"fmt"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/mcp"
	"github.com/agentls/agentls/workforce"
)

// TasksConfig makes a task engine on a workspace.
type TasksConfig struct {
	// Editor is the face's editor: every read, edit, command and question
	// of the tasks goes through it.
	Editor workforce.Editor
	// Events receives the tasks' events, for the face to translate.
	Events workforce.Events
	// Own, when set, gives the task engine an MCP client and engines of
	// its own, made from these settings and closed with it (an ACP
	// session's, with the servers it names); nil shares the workspace's
	// (MCP, Engines).
	Own *api.Settings
	// Log receives the engine's logs (nil: the workspace's).
	Log *zap.Logger
}

// Tasks is a task engine on the workspace, with the MCP client and the
// engines its workers use.
type Tasks struct {
	Engine  *workforce.Engine
	MCP     *mcp.Manager
	Engines *engines.Manager

	w   *Workspace
	own bool // MCP and Engines are its own: closed with it
}

// NewTasks makes a task engine on the workspace: its root, tracking, model
// clients, code graph, bridge and the engines' work directory are the
// workspace's. Its models are the workspace's as one session has them
// (workforce.Models.Session): a scripted model plays from its start for
// each task engine. The workspace closes it at Close, unless its Close came
// first.
func (w *Workspace) NewTasks(c TasksConfig) (*Tasks, error) {
	log := c.Log
	if log == nil {
		log = w.log
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.stopped {
		return nil, fmt.Errorf("tasks: %w", ErrClosed)
	}
	track, err := w.trackingLocked()
	if err != nil {
		return nil, err
	}
	t := &Tasks{w: w}
	if c.Own != nil {
		t.own = true
		t.MCP, t.Engines = w.newMCP(*c.Own, log), w.newEngines(*c.Own, log)
	} else {
		if w.mcp == nil {
			w.mcp = w.newMCP(w.cfg.Settings(), w.log)
		}
		if w.engines == nil {
			w.engines = w.newEngines(w.cfg.Settings(), w.log)
		}
		t.MCP, t.Engines = w.mcp, w.engines
	}
	t.Engine, err = workforce.New(workforce.Config{
		Root:     w.cfg.Dir.Path(),
		Editor:   c.Editor,
		Events:   c.Events,
		Tracking: track,
		Models:   w.modelsLocked().Session(),
		Graph:    w.graph,
		Logger:   log,
		Redactor: w.cfg.Redactor,
		Tools:    workforce.MCPTools(t.MCP),
		Bridge:   w.bridgeLocked(),

		Engines:       t.Engines,
		EngineWorkDir: w.layout.Engines(),
	})
	if err != nil {
		if t.own {
			t.MCP.Close()
		}
		return nil, err
	}
	w.tasks[t] = true
	return t, nil
}

// Close stops every task of the engine and waits until each has ended and
// written its session, then stops its own MCP servers. The workspace
// forgets it.
func (t *Tasks) Close() {
	t.Engine.Close()
	if t.own {
		t.MCP.Close()
	}
	t.w.mu.Lock()
	delete(t.w.tasks, t)
	t.w.mu.Unlock()
}

// bridgeHost hands the bridge's calls to the task engine that runs the
// call's task (mcp/bridge.Host).
type bridgeHost struct{ w *Workspace }

func (h bridgeHost) BridgeCall(ctx context.Context, taskID, subtaskID, tool string, args json.RawMessage) (string, bool, error) {
	for _, t := range h.w.openTasks() {
		if t.Engine.Runs(taskID) {
			return t.Engine.BridgeCall(ctx, taskID, subtaskID, tool, args)
		}
	}
	return "", false, fmt.Errorf("task %q is not running", taskID)
}
