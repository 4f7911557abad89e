package editing

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns wraps one of these, so
// callers can classify a failure with errors.Is; the message around it is
// written for the model (and the person) reading it.
var (
	// ErrBadPath: the path is empty, malformed or not a file:// URI.
	ErrBadPath = errors.New("invalid path")
	// ErrOutside: the path is outside the workspace (directly or through a symlink).
	ErrOutside = errors.New("outside the workspace")
	// ErrBlocked: a zone or the intent's owned_scope refuses the access. The
	// error is a *BlockedError naming the rule.
	ErrBlocked = errors.New("blocked")
	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("no such file")
	// ErrIsDir: a file operation was given a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrBinary: the file is not text.
	ErrBinary = errors.New("binary file")
	// ErrBadPattern: a glob or regular expression does not compile.
	ErrBadPattern = errors.New("bad pattern")
	// ErrConflict: the file changed since the agent last read it.
	ErrConflict = errors.New("conflict")
	// ErrNotRead: overwriting or deleting a file the agent has not read.
	ErrNotRead = errors.New("not read first")
	// ErrExists: creating a file that already exists.
	ErrExists = errors.New("file exists")
	// ErrNoChange: the change would leave the file as it is.
	ErrNoChange = errors.New("no change")
	// ErrNoMatch: edit_file's old_string is not in the file.
	ErrNoMatch = errors.New("old_string not found")
	// ErrAmbiguous: edit_file's old_string occurs more than once.
	ErrAmbiguous = errors.New("old_string is not unique")
	// ErrRejected: the person rejected the change. Its errors say how, in
	// words of their own, without repeating these.
	ErrRejected = errors.New("rejected by the user")
	// ErrNotApplied: the editor answered applied: false, or the write failed.
	ErrNotApplied = errors.New("not applied")
	// ErrBranch: branch mode could not create its branch.
	ErrBranch = errors.New("branch mode failed")
	// ErrTooLarge: a file is larger than it may be.
	ErrTooLarge = errors.New("too large")
)

// BlockedError is a refused access with the rule that refused it.
type BlockedError struct {
	Path   string // workspace-relative, or as given when it is outside
	Reason string // e.g. `denied by zones.deny "**/.git/**"`
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s: access blocked: %s", e.Path, e.Reason)
}

// Unwrap makes errors.Is(err, ErrBlocked) hold.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// SizeError is a file refused before it was read for being larger than
// its bound. It wraps ErrTooLarge.
type SizeError struct {
	Path      string // workspace-relative
	Size, Max int64
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%v: %s is %d bytes, more than %d", ErrTooLarge, e.Path, e.Size, e.Max)
}

func (e *SizeError) Unwrap() error { return ErrTooLarge }
