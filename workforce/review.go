package workforce

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/tracking/checkpoint"
	"github.com/agentls/agentls/tracking/trace"
)

// landing is an applied change with who made it, as the trace keeps it.
type landing struct {
	subtaskID string
	intent    string // "" without one
	ch        editing.Change
}

// landed records an applied change in the trace, or, for a change held in
// review mode, keeps it until the review says what of it landed.
func (t *task) landed(subtaskID, intent string, ch editing.Change) {
	l := landing{subtaskID: subtaskID, intent: intent, ch: ch}
	if ch.Held {
		t.mu.Lock()
		if t.heldChanges == nil {
			t.heldChanges = map[string][]landing{}
		}
		t.heldChanges[ch.Path] = append(t.heldChanges[ch.Path], l)
		t.mu.Unlock()
		return
	}
	t.record(l)
}

// record writes an applied change to the trace (when it is on) and to the
// task's checkpoints (always: agent/undo reads them).
func (t *task) record(l landing) {
	ch := l.ch
	spans := make([]trace.Span, len(ch.Spans))
	for i, s := range ch.Spans {
		spans[i] = trace.Span{Start: s.Start, End: s.End}
	}
	var content []byte
	if ch.Operation != api.OpDelete {
		content = []byte(ch.NewContent)
	}
	ws := t.e.cfg.Tracking
	entry, err := ws.RecordChange(trace.Change{
		Path: ch.Path, Operation: ch.Operation, Content: content, Spans: spans,
		IntentID: l.intent, SessionID: t.sessionID, TaskID: t.id, SubtaskID: l.subtaskID, Model: t.spec,
	})
	if err != nil {
		t.log.Warn("trace not written", zap.String("subtask", l.subtaskID), zap.String("path", ch.Path), zap.Error(err))
		t.warn(fmt.Sprintf("agentls: the change to %s was made but could not be written to the trace: %v", ch.Path, err))
	}
	cp := checkpoint.Change{
		SessionID: t.sessionID, TaskID: t.id, SubtaskID: l.subtaskID,
		Path: ch.Path, Operation: ch.Operation, Before: ch.Before, Existed: ch.Existed, After: ch.NewContent,
	}
	if entry != nil {
		cp.TraceID = entry.ID
	}
	if err := ws.Checkpoints.Record(cp); err != nil {
		t.log.Warn("checkpoint not written", zap.String("subtask", l.subtaskID), zap.String("path", ch.Path), zap.Error(err))
		t.warn(fmt.Sprintf("agentls: the change to %s was made but could not be kept for agent/undo: %v", ch.Path, err))
	}
}

// reviewStates says, in the label of a review, how the task ended.
var reviewStates = map[string]string{
	api.TaskDone:    "task done",
	api.TaskStopped: "task stopped: the changes it made before it was stopped",
	api.TaskFailed:  "task failed: the changes it made before it failed",
}

// reviewHeld proposes, when a task in review mode ends, every change it
// holds as one edit (docs/EDITING.md, Review mode), whatever the state it
// ends in (state): a stopped or failed task's changes are offered too, the
// label saying so. What the person accepts is recorded as applied (in the
// run's changes, the trace and the events), in part where they took part
// of a file; the rest as rejected. A stop during the review (agent/stop,
// $/cancelRequest, the server closing) ends it: what was not accepted by
// then is rejected.
func (t *task) reviewHeld(state string) {
	if t.editTask == nil || t.editTask.Held() == 0 {
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	t.mu.Lock()
	t.reviewing, t.cancelReview = true, cancel
	if t.stopped && state != api.TaskStopped {
		// The stop came after the work had ended: it is the review's.
		cancel(errStopped)
	}
	t.mu.Unlock()
	label := fmt.Sprintf("agentls: review the changes of “%s” (%s)", oneLine(t.prompt, 60), reviewStates[state])
	t.log.Info("reviewing held changes", zap.Int("files", t.editTask.Held()), zap.String("state", state))
	out := t.editTask.Review(ctx, label)

	t.mu.Lock()
	t.cancelReview = nil
	held := t.heldChanges
	t.heldChanges = nil
	t.mu.Unlock()
	var accepted, rejected []string
	for _, ch := range out {
		c := ch.RPC()
		kind := api.EventChangeApplied
		if !ch.Applied {
			kind = api.EventChangeRejected
		}
		t.mutate(func() []api.TaskEvent {
			t.changes = append(t.changes, c)
			return []api.TaskEvent{{Kind: kind, Path: c.Path, Reason: ch.Reason}}
		})
		if !ch.Applied {
			rejected = append(rejected, ch.Path)
			continue
		}
		steps := held[ch.Path]
		if !ch.Partial && len(steps) > 0 {
			// Landed whole: each change as its agent made it.
			for _, l := range steps {
				t.record(l)
			}
			accepted = append(accepted, ch.Path)
			continue
		}
		// Landed in part: one change, of what landed, by the agent that
		// changed the file last.
		l := landing{ch: ch}
		if len(steps) > 0 {
			l.subtaskID, l.intent = steps[len(steps)-1].subtaskID, steps[len(steps)-1].intent
		}
		t.record(l)
		accepted = append(accepted, ch.Path+" (in part)")
	}
	var b strings.Builder
	b.WriteString("Reviewed the changes:")
	if len(accepted) > 0 {
		b.WriteString(" applied " + strings.Join(accepted, ", ") + ".")
	}
	if len(rejected) > 0 {
		b.WriteString(" Not applied: " + strings.Join(rejected, ", ") + ".")
	}
	t.journal.add(api.SessionMessage{Role: "user", Text: b.String(), TaskID: t.id})
}
