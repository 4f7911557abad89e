package acp

import "github.com/agentls/agentls/api"

// ProtocolVersion is the version of ACP this package speaks. An agent
// answers initialize with it when the client asks for it or for a later
// one; a client that asks for an earlier one gets it too, and decides.
const ProtocolVersion = 1

// Methods an agent serves.
const (
	MethodInitialize             = "initialize"
	MethodAuthenticate           = "authenticate"
	MethodSessionNew             = "session/new"
	MethodSessionLoad            = "session/load"
	MethodSessionList            = "session/list"
	MethodSessionResume          = "session/resume"
	MethodSessionClose           = "session/close"
	MethodSessionSetMode         = "session/set_mode"
	MethodSessionSetConfigOption = "session/set_config_option"
	// MethodSessionSetModel is the unstable model selection that came
	// before configOptions' model category; CodeCompanion calls it.
	MethodSessionSetModel = "session/set_model"
	MethodSessionPrompt   = "session/prompt"
	// MethodSessionCancel is a notification: stop the session's prompt
	// turn, which then answers with StopCancelled.
	MethodSessionCancel = "session/cancel"
)

// Methods a client serves.
const (
	MethodSessionUpdate            = "session/update" // a notification
	MethodSessionRequestPermission = "session/request_permission"
	MethodFSReadTextFile           = "fs/read_text_file"
	MethodFSWriteTextFile          = "fs/write_text_file"
	MethodTerminalCreate           = "terminal/create"
	MethodTerminalOutput           = "terminal/output"
	MethodTerminalWaitForExit      = "terminal/wait_for_exit"
	MethodTerminalKill             = "terminal/kill"
	MethodTerminalRelease          = "terminal/release"
)

// MethodCancelRequest cancels a request in flight, in either direction:
// {"requestId": id}. The connection (NewConn) handles it.
const MethodCancelRequest = "$/cancel_request"

// Error codes ACP adds to JSON-RPC's (api.CodeInvalidParams and the others).
const (
	// CodeAuthRequired: the agent needs authentication (or, for agentls, a
	// model) before it can do this; the message says how.
	CodeAuthRequired api.Code = -32000
	// CodeResourceNotFound: a session, file or terminal named does not
	// exist.
	CodeResourceNotFound api.Code = -32002
)

// Stop reasons of a prompt turn.
const (
	StopEndTurn         = "end_turn"
	StopMaxTokens       = "max_tokens"
	StopMaxTurnRequests = "max_turn_requests"
	StopRefusal         = "refusal"
	StopCancelled       = "cancelled"
)

// Tool kinds.
const (
	KindRead       = "read"
	KindEdit       = "edit"
	KindDelete     = "delete"
	KindMove       = "move"
	KindSearch     = "search"
	KindExecute    = "execute"
	KindThink      = "think"
	KindFetch      = "fetch"
	KindSwitchMode = "switch_mode"
	KindOther      = "other"
)

// Tool call statuses.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// Plan entry priorities and statuses.
const (
	PriorityHigh   = "high"
	PriorityMedium = "medium"
	PriorityLow    = "low"

	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// Permission option kinds.
const (
	AllowOnce    = "allow_once"
	AllowAlways  = "allow_always"
	RejectOnce   = "reject_once"
	RejectAlways = "reject_always"
)

// Permission outcomes.
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)
