package acpface

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/mcp/bridge"
	"github.com/agentls/agentls/workforce"
)

// newEngines makes a session's engines (docs/ENGINES.md) from its engines
// setting: the built-in ones found on PATH or in npm's cache, and those the
// setting names.
func (s *Server) newEngines(st api.Settings, log *zap.Logger) *engines.Manager {
	m := engines.NewManager(engines.Options{
		Lookup:  engines.Lookup{Getenv: s.opts.Getenv},
		Log:     log,
		Version: s.opts.Version,
	})
	m.Configure(st.Engines)
	return m
}

// engineWorkDir is where the isolated engines of a workspace get their
// worktrees: the LSP face's place.
func engineWorkDir(stateDir string) string { return filepath.Join(stateDir, "engines") }

// newBridge makes the bridge of root's sessions (docs/MCP.md, the
// bridge): it listens from the first subtask an engine runs, and hands
// each call to the session whose prompt runs that task.
func (s *Server) newBridge(root, stateDir string) *bridge.Listener {
	return bridge.New(bridge.Options{
		Dir: filepath.Join(stateDir, "bridge"), Version: s.opts.Version, Log: s.log, Redactor: s.opts.Redactor,
	}, bridgeHost{s: s, root: root})
}

// bridgeHost runs the bridged tool calls of a workspace's engines as the
// workers of the session whose prompt runs their task.
type bridgeHost struct {
	s    *Server
	root string
}

func (h bridgeHost) BridgeTools() []api.MCPTool { return workforce.BridgeTools() }

func (h bridgeHost) BridgeCall(ctx context.Context, taskID, subtaskID, tool string, args json.RawMessage) (string, bool, error) {
	for _, se := range h.s.allSessions() {
		if se.ws.root != h.root {
			continue
		}
		se.mu.Lock()
		mine := se.turn != nil && se.turn.taskID == taskID
		se.mu.Unlock()
		if mine {
			return se.engine.BridgeCall(ctx, taskID, subtaskID, tool, args)
		}
	}
	return "", false, fmt.Errorf("task %q is not running in any session", taskID)
}

// The engine option: which engine the session's prompts run every subtask
// on.
const (
	engineOption = "engine"
	// planDecides is the engine option's value that leaves each subtask's
	// engine to the plan; it cannot name an engine (names start with a
	// letter).
	planDecides = "*"
)

// engineChoices are the engine option's values: the plan's choice,
// agentls's own workers, each engine that can take a subtask now, and
// current when it is none of these (an engine that stopped being usable).
func (se *session) engineChoices(current string) []acp.SessionConfigSelect {
	out := []acp.SessionConfigSelect{
		{Value: planDecides, Name: "Plan decides", Description: "Each subtask runs where the plan puts it: agentls's own workers unless it names an engine"},
		{Value: api.EngineBuiltin, Name: "agentls", Description: "Every subtask on agentls's own workers"},
	}
	for _, name := range se.engines.Available() {
		out = append(out, se.engineChoice(name))
	}
	if current != planDecides && !slices.ContainsFunc(out, func(c acp.SessionConfigSelect) bool { return c.Value == current }) {
		c := se.engineChoice(current)
		if err := se.engines.Usable(current); err != nil {
			c.Description = err.Error()
		}
		out = append(out, c)
	}
	return out
}

// engineChoice is one engine as a value of the engine option, described
// by what it runs.
func (se *session) engineChoice(name string) acp.SessionConfigSelect {
	c := acp.SessionConfigSelect{Value: name, Name: name, Description: "Every subtask on " + name}
	if r, err := se.engines.Resolve(name); err == nil {
		if info := r.Info(); info.Version != "" {
			c.Description += " " + info.Version
		}
	}
	return c
}

// engineConfigOption is the engine option as it is now.
func (se *session) engineConfigOption() acp.SessionConfigOption {
	se.mu.Lock()
	current := se.forced
	se.mu.Unlock()
	if current == "" {
		current = planDecides
	}
	return acp.SessionConfigOption{
		ID: engineOption, Name: "Engine", Type: acp.ConfigSelect,
		Description:  "Where the session's prompts run their subtasks: as the plan decides, on agentls's own workers, or all on one external agent (Claude Code, Codex, Gemini CLI, …)",
		CurrentValue: current, Options: se.engineChoices(current),
	}
}

// setEngine sets the engine option: value must be one of its values and,
// for an engine, one that can take a subtask now.
func (se *session) setEngine(value any) error {
	v, ok := value.(string)
	if !ok {
		return api.Errorf(api.CodeInvalidParams, `invalid params: "value" of %q must be a string`, engineOption)
	}
	se.mu.Lock()
	current := se.forced
	se.mu.Unlock()
	if !slices.ContainsFunc(se.engineChoices(current), func(c acp.SessionConfigSelect) bool { return c.Value == v }) {
		return api.Errorf(api.CodeInvalidParams, "invalid params: %q is not one of the engines offered (%s, %s or a usable engine: %v)", v, planDecides, api.EngineBuiltin, se.engines.Available())
	}
	if v != planDecides && v != api.EngineBuiltin {
		if err := se.engines.Usable(v); err != nil {
			return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	if v == planDecides {
		v = ""
	}
	se.mu.Lock()
	se.forced = v
	se.mu.Unlock()
	se.log.Info("session/set_config_option", zap.String("engine", v))
	return nil
}
