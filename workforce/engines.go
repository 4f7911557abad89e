package workforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/internal/contain"
)

// EngineRunner runs subtasks on external agents (docs/ENGINES.md):
// *engines.Manager satisfies it.
type EngineRunner interface {
	// Usable says why the engine name cannot take a subtask (nil: it can).
	Usable(name string) error
	// Available lists the engines that can take a subtask now.
	Available() []string
	// Run runs one subtask on the engine name through host, until the
	// agent ends its turn or ctx ends.
	Run(ctx context.Context, name string, job engines.Job, host engines.Host) (engines.Outcome, error)
	// SharesMCP says whether the engine name gets the user's MCP servers
	// (its entry's mcpServers is not false).
	SharesMCP(name string) bool
}

// checkEngine says why a subtask cannot run on name ("" and "agentls" are
// the built-in worker, always there).
func (e *Engine) checkEngine(name string) error {
	if name == "" || name == api.EngineBuiltin {
		return nil
	}
	if e.cfg.Engines == nil {
		return fmt.Errorf("engine %q: no engines are set up", name)
	}
	return e.cfg.Engines.Usable(name)
}

// engineOf is the engine a subtask runs on: the run's forced engine, else
// what the plan said ("" : the built-in worker).
func engineOf(forced, planned string) string {
	switch {
	case forced == api.EngineBuiltin:
		return ""
	case forced != "":
		return forced
	case planned == api.EngineBuiltin:
		return ""
	}
	return planned
}

// enginePrompt is what an engine is asked: the worker's context and its
// subtask, without the built-in worker's tools.
func (t *task) enginePrompt(ctx context.Context, name string, s *subtask) string {
	var b strings.Builder
	b.WriteString(`You are working for agentls, a coding agent inside the user's editor, on one subtask of a larger request. Other workers may be changing other files at the same time.

Rules:
- Stay inside the workspace; some folders may be closed to you, and your changes may need the user's approval: a change that is refused is not made, do not claim it was.
- Do only your subtask. When it is done, end your turn with a short summary of what you did and found (files changed, test results); if you cannot do it, say why.
- The MCP server "agentls", when you have it, reads files as the user's editor has them (unsaved changes included) and makes changes through the editor; its tools named mcp__<server>__<tool> are the user's own MCP servers.

`)
	fmt.Fprintf(&b, "Workspace root: %s\n", t.e.cfg.Root)
	fmt.Fprintf(&b, "Edit mode: %s (%s)\n", t.settings.EditMode, editModeText(t.settings.EditMode))
	if ctx := t.intentContext(); ctx != "" {
		fmt.Fprintf(&b, "\nThe selected intent; your changes must stay in its owned_scope and meet its constraints:\n%s\n", ctx)
	}
	b.WriteString(t.engineInstructions(ctx, name, s.ID))
	fmt.Fprintf(&b, "\nThe user's whole request, for context (do only your subtask):\n%s\n\n", t.prompt)
	b.WriteString(t.subtaskText(s))
	return b.String()
}

// engineInstructions are the project's instructions for the engine name,
// without the files the agent reads by itself (docs/ENGINES.md, The
// project's instructions): Codex reads AGENTS.md, and Claude Code reads
// CLAUDE.md when it is started with the project's settings (under
// commands allow; under ask and deny agentls gives it the user's alone).
// Gemini CLI reads GEMINI.md, which is none of them: it gets them all, as
// does any other agent.
func (t *task) engineInstructions(ctx context.Context, name, sub string) string {
	agent := name
	if r, ok := t.e.cfg.Engines.(interface {
		Resolve(string) (engines.Resolved, error)
	}); ok {
		if res, err := r.Resolve(name); err == nil && res.Agent != "" {
			agent = res.Agent
		}
	}
	var reads string
	switch {
	case agent == api.EngineCodex:
		reads = "AGENTS.md"
	case agent == api.EngineClaude && t.commandPolicy() == api.CommandsAllow:
		reads = "CLAUDE.md"
	}
	files := t.instr.read(ctx)
	// The task's events say what the task works under, whoever reads it.
	t.instr.tell(t.instr.render(files, nil), sub)
	return t.instr.render(files, func(s instrSource) bool {
		return s.convention && path.Base(s.path) == reads
	}).text
}

// runEngine runs the worker's subtask on an engine: the agent reads,
// writes, runs commands and asks leave through the worker (engineHost), its
// reports become the subtask's events, an isolated engine's changes come
// back through the editing pipeline, and its last message is the result.
func (w *worker) runEngine(ctx context.Context, name string) (string, error) {
	t := w.t
	defer w.end()
	if d := t.settings.Timeouts.Engine(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, fmt.Errorf("engine %q did not finish within %s (timeouts.engineMs)", name, d))
		defer cancel()
	}
	h := &engineHost{w: w, engine: name, calls: map[string]*engineCall{}, approved: map[string]int{}, refused: map[string]bool{}}
	job := engines.Job{
		Prompt:      t.enginePrompt(ctx, name, w.sub),
		Root:        t.e.cfg.Root,
		WorkDir:     t.e.cfg.EngineWorkDir,
		Closed:      t.edit.Closed,
		Unset:       t.unsetEnv(),
		Commands:    t.commandPolicy(),
		CallTimeout: t.settings.Timeouts.ReverseCall(),
		OnStart: func(pid int, took time.Duration) {
			w.log.Info("engine started", zap.String("engine", name), zap.Int("pid", pid), zap.Duration("took", took))
			t.emit(api.TaskEvent{Kind: api.EventEngineStarted, SubtaskID: w.sub.ID, Text: name,
				Summary: fmt.Sprintf("started in %d ms", took.Milliseconds())})
		},
	}
	if t.e.cfg.Bridge != nil {
		if t.e.cfg.Engines.SharesMCP(name) {
			w.shareMCP.Store(true)
		}
		if entry, err := t.e.MCPEntry(t.id, w.sub.ID); err == nil {
			job.MCPServers = map[string]api.MCPServer{"agentls": entry}
		} else {
			w.log.Warn("the engine gets no bridge to the editor's tools", zap.Error(err))
		}
	}
	if err := w.approveEngineStart(ctx, name); err != nil {
		return "", err
	}
	out, err := t.e.cfg.Engines.Run(ctx, name, job, h)
	h.endMessage()
	if out.Usage.InputTokens > 0 || out.Usage.OutputTokens > 0 {
		w.meter.ModelCall(out.Usage)
		t.emitUsage(w.sub.ID, out.Usage)
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		return "", err
	}
	summary := out.Text
	if summary == "" {
		summary = fmt.Sprintf("%s ended its turn without a summary.", name)
	}
	if len(out.Refused) > 0 {
		summary += fmt.Sprintf("\n\n%s ended its turn when it was refused: %s.", name, strings.Join(out.Refused, "; "))
	}
	if len(out.Changes) > 0 {
		applied, notes := w.bringBack(ctx, name, out.Changes)
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		summary += fmt.Sprintf("\n\n%d of the %d files %s changed were brought back.", applied, len(out.Changes), name)
		if len(notes) > 0 {
			summary += "\n" + strings.Join(notes, "\n")
		}
	}
	return t.e.cfg.Redactor.String(summary), nil
}

// bringBack makes an isolated engine's changes through the editing
// pipeline, file by file, as write_file and delete_file would: a file whose
// text in the editor moved since the engine started is refused as a
// conflict. It returns how many were applied and a line for each that was
// not.
func (w *worker) bringBack(ctx context.Context, engine string, changes []engines.FileChange) (int, []string) {
	t := w.t
	applied := 0
	var notes []string
	refuse := func(rel, op, reason, diff string) {
		t.mutate(func() []api.TaskEvent {
			t.changes = append(t.changes, api.Change{Path: rel, Operation: op, Applied: false, Diff: diff})
			return []api.TaskEvent{{Kind: api.EventChangeRejected, SubtaskID: w.sub.ID, Path: rel, Reason: reason}}
		})
		notes = append(notes, fmt.Sprintf("- %s: not applied: %s", rel, reason))
	}
	for _, ch := range changes {
		if ctx.Err() != nil {
			break
		}
		rel := ch.Path
		if r, ok := contain.Within(t.e.cfg.Root, ch.Path); ok {
			rel = r
		}
		op := api.OpUpdate
		switch {
		case ch.Base == nil:
			op = api.OpCreate
		case ch.New == nil:
			op = api.OpDelete
		}
		if err := ch.Text(); err != nil {
			refuse(rel, op, err.Error()+"; edit it yourself from the engine's output", "")
			continue
		}
		cur, exists := "", false
		if res, err := w.agent.Read(ctx, rel, 0, 0); err == nil {
			cur, exists = res.Content, true
		} else if !errors.Is(err, editing.ErrNotFound) {
			refuse(rel, op, err.Error(), "")
			continue
		}
		base, next := "", ""
		if ch.Base != nil {
			base = *ch.Base
		}
		if ch.New != nil {
			next = *ch.New
		}
		if exists != (ch.Base != nil) || cur != base {
			from, to := "a/"+rel, "b/"+rel
			refuse(rel, op, fmt.Sprintf("conflict: %s changed in the editor while %s worked on its own copy; its version is not applied", rel, engine),
				editing.ComputeDiff(cur, next).Unified(from, to))
			continue
		}
		var r result
		if ch.New == nil {
			r = w.change("delete_file", rel, func() (editing.Change, error) { return w.agent.Delete(ctx, rel) })
		} else {
			r = w.change("write_file", rel, func() (editing.Change, error) { return w.agent.Write(ctx, rel, next) })
		}
		if r.isErr {
			notes = append(notes, fmt.Sprintf("- %s: %s", rel, oneLine(r.content, 300)))
			continue
		}
		applied++
	}
	return applied, notes
}

// engineHost is the worker as an engine's session sees it (engines.Host):
// reads through the editor, writes through the editing pipeline, commands
// and permissions through zones, intents and the approval policy, and the
// agent's reports as the subtask's events.
type engineHost struct {
	w      *worker
	engine string

	mu       sync.Mutex
	message  strings.Builder
	calls    map[string]*engineCall
	approved map[string]int  // commands a permission approved, for their terminal
	refused  map[string]bool // workspace-relative paths a permission was refused for
}

// engineCall is what was told of one of the agent's tool calls.
type engineCall struct {
	announced, ended bool
	paths            map[string]bool
}

var _ engines.Host = (*engineHost)(nil)

// rel is a path of the agent as the workspace names it ("" outside it).
func (h *engineHost) rel(p string) string {
	r, _ := contain.Within(h.w.t.e.cfg.Root, p)
	return r
}

func (h *engineHost) ReadTextFile(ctx context.Context, path string, line, limit int) (string, bool, error) {
	res, err := h.w.agent.Read(ctx, path, 0, 0)
	if errors.Is(err, editing.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return engines.CutLines(res.Content, line, limit), true, nil
}

func (h *engineHost) WriteTextFile(ctx context.Context, path, content string) error {
	w := h.w
	// An agent that read the file itself (gemini-cli reads the disk) has
	// not read it through the editor: read it now, so the change is made
	// over the editor's text.
	if _, err := w.agent.Read(ctx, path, 0, 0); err != nil && !errors.Is(err, editing.ErrNotFound) {
		return err
	}
	r := w.change("write_file", path, func() (editing.Change, error) { return w.agent.Write(ctx, path, content) })
	if r.isErr {
		if strings.Contains(r.content, "already has this content") {
			return nil
		}
		return errors.New(strings.TrimPrefix(r.content, "Error: "))
	}
	return nil
}

func (h *engineHost) RunCommand(ctx context.Context, command, cwd string, timeout time.Duration) (api.RunCommandResult, error) {
	w, t := h.w, h.w.t
	if err := w.gate("run_command", ""); err != nil {
		return api.RunCommandResult{}, err
	}
	h.mu.Lock()
	pre := h.approved[command] > 0
	if pre {
		h.approved[command]--
	}
	h.mu.Unlock()
	if !pre {
		if err := w.approve(ctx, command); err != nil {
			return api.RunCommandResult{}, err
		}
	}
	if d := t.settings.Timeouts.Command(); d > 0 && (timeout <= 0 || d < timeout) {
		timeout = d
	}
	t.emit(api.TaskEvent{Kind: api.EventCommandStarted, SubtaskID: w.sub.ID, Text: command})
	p := api.RunCommandParams{Command: command, Cwd: cwd, TimeoutMs: timeout.Milliseconds(), UnsetEnv: t.unsetEnv()}
	res, err := t.e.cfg.Editor.RunCommand(ctx, p)
	if errors.Is(err, api.ErrUnsupported) {
		res, err = t.e.cfg.Shell(ctx, p), nil
	}
	if err != nil {
		return api.RunCommandResult{}, fmt.Errorf("the editor could not run the command: %w", err)
	}
	ok := res.ExitCode == 0 && !res.TimedOut
	t.emit(api.TaskEvent{Kind: api.EventCommandFinished, SubtaskID: w.sub.ID, Text: command, OK: &ok, Summary: fmt.Sprintf("exit code %d", res.ExitCode)})
	res.Output = t.e.cfg.Redactor.String(res.Output)
	return res, nil
}

// Permission decides a tool call the agent asks leave for: a path out of
// the zones or the intent's scope is refused without asking anyone; a
// command (and a fetch, or a tool of no known kind) goes to the approval
// policy of run_command; reads, searches and edits within bounds are
// allowed (an edit's own approval is the edit mode's).
func (h *engineHost) Permission(ctx context.Context, p engines.Permission) (engines.Decision, error) {
	w, t := h.w, h.w.t
	write := false
	switch p.Kind {
	case "edit", "delete", "move":
		write = true
	}
	who := editing.Actor{TaskID: t.id, AgentID: w.sub.ID}
	for _, path := range p.Paths {
		var scope *editing.Scope
		if write {
			scope = w.agent.Scope()
		}
		rp, err := t.edit.Access(who, path, write, scope)
		if err != nil {
			h.refuse(path)
			return engines.Reject, fmt.Errorf("%s: %w", p.Title, err)
		}
		if write {
			if err := w.gate("write_file", rp.Rel); err != nil {
				h.refuse(path)
				return engines.Reject, err
			}
		}
	}
	switch p.Kind {
	case "read", "search", "think", "switch_mode", "edit", "delete", "move":
		return engines.Allow, nil
	case "execute":
		if err := w.gate("run_command", ""); err != nil {
			return engines.Reject, err
		}
		command := p.Command
		if command == "" {
			command = p.Title
		}
		if err := w.approve(ctx, command); err != nil {
			return engines.Reject, err
		}
		h.mu.Lock()
		h.approved[command]++
		h.mu.Unlock()
		return engines.Allow, nil
	}
	what := p.Title
	if what == "" {
		what = "a tool of kind " + p.Kind
	}
	key := "engine:" + h.engine + ":" + p.Kind + ":" + what
	if t.commandPolicy() == api.CommandsAllow || t.e.allowedBefore(key) {
		return engines.Allow, nil
	}
	if t.commandPolicy() == api.CommandsDeny {
		return engines.Reject, errors.New("the commands setting is deny")
	}
	input := ""
	if len(p.Input) > 0 {
		input = " with " + oneLine(string(t.e.cfg.Redactor.JSON(p.Input)), 300)
	}
	err := w.askApproval(ctx, approval{
		question: fmt.Sprintf("Let %s run %s?", h.engine, what),
		message:  t.untrustedPrefix() + fmt.Sprintf("agentls: %s wants to run %s%s", h.engine, what, input),
		key:      key,
		run:      "let " + h.engine + " run it",
		again:    "ask for it",
		subject:  "the tool call",
		notDone:  "it was not run",
		notDoneP: "was not run",
	})
	if err != nil {
		return engines.Reject, err
	}
	return engines.Allow, nil
}

// refuse remembers a path a permission was refused for.
func (h *engineHost) refuse(path string) {
	if rel := h.rel(path); rel != "" {
		h.mu.Lock()
		h.refused[rel] = true
		h.mu.Unlock()
	}
}

// Update turns what the agent reports into the subtask's events.
func (h *engineHost) Update(u engines.Update) {
	w, t := h.w, h.w.t
	red := t.e.cfg.Redactor
	switch u.Kind {
	case engines.UpdateMessage:
		h.mu.Lock()
		h.message.WriteString(u.Text)
		h.mu.Unlock()
		t.emit(api.TaskEvent{Kind: api.EventMessageDelta, SubtaskID: w.sub.ID, Text: red.String(u.Text)})
	case engines.UpdateThought:
		t.emit(api.TaskEvent{Kind: api.EventThinking, SubtaskID: w.sub.ID, Text: red.String(u.Text)})
	case engines.UpdateToolCall:
		h.endMessage()
		h.toolCall(u.ToolCall)
	case engines.UpdatePlan:
		t.mutate(func() []api.TaskEvent {
			w.sub.Steps = append([]api.PlanStep{}, u.Plan...)
			return []api.TaskEvent{{Kind: api.EventSteps, SubtaskID: w.sub.ID}}
		})
	}
}

// toolCall tells of a tool call once when it is known (its input or its
// paths), once when it ends, and puts each path it names on the heat map.
func (h *engineHost) toolCall(tc *engines.ToolCall) {
	w, t := h.w, h.w.t
	h.mu.Lock()
	st := h.calls[tc.ID]
	if st == nil {
		st = &engineCall{paths: map[string]bool{}}
		h.calls[tc.ID] = st
	}
	var fresh []string
	for _, p := range tc.Paths {
		if rel := h.rel(p); rel != "" && !st.paths[rel] {
			st.paths[rel] = true
			fresh = append(fresh, rel)
		}
	}
	ended := tc.Status == "completed" || tc.Status == "failed"
	announce := !st.announced && (len(tc.Input) > 0 || len(tc.Paths) > 0 || ended || tc.Status == "in_progress")
	st.announced = st.announced || announce
	finish := ended && !st.ended
	st.ended = st.ended || finish
	h.mu.Unlock()

	kind := tc.Kind
	if kind == "" {
		kind = "other"
	}
	path := ""
	for _, p := range tc.Paths {
		if rel := h.rel(p); rel != "" {
			path = rel
			break
		}
	}
	action := api.ActionRead
	switch kind {
	case "edit", "delete", "move":
		action = api.ActionWrite
	case "search":
		action = api.ActionSearch
	}
	for _, rel := range fresh {
		// A path the zones close, or one whose permission was refused, is
		// on the map as blocked (editing reports it): the agent's own
		// report of it, which may arrive after the refusal, is not a
		// read or a write.
		h.mu.Lock()
		refused := h.refused[rel]
		h.mu.Unlock()
		if refused || t.edit.Closed(rel) != "" {
			continue
		}
		w.tracker.Access(rel, action)
	}
	red := t.e.cfg.Redactor
	if announce {
		var args json.RawMessage
		if len(tc.Input) > 0 {
			args = red.JSON(tc.Input)
		}
		t.emit(api.TaskEvent{Kind: api.EventToolCall, SubtaskID: w.sub.ID, Tool: kind, Text: red.String(tc.Title), Arguments: args, Path: path})
		t.journal.add(api.SessionMessage{Role: "tool", Text: h.engine + " " + kind + " " + oneLine(red.String(tc.Title), 300), TaskID: t.id, SubtaskID: w.sub.ID})
	}
	if finish {
		ok := tc.Status == "completed"
		t.emit(api.TaskEvent{Kind: api.EventToolResult, SubtaskID: w.sub.ID, Tool: kind, OK: &ok, Path: path, Summary: oneLine(red.String(tc.Output), 200)})
	}
}

// endMessage tells the agent's message whole, once a tool call begins or
// the turn ends.
func (h *engineHost) endMessage() {
	w, t := h.w, h.w.t
	h.mu.Lock()
	text := strings.TrimSpace(h.message.String())
	h.message.Reset()
	h.mu.Unlock()
	if text == "" {
		return
	}
	text = t.e.cfg.Redactor.String(text)
	t.emit(api.TaskEvent{Kind: api.EventMessage, SubtaskID: w.sub.ID, Text: text})
	t.journal.add(api.SessionMessage{Role: "assistant", Text: text, TaskID: t.id, SubtaskID: w.sub.ID})
}

// engineList names the engines a plan may use, for the coordinator.
func (t *task) engineList() string {
	if t.e.cfg.Engines == nil {
		return "none"
	}
	list := t.e.cfg.Engines.Available()
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// enginesText tells the coordinator the engines it may assign subtasks
// to, when there are any and the run did not force one.
func (t *task) enginesText() string {
	if t.params.Engine != "" || t.e.cfg.Engines == nil {
		return ""
	}
	list := t.e.cfg.Engines.Available()
	if len(list) == 0 {
		return ""
	}
	return fmt.Sprintf("\nEngines: besides agentls's own workers, a subtask may run on an external coding agent the user has: set its engine to one of %s. Do so only when the user asks for that agent, or for a subtask it is better suited to; leave engine out otherwise.\n", strings.Join(list, ", "))
}

// approveEngineStart asks the person before a subtask runs on an engine in
// a workspace they do not trust (docs/SECURITY.md, "Workspace trust"): an
// engine is an agent of its own, which reads the repository and may run
// its code. Nothing is asked in a trusted workspace. Under deny no engine
// runs there. "Always allow" holds for the engine for the rest of the
// process.
func (w *worker) approveEngineStart(ctx context.Context, name string) error {
	t := w.t
	if !t.settings.Untrusted() {
		return nil
	}
	if t.commandPolicy() == api.CommandsDeny {
		return fmt.Errorf("engine %q does not run: this workspace is not trusted and the commands setting is deny", name)
	}
	key := "engine-start:" + name
	if t.e.allowedBefore(key) {
		return nil
	}
	err := w.askApproval(ctx, approval{
		question: fmt.Sprintf("Run subtask %s on the engine %s?", w.sub.ID, name),
		message:  t.untrustedPrefix() + fmt.Sprintf("agentls wants to run subtask %s on the engine %s, an agent that reads the workspace and may run its code", w.sub.ID, name),
		key:      key,
		run:      "run the subtask on " + name,
		again:    "ask for it",
		subject:  "the engine " + name,
		notDone:  "it did not run",
		notDoneP: "did not run",
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("engine %q: this workspace is not trusted and the person did not let it run: %w", name, err)
	}
	return err
}
