package workforce

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/internal/redact"
)

// taskEditor is the editor as one task's editing sees it: a call that waits
// on the person (an approval, an edit to confirm) puts the task in the
// waiting state for as long as it lasts, and leaves after the task's
// notifications made before it, so the person sees what led to it first.
type taskEditor struct {
	Editor
	t *task
}

func (e *taskEditor) ShowMessageRequest(ctx context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	e.t.beginWait(api.TaskEvent{})
	defer e.t.endWait(api.TaskEvent{})
	e.t.out.flush(ctx)
	return e.Editor.ShowMessageRequest(ctx, p)
}

func (e *taskEditor) ApplyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams, w api.Wait) (api.ApplyWorkspaceEditResult, error) {
	if w == api.Human {
		e.t.beginWait(api.TaskEvent{})
		defer e.t.endWait(api.TaskEvent{})
		e.t.out.flush(ctx)
	}
	return e.Editor.ApplyEdit(ctx, p, w)
}

// observer routes editing's accesses to the heat tracker of the worker that
// made them, and tells the person of every refused access.
type observer task

func (o *observer) tracker(who editing.Actor) interface {
	Access(path, action string)
	Blocked(path, reason string)
} {
	t := (*task)(o)
	t.mu.Lock()
	defer t.mu.Unlock()
	if tr := t.trackers[who.AgentID]; tr != nil {
		return tr
	}
	return nil
}

func (o *observer) Access(who editing.Actor, path, action string) {
	if tr := o.tracker(who); tr != nil {
		tr.Access(path, action)
	}
}

func (o *observer) Blocked(who editing.Actor, path, reason string) {
	if tr := o.tracker(who); tr != nil {
		tr.Blocked(path, reason)
	}
	(*task)(o).emit(api.TaskEvent{Kind: api.EventBlocked, SubtaskID: who.AgentID, Path: path, Reason: reason})
}

// redactingNotifier takes the known secrets out of every notification: a
// model's text, a tool's arguments and results, a warning.
type redactingNotifier struct {
	n Notifier
	r *redact.Redactor
}

func (x *redactingNotifier) TaskUpdate(ctx context.Context, p *api.TaskUpdateParams) error {
	return x.n.TaskUpdate(ctx, redact.Value(x.r, p))
}

func (x *redactingNotifier) Progress(ctx context.Context, p *api.ProgressParams) error {
	if b, err := json.Marshal(p.Value); err == nil {
		if red := x.r.JSON(b); !bytes.Equal(red, b) {
			q := *p
			q.Value = json.RawMessage(red)
			p = &q
		}
	}
	return x.n.Progress(ctx, p)
}

func (x *redactingNotifier) LogMessage(ctx context.Context, typ api.MessageType, msg string) error {
	return x.n.LogMessage(ctx, typ, x.r.String(msg))
}
