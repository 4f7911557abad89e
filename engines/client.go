package engines

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
)

// client serves the agent's calls (acp.Client) through the host: the
// editor's buffers, the editing pipeline, commands with their approval,
// permissions decided by zones, intents and the approval policy. An
// isolated agent's paths in its worktree are told to the host as the
// workspace's, and its fs calls are served from its worktree.
type client struct {
	ctx  context.Context // the subtask's: ends every call when it ends
	host Host
	root string
	// wt is the isolated agent's worktree (nil: not isolated). It is set
	// once, before session/new, when the agent's isolation is decided from
	// its initialize answer.
	wt  atomic.Pointer[worktree]
	log *zap.Logger

	mu        sync.Mutex
	calls     map[string]*ToolCall // merged by id
	message   strings.Builder      // the agent's current message
	last      string               // its last whole message
	terminals map[string]*terminal
	nextTerm  int
	termWG    sync.WaitGroup
	// refused are the titles of the tool calls a permission was refused
	// for in this turn.
	refused []string
	// bridged are the MCP servers agentls gave the agent (its bridge):
	// their tools hold each call to agentls's own approvals, so the
	// agent's permission for one is not asked again.
	bridged []string
}

func newClient(ctx context.Context, host Host, root string, wt *worktree, log *zap.Logger) *client {
	c := &client{ctx: ctx, host: host, root: root, log: log,
		calls: map[string]*ToolCall{}, terminals: map[string]*terminal{}}
	c.wt.Store(wt)
	return c
}

// refusals are the tool calls a permission was refused for.
func (c *client) refusals() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.refused)
}

var _ acp.Client = (*client)(nil)

// bound ends a call's context when the subtask ends too.
func (c *client) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.ctx, func() { cancel(context.Cause(c.ctx)) })
	return ctx, func() { stop(); cancel(nil) }
}

// toHost turns an agent's path into the workspace's (an isolated agent's
// worktree path into the same path of the workspace).
func (c *client) toHost(p string) string {
	if p == "" {
		return p
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(c.root, p)
	}
	p = filepath.Clean(p)
	if wt := c.wt.Load(); wt != nil {
		if rel, ok := contain.Within(wt.cwd, p); ok {
			return filepath.Join(c.root, filepath.FromSlash(rel))
		}
	}
	return p
}

// inWorktree is the path, relative to an isolated agent's worktree, of p
// (a path in its worktree, or the same path in the workspace), held inside
// the worktree with its symlinks resolved (contain): a symlink the
// repository committed cannot take the agent's reads or writes outside.
// It fails for a path outside both, and for one the zones close, as
// written or where its symlinks lead.
func (c *client) inWorktree(wt *worktree, given string) (string, error) {
	p := given
	if !filepath.IsAbs(p) {
		p = filepath.Join(wt.cwd, p)
	}
	p = filepath.Clean(p)
	rel, ok := wt.held.Within(p)
	if !ok {
		if rel, ok = contain.Within(c.root, p); !ok {
			return "", api.Errorf(api.CodeInvalidParams, "%s is outside the workspace", given)
		}
	}
	rp, err := wt.held.Resolve(rel)
	if err != nil {
		return "", api.Errorf(api.CodeInvalidParams, "%s: %v", given, err)
	}
	if wt.hidden(rel) || wt.hidden(rp.Rel) {
		return "", api.Errorf(api.CodeInvalidParams, "%s is closed to agents by the workspace's zones", given)
	}
	return rp.Rel, nil
}

func (c *client) ReadTextFile(ctx context.Context, p *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	line, limit := 0, 0
	if p.Line != nil {
		line = *p.Line
	}
	if p.Limit != nil {
		limit = *p.Limit
	}
	if wt := c.wt.Load(); wt != nil {
		rel, err := c.inWorktree(wt, p.Path)
		if err != nil {
			return nil, err
		}
		data, err := wt.held.ReadFile(rel, maxChangeBytes)
		if errors.Is(err, os.ErrNotExist) {
			return &acp.ReadTextFileResponse{Content: ""}, nil
		}
		if err != nil {
			return nil, err
		}
		return &acp.ReadTextFileResponse{Content: CutLines(string(data), line, limit)}, nil
	}
	content, _, err := c.host.ReadTextFile(ctx, c.toHost(p.Path), line, limit)
	if err != nil {
		return nil, err
	}
	// A missing file reads as "" (gemini-cli reads before it creates).
	return &acp.ReadTextFileResponse{Content: content}, nil
}

func (c *client) WriteTextFile(ctx context.Context, p *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if wt := c.wt.Load(); wt != nil {
		rel, err := c.inWorktree(wt, p.Path)
		if err != nil {
			return nil, err
		}
		if err := wt.held.WriteFile(rel, []byte(p.Content), 0o644); err != nil {
			return nil, err
		}
		return &acp.WriteTextFileResponse{}, nil
	}
	if err := c.host.WriteTextFile(ctx, c.toHost(p.Path), p.Content); err != nil {
		return nil, err
	}
	return &acp.WriteTextFileResponse{}, nil
}

func (c *client) RequestPermission(ctx context.Context, p *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	ctx, cancel := c.bound(ctx)
	defer cancel()
	if wt := c.wt.Load(); wt != nil {
		// An isolated agent works in its copy: a path of the workspace
		// itself would change it behind the editing pipeline's back.
		for _, raw := range rawPaths(p.ToolCall) {
			if filepath.IsAbs(raw) && inside(c.root, raw) && !inside(wt.cwd, raw) {
				c.log.Info("permission refused: an isolated agent named the workspace itself", zap.String("path", raw))
				tc := c.merge(p.ToolCall, false)
				c.noteRefused(tc)
				return c.choose(p.Options, Reject), nil
			}
		}
	}
	tc := c.merge(p.ToolCall, false)
	if server := c.bridgedServer(tc.Title); server != "" {
		c.log.Debug("permission allowed: a tool of agentls's own MCP server, whose calls it holds itself", zap.String("server", server), zap.String("tool", tc.Title))
		return c.choose(p.Options, Allow), nil
	}
	perm := Permission{ToolCallID: tc.ID, Title: tc.Title, Kind: tc.Kind, Paths: tc.Paths, Input: tc.Input}
	if perm.Kind == acp.KindExecute || perm.Kind == "" {
		perm.Command = rawString(tc.Input, "command", "cmd")
	}
	if perm.Command == "" && perm.Kind == acp.KindExecute {
		perm.Command = tc.Title
	}
	_, perm.CanAlways = optionOf(p.Options, acp.AllowAlways)
	d, err := c.host.Permission(ctx, perm)
	if err != nil {
		if ctx.Err() != nil {
			return &acp.RequestPermissionResponse{Outcome: acp.Cancelled}, nil
		}
		c.log.Info("permission refused", zap.String("tool", tc.Title), zap.Error(err))
		d = Reject
	}
	if d == Reject {
		c.noteRefused(tc)
	}
	return c.choose(p.Options, d), nil
}

// bridgedServer is the name of agentls's MCP server a tool call's title
// says it calls ("" for any other): "mcp__<server>__<tool>" (Claude Code),
// "<tool> (<server> MCP Server)" (Gemini CLI).
func (c *client) bridgedServer(title string) string {
	for _, n := range c.bridged {
		if strings.HasPrefix(title, "mcp__"+n+"__") || strings.HasSuffix(title, " ("+n+" MCP Server)") {
			return n
		}
	}
	return ""
}

// noteRefused remembers a tool call a permission was refused for.
func (c *client) noteRefused(tc *ToolCall) {
	what := tc.Title
	if what == "" {
		what = "a tool call of kind " + tc.Kind
	}
	c.mu.Lock()
	c.refused = append(c.refused, what)
	c.mu.Unlock()
}

// optionOf finds the first option of a kind.
func optionOf(options []acp.PermissionOption, kind string) (string, bool) {
	for _, o := range options {
		if o.Kind == kind {
			return o.OptionID, true
		}
	}
	return "", false
}

// choose answers a permission with the option of the decision's kind.
func (c *client) choose(options []acp.PermissionOption, d Decision) *acp.RequestPermissionResponse {
	kinds := []string{acp.RejectOnce, acp.RejectAlways}
	switch d {
	case AllowAlways:
		kinds = []string{acp.AllowAlways, acp.AllowOnce}
	case Allow:
		kinds = []string{acp.AllowOnce, acp.AllowAlways}
	}
	for _, k := range kinds {
		if id, ok := optionOf(options, k); ok {
			return &acp.RequestPermissionResponse{Outcome: acp.Selected(id)}
		}
	}
	return &acp.RequestPermissionResponse{Outcome: acp.Cancelled}
}

// rawPaths are the paths a tool call names, as the agent wrote them.
func rawPaths(u acp.ToolCallUpdate) []string {
	var out []string
	for _, l := range u.Locations {
		out = append(out, l.Path)
	}
	for _, ct := range u.Content {
		if ct.Type == acp.ToolContentDiff {
			out = append(out, ct.Path)
		}
	}
	if p := rawString(u.RawInput, "file_path", "path", "absolute_path", "notebook_path"); p != "" {
		out = append(out, p)
	}
	return out
}

// SessionUpdate decodes an update for the host. It runs on the
// connection's notification goroutine, in the order the agent sent them.
func (c *client) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	switch u := n.Update.(type) {
	case acp.AgentMessageChunk:
		if u.Content.Type == acp.BlockText && u.Content.Text != "" {
			c.mu.Lock()
			c.message.WriteString(u.Content.Text)
			c.mu.Unlock()
			c.host.Update(Update{Kind: UpdateMessage, Text: u.Content.Text})
		}
	case acp.AgentThoughtChunk:
		if u.Content.Type == acp.BlockText && u.Content.Text != "" {
			c.host.Update(Update{Kind: UpdateThought, Text: u.Content.Text})
		}
	case acp.ToolCall:
		c.endMessage()
		tc := c.merge(acp.ToolCallUpdate(u), true)
		c.host.Update(Update{Kind: UpdateToolCall, ToolCall: tc})
	case acp.ToolCallUpdate:
		c.endMessage()
		tc := c.merge(u, false)
		c.host.Update(Update{Kind: UpdateToolCall, ToolCall: tc})
	case acp.Plan:
		steps := make([]api.PlanStep, len(u.Entries))
		for i, e := range u.Entries {
			steps[i] = api.PlanStep{Content: e.Content, Status: e.Status, Priority: e.Priority}
		}
		c.host.Update(Update{Kind: UpdatePlan, Plan: steps})
	case acp.UsageUpdate:
		c.host.Update(Update{Kind: UpdateUsage, Used: u.Used, Size: u.Size})
	}
	return nil
}

// endMessage closes the agent's current message: a tool call begins.
func (c *client) endMessage() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.TrimSpace(c.message.String()) != "" {
		c.last = c.message.String()
	}
	c.message.Reset()
}

// lastMessage is the agent's last message: its answer.
func (c *client) lastMessage() string {
	c.endMessage()
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimSpace(c.last)
}

// merge folds a tool call's update into what is known of it, and returns
// a copy of the merged state.
func (c *client) merge(u acp.ToolCallUpdate, announce bool) *ToolCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	tc := c.calls[u.ToolCallID]
	if tc == nil {
		tc = &ToolCall{ID: u.ToolCallID, Status: acp.StatusPending}
		c.calls[u.ToolCallID] = tc
	}
	if u.Title != "" {
		tc.Title = u.Title
	}
	if u.Kind != "" {
		tc.Kind = u.Kind
	}
	if u.Status != "" {
		tc.Status = u.Status
	}
	if len(u.RawInput) > 0 && string(u.RawInput) != "{}" && string(u.RawInput) != "null" {
		tc.Input = append(json.RawMessage(nil), u.RawInput...)
	}
	add := func(p string) {
		if p == "" {
			return
		}
		p = c.toHost(p)
		for _, x := range tc.Paths {
			if x == p {
				return
			}
		}
		tc.Paths = append(tc.Paths, p)
	}
	for _, l := range u.Locations {
		add(l.Path)
	}
	var out []string
	for _, ct := range u.Content {
		switch ct.Type {
		case acp.ToolContentDiff:
			add(ct.Path)
			tc.Diffs = append(tc.Diffs, Diff{Path: c.toHost(ct.Path), OldText: ct.OldText, NewText: ct.NewText})
		case acp.ToolContentContent:
			if ct.Content != nil && ct.Content.Type == acp.BlockText {
				out = append(out, ct.Content.Text)
			}
		}
	}
	if len(out) > 0 {
		tc.Output = strings.Join(out, "\n")
	}
	add(rawString(tc.Input, "file_path", "path", "absolute_path", "notebook_path"))
	cp := *tc
	cp.Paths = append([]string(nil), tc.Paths...)
	cp.Diffs = append([]Diff(nil), tc.Diffs...)
	return &cp
}

// CutLines keeps limit lines of s from line (1-based; 0: all), as
// fs/read_text_file's line and limit ask: the one reading of them for the
// host's answers and the worktree's.
func CutLines(s string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	start := max(line-1, 0)
	if start >= len(lines) {
		return ""
	}
	end := len(lines)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return strings.Join(lines[start:end], "")
}

// ---- terminal/* ----

// terminal is one command the agent runs: through the host (approval,
// then the editor or the sidecar's shell), its output known when it ends.
type terminal struct {
	cancel context.CancelFunc
	done   chan struct{}
	res    api.RunCommandResult
	err    error
}

// terminalTimeout bounds a command an agent runs without saying how long.
const terminalTimeout = 10 * time.Minute

func (c *client) CreateTerminal(ctx context.Context, p *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	command := shellJoin(p.Command, p.Args)
	if len(p.Env) > 0 {
		var assigns []string
		for _, e := range p.Env {
			assigns = append(assigns, e.Name+"="+shellQuote(e.Value))
		}
		command = "env " + strings.Join(assigns, " ") + " " + command
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd = c.root
		if wt := c.wt.Load(); wt != nil {
			cwd = wt.cwd
		}
	}
	tctx, cancel := context.WithCancel(c.ctx)
	term := &terminal{cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.nextTerm++
	id := "term-" + strconv.Itoa(c.nextTerm)
	c.terminals[id] = term
	c.mu.Unlock()
	c.termWG.Add(1)
	go func() {
		defer c.termWG.Done()
		defer close(term.done)
		term.res, term.err = c.host.RunCommand(tctx, command, cwd, terminalTimeout)
	}()
	return &acp.CreateTerminalResponse{TerminalID: id}, nil
}

func (c *client) terminal(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terminals[id]
	if t == nil {
		return nil, api.Errorf(acp.CodeResourceNotFound, "no terminal %q", id)
	}
	return t, nil
}

// status is the exit status of an ended terminal.
func (t *terminal) status() *acp.TerminalExitStatus {
	if t.err != nil {
		code := 1
		return &acp.TerminalExitStatus{ExitCode: &code}
	}
	if t.res.TimedOut {
		return &acp.TerminalExitStatus{Signal: "SIGKILL"}
	}
	code := t.res.ExitCode
	return &acp.TerminalExitStatus{ExitCode: &code}
}

func (t *terminal) output() string {
	if t.err != nil {
		return t.err.Error()
	}
	return t.res.Output
}

func (c *client) TerminalOutput(ctx context.Context, p *acp.TerminalRequest) (*acp.TerminalOutputResponse, error) {
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
		return &acp.TerminalOutputResponse{Output: t.output(), ExitStatus: t.status()}, nil
	default:
		// The output is known when the command ends (agent/runCommand
		// answers once).
		return &acp.TerminalOutputResponse{Output: ""}, nil
	}
}

func (c *client) WaitForTerminalExit(ctx context.Context, p *acp.TerminalRequest) (*acp.WaitForTerminalExitResponse, error) {
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
		return t.status(), nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	}
}

func (c *client) KillTerminal(ctx context.Context, p *acp.TerminalRequest) (*acp.Empty, error) {
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	t.cancel()
	return &acp.Empty{}, nil
}

func (c *client) ReleaseTerminal(ctx context.Context, p *acp.TerminalRequest) (*acp.Empty, error) {
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	t.cancel()
	c.mu.Lock()
	delete(c.terminals, p.TerminalID)
	c.mu.Unlock()
	return &acp.Empty{}, nil
}

// closeTerminals kills the commands still running and waits for them.
func (c *client) closeTerminals() {
	c.mu.Lock()
	for _, t := range c.terminals {
		t.cancel()
	}
	c.mu.Unlock()
	c.termWG.Wait()
}

// shellJoin makes a command line of a program and its arguments.
func shellJoin(cmd string, args []string) string {
	if len(args) == 0 {
		return cmd // a whole command line, as agents send it
	}
	parts := []string{shellQuote(cmd)}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' || r == '@' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
