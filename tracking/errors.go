package tracking

import (
	"github.com/agentls/agentls/tracking/heat"
	"github.com/agentls/agentls/tracking/sessions"
	"github.com/agentls/agentls/tracking/trace"
)

// Sentinel errors of the agent/* methods tracking answers. The handler maps
// ErrUnknownSession and ErrUnknownTask to -32011, ErrSessionBusy to -32012
// and ErrInvalidParams to -32602.
var (
	ErrUnknownSession = sessions.ErrUnknownSession
	ErrUnknownTask    = heat.ErrUnknownTask
	ErrSessionBusy    = sessions.ErrSessionBusy
	ErrInvalidParams  = trace.ErrInvalidQuery
)
