package sessions

import "errors"

var (
	// ErrUnknownSession: no session has this id (the handler answers -32011).
	ErrUnknownSession = errors.New("unknown session")
	// ErrUnknownTask: the session has no task with this id.
	ErrUnknownTask = errors.New("unknown task")
	// ErrSessionBusy: the session has a task still going (the handler answers -32012).
	ErrSessionBusy = errors.New("the session has a task that has not ended")
	// ErrNoStateDir: none of the places for state could be found.
	ErrNoStateDir = errors.New("no state directory: set AGENTLS_STATE_DIR, XDG_STATE_HOME or HOME")
	// ErrInvalid: an argument the store cannot take.
	ErrInvalid = errors.New("invalid argument")
	// ErrClosed: the store was closed; it takes no more changes.
	ErrClosed = errors.New("the session store is closed")
)
