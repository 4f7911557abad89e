package workforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/mcp"
)

// Bridge hands the editor's tools over MCP to an external agent the sidecar
// runs for a subtask (package mcp/bridge): *bridge.Listener satisfies it.
type Bridge interface {
	// Open grants the subtask's agent access to the tools tools lists
	// when it connects, and returns the MCP server entry ({"command",
	// "args", "env"}) that starts `agentls mcp` for it; revoke ends the
	// access.
	Open(taskID, subtaskID string, tools func(context.Context) []api.MCPTool) (entry api.MCPServer, revoke func(), err error)
}

// bridgedTools are the worker's tools an external agent gets through the
// bridge: the editor's buffers, the editing pipeline, commands with their
// approval.
var bridgedTools = []string{"read_file", "write_file", "edit_file", "run_command"}

// ErrNoBridge: the Engine was made without a Bridge.
var ErrNoBridge = errors.New("the MCP bridge is not set up")

// MCPEntry returns the MCP server entry to hand to an external agent that
// works on a running subtask: {"command": agentls, "args": ["mcp"], "env":
// {the socket, a token}} (docs/MCP.md, the bridge). Through it the agent
// reads, writes, edits and runs commands as that subtask's worker: its
// zones, intent, edit mode, approvals and trace; and, for a worker that
// shares them (an engine whose entry does not say mcpServers: false),
// calls the worker's MCP tools (the user's mcpServers) with the worker's
// approvals. The entry is valid until the subtask ends.
func (e *Engine) MCPEntry(taskID, subtaskID string) (api.MCPServer, error) {
	if e.cfg.Bridge == nil {
		return api.MCPServer{}, ErrNoBridge
	}
	w, err := e.runningWorker(taskID, subtaskID)
	if err != nil {
		return api.MCPServer{}, err
	}
	entry, revoke, err := e.cfg.Bridge.Open(taskID, subtaskID, func(ctx context.Context) []api.MCPTool { return e.bridgeTools(ctx, w) })
	if err != nil {
		return api.MCPServer{}, err
	}
	t := w.t
	t.mu.Lock()
	if t.workers[subtaskID] != w {
		t.mu.Unlock()
		revoke() // it ended meanwhile
		return api.MCPServer{}, fmt.Errorf("%w: subtask %q of task %q is not running", ErrWrongState, subtaskID, taskID)
	}
	w.revokes = append(w.revokes, revoke)
	t.mu.Unlock()
	return entry, nil
}

// runningWorker finds the worker of a running subtask.
func (e *Engine) runningWorker(taskID, subtaskID string) (*worker, error) {
	t, err := e.lookup(taskID)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.workers[subtaskID]
	if w == nil || t.ended || t.stopped {
		return nil, fmt.Errorf("%w: subtask %q of task %q is not running", ErrWrongState, subtaskID, taskID)
	}
	return w, nil
}

// bridgeTools are the tools the bridge serves a worker's agent: the
// editor's, then, when the worker shares them, its MCP tools under the
// names its model would call (mcp__<server>__<tool>).
func (e *Engine) bridgeTools(ctx context.Context, w *worker) []api.MCPTool {
	out := BridgeTools()
	if w.shareMCP.Load() && e.cfg.Tools != nil {
		// As for the worker's own turn: in a workspace the person does not
		// trust, a server starts only with their yes.
		var approve mcp.Approve
		if w.t.settings.Untrusted() {
			approve = w.approveMCPStart
		}
		for _, tl := range e.cfg.Tools.Tools(ctx, approve) {
			if !slices.ContainsFunc(out, func(o api.MCPTool) bool { return o.Name == tl.Name }) {
				out = append(out, tl)
			}
		}
	}
	return out
}

// BridgeTools are the tools the bridge serves to any engine's agent: the
// worker's read_file, write_file, edit_file and run_command.
func BridgeTools() []api.MCPTool {
	var out []api.MCPTool
	for _, tl := range toolkit() {
		if slices.Contains(bridgedTools, tl.Name) {
			out = append(out, api.MCPTool{Name: tl.Name, Tool: tl.Name, Description: tl.Description,
				InputSchema: tl.Parameters, ReadOnly: tl.Name == "read_file"})
		}
	}
	return out
}

// BridgeCall runs a tool call an external agent made through the bridge as
// the subtask's worker: the same checks, approvals, events and trace as the
// worker's own calls, one at a time with them. An MCP tool (mcp__…) is
// called only for a worker that shares them, through the worker's own
// path: the intent gate, the commands setting and allowMcpTools, the heat
// and the trace. It ends when ctx does (the
// agent cancelled) or the subtask ends.
func (e *Engine) BridgeCall(ctx context.Context, taskID, subtaskID, tool string, args json.RawMessage) (string, bool, error) {
	w, err := e.runningWorker(taskID, subtaskID)
	if err != nil {
		return "", false, err
	}
	mcpTool := strings.HasPrefix(tool, api.MCPToolPrefix) && w.shareMCP.Load() && e.cfg.Tools != nil
	if !slices.Contains(bridgedTools, tool) && !mcpTool {
		return "", false, fmt.Errorf("there is no tool %q; the tools are %v", tool, bridgedTools)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(w.ctx, func() { cancel(context.Cause(w.ctx)) })
	defer stop()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	r := w.call(ctx, clients.ToolCall{ID: "bridge", Name: tool, Arguments: args})
	return r.content, r.isErr, nil
}
