package runner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentls/agentls/api"
)

// tree is the task as `agentls run` shows it: its state, and each subtask
// with what it is doing.
type tree struct {
	state    string
	subtasks []api.Subtask
	activity map[string]string // subtask id -> its last tool call
}

func newTree() *tree { return &tree{activity: map[string]string{}} }

// apply takes one agent/taskUpdate and returns the plain line that tells it
// ("" for events not worth a line of their own).
func (t *tree) apply(p *api.TaskUpdateParams) string {
	t.state = p.State
	t.subtasks = p.Subtasks
	ev := p.Event
	tag := "task"
	if ev.SubtaskID != "" {
		tag = ev.SubtaskID
	}
	switch ev.Kind {
	case api.EventStateChanged:
		return fmt.Sprintf("[task] %s", ev.State)
	case api.EventPlanned:
		return "[task] plan:\n" + indent(ev.Text, "  ")
	case api.EventSubtaskStarted:
		return fmt.Sprintf("[%s] started: %s", tag, short(ev.Text, 100))
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
	lines := []string{fmt.Sprintf("agentls: %s", t.state)}
	for _, s := range t.subtasks {
		mark := map[string]string{
			api.SubtaskPending: "○", api.SubtaskRunning: "◐", api.SubtaskDone: "✓",
			api.SubtaskFailed: "✗", api.SubtaskSkipped: "↷", api.SubtaskBlocked: "⊘",
		}[s.State]
		line := fmt.Sprintf("  %s %s %s", mark, s.ID, short(s.Content, 60))
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
	}
	return lines
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
	case "search_files":
		return "search_files " + str("regex")
	case "run_command":
		return "run_command `" + short(str("command"), 60) + "`"
	case "ask_human":
		return "ask_human " + short(str("question"), 60)
	case "select_intent":
		return "select_intent " + str("intent_id")
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
