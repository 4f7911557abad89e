package workforce

import (
	"context"

	"github.com/agentls/agentls/api"
)

// Events receives what a workspace's tasks do, as domain events: a face
// translates them into its wire (the LSP face into agent/taskUpdate,
// $/progress and window/logMessage, docs/PROTOCOL.md §5; the ACP face into
// session/update, docs/ACP.md).
//
// A task hands its events over in the order it made them, one at a time,
// from its outbox's goroutine (or, for a Queueing Events, as it makes
// them): Event never runs twice at once for one task. The events of a task
// carry no secret agentls knows of (package redact).
type Events interface {
	Event(ctx context.Context, ev Event) error
}

// Queueing is implemented by an Events that never waits on its peer: it
// queues what it is handed and sends it from a goroutine of its own (the
// ACP face's session updates). The task then hands it each event as it is
// made, under the task's lock, instead of through the outbox's goroutine,
// so the order of what it sends holds against the reverse calls the
// workers make: a tool call's event reaches it before the file read or
// edit that call makes.
type Queueing interface {
	Events
	// Queues marks the Events; it is never called.
	Queues()
}

// Event is one thing a task did or had happen. Exactly one of Start,
// Update and Warning is set.
type Event struct {
	TaskID    string `json:"taskId"`
	SessionID string `json:"sessionId"`
	// Seq numbers a task's updates 1, 2, … in the order they were made
	// (0 on a start or a warning).
	Seq uint64 `json:"seq,omitempty"`
	// State and Subtasks are the task's as they are after the event.
	State    string        `json:"state"`
	Subtasks []api.Subtask `json:"subtasks"`

	// Start is the task's first event. The task waits until it has been
	// handled, and hands it over with the task's context (it ends when the
	// task is stopped): a face may call its client for it (the LSP face
	// creates the task's progress token).
	Start *Start `json:"start,omitempty"`
	// Update is something that happened in the task, of the kinds of
	// docs/PROTOCOL.md §5: its state (the last update is its stateChanged
	// to done, failed or stopped, with its summary), a subtask planned,
	// added, started, finished, skipped or removed, a worker's words and
	// thinking, a tool call and its result, a change applied, held or
	// rejected, a command, a question and its answer, the usage, a todo
	// list, an engine's start and steps, a file refused.
	Update *api.TaskEvent `json:"update,omitempty"`
	// Warning is a warning for the person in the course of the task (a
	// fallback, a file that could not be handled as asked).
	Warning string `json:"warning,omitempty"`
	// Progress is set on the update after which how far the task is
	// changed: a subtask started, ended or was removed.
	Progress *Progress `json:"progress,omitempty"`
}

// Start is a task's start.
type Start struct {
	Prompt string `json:"prompt"`
	// Model is the model the task thinks with, "provider:model".
	Model string `json:"model"`
	// Token is the run's own progress token (agent/run's workDoneToken),
	// nil when it gave none.
	Token *api.ProgressToken `json:"token,omitempty"`
}

// Progress is how far a task is: Done of its Total subtasks have ended
// (done, skipped, failed or blocked), and those of Running run.
type Progress struct {
	Done    int      `json:"done"`
	Total   int      `json:"total"`
	Running []string `json:"running,omitempty"` // subtask ids, in plan order
}

// Final reports whether ev is a task's last update: its state changed to
// done, failed or stopped.
func (ev Event) Final() bool {
	if ev.Update == nil || ev.Update.Kind != api.EventStateChanged {
		return false
	}
	switch ev.Update.State {
	case api.TaskDone, api.TaskFailed, api.TaskStopped:
		return true
	}
	return false
}
