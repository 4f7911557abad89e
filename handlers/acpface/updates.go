package acpface

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/workforce"
)

// events are the workforce's Events for one session: a task's events
// become the session's updates. It never blocks: updates are queued on the
// session's sender.
type events struct{ se *session }

// Queues: the session's sender queues every update, so the task hands each
// event over as it is made (workforce.Queueing).
func (events) Queues() {}

func (n events) Event(_ context.Context, ev workforce.Event) error {
	switch {
	case ev.Start != nil:
		n.se.book.setModel(ev.Start.Model)
	case ev.Warning != "":
		n.se.warn(ev.Warning)
	case ev.Update != nil:
		n.se.book.update(ev)
	}
	return nil
}

// warn shows the person a warning in the session.
func (se *session) warn(msg string) { se.book.push(se.srv.noticeUpdate(msg)) }

// agentlsMeta is the _meta.agentls of agentls's updates (docs/ACP.md).
type agentlsMeta struct {
	TaskID    string `json:"taskId,omitempty"`
	SubtaskID string `json:"subtaskId,omitempty"`
	CallID    string `json:"callId,omitempty"`
	Tool      string `json:"tool,omitempty"`
	// State is a plan entry's subtask state, in agentls's words (pending,
	// running, done, failed, skipped, blocked).
	State     string   `json:"state,omitempty"`
	DependsOn []string `json:"dependsOn,omitempty"`
	Role      string   `json:"role,omitempty"`
	Result    string   `json:"result,omitempty"`
	Error     string   `json:"error,omitempty"`
	// Engine is the external agent a plan entry's subtask runs on, Steps
	// that agent's own plan, and Todos the checklist its worker keeps
	// (docs/PROTOCOL.md §5, todos).
	Engine string         `json:"engine,omitempty"`
	Steps  []api.PlanStep `json:"steps,omitempty"`
	Todos  []api.Todo     `json:"todos,omitempty"`
	// Thinking marks a thought chunk that is the model's thinking, not
	// its words.
	Thinking bool `json:"thinking,omitempty"`
	// Heat is the heat of the files a tool call touched, after it.
	Heat []api.HeatNode `json:"heat,omitempty"`
	// InputTokens and OutputTokens are a task's totals (usage_update).
	InputTokens  int64 `json:"inputTokens,omitempty"`
	OutputTokens int64 `json:"outputTokens,omitempty"`
	// Progress is how far the task of a plan is.
	Progress *planProgress `json:"progress,omitempty"`
	// Replayed marks the updates of session/load.
	Replayed bool `json:"replayed,omitempty"`
}

func (m agentlsMeta) meta() acp.Meta { return acp.MetaOf(acp.MetaKey, m) }

// planProgress is how far a task is, in a plan's _meta.agentls: done of
// total subtasks ended, the ids of those running (workforce.Progress).
type planProgress struct {
	Done       int      `json:"done"`
	Total      int      `json:"total"`
	Percentage int      `json:"percentage"`
	Running    []string `json:"running,omitempty"`
}

// book is what a session's updates are made from: its tool calls in
// flight, the plan last sent, which agents streamed their words. Every
// update of the session is decided and queued under its lock, so the order
// on the wire is the order of the decisions: a tool call is announced
// before any update of it, whichever of its event and its first reverse
// call comes first.
type book struct {
	se *session

	mu        sync.Mutex
	calls     map[string]*callState // by toolCallId
	plan      string                // the subtasks of the plan last sent, as JSON
	streamed  map[string]bool       // agent ("" for the coordinator) → deltas sent since its last message
	usage     map[string]api.Usage  // task → totals of its last usage event
	progress  *planProgress         // how far the task in progress is, from its last Progress
	model     string                // the model of the turn in progress ("provider:model")
	synthetic int                   // calls agentls announced itself (an edit outside a tool call)
}

// callState is a tool call announced and not yet ended.
type callState struct {
	id        string
	content   []acp.ToolCallContent
	locations []acp.ToolCallLocation
	meta      agentlsMeta
}

func newBook(se *session) *book {
	return &book{se: se, calls: map[string]*callState{}, streamed: map[string]bool{}, usage: map[string]api.Usage{}}
}

// push queues an update on its own.
func (b *book) push(u acp.SessionUpdate) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.se.out.push(u)
}

func toolCallID(taskID, callID string) string { return taskID + "/" + callID }

// hidden are the tools whose calls are not shown: finish's summary is the
// subtask's result (in the plan and the task's answer).
var hidden = []string{"finish"}

// announceLocked announces a tool call unless it is known: its title, kind
// and locations from its tool and arguments. It returns nil for a hidden
// tool.
func (b *book) announceLocked(taskID, subtaskID, callID, tool string, args json.RawMessage) *callState {
	id := toolCallID(taskID, callID)
	if c := b.calls[id]; c != nil {
		return c
	}
	if slices.Contains(hidden, tool) {
		return nil
	}
	title, kind, locs := describe(b.se.root, tool, args)
	c := &callState{id: id, locations: locs, meta: agentlsMeta{TaskID: taskID, SubtaskID: subtaskID, CallID: callID, Tool: tool}}
	b.calls[id] = c
	b.se.out.push(acp.ToolCall{
		ToolCallID: id, Title: title, Kind: kind, Status: acp.StatusInProgress,
		Locations: slices.Clone(locs), RawInput: args, Meta: c.meta.meta(),
	})
	return c
}

// call announces the tool call a reverse call is made for (when its event
// has not done so yet) and returns its id; for a reverse call made outside
// a tool call, it announces one of its own with title and kind.
func (b *book) call(ctx context.Context, title, kind string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := workforce.CallOf(ctx); ok {
		if cs := b.announceLocked(c.TaskID, c.SubtaskID, c.ID, c.Tool, c.Arguments); cs != nil {
			return cs.id
		}
	}
	b.synthetic++
	id := "agentls/" + strconv.Itoa(b.synthetic)
	b.calls[id] = &callState{id: id}
	b.se.out.push(acp.ToolCall{ToolCallID: id, Title: title, Kind: kind, Status: acp.StatusInProgress})
	return id
}

// add adds content (a diff, a terminal) to a call and sends the call's
// content whole, as an update replaces it; a location (an edit's first
// line) replaces the call's location of the same file.
func (b *book) add(id string, content acp.ToolCallContent, loc *acp.ToolCallLocation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls[id]
	if c == nil {
		return // ended meanwhile
	}
	c.content = append(c.content, content)
	u := acp.ToolCallUpdate{ToolCallID: id, Content: slices.Clone(c.content)}
	if loc != nil {
		// A copy: the slices pushed before are being encoded by the sender.
		c.locations = slices.Clone(c.locations)
		i := slices.IndexFunc(c.locations, func(l acp.ToolCallLocation) bool { return l.Path == loc.Path })
		if i >= 0 {
			c.locations[i] = *loc
		} else {
			c.locations = append(c.locations, *loc)
		}
		u.Locations = slices.Clone(c.locations)
	}
	b.se.out.push(u)
}

// end ends a call agentls announced itself (call without a tool call).
func (b *book) end(id string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls[id]
	if c == nil || c.meta.CallID != "" {
		return // a worker's call ends with its toolResult
	}
	delete(b.calls, id)
	status := acp.StatusCompleted
	if !ok {
		status = acp.StatusFailed
	}
	b.se.out.push(acp.ToolCallUpdate{ToolCallID: id, Status: status})
}

// setModel records the model of the task that starts, for usage_update;
// how far the last one went is forgotten.
func (b *book) setModel(spec string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.model = spec
	b.progress = nil
}

// flush waits until the updates queued so far have left: before a question
// about a call, so that the client knows the call it is about.
func (b *book) flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	return b.se.out.flush(ctx)
}

// update turns one task update into the session's updates.
func (b *book) update(p workforce.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if pr := p.Progress; pr != nil {
		b.progress = &planProgress{Done: pr.Done, Total: pr.Total, Running: pr.Running}
		if pr.Total > 0 {
			b.progress.Percentage = pr.Done * 100 / pr.Total
		}
	}
	b.planLocked(p.TaskID, p.Subtasks)
	ev := *p.Update
	sub := agentlsMeta{TaskID: p.TaskID, SubtaskID: ev.SubtaskID}
	switch ev.Kind {
	case api.EventMessageDelta:
		b.streamed[ev.SubtaskID] = true
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(ev.Text), Meta: sub.meta()})
	case api.EventThinking:
		m := sub
		m.Thinking = true
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(ev.Text), Meta: m.meta()})
	case api.EventMessage:
		text := ev.Text
		if b.streamed[ev.SubtaskID] {
			text = "" // its deltas said it
		}
		b.streamed[ev.SubtaskID] = false
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(text + "\n\n"), Meta: sub.meta()})
	case api.EventToolCall:
		b.announceLocked(p.TaskID, ev.SubtaskID, ev.CallID, ev.Tool, ev.Arguments)
	case api.EventToolResult:
		b.resultLocked(p.TaskID, ev)
	case api.EventBlocked:
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(fmt.Sprintf("Blocked: %s: %s\n\n", ev.Path, ev.Reason)), Meta: sub.meta()})
	case api.EventEngineStarted:
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(fmt.Sprintf("Running on %s (%s).\n\n", ev.Text, ev.Summary)), Meta: sub.meta()})
	case api.EventIntentSelected:
		b.se.out.push(acp.AgentThoughtChunk{Content: acp.Text(fmt.Sprintf("Working under intent %s.\n\n", ev.Text)), Meta: sub.meta()})
	case api.EventUsage:
		b.usageLocked(p.TaskID, ev)
	case api.EventStateChanged:
		switch ev.State {
		case api.TaskDone, api.TaskFailed, api.TaskStopped:
			if ev.Summary != "" {
				b.se.out.push(acp.AgentMessageChunk{Content: acp.Text(ev.Summary), Meta: agentlsMeta{TaskID: p.TaskID, State: ev.State}.meta()})
			}
		}
	}
}

// resultLocked ends a worker's tool call: its status, its content with the
// result's summary last, and the heat of the file it touched.
func (b *book) resultLocked(taskID string, ev api.TaskEvent) {
	id := toolCallID(taskID, ev.CallID)
	c := b.calls[id]
	if c == nil {
		return // a hidden tool
	}
	delete(b.calls, id)
	status := acp.StatusCompleted
	if ev.OK != nil && !*ev.OK {
		status = acp.StatusFailed
	}
	content := slices.Clone(c.content)
	if text := resultText(c, ev); text != "" {
		content = append(content, acp.TextContent(text))
	}
	m := c.meta
	if ev.Path != "" {
		if snap, err := b.se.ws.track.HeatSnapshot(api.HeatSnapshotParams{TaskID: taskID}); err == nil {
			for _, n := range snap.Nodes {
				if n.Path == ev.Path {
					m.Heat = []api.HeatNode{n}
				}
			}
		}
	}
	b.se.out.push(acp.ToolCallUpdate{ToolCallID: id, Status: status, Content: content, Locations: c.locations, Meta: m.meta()})
}

// resultText is a tool's result as the client shows it, last in the
// call's content, its lines kept (the toolResult's Output): a file read as
// a block of its lines; a command's exit status, then its output as a
// block, unless the client's terminal on the call shows the output; any
// other result as it is.
func resultText(c *callState, ev api.TaskEvent) string {
	out := ev.Output
	if out == "" {
		return ev.Summary
	}
	if ev.OK != nil && !*ev.OK {
		return out // a refusal or a failure: words, not a file
	}
	switch c.meta.Tool {
	case "read_file":
		return fenced(out)
	case "run_command":
		status, body, _ := strings.Cut(out, "\n")
		if body == "" || slices.ContainsFunc(c.content, func(x acp.ToolCallContent) bool { return x.Type == acp.ToolContentTerminal }) {
			return status
		}
		return status + "\n" + fenced(body)
	}
	return out
}

// fenced is text as a Markdown code block, its fence longer than any run
// of backticks in it.
func fenced(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	return fence + "\n" + strings.TrimRight(text, "\n") + "\n" + fence
}

// planLocked sends the plan when the subtasks or how far the task is
// changed: one entry per subtask, its state in ACP's three words and in
// agentls's in _meta; the task's progress in the plan's _meta.
func (b *book) planLocked(taskID string, subs []api.Subtask) {
	if len(subs) == 0 {
		return
	}
	entries := make([]acp.PlanEntry, len(subs))
	for i, s := range subs {
		status := acp.PlanPending
		switch s.State {
		case api.SubtaskRunning:
			status = acp.PlanInProgress
		case api.SubtaskDone, api.SubtaskFailed, api.SubtaskSkipped:
			status = acp.PlanCompleted
		}
		m := agentlsMeta{SubtaskID: s.ID, State: s.State, DependsOn: s.DependsOn, Role: s.Role, Result: s.Result, Error: s.Error, Engine: s.Engine, Steps: s.Steps, Todos: s.Todos}
		entries[i] = acp.PlanEntry{Content: s.Content, Priority: acp.PriorityMedium, Status: status, Meta: m.meta()}
	}
	plan := acp.Plan{Entries: entries, Meta: agentlsMeta{TaskID: taskID, Progress: b.progress}.meta()}
	// Sent again only when what it shows changed (a subtask's usage is
	// the usage_update's).
	key, _ := json.Marshal(plan)
	if string(key) == b.plan {
		return
	}
	b.plan = string(key)
	b.se.out.push(plan)
}

// usageLocked sends usage_update: used is the tokens of the latest model
// call (the context it was given and its answer), size the model's context
// window; _meta.agentls has the task's totals.
func (b *book) usageLocked(taskID string, ev api.TaskEvent) {
	prev := b.usage[taskID]
	total := api.Usage{InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens}
	b.usage[taskID] = total
	used := total.InputTokens - prev.InputTokens + total.OutputTokens - prev.OutputTokens
	b.se.out.push(acp.UsageUpdate{Used: max(used, 0), Size: contextWindow(b.model),
		Meta: agentlsMeta{TaskID: taskID, InputTokens: total.InputTokens, OutputTokens: total.OutputTokens}.meta()})
}

// contextWindow is the context window of a model as agentls knows it, in
// tokens: the providers' published figures for the families it defaults
// to, 128k otherwise (docs/ACP.md).
func contextWindow(spec string) int64 {
	provider, name, _ := strings.Cut(strings.ToLower(spec), ":")
	switch {
	case provider == "anthropic":
		return 200_000
	case strings.HasPrefix(name, "gpt-4.1"):
		return 1_047_576
	case strings.HasPrefix(name, "o3"), strings.HasPrefix(name, "o4"):
		return 200_000
	}
	return 128_000
}

// describe makes a tool call's title, kind and locations from its tool and
// arguments; paths are made absolute against root, as ACP wants them.
func describe(root, tool string, args json.RawMessage) (title, kind string, locs []acp.ToolCallLocation) {
	var a struct {
		Path     string `json:"path"`
		Offset   int    `json:"offset"`
		Pattern  string `json:"pattern"`
		Regex    string `json:"regex"`
		Command  string `json:"command"`
		Question string `json:"question"`
		IntentID string `json:"intent_id"`
	}
	_ = json.Unmarshal(args, &a)
	loc := func(line int) []acp.ToolCallLocation {
		if a.Path == "" {
			return nil
		}
		l := acp.ToolCallLocation{Path: absPath(root, a.Path)}
		if line > 0 {
			l.Line = &line
		}
		return []acp.ToolCallLocation{l}
	}
	switch tool {
	case "read_file":
		return "Read " + a.Path, acp.KindRead, loc(a.Offset)
	case "list_files":
		return "List " + orAll(a.Pattern), acp.KindSearch, nil
	case "search_files":
		return "Search " + a.Regex, acp.KindSearch, nil
	case "write_file":
		return "Write " + a.Path, acp.KindEdit, loc(0)
	case "edit_file":
		return "Edit " + a.Path, acp.KindEdit, loc(0)
	case "delete_file":
		return "Delete " + a.Path, acp.KindDelete, loc(0)
	case "run_command":
		return "Run `" + oneLine(a.Command) + "`", acp.KindExecute, nil
	case "ask_human":
		return "Ask: " + oneLine(a.Question), acp.KindOther, nil
	case "select_intent":
		return "Select intent " + a.IntentID, acp.KindThink, nil
	}
	if rest, ok := strings.CutPrefix(tool, api.MCPToolPrefix); ok {
		server, name, _ := strings.Cut(rest, "__")
		return server + ": " + name, acp.KindOther, loc(0)
	}
	return tool, acp.KindOther, loc(0)
}

func orAll(pattern string) string {
	if pattern == "" {
		return "all files"
	}
	return pattern
}

func oneLine(s string) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if cut {
		s += " …"
	}
	return s
}

// absPath makes a workspace-relative path (or an absolute one) absolute.
func absPath(root, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(root, filepath.FromSlash(p))
}
