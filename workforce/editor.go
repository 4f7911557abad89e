package workforce

import (
	"context"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
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
