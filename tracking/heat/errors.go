package heat

import "errors"

// ErrUnknownTask is returned by Snapshot for a task the heat map has no view
// of: it never had a worker, or all its files have cooled off since it ended.
var ErrUnknownTask = errors.New("unknown task")
