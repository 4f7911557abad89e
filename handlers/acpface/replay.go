package acpface

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

// replay sends a session's history as session/update notifications, as
// session/load asks, the way the live session showed it: each prompt as
// the user's message; the plan and the workers' words as thoughts; each
// tool call, completed, with the title, kind, locations and id it had,
// and the diff of the change it applied (from the task's checkpoints,
// while they are kept); each task's summary as the agent's message, and
// for a task that never wrote one (agentls was killed) what happened to
// it. Every update is marked _meta.agentls.replayed.
func (se *session) replay(hist api.SessionResult) {
	summarised := map[string]bool{}
	for i, m := range hist.Messages {
		if isSummary(hist.Messages, i) {
			summarised[m.TaskID] = true
		}
	}
	diffs := &replayDiffs{se: se, sessionID: hist.SessionID, byTask: map[string]map[string][]storedChange{}}
	calls := 0
	last := ""
	for i, m := range hist.Messages {
		if last != "" && m.TaskID != last {
			se.replayEnd(hist, last, summarised)
		}
		last = m.TaskID
		meta := agentlsMeta{TaskID: m.TaskID, SubtaskID: m.SubtaskID, Replayed: true}
		switch m.Role {
		case "user":
			se.book.push(acp.UserMessageChunk{Content: acp.Text(m.Text), Meta: meta.meta()})
		case "assistant":
			if isSummary(hist.Messages, i) {
				se.book.push(acp.AgentMessageChunk{Content: acp.Text(m.Text), Meta: meta.meta()})
				continue
			}
			se.book.push(acp.AgentThoughtChunk{Content: acp.Text(m.Text + "\n\n"), Meta: meta.meta()})
		case "tool":
			calls++
			if slices.Contains(hidden, m.Tool) {
				continue // not shown live either
			}
			se.book.push(se.replayCall(m, calls, diffs))
		}
	}
	if last != "" {
		se.replayEnd(hist, last, summarised)
	}
}

// isSummary reports whether message i is its task's summary: marked so,
// or, in a history written before messages had kinds, the task's last
// message of agentls's own that is not its plan.
func isSummary(msgs []api.SessionMessage, i int) bool {
	m := msgs[i]
	if m.Role != "assistant" || m.SubtaskID != "" {
		return false
	}
	if m.Kind != "" {
		return m.Kind == api.MessageSummary
	}
	if strings.HasPrefix(m.Text, "Plan:\n") {
		return false
	}
	for _, n := range msgs[i+1:] {
		if n.TaskID == m.TaskID && n.Role == "assistant" && n.SubtaskID == "" && n.Kind == "" {
			return false
		}
	}
	return true
}

// replayEnd says how a task that wrote no summary ended: agentls ended
// without ending it (killed, or it crashed), and the store lists it as
// interrupted.
func (se *session) replayEnd(hist api.SessionResult, taskID string, summarised map[string]bool) {
	if summarised[taskID] {
		return
	}
	for _, t := range hist.Tasks {
		if t.TaskID != taskID || t.State != api.TaskInterrupted {
			continue
		}
		done := 0
		for _, s := range t.Subtasks {
			if s.State == api.SubtaskDone || s.State == api.SubtaskSkipped {
				done++
			}
		}
		text := "Interrupted: agentls ended before this task did (it was killed, or it crashed)."
		if len(t.Subtasks) > 0 {
			text = fmt.Sprintf("Interrupted after %d of %d subtasks: agentls ended before this task did (it was killed, or it crashed).", done, len(t.Subtasks))
		}
		se.book.push(acp.AgentMessageChunk{Content: acp.Text(text),
			Meta: agentlsMeta{TaskID: taskID, State: api.TaskInterrupted, Replayed: true}.meta()})
	}
}

// replayCall is a stored tool call as the live session announced it, and
// completed: its tool and arguments give its title, kind and locations,
// and the change it applied, its diff. A call stored before messages
// named their tool is read from its text ("read_file {…}").
func (se *session) replayCall(m api.SessionMessage, n int, diffs *replayDiffs) acp.ToolCall {
	tool, args, callID := m.Tool, m.Arguments, m.CallID
	if tool == "" {
		name, rest, _ := strings.Cut(m.Text, " ")
		tool = name
		if json.Valid([]byte(rest)) {
			args = json.RawMessage(rest)
		}
	}
	title, kind, locs := describe(se.root, tool, args)
	if tool != m.Tool && args == nil {
		title = m.Text // its arguments were cut: the text is all there is
	}
	id := m.TaskID + "/replayed-" + strconv.Itoa(n)
	if callID != "" {
		id = toolCallID(m.TaskID, callID) // the id the live session gave it
	}
	meta := agentlsMeta{TaskID: m.TaskID, SubtaskID: m.SubtaskID, CallID: callID, Tool: m.Tool, Replayed: true}
	call := acp.ToolCall{ToolCallID: id, Title: title, Kind: kind, Status: acp.StatusCompleted, Locations: locs, RawInput: args, Meta: meta.meta()}
	if kind == acp.KindEdit || kind == acp.KindDelete {
		if d, line, ok := diffs.next(m.TaskID, m.SubtaskID, locs); ok {
			call.Content = []acp.ToolCallContent{d}
			if line > 0 && len(call.Locations) == 1 {
				call.Locations[0].Line = &line
			}
		}
	}
	return call
}

// replayDiffs hands out the changes a session's tasks applied, from their
// checkpoints, to the calls that made them: per subtask and file, in
// order.
type replayDiffs struct {
	se        *session
	sessionID string
	byTask    map[string]map[string][]storedChange // task → subtask and path → its changes not handed out yet
}

// storedChange is a change as its checkpoint names it: the hashes of the
// texts before and after, or why they were not kept.
type storedChange struct{ before, after, missing string }

// next is the diff of the next change subtask made to the file of locs,
// and the first line it changed.
func (d *replayDiffs) next(taskID, subtaskID string, locs []acp.ToolCallLocation) (acp.ToolCallContent, int, bool) {
	if len(locs) != 1 {
		return acp.ToolCallContent{}, 0, false
	}
	store := d.se.ws.track.Checkpoints
	changes, ok := d.byTask[taskID]
	if !ok {
		changes = map[string][]storedChange{}
		recs, _, err := store.Task(d.sessionID, taskID)
		if err == nil {
			for _, r := range recs {
				k := r.SubtaskID + "\x00" + absPath(d.se.root, r.Path)
				changes[k] = append(changes[k], storedChange{before: r.Before, after: r.After, missing: r.Missing})
			}
		}
		d.byTask[taskID] = changes
	}
	k := subtaskID + "\x00" + locs[0].Path
	if len(changes[k]) == 0 {
		return acp.ToolCallContent{}, 0, false
	}
	r := changes[k][0]
	changes[k] = changes[k][1:]
	if r.missing != "" {
		return acp.ToolCallContent{}, 0, false
	}
	before, existed, err := store.Text(d.sessionID, r.before)
	if err != nil {
		return acp.ToolCallContent{}, 0, false
	}
	after, _, err := store.Text(d.sessionID, r.after)
	if err != nil {
		return acp.ToolCallContent{}, 0, false
	}
	var old *string
	if existed {
		old = &before
	}
	return acp.ToolCallContent{Type: acp.ToolContentDiff, Path: locs[0].Path, OldText: old, NewText: after}, firstChangedLine(before, after), true
}

// firstChangedLine is the 1-based line where after first differs from
// before (0 when they are the same).
func firstChangedLine(before, after string) int {
	if before == after {
		return 0
	}
	line := 1
	for i := 0; i < len(before) && i < len(after) && before[i] == after[i]; i++ {
		if before[i] == '\n' {
			line++
		}
	}
	return line
}
