package workforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/mcp"
	"github.com/agentls/agentls/tracking/trace"
)

// ToolSource offers workers tools beyond their own: the tools of the MCP
// servers (package mcp, through MCPTools). Tool names begin with
// api.MCPToolPrefix; a worker hands every call of such a name to Call.
type ToolSource interface {
	// Tools lists the tools to offer, starting the servers on their first
	// need; ctx bounds the wait for them. With approve, a server that has
	// not started yet starts only once approve let it (mcp.Approve).
	Tools(ctx context.Context, approve mcp.Approve) []api.MCPTool
	// Call calls the tool named name with args, bounded by timeout and
	// ctx. err means the call did not run to its end (no such tool, the
	// server unavailable or crashed, the time up, ctx ended).
	Call(ctx context.Context, name string, args json.RawMessage, timeout time.Duration) (ToolOutput, error)
	// Unavailable says why a name that is not offered (any more) cannot be
	// called: its server's failure, or nil when no server claims it.
	Unavailable(name string) error
}

// MCPTools is the MCP client as a ToolSource: its tools, and their results
// with the images kept for the models that take them.
func MCPTools(m *mcp.Manager) ToolSource { return mcpSource{m} }

type mcpSource struct{ m *mcp.Manager }

func (t mcpSource) Tools(ctx context.Context, approve mcp.Approve) []api.MCPTool {
	if approve == nil {
		return t.m.Tools(ctx)
	}
	return t.m.ToolsApproved(ctx, approve)
}

func (t mcpSource) Unavailable(name string) error { return t.m.Unavailable(name) }

func (t mcpSource) Call(ctx context.Context, name string, args json.RawMessage, timeout time.Duration) (ToolOutput, error) {
	res, err := t.m.Call(ctx, name, args, timeout)
	out := ToolOutput{Text: res.Text, IsError: res.IsError}
	for _, img := range res.Images {
		out.Images = append(out.Images, clients.Image{MimeType: img.MIMEType, Data: img.Data})
	}
	return out, err
}

// ToolOutput is what an MCP tool gave back: the text the model is given,
// whether the tool reported a failure, and its images.
type ToolOutput struct {
	Text    string
	IsError bool
	Images  []clients.Image
}

// maxTraceContent bounds the file an MCP trace entry hashes.
const maxTraceContent = 64 << 20

// mcpTools are the MCP servers' tools as the workers' second set of tools
// (toolSet): listed at every turn, after the worker's own, and given every
// call of an mcp__ name the registry does not have.
type mcpTools struct{ src ToolSource }

// tools lists the MCP tools and keeps them in w.extra by name.
func (m mcpTools) tools(ctx context.Context, w *worker) []clients.Tool {
	var approve mcp.Approve
	if w.t.settings.Untrusted() {
		approve = w.approveMCPStart
	}
	list := m.src.Tools(ctx, approve)
	w.extra = make(map[string]api.MCPTool, len(list))
	out := make([]clients.Tool, 0, len(list))
	for _, x := range list {
		w.extra[x.Name] = x
		out = append(out, clients.Tool{Name: x.Name, Description: x.Description, Parameters: x.InputSchema})
	}
	return out
}

// call takes every mcp__ name, offered or not: one that is not offered
// (any more) is told why (ToolSource.Unavailable).
func (m mcpTools) call(ctx context.Context, w *worker, c clients.ToolCall) (result, bool) {
	if !strings.HasPrefix(c.Name, api.MCPToolPrefix) {
		return result{}, false
	}
	return w.mcpCall(ctx, c), true
}

// mcpCall is a call of an MCP tool: the intent gate for a tool that is not
// read-only, the approval (the commands setting and allowMcpTools), the
// call bounded by timeouts.mcpMs, then the heat and the trace of the
// workspace files its arguments name.
func (w *worker) mcpCall(ctx context.Context, c clients.ToolCall) result {
	t := w.t
	src := t.e.cfg.Tools
	tool, ok := w.extra[c.Name]
	if !ok && src != nil {
		w.offer(ctx) // a list that changed since the turn began
		tool, ok = w.extra[c.Name]
	}
	if !ok {
		if src != nil {
			if err := src.Unavailable(c.Name); err != nil {
				return fail(err)
			}
		}
		return fail(fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(w.toolNames(), ", ")))
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(c.Arguments, &obj) != nil {
		return fail(fmt.Errorf("%w: the arguments of %s must be a JSON object", errArgs, c.Name))
	}
	if !tool.ReadOnly {
		// A tool that may change things is gated like run_command.
		if err := w.gate("run_command", ""); err != nil {
			return fail(err)
		}
	}
	if err := w.approveMCP(ctx, tool, c.Arguments); err != nil {
		return fail(err)
	}
	out, err := src.Call(ctx, c.Name, c.Arguments, t.settings.Timeouts.MCP())
	if err != nil {
		if ctx.Err() != nil {
			return fail(context.Cause(ctx))
		}
		return fail(err)
	}
	w.recordMCP(tool, c.Arguments, !out.IsError)
	text, images := t.resultImages(out.Text, out.Images)
	return result{content: capOutput(text), isErr: out.IsError, images: images}
}

// resultImages keeps the images of a tool's result that a model may be
// given: of a type models take, and within attachments.maxImageBytes. The
// text says why any other is left out.
func (t *task) resultImages(text string, images []clients.Image) (string, []clients.Image) {
	var kept []clients.Image
	for i, img := range images {
		why := ""
		switch {
		case clients.CheckImage(t.spec, img.MimeType) != nil:
			why = clients.CheckImage(t.spec, img.MimeType).Error()
		case int64(len(img.Data)) > t.settings.Attachments.MaxImageBytes:
			why = fmt.Sprintf("%d bytes, more than attachments.maxImageBytes (%d)", len(img.Data), t.settings.Attachments.MaxImageBytes)
		}
		if why != "" {
			text += fmt.Sprintf("\n[image %d is not given to the model: %s]", i+1, why)
			continue
		}
		kept = append(kept, img)
	}
	return text, kept
}

// approveMCP applies the commands setting to an MCP call: deny refuses,
// allow calls, ask calls a tool that allowMcpTools or an earlier "Always
// allow" covers and asks the person otherwise, naming server, tool and
// arguments (secrets redacted).
func (w *worker) approveMCP(ctx context.Context, tool api.MCPTool, args json.RawMessage) error {
	t := w.t
	switch t.commandPolicy() {
	case api.CommandsDeny:
		return errors.New("MCP tools are turned off in this workspace (the commands setting is deny); do without them")
	case api.CommandsAllow:
		return nil
	}
	server := api.MCPToolPrefix + api.SanitizeMCPName(tool.Server)
	for _, a := range t.settings.AllowMCPTools {
		if (a == server || a == tool.Name) && !t.settings.Untrusted() {
			return nil
		}
	}
	key := "mcp:" + tool.Name
	if t.e.allowedBefore(key) {
		return nil
	}
	shown := string(args)
	var b bytes.Buffer
	if json.Compact(&b, args) == nil {
		shown = b.String()
	}
	shown = oneLine(t.e.cfg.Redactor.String(shown), 600)
	return w.askApproval(ctx, approval{
		question: fmt.Sprintf("Call the MCP tool `%s` of `%s` with %s?", tool.Tool, tool.Server, shown),
		message:  t.untrustedPrefix() + fmt.Sprintf("agentls wants to call the MCP tool `%s` of the server `%s` with %s", tool.Tool, tool.Server, shown),
		key:      key,
		run:      "call the MCP tool " + tool.Tool,
		again:    "call it",
		subject:  "the call of " + tool.Tool,
		notDone:  "it was not made",
		notDoneP: "was not made",
	})
}

// recordMCP puts the workspace files the arguments name on the heat map as
// mcp accesses and, for a tool that is not read-only and a call that
// succeeded, in the trace as mcp entries (docs/MCP.md).
func (w *worker) recordMCP(tool api.MCPTool, args json.RawMessage, succeeded bool) {
	t := w.t
	paths := w.mcpPaths(args)
	for _, p := range paths {
		w.tracker.Access(p.Rel, api.ActionMCP)
	}
	if tool.ReadOnly || !succeeded || !t.e.cfg.Tracking.TraceEnabled() {
		return
	}
	for _, p := range paths {
		var content []byte
		if st, err := os.Stat(p.Abs); err == nil && st.Mode().IsRegular() && st.Size() <= maxTraceContent {
			content, _ = os.ReadFile(p.Abs)
			if content == nil {
				content = []byte{}
			}
		}
		_, err := t.e.cfg.Tracking.RecordChange(trace.Change{
			Path: p.Rel, Operation: api.OpMCP, Content: content, Tool: tool.Name,
			IntentID: w.intent, SessionID: t.sessionID, TaskID: t.id, SubtaskID: w.sub.ID, Model: t.spec,
		})
		if err != nil {
			w.log.Warn("trace not written", zap.String("path", p.Rel), zap.Error(err))
		}
	}
}

// mcpPath is a workspace file an MCP call named.
type mcpPath struct{ Rel, Abs string }

// mcpPaths finds the workspace files an MCP call's arguments name: every
// string (at any depth) that is an absolute path or file:// URI inside the
// workspace, and a relative path that exists there under a key that names
// a path (path, file, dir, uri, source, destination). At most 32.
func (w *worker) mcpPaths(args json.RawMessage) []mcpPath {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []mcpPath
	var walk func(key string, v any, depth int)
	walk = func(key string, v any, depth int) {
		if depth > 8 || len(out) >= 32 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(k, x[k], depth+1)
			}
		case []any:
			for _, y := range x {
				walk(key, y, depth+1)
			}
		case string:
			if p, ok := w.workspacePath(key, x); ok && !seen[p.Rel] {
				seen[p.Rel] = true
				out = append(out, p)
			}
		}
	}
	walk("", v, 0)
	return out
}

func (w *worker) workspacePath(key, s string) (mcpPath, bool) {
	if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\x00") {
		return mcpPath{}, false
	}
	absolute := strings.HasPrefix(s, "/") || strings.HasPrefix(strings.ToLower(s), "file://")
	if !absolute {
		k := strings.ToLower(key)
		named := false
		for _, word := range []string{"path", "file", "dir", "uri", "source", "destination"} {
			named = named || strings.Contains(k, word)
		}
		if !named {
			return mcpPath{}, false
		}
	}
	rp, err := w.t.edit.Resolve(s)
	if err != nil || rp.Rel == "." || rp.Rel == "" {
		return mcpPath{}, false
	}
	if !absolute {
		if _, err := os.Lstat(rp.Abs); err != nil {
			return mcpPath{}, false
		}
	}
	return mcpPath{Rel: rp.Rel, Abs: rp.Abs}, true
}

// approveMCPStart asks the person whether an MCP server may start, in a
// workspace they do not trust (docs/SECURITY.md, "Workspace trust"): the
// server is a program of their settings, but it runs next to a repository
// they have not vouched for. Under deny nothing starts. "Always allow"
// holds for the server's entry for the rest of the process.
func (w *worker) approveMCPStart(ctx context.Context, name string, cfg api.MCPServer) error {
	t := w.t
	if t.commandPolicy() == api.CommandsDeny {
		return errors.New("the commands setting is deny")
	}
	what := cfg.URL
	if cfg.URL == "" {
		what = strings.Join(append([]string{cfg.Command}, cfg.Args...), " ")
	}
	what = oneLine(t.e.cfg.Redactor.String(what), 300)
	key := "mcp-start:" + name + ":" + what
	if t.e.allowedBefore(key) {
		return nil
	}
	err := w.askApproval(ctx, approval{
		question: fmt.Sprintf("Start the MCP server `%s` (`%s`)?", name, what),
		message:  t.untrustedPrefix() + fmt.Sprintf("agentls wants to start the MCP server `%s` (`%s`) for its workers", name, what),
		key:      key,
		run:      "start the MCP server " + name,
		again:    "ask for it",
		subject:  "the MCP server " + name,
		notDone:  "it was not started",
		notDoneP: "was not started",
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("the workspace is not trusted and the person did not let it start (%w)", err)
	}
	return err
}
