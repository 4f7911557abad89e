package workforce

import "errors"

// Sentinel errors. Every error the Engine returns to a caller wraps one of
// these (or is an *api.Error already carrying its code, for the model
// resolution of docs/MODELS.md), so handlers can map them to the codes of
// docs/PROTOCOL.md §7.
var (
	// ErrUnknownTask: no task with that id (-32011).
	ErrUnknownTask = errors.New("unknown task")
	// ErrUnknownSubtask: the task has no subtask with that id (-32011).
	ErrUnknownSubtask = errors.New("unknown subtask")
	// ErrUnknownSession: sessionId names no session (-32011).
	ErrUnknownSession = errors.New("unknown session")
	// ErrWrongState: the control is not allowed in the task's or the
	// subtask's current state (-32012).
	ErrWrongState = errors.New("not allowed in the current state")
	// ErrInvalid: the request is malformed (-32602); the message names the
	// field.
	ErrInvalid = errors.New("invalid params")
	// ErrClosed: the engine is closing; no task is started.
	ErrClosed = errors.New("the agent is shutting down")
)
