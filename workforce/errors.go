package workforce

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the Engine returns to a caller wraps one of
// these (or is an *api.Error already carrying its code, for the model
// resolution of docs/MODELS.md), so handlers can map them to the codes of
// docs/PROTOCOL.md §7. Their messages say what went wrong, never the code:
// the face that turns one into a code says that, once
// (docs/ARCHITECTURE.md, "Who prefixes an error").
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
	// ErrInvalid: the request is malformed (-32602). An error that wraps
	// it names the field and nothing more (invalid): the face adds
	// "invalid params".
	ErrInvalid = errors.New("invalid params")
	// ErrClosed: the engine is closing; no task is started.
	ErrClosed = errors.New("the agent is shutting down")
)

// invalidError is a request that does not fit: errors.Is(err, ErrInvalid),
// its message the field and why, without the words of the code.
type invalidError struct{ err error }

func (e *invalidError) Error() string        { return e.err.Error() }
func (e *invalidError) Unwrap() error        { return e.err }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

// invalid is an ErrInvalid error saying format's message alone.
func invalid(format string, a ...any) error { return &invalidError{fmt.Errorf(format, a...)} }
