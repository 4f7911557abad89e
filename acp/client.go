package acp

// ---- session/request_permission ----

// RequestPermissionRequest is the params of session/request_permission:
// the tool call the person is asked about (with its diff, for an edit) and
// the options offered.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  ToolCallUpdate     `json:"toolCall"`
	Options   []PermissionOption `json:"options"`
	Meta      Meta               `json:"_meta,omitempty"`
}

// PermissionOption is one answer offered; Kind (AllowOnce, RejectOnce…)
// lets the client pick its icon and shortcut.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
	Meta    Meta              `json:"_meta,omitempty"`
}

// PermissionOutcome is the answer: OutcomeSelected with the option chosen,
// or OutcomeCancelled (the prompt turn was cancelled meanwhile).
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// Selected returns the outcome choosing option id.
func Selected(id string) PermissionOutcome {
	return PermissionOutcome{Outcome: OutcomeSelected, OptionID: id}
}

// Cancelled is the outcome of a question the prompt's cancellation ended.
var Cancelled = PermissionOutcome{Outcome: OutcomeCancelled}

// ---- fs/* ----

// ReadTextFileRequest is the params of fs/read_text_file: Path is
// absolute; Line (from 1) and Limit pick lines.
type ReadTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Line      *int   `json:"line,omitempty"`
	Limit     *int   `json:"limit,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// ReadTextFileResponse is the result of fs/read_text_file: the text as the
// client has it, unsaved changes included.
type ReadTextFileResponse struct {
	Content string `json:"content"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// WriteTextFileRequest is the params of fs/write_text_file: the whole new
// content of the file at Path (absolute), created when missing.
type WriteTextFileRequest struct {
	SessionID string `json:"sessionId"`
	Path      string `json:"path"`
	Content   string `json:"content"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// WriteTextFileResponse is the result of fs/write_text_file.
type WriteTextFileResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ---- terminal/* ----

// CreateTerminalRequest is the params of terminal/create: run Command with
// Args in Cwd (absolute), Env added to the client's environment; keep at
// most OutputByteLimit bytes of output (the end of it).
type CreateTerminalRequest struct {
	SessionID       string        `json:"sessionId"`
	Command         string        `json:"command"`
	Args            []string      `json:"args,omitempty"`
	Env             []EnvVariable `json:"env,omitempty"`
	Cwd             string        `json:"cwd,omitempty"`
	OutputByteLimit *int64        `json:"outputByteLimit,omitempty"`
	Meta            Meta          `json:"_meta,omitempty"`
}

// CreateTerminalResponse is the result of terminal/create.
type CreateTerminalResponse struct {
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// TerminalRequest is the params of terminal/output, terminal/wait_for_exit,
// terminal/kill and terminal/release.
type TerminalRequest struct {
	SessionID  string `json:"sessionId"`
	TerminalID string `json:"terminalId"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// TerminalOutputResponse is the result of terminal/output: the output so
// far, whether its start was cut, and the exit status once the command
// ended.
type TerminalOutputResponse struct {
	Output     string              `json:"output"`
	Truncated  bool                `json:"truncated"`
	ExitStatus *TerminalExitStatus `json:"exitStatus,omitempty"`
	Meta       Meta                `json:"_meta,omitempty"`
}

// TerminalExitStatus is how a command ended: its exit code, or the signal
// that ended it.
type TerminalExitStatus struct {
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// WaitForTerminalExitResponse is the result of terminal/wait_for_exit.
type WaitForTerminalExitResponse = TerminalExitStatus

// Empty is the result of the methods that answer nothing but _meta
// (terminal/kill, terminal/release, session/set_mode…).
type Empty struct {
	Meta Meta `json:"_meta,omitempty"`
}
