package runner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentls/agentls/api"
)

// tree is the task as `agentls run` shows it: its state, and each subtask
// with what it is doing.
type tree struct {
	state    string
	counts   *api.SubtaskCounts // how the subtasks ended, once the task has
	subtasks []api.Subtask
	activity map[string]string // subtask id -> its last tool call
	// thinking holds each agent's block of thinking while it streams, by
	// tag ("task" for the coordinator).
	thinking map[string]*strings.Builder
}

func newTree() *tree {
	return &tree{activity: map[string]string{}, thinking: map[string]*strings.Builder{}}
}

// apply takes one agent/taskUpdate and returns the plain lines that tell
// it ("" for events not worth a line of their own). A block of thinking is
// told in one line when it ends: at its agent's next text or tool call, or
// when the agent or the task ends.
func (t *tree) apply(p *api.TaskUpdateParams) string {
	t.state = p.State
	t.subtasks = p.Subtasks
	ev := p.Event
	if ev.Counts != nil && ev.Counts.Total() > 0 {
		t.counts = ev.Counts
	}
	tag := "task"
	if ev.SubtaskID != "" {
		tag = ev.SubtaskID
	}
	if ev.Kind == api.EventThinking {
		b := t.thinking[tag]
		if b == nil {
			b = &strings.Builder{}
			t.thinking[tag] = b
		}
		b.WriteString(ev.Text)
		return ""
	}
	var folded []string
	switch {
	case ev.Kind == api.EventStateChanged && isFinal(ev.State):
		for _, k := range sortedKeys(t.thinking) {
			folded = append(folded, t.fold(k))
		}
	case ev.Kind == api.EventMessageDelta || ev.Kind == api.EventMessage || ev.Kind == api.EventToolCall || ev.Kind == api.EventSubtaskFinished:
		if t.thinking[tag] != nil {
			folded = append(folded, t.fold(tag))
		}
	}
	if line := t.line(ev, tag); line != "" {
		folded = append(folded, line)
	}
	return strings.Join(folded, "\n")
}

// fold ends tag's block of thinking and tells it in one line.
func (t *tree) fold(tag string) string {
	text := t.thinking[tag].String()
	delete(t.thinking, tag)
	return fmt.Sprintf("[%s] thought: %s (%d characters)", tag, short(text, 120), len([]rune(text)))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// line is the plain line of one event.
func (t *tree) line(ev api.TaskEvent, tag string) string {
	switch ev.Kind {
	case api.EventTodos:
		return fmt.Sprintf("[%s] todos: %s", tag, short(todosText(ev.Todos), 200))
	case api.EventStateChanged:
		if ev.Counts != nil && ev.Counts.Total() > 0 {
			return fmt.Sprintf("[task] %s: %s", ev.State, ev.Counts.String())
		}
		return fmt.Sprintf("[task] %s", ev.State)
	case api.EventPlanned:
		return "[task] plan:\n" + indent(ev.Text, "  ")
	case api.EventSubtaskStarted:
		if e := t.engineOf(ev.SubtaskID); e != "" {
			return fmt.Sprintf("[%s] started on %s: %s", tag, e, short(ev.Text, 100))
		}
		return fmt.Sprintf("[%s] started: %s", tag, short(ev.Text, 100))
	case api.EventEngineStarted:
		return fmt.Sprintf("[%s] engine %s %s", tag, ev.Text, ev.Summary)
	case api.EventInstructions:
		return fmt.Sprintf("[%s] instructions: %s", tag, short(instructionsText(ev.Instructions), 300))
	case api.EventCompacted:
		return fmt.Sprintf("[%s] context compacted: %d → %d tokens", tag, ev.TokensBefore, ev.TokensAfter)
	case api.EventSteps:
		for _, s := range t.subtasks {
			if s.ID == ev.SubtaskID {
				return fmt.Sprintf("[%s] steps: %s", tag, short(stepsText(s.Steps), 200))
			}
		}
	case api.EventSubtaskFinished:
		t.activity[ev.SubtaskID] = ""
		detail := ev.Summary
		if detail == "" {
			detail = ev.Reason
		}
		return fmt.Sprintf("[%s] %s: %s", tag, ev.State, short(detail, 200))
	case api.EventSubtaskAdded:
		return fmt.Sprintf("[%s] added: %s", tag, short(ev.Text, 100))
	case api.EventSubtaskRemoved:
		return fmt.Sprintf("[%s] removed", tag)
	case api.EventSubtaskSkipped:
		return fmt.Sprintf("[%s] skipped", tag)
	case api.EventToolCall:
		a := toolActivity(ev.Tool, ev.Arguments)
		t.activity[ev.SubtaskID] = a
		return fmt.Sprintf("[%s] %s", tag, a)
	case api.EventToolResult:
		if ev.OK != nil && !*ev.OK {
			return fmt.Sprintf("[%s] %s failed: %s", tag, ev.Tool, short(ev.Summary, 160))
		}
	case api.EventMessage:
		return fmt.Sprintf("[%s] %s", tag, short(ev.Text, 200))
	case api.EventBlocked:
		return fmt.Sprintf("[%s] blocked: %s: %s", tag, ev.Path, short(ev.Reason, 160))
	case api.EventChangeApplied:
		return fmt.Sprintf("[%s] changed %s", tag, ev.Path)
	case api.EventChangeRejected:
		return fmt.Sprintf("[%s] not changed %s: %s", tag, ev.Path, short(ev.Reason, 160))
	}
	return ""
}

// render draws the tree: one line for the task, one per subtask.
func (t *tree) render(color bool) []string {
	head := fmt.Sprintf("agentls: %s", t.state)
	if t.counts != nil {
		head += " · " + t.counts.String()
	}
	lines := []string{head}
	for _, s := range t.subtasks {
		mark := map[string]string{
			api.SubtaskPending: "○", api.SubtaskRunning: "◐", api.SubtaskDone: "✓",
			api.SubtaskFailed: "✗", api.SubtaskSkipped: "↷", api.SubtaskBlocked: "⊘",
		}[s.State]
		line := fmt.Sprintf("  %s %s %s", mark, s.ID, short(s.Content, 60))
		if s.Engine != "" {
			line += " [" + s.Engine + "]"
		}
		if len(s.DependsOn) > 0 && s.State == api.SubtaskPending {
			line += " (after " + strings.Join(s.DependsOn, ", ") + ")"
		}
		switch s.State {
		case api.SubtaskRunning:
			if a := t.activity[s.ID]; a != "" {
				line += " · " + short(a, 60)
			}
		case api.SubtaskDone:
			line += " — " + short(s.Result, 60)
		case api.SubtaskFailed, api.SubtaskBlocked:
			line += " — " + short(s.Error, 60)
		}
		if s.Usage != nil && !s.Usage.Empty() {
			line += " · " + usageShort(*s.Usage)
		}
		if color {
			switch s.State {
			case api.SubtaskDone:
				line = "\x1b[32m" + line + "\x1b[0m"
			case api.SubtaskFailed, api.SubtaskBlocked:
				line = "\x1b[31m" + line + "\x1b[0m"
			case api.SubtaskRunning:
				line = "\x1b[1m" + line + "\x1b[0m"
			}
		}
		lines = append(lines, line)
		for _, td := range s.Todos {
			lines = append(lines, "      "+todoLine(td))
		}
		for _, st := range s.Steps {
			lines = append(lines, "      "+stepLine(st))
		}
		if b := t.thinking[s.ID]; b != nil && s.State == api.SubtaskRunning {
			lines = append(lines, "      thinking… "+shortTail(b.String(), 60))
		}
	}
	if b := t.thinking["task"]; b != nil {
		lines = append(lines, "  thinking… "+shortTail(b.String(), 60))
	}
	return lines
}

// engineOf is the engine subtask id runs on ("" : the built-in worker).
func (t *tree) engineOf(id string) string {
	for _, s := range t.subtasks {
		if s.ID == id {
			return s.Engine
		}
	}
	return ""
}

// stepLine is one step of an engine's own plan: "[>] read main.go".
func stepLine(st api.PlanStep) string {
	mark := map[string]string{"completed": "[x]", "in_progress": "[>]"}[st.Status]
	if mark == "" {
		mark = "[ ]"
	}
	return mark + " " + short(st.Content, 70)
}

// stepsText is an engine's plan on one line; an empty one says so.
func stepsText(steps []api.PlanStep) string {
	if len(steps) == 0 {
		return "(cleared)"
	}
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = stepLine(st)
	}
	return strings.Join(parts, " · ")
}

// todoLine is one step of a checklist: "[x] Add greet".
func todoLine(td api.Todo) string {
	mark := map[string]string{api.TodoDone: "[x]", api.TodoInProgress: "[>]"}[td.Status]
	if mark == "" {
		mark = "[ ]"
	}
	return mark + " " + short(td.Content, 70)
}

// todosText is a checklist on one line; an empty one says so.
func todosText(todos []api.Todo) string {
	if len(todos) == 0 {
		return "(cleared)"
	}
	parts := make([]string, len(todos))
	for i, td := range todos {
		parts[i] = todoLine(td)
	}
	return strings.Join(parts, " · ")
}

// usageShort is a subtask's usage in the tree: "1.2k tokens, $0.0051, 12%
// context".
func usageShort(u api.Usage) string {
	s := tokens(u.InputTokens+u.OutputTokens) + " tokens"
	if u.Cost != nil {
		s += fmt.Sprintf(", $%.4f", *u.Cost)
	}
	if u.ContextTokens > 0 && u.ContextWindow > 0 {
		s += fmt.Sprintf(", %d%% context", u.ContextTokens*100/u.ContextWindow)
	}
	return s
}

func tokens(n int64) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%.1fk", float64(n)/1000)
}

// shortTail is the end of s on one line, at most n characters.
func shortTail(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return "…" + string(r[len(r)-n+1:])
	}
	return s
}

// toolActivity says what a tool call does, briefly.
func toolActivity(tool string, args []byte) string {
	var a map[string]any
	_ = json.Unmarshal(args, &a)
	str := func(k string) string { s, _ := a[k].(string); return s }
	switch tool {
	case "read_file", "write_file", "edit_file", "delete_file":
		return tool + " " + str("path")
	case "list_files":
		return "list_files " + str("pattern")
	case "get_diagnostics":
		if p := str("path"); p != "" {
			return "get_diagnostics " + p
		}
		return "get_diagnostics (the workspace)"
	case "search_files":
		return "search_files " + str("regex")
	case "run_command":
		return "run_command `" + short(str("command"), 60) + "`"
	case "ask_human":
		return "ask_human " + short(str("question"), 60)
	case "select_intent":
		return "select_intent " + str("intent_id")
	case "todo":
		return "todo"
	case "finish":
		return "finish"
	}
	return tool
}

func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(s, "\n", "\n"+by)
}

// instructionsText names the instruction files of an instructions event:
// "AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 8190 tokens), web/CLAUDE.md
// (left out)"; "none" for an empty list.
func instructionsText(files []api.InstructionFile) string {
	if len(files) == 0 {
		return "none"
	}
	parts := make([]string, len(files))
	for i, f := range files {
		switch {
		case f.Cut && f.Tokens > 0:
			parts[i] = fmt.Sprintf("%s (cut at %d tokens)", f.Path, f.Tokens)
		case f.Cut:
			parts[i] = f.Path + " (left out)"
		default:
			parts[i] = fmt.Sprintf("%s (%d tokens)", f.Path, f.Tokens)
		}
	}
	return strings.Join(parts, ", ")
}
