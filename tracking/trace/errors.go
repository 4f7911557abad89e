package trace

import "errors"

var (
	// ErrInvalidChange: the change given to Record cannot be traced as is.
	ErrInvalidChange = errors.New("invalid change")
	// ErrInvalidQuery: agent/trace params the log cannot answer.
	ErrInvalidQuery = errors.New("invalid trace query")
)
