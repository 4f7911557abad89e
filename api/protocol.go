package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ---- initialize (docs/PROTOCOL.md §2) ----

// InitializeParams holds the parts of LSP's InitializeParams that agentls
// reads. It is deliberately small: editors send many fields in many shapes,
// and a field agentls does not read must never fail an initialize.
type InitializeParams struct {
	ProcessID             *int32             `json:"processId,omitempty"`
	ClientInfo            *ClientInfo        `json:"clientInfo,omitempty"`
	RootURI               *string            `json:"rootUri,omitempty"`
	RootPath              *string            `json:"rootPath,omitempty"`
	WorkspaceFolders      []WorkspaceFolder  `json:"workspaceFolders,omitempty"`
	Capabilities          ClientCapabilities `json:"capabilities"`
	InitializationOptions json.RawMessage    `json:"initializationOptions,omitempty"`
}

// ClientInfo names the editor.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// WorkspaceFolder is LSP's WorkspaceFolder.
type WorkspaceFolder struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
}

// ClientCapabilities holds the capabilities of docs/PROTOCOL.md §2 that are read.
// Every field is optional on the wire; absent means unsupported.
type ClientCapabilities struct {
	Workspace *struct {
		ApplyEdit     bool `json:"applyEdit,omitempty"`
		WorkspaceEdit *struct {
			DocumentChanges         bool     `json:"documentChanges,omitempty"`
			ResourceOperations      []string `json:"resourceOperations,omitempty"`
			ChangeAnnotationSupport *struct {
				GroupsOnLabel bool `json:"groupsOnLabel,omitempty"`
			} `json:"changeAnnotationSupport,omitempty"`
		} `json:"workspaceEdit,omitempty"`
		DidChangeWatchedFiles *struct {
			DynamicRegistration bool `json:"dynamicRegistration,omitempty"`
		} `json:"didChangeWatchedFiles,omitempty"`
	} `json:"workspace,omitempty"`
	Window *struct {
		WorkDoneProgress bool `json:"workDoneProgress,omitempty"`
		ShowMessage      *struct {
			MessageActionItem *struct {
				AdditionalPropertiesSupport bool `json:"additionalPropertiesSupport,omitempty"`
			} `json:"messageActionItem,omitempty"`
		} `json:"showMessage,omitempty"`
	} `json:"window,omitempty"`
	Experimental *struct {
		Agent *AgentClientCapabilities `json:"agent,omitempty"`
	} `json:"experimental,omitempty"`
}

// AgentClientCapabilities is experimental.agent of docs/PROTOCOL.md §2.
type AgentClientCapabilities struct {
	ReadFile   bool `json:"readFile,omitempty"`
	RunCommand bool `json:"runCommand,omitempty"`
	Ask        bool `json:"ask,omitempty"`
	// References and Definition: the editor answers agent/references and
	// agent/definition from its language servers (docs/PROTOCOL.md §4).
	References bool `json:"references,omitempty"`
	Definition bool `json:"definition,omitempty"`
	// Diagnostics: the editor answers agent/diagnostics with its
	// diagnostics and sends agent/didChangeDiagnostics when its language
	// servers publish anew (docs/PROTOCOL.md §3, §4).
	Diagnostics bool `json:"diagnostics,omitempty"`
}

// Caps is the flattened view of ClientCapabilities the rest of agentls uses.
type Caps struct {
	ApplyEdit        bool // workspace.applyEdit
	DocumentChanges  bool // workspace.workspaceEdit.documentChanges
	ChangeAnnotation bool // workspace.workspaceEdit.changeAnnotationSupport
	CreateFile       bool // "create" in workspace.workspaceEdit.resourceOperations
	DeleteFile       bool // "delete" in workspace.workspaceEdit.resourceOperations
	WorkDoneProgress bool // window.workDoneProgress
	ShowMessage      bool // window.showMessage (window/showMessageRequest is part of base LSP; this records explicit support)
	ReadFile         bool // experimental.agent.readFile
	RunCommand       bool // experimental.agent.runCommand
	Ask              bool // experimental.agent.ask
	References       bool // experimental.agent.references
	Definition       bool // experimental.agent.definition
	Diagnostics      bool // experimental.agent.diagnostics
	WatchFiles       bool // workspace.didChangeWatchedFiles.dynamicRegistration
}

// ResourceOperation reports whether a WorkspaceEdit may hold the resource
// operation of a change: CreateFile for api.OpCreate, DeleteFile for
// api.OpDelete (documentChanges and the kind in resourceOperations).
func (c Caps) ResourceOperation(op string) bool {
	switch op {
	case OpCreate:
		return c.DocumentChanges && c.CreateFile
	case OpDelete:
		return c.DocumentChanges && c.DeleteFile
	}
	return false
}

// Flatten turns the wire capabilities into Caps.
func (c ClientCapabilities) Flatten() Caps {
	var f Caps
	if w := c.Workspace; w != nil {
		f.ApplyEdit = w.ApplyEdit
		f.WatchFiles = w.DidChangeWatchedFiles != nil && w.DidChangeWatchedFiles.DynamicRegistration
		if we := w.WorkspaceEdit; we != nil {
			f.DocumentChanges = we.DocumentChanges
			f.ChangeAnnotation = we.ChangeAnnotationSupport != nil
			for _, op := range we.ResourceOperations {
				switch op {
				case OpCreate:
					f.CreateFile = true
				case OpDelete:
					f.DeleteFile = true
				}
			}
		}
	}
	if w := c.Window; w != nil {
		f.WorkDoneProgress = w.WorkDoneProgress
		f.ShowMessage = w.ShowMessage != nil
	}
	if e := c.Experimental; e != nil && e.Agent != nil {
		f.ReadFile = e.Agent.ReadFile
		f.RunCommand = e.Agent.RunCommand
		f.Ask = e.Agent.Ask
		f.References = e.Agent.References
		f.Definition = e.Agent.Definition
		f.Diagnostics = e.Agent.Diagnostics
	}
	return f
}

// InitializeResult is the reply to initialize (docs/PROTOCOL.md §2).
type InitializeResult struct {
	Capabilities ServerCapabilities `json:"capabilities"`
	ServerInfo   ServerInfo         `json:"serverInfo"`
}

// ServerCapabilities advertises what agentls offers. It is an LSP server
// only in its transport: no text-document features are offered.
type ServerCapabilities struct {
	// TextDocumentSync asks for textDocument/didSave only (docs/PROTOCOL.md
	// §2): the code graph reads a saved file again.
	TextDocumentSync *TextDocumentSyncOptions `json:"textDocumentSync,omitempty"`
	Experimental     ServerExperimental       `json:"experimental"`
}

// ServerExperimental carries capabilities.experimental.agent.
type ServerExperimental struct {
	Agent AgentServerCapabilities `json:"agent"`
}

// AgentServerCapabilities is {"version": 1, "attachments": true}: the
// protocol's version, and what an editor may offer because agentls takes it.
type AgentServerCapabilities struct {
	Version int `json:"version"`
	// Attachments: agent/run takes attachments (docs/PROTOCOL.md §3).
	Attachments bool `json:"attachments"`
}

// ---- reverse calls (docs/PROTOCOL.md §4) ----

// Wait says whose answer a reverse call waits for, which picks its bound
// (docs/PROTOCOL.md §4): a machine answer is bounded by timeouts.reverseCallMs, a
// person's by timeouts.humanMs (0: unbounded, agent/stop ends the wait).
type Wait int

const (
	// Machine: the editor answers by itself (agent/readFile, applyEdit in apply mode).
	Machine Wait = iota
	// Human: a person answers (agent/ask, showMessageRequest, applyEdit in propose mode).
	Human
)

// ReadFileParams are the params of agent/readFile.
type ReadFileParams struct {
	Path string `json:"path"`
	URI  string `json:"uri"`
}

// ReadFileResult is the reply to agent/readFile.
type ReadFileResult struct {
	Content string `json:"content"`
}

// TextDocumentPositionParams are the params of agent/definition: a
// position in a document, as LSP's textDocument/definition takes it.
type TextDocumentPositionParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// ReferenceContext is LSP's: whether the declaration itself is wanted.
type ReferenceContext struct {
	IncludeDeclaration bool `json:"includeDeclaration"`
}

// ReferenceParams are the params of agent/references, as LSP's
// textDocument/references takes them.
type ReferenceParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
	Context      ReferenceContext       `json:"context"`
}

// Location is LSP's Location: a range of a document. The answer of
// agent/references and agent/definition is a list of them, or null when
// the editor has no language server for the document.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// RunCommandParams are the params of agent/runCommand.
type RunCommandParams struct {
	Command   string `json:"command"`
	Cwd       string `json:"cwd"`
	TimeoutMs int64  `json:"timeoutMs"`
	// UnsetEnv names the environment variables the command must not
	// inherit: the secrets agentls knows of, but those commandEnv.pass lets
	// through (docs/PROTOCOL.md §4).
	UnsetEnv []string `json:"unsetEnv,omitempty"`
}

// RunCommandResult is the reply to agent/runCommand.
type RunCommandResult struct {
	ExitCode int    `json:"exitCode"`
	Output   string `json:"output"`
	TimedOut bool   `json:"timedOut,omitempty"`
}

// AskParams are the params of agent/ask.
type AskParams struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
}

// AskResult is the reply to agent/ask; a nil Answer means dismissed.
type AskResult struct {
	Answer *string `json:"answer"`
}

// OptionalVersionedTextDocumentIdentifier names a document and, when the
// editor has it open, its version (null otherwise).
type OptionalVersionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"`
}

// AnnotatedTextEdit is a TextEdit with an optional change annotation.
type AnnotatedTextEdit struct {
	Range        Range  `json:"range"`
	NewText      string `json:"newText"`
	AnnotationID string `json:"annotationId,omitempty"`
}

// TextDocumentEdit is LSP's TextDocumentEdit with annotated edits.
type TextDocumentEdit struct {
	TextDocument OptionalVersionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []AnnotatedTextEdit                     `json:"edits"`
}

// CreateFileOptions are LSP's CreateFileOptions.
type CreateFileOptions struct {
	Overwrite      bool `json:"overwrite,omitempty"`
	IgnoreIfExists bool `json:"ignoreIfExists,omitempty"`
}

// CreateFile is LSP's CreateFile resource operation (kind "create").
type CreateFile struct {
	Kind         string             `json:"kind"`
	URI          string             `json:"uri"`
	Options      *CreateFileOptions `json:"options,omitempty"`
	AnnotationID string             `json:"annotationId,omitempty"`
}

// DeleteFileOptions are LSP's DeleteFileOptions.
type DeleteFileOptions struct {
	Recursive         bool `json:"recursive,omitempty"`
	IgnoreIfNotExists bool `json:"ignoreIfNotExists,omitempty"`
}

// DeleteFile is LSP's DeleteFile resource operation (kind "delete").
type DeleteFile struct {
	Kind         string             `json:"kind"`
	URI          string             `json:"uri"`
	Options      *DeleteFileOptions `json:"options,omitempty"`
	AnnotationID string             `json:"annotationId,omitempty"`
}

// DocumentChange is one entry of WorkspaceEdit.documentChanges: exactly one
// of its fields is set. It marshals as that field alone and unmarshals by
// looking at "kind" (absent: a TextDocumentEdit).
type DocumentChange struct {
	TextDocumentEdit *TextDocumentEdit
	CreateFile       *CreateFile
	DeleteFile       *DeleteFile
}

// MarshalJSON implements json.Marshaler.
func (d DocumentChange) MarshalJSON() ([]byte, error) {
	switch {
	case d.TextDocumentEdit != nil:
		return json.Marshal(d.TextDocumentEdit)
	case d.CreateFile != nil:
		c := *d.CreateFile
		c.Kind = "create"
		return json.Marshal(c)
	case d.DeleteFile != nil:
		c := *d.DeleteFile
		c.Kind = "delete"
		return json.Marshal(c)
	}
	return nil, errEmptyDocumentChange
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *DocumentChange) UnmarshalJSON(data []byte) error {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	*d = DocumentChange{}
	switch probe.Kind {
	case "":
		d.TextDocumentEdit = new(TextDocumentEdit)
		return json.Unmarshal(data, d.TextDocumentEdit)
	case "create":
		d.CreateFile = new(CreateFile)
		return json.Unmarshal(data, d.CreateFile)
	case "delete":
		d.DeleteFile = new(DeleteFile)
		return json.Unmarshal(data, d.DeleteFile)
	}
	return &unsupportedKindError{kind: probe.Kind}
}

// ChangeAnnotation is LSP's ChangeAnnotation.
type ChangeAnnotation struct {
	Label             string `json:"label"`
	NeedsConfirmation bool   `json:"needsConfirmation,omitempty"`
	Description       string `json:"description,omitempty"`
}

// WorkspaceEdit is LSP's WorkspaceEdit with resource operations and change
// annotations.
type WorkspaceEdit struct {
	Changes           map[string][]TextEdit       `json:"changes,omitempty"`
	DocumentChanges   []DocumentChange            `json:"documentChanges,omitempty"`
	ChangeAnnotations map[string]ChangeAnnotation `json:"changeAnnotations,omitempty"`
}

// ApplyWorkspaceEditParams are the params of workspace/applyEdit.
type ApplyWorkspaceEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  WorkspaceEdit `json:"edit"`
}

// ApplyWorkspaceEditResult is the reply to workspace/applyEdit, shaped as the
// LSP specification has it (an object, not a bool).
type ApplyWorkspaceEditResult struct {
	Applied       bool    `json:"applied"`
	FailureReason string  `json:"failureReason,omitempty"`
	FailedChange  *uint32 `json:"failedChange,omitempty"`
}

// WorkDoneProgressCreateParams are the params of window/workDoneProgress/create.
type WorkDoneProgressCreateParams struct {
	Token *ProgressToken `json:"token"`
}

// WorkDoneProgressCancelParams are the params of window/workDoneProgress/cancel.
type WorkDoneProgressCancelParams struct {
	Token *ProgressToken `json:"token"`
}

// ProgressParams are the params of $/progress.
type ProgressParams struct {
	Token *ProgressToken `json:"token"`
	Value any            `json:"value"`
}

// ---- requests from the editor (docs/PROTOCOL.md §3) ----

// PingParams are the params of agent/ping. Data is carried back verbatim.
type PingParams struct {
	Data json.RawMessage `json:"data,omitempty"`
}

// RunParams are the params of agent/run.
type RunParams struct {
	Prompt    string   `json:"prompt"`
	TaskID    string   `json:"taskId,omitempty"`
	SessionID string   `json:"sessionId,omitempty"`
	EditMode  EditMode `json:"editMode,omitempty"`
	IntentID  string   `json:"intentId,omitempty"`
	// Model overrides the model setting for this run ("provider:name",
	// docs/MODELS.md).
	Model         string         `json:"model,omitempty"`
	WorkDoneToken *ProgressToken `json:"workDoneToken,omitempty"`
	// Attachments are files and images the user gives the run besides
	// the prompt (docs/PROTOCOL.md §3, Attachments).
	Attachments []Attachment `json:"attachments,omitempty"`
	// Engine runs every subtask of the task on this engine (docs/ENGINES.md):
	// an engine's name, or "agentls" for the built-in worker; "" lets the
	// plan decide.
	Engine string `json:"engine,omitempty"`
}

// TaskState is a task's state (docs/PROTOCOL.md §3): one of the Task*
// values. Interrupted is only ever read back from disk.
type TaskState = string

// The task states.
const (
	TaskPlanning    TaskState = "planning"
	TaskRunning     TaskState = "running"
	TaskWaiting     TaskState = "waiting"
	TaskDone        TaskState = "done"
	TaskFailed      TaskState = "failed"
	TaskStopped     TaskState = "stopped"
	TaskInterrupted TaskState = "interrupted"
)

// SubtaskState is a subtask's state (docs/PROTOCOL.md §3): one of the
// Subtask* values.
type SubtaskState = string

// The subtask states.
const (
	SubtaskPending SubtaskState = "pending"
	SubtaskRunning SubtaskState = "running"
	SubtaskDone    SubtaskState = "done"
	SubtaskFailed  SubtaskState = "failed"
	SubtaskSkipped SubtaskState = "skipped"
	SubtaskBlocked SubtaskState = "blocked"
)

// Subtask is one node of a task's plan.
type Subtask struct {
	ID        string       `json:"id"`
	Content   string       `json:"content"`
	State     SubtaskState `json:"state"`
	DependsOn []string     `json:"dependsOn"`
	Role      string       `json:"role,omitempty"`
	// Engine is the external agent the subtask runs on ("" : the built-in
	// worker), and Steps its own plan, as it reports it.
	Engine string     `json:"engine,omitempty"`
	Steps  []PlanStep `json:"steps,omitempty"`
	Result string     `json:"result,omitempty"`
	Error  string     `json:"error,omitempty"`
	// Todos is the checklist the subtask's worker keeps (its todo tool),
	// as it last gave it.
	Todos []Todo `json:"todos,omitempty"`
	// Usage is what the subtask's model calls used so far, with the
	// context of its last call; absent before its first call.
	Usage *Usage `json:"usage,omitempty"`
}

// Operation is what a change does to a file: one of the Op* values.
type Operation = string

// The change operations.
const (
	OpCreate Operation = "create"
	OpUpdate Operation = "update"
	OpDelete Operation = "delete"
	// OpMCP is a trace entry of an MCP tool call that named the file and
	// may have changed it outside the editing pipeline (docs/MCP.md).
	OpMCP Operation = "mcp"
)

// Change is one file change of a run.
type Change struct {
	Path      string    `json:"path"`
	Operation Operation `json:"operation"`
	Applied   bool      `json:"applied"`
	Diff      string    `json:"diff"`
}

// Usage counts model tokens (docs/TRACKING.md, Usage). InputTokens is all
// the input, the cached part included: CacheReadTokens of it were read from
// the provider's prompt cache, CacheWriteTokens written to it. Cost is in
// US dollars, present only when every call counted has a known price.
// ContextTokens and ContextWindow are set on a subtask's usage: the input
// tokens of its last call, and the model's context window where known.
type Usage struct {
	InputTokens      int64    `json:"inputTokens"`
	OutputTokens     int64    `json:"outputTokens"`
	CacheReadTokens  int64    `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64    `json:"cacheWriteTokens,omitempty"`
	Cost             *float64 `json:"cost,omitempty"`
	ContextTokens    int64    `json:"contextTokens,omitempty"`
	ContextWindow    int64    `json:"contextWindow,omitempty"`
}

// RunResult is the reply to agent/run, sent when the task ends.
type RunResult struct {
	TaskID    string    `json:"taskId"`
	SessionID string    `json:"sessionId"`
	State     TaskState `json:"state"`
	Summary   string    `json:"summary"`
	Subtasks  []Subtask `json:"subtasks"`
	Changes   []Change  `json:"changes"`
	// Applied and Rejected count Changes by their applied flag.
	Applied  int `json:"applied"`
	Rejected int `json:"rejected"`
	// Counts counts the task's subtasks by how they ended, the removed
	// ones included.
	Counts SubtaskCounts `json:"counts"`
	Usage  Usage         `json:"usage"`
}

// SubtaskCounts counts the subtasks of an ended task by how each ended:
// every subtask the task had, those the person removed included, is in
// exactly one count, so the counts add up to how many it had. What a view
// says of the end ("1 of 3 subtasks done, 1 skipped, 1 removed") comes from
// these, never from counting the subtasks again.
type SubtaskCounts struct {
	Done    int `json:"done"`
	Skipped int `json:"skipped"`
	// Removed: taken out of the plan before they started (agent/removeSubtask).
	Removed int `json:"removed"`
	// Failed: failed, or stopped while running.
	Failed int `json:"failed"`
	// Blocked: not started because a subtask they depend on failed or was
	// blocked.
	Blocked int `json:"blocked"`
	// NotRun: not started when the task stopped.
	NotRun int `json:"notRun"`
}

// Total is how many subtasks the task had.
func (c SubtaskCounts) Total() int {
	return c.Done + c.Skipped + c.Removed + c.Failed + c.Blocked + c.NotRun
}

// String says the counts in words, the done ones first and then every
// other count that is not zero: "1 of 3 subtasks done, 1 skipped, 1
// removed".
func (c SubtaskCounts) String() string {
	noun := "subtasks"
	if c.Total() == 1 {
		noun = "subtask"
	}
	text := fmt.Sprintf("%d of %d %s done", c.Done, c.Total(), noun)
	for _, n := range []struct {
		n    int
		word string
	}{{c.Skipped, "skipped"}, {c.Removed, "removed"}, {c.Failed, "failed"}, {c.Blocked, "blocked"}, {c.NotRun, "not run"}} {
		if n.n > 0 {
			text += fmt.Sprintf(", %d %s", n.n, n.word)
		}
	}
	return text
}

// StopParams are the params of agent/stop.
type StopParams struct {
	TaskID string `json:"taskId"`
}

// StopResult is the reply to agent/stop.
type StopResult struct {
	Stopped bool `json:"stopped"`
}

// AddSubtaskParams are the params of agent/addSubtask.
type AddSubtaskParams struct {
	TaskID    string   `json:"taskId"`
	Content   string   `json:"content"`
	DependsOn []string `json:"dependsOn,omitempty"`
}

// AddSubtaskResult is the reply to agent/addSubtask.
type AddSubtaskResult struct {
	SubtaskID string `json:"subtaskId"`
}

// SubtaskParams are the params of agent/removeSubtask and agent/skipSubtask.
type SubtaskParams struct {
	TaskID    string `json:"taskId"`
	SubtaskID string `json:"subtaskId"`
}

// Empty is the {} result.
type Empty struct{}

// UndoParams are the params of agent/undo: the task (and, with subtaskId,
// only that subtask) whose changes are taken back. sessionId picks the
// session when the task id was used in several; partial undoes the files
// that can be when others cannot.
type UndoParams struct {
	TaskID    string `json:"taskId"`
	SubtaskID string `json:"subtaskId,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
	Partial   bool   `json:"partial,omitempty"`
}

// UndoResult is the reply to agent/undo: undone when every file is as it
// was before the task (or subtask), and what became of each file, in the
// order the task first changed them.
type UndoResult struct {
	TaskID    string     `json:"taskId"`
	SessionID string     `json:"sessionId"`
	Undone    bool       `json:"undone"`
	Files     []UndoFile `json:"files"`
}

// UndoFile is one file of an agent/undo. Operation is what the undo does
// to it (update: its text restored; create: recreated; delete: deleted; ""
// when it is already as it was). Lines are the lines of its current text
// changed since the task wrote them, which refused it.
type UndoFile struct {
	Path      string     `json:"path"`
	Operation Operation  `json:"operation,omitempty"`
	Undone    bool       `json:"undone"`
	Reason    string     `json:"reason,omitempty"`
	Lines     []LineSpan `json:"lines,omitempty"`
	Diff      string     `json:"diff,omitempty"`
}

// LineSpan is a span of lines, 1-based and inclusive.
type LineSpan struct {
	StartLine int `json:"startLine"`
	EndLine   int `json:"endLine"`
}

// SessionTask is a task as listed in a session: its usage, and in
// agent/session its subtasks as they ended (with their todos and usage).
type SessionTask struct {
	TaskID   string    `json:"taskId"`
	Prompt   string    `json:"prompt"`
	State    TaskState `json:"state"`
	Usage    Usage     `json:"usage"`
	Subtasks []Subtask `json:"subtasks,omitempty"`
}

// SessionInfo is one entry of agent/sessions. Usage sums its tasks'.
type SessionInfo struct {
	SessionID string        `json:"sessionId"`
	Title     string        `json:"title"`
	CreatedAt string        `json:"createdAt"`
	UpdatedAt string        `json:"updatedAt"`
	Usage     Usage         `json:"usage"`
	Tasks     []SessionTask `json:"tasks"`
}

// SessionsResult is the reply to agent/sessions, newest first.
type SessionsResult struct {
	Sessions []SessionInfo `json:"sessions"`
}

// SessionParams are the params of agent/session and agent/deleteSession.
type SessionParams struct {
	SessionID string `json:"sessionId"`
}

// SessionMessage is one message of a session's history.
type SessionMessage struct {
	Role      string `json:"role"`
	Text      string `json:"text"`
	TaskID    string `json:"taskId"`
	SubtaskID string `json:"subtaskId,omitempty"`
	Time      string `json:"time"`
	// Kind says what a message of agentls's own is: MessagePlan (the
	// coordinator's plan) or MessageSummary (the task's end); none for
	// the others.
	Kind string `json:"kind,omitempty"`
	// Tool, CallID and Arguments are a tool message's call: the tool, the
	// callId of its toolCall event, and its arguments with every string
	// longer than 200 bytes cut (what a client needs to show the call
	// again: its path, its command, its pattern).
	Tool      string          `json:"tool,omitempty"`
	CallID    string          `json:"callId,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// The kinds of a SessionMessage.
const (
	MessagePlan    = "plan"
	MessageSummary = "summary"
)

// SessionResult is the reply to agent/session.
type SessionResult struct {
	SessionID string           `json:"sessionId"`
	Title     string           `json:"title"`
	Messages  []SessionMessage `json:"messages"`
	Tasks     []SessionTask    `json:"tasks"`
}

// HeatAction is what last happened to a file of the heat map
// (docs/PROTOCOL.md §3): one of the Action* values.
type HeatAction = string

// The heat actions.
const (
	ActionUserProvided HeatAction = "userProvided"
	// ActionUserReferenced: the prompt names the file.
	ActionUserReferenced HeatAction = "userReferenced"
	ActionRead           HeatAction = "read"
	ActionWrite          HeatAction = "write"
	ActionSearch         HeatAction = "search"
	ActionBlocked        HeatAction = "blocked"
	// ActionMCP: an MCP tool call named the file in its arguments.
	ActionMCP HeatAction = "mcp"
)

// HeatNode is one file of the heat map.
type HeatNode struct {
	Path       string     `json:"path"`
	Heat       float64    `json:"heat"`
	InContext  bool       `json:"inContext"`
	LastAction HeatAction `json:"lastAction"`
	Turn       int        `json:"turn"`
}

// HeatSnapshotParams are the params of agent/heatSnapshot.
type HeatSnapshotParams struct {
	TaskID string `json:"taskId,omitempty"`
}

// HeatSnapshot is the reply to agent/heatSnapshot.
type HeatSnapshot struct {
	Seq   uint64     `json:"seq"`
	Nodes []HeatNode `json:"nodes"`
}

// HeatUpdateParams are the params of agent/heatUpdate.
type HeatUpdateParams struct {
	TaskID  string     `json:"taskId,omitempty"`
	Seq     uint64     `json:"seq"`
	Updates []HeatNode `json:"updates"`
	Removed []string   `json:"removed"`
}

// TraceParams are the params of agent/trace.
type TraceParams struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
}

// TraceRange is a changed line span with the hash of its text.
type TraceRange struct {
	StartLine   int    `json:"startLine"`
	EndLine     int    `json:"endLine"`
	ContentHash string `json:"contentHash"`
}

// TraceEntry is one line of .orchestration/agent_trace.jsonl (docs/PROTOCOL.md §6).
type TraceEntry struct {
	ID        string       `json:"id"`
	Time      string       `json:"time"`
	IntentID  *string      `json:"intentId"`
	SessionID string       `json:"sessionId"`
	TaskID    string       `json:"taskId"`
	SubtaskID string       `json:"subtaskId"`
	Model     string       `json:"model"`
	Path      string       `json:"path"`
	Operation Operation    `json:"operation"`
	Ranges    []TraceRange `json:"ranges"`
	FileHash  string       `json:"fileHash"`
	// Tool is the MCP tool of an "mcp" entry, as the model called it.
	Tool string `json:"tool,omitempty"`
}

// TraceResult is the reply to agent/trace.
type TraceResult struct {
	Entries []TraceEntry `json:"entries"`
}

// ---- notifications (docs/PROTOCOL.md §5) ----

// EventKind is the kind of a TaskEvent: one of the Event* values.
type EventKind = string

// The task event kinds.
const (
	EventPlanned         EventKind = "planned"
	EventSubtaskStarted  EventKind = "subtaskStarted"
	EventSubtaskFinished EventKind = "subtaskFinished"
	EventMessage         EventKind = "message"
	EventMessageDelta    EventKind = "messageDelta"
	EventToolCall        EventKind = "toolCall"
	EventToolResult      EventKind = "toolResult"
	EventAsk             EventKind = "ask"
	EventAnswered        EventKind = "answered"
	EventBlocked         EventKind = "blocked"
	EventUsage           EventKind = "usage"
	EventStateChanged    EventKind = "stateChanged"
	EventSubtaskAdded    EventKind = "subtaskAdded"
	EventSubtaskRemoved  EventKind = "subtaskRemoved"
	EventSubtaskSkipped  EventKind = "subtaskSkipped"
	EventChangeApplied   EventKind = "changeApplied"
	EventChangeRejected  EventKind = "changeRejected"
	// EventChangeHeld: in review mode, a change held until the task ends.
	EventChangeHeld       EventKind = "changeHeld"
	EventCommandStarted   EventKind = "commandStarted"
	EventCommandFinished  EventKind = "commandFinished"
	EventIntentSelected   EventKind = "intentSelected"
	EventSessionContinued EventKind = "sessionContinued"
	// EventTodos: a worker's checklist, whole, as its todo tool set it.
	EventTodos EventKind = "todos"
	// EventThinking: the next piece of a model's thinking, as it streams.
	EventThinking EventKind = "thinking"
	// Of a subtask run on an engine (docs/ENGINES.md): its own plan (the
	// subtask's steps), and the engine's start. Its reasoning is thinking.
	EventSteps         EventKind = "steps"
	EventEngineStarted EventKind = "engineStarted"
	// EventInstructions: the project's instruction files the prompts
	// carry (docs/WORKFORCE.md), when the task reads them and again when
	// they change.
	EventInstructions EventKind = "instructions"
	// EventCompacted: an agent's conversation was compacted to fit the
	// model's context window.
	EventCompacted EventKind = "compacted"
)

// InstructionFile is one of the project's instruction files as a task's
// prompts carry it: its path, the tokens of it they carry (at four
// characters a token), and whether it was cut to fit instructions.maxTokens
// (a file left out whole carries 0 tokens).
type InstructionFile struct {
	Path   string `json:"path"`
	Tokens int    `json:"tokens"`
	Cut    bool   `json:"cut,omitempty"`
}

// TaskEvent is the event of an agent/taskUpdate. Only the fields of its kind
// are set.
type TaskEvent struct {
	Kind      EventKind `json:"kind"`
	SubtaskID string    `json:"subtaskId,omitempty"`
	// CallID ties a toolResult to its toolCall: unique within the task.
	CallID    string          `json:"callId,omitempty"`
	Text      string          `json:"text,omitempty"`
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	OK        *bool           `json:"ok,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	// Output is a toolResult's text as a person may read it, its lines
	// kept (a file's lines, a command's exit status and output): the
	// first ToolOutputLines lines and ToolOutputBytes bytes of what the
	// model got, with a last line saying what was left out; absent when
	// Summary, the same on one line, says it all.
	Output       string   `json:"output,omitempty"`
	Path         string   `json:"path,omitempty"`
	Reason       string   `json:"reason,omitempty"`
	Question     string   `json:"question,omitempty"`
	Options      []string `json:"options,omitempty"`
	Answer       *string  `json:"answer,omitempty"`
	InputTokens  int64    `json:"inputTokens,omitempty"`
	OutputTokens int64    `json:"outputTokens,omitempty"`
	State        string   `json:"state,omitempty"`
	// Applied, Rejected and Counts are set on the stateChanged event that
	// ends a task: the counts of its changes applied and not applied, and
	// of its subtasks by how they ended (as agent/run's result has them).
	Applied  *int           `json:"applied,omitempty"`
	Rejected *int           `json:"rejected,omitempty"`
	Counts   *SubtaskCounts `json:"counts,omitempty"`
	// Todos is the checklist of a todos event.
	Todos []Todo `json:"todos,omitempty"`
	// Cost (US dollars, when known), ContextTokens and ContextWindow are
	// set on a usage event: the task's cost so far, and the context of
	// the agent whose call it reports.
	Cost          *float64 `json:"cost,omitempty"`
	ContextTokens int64    `json:"contextTokens,omitempty"`
	ContextWindow int64    `json:"contextWindow,omitempty"`
	// CacheReadTokens and CacheWriteTokens are set on a usage event: the
	// part of the task's input tokens so far read from the provider's
	// prompt cache, and written to it.
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	// Instructions are the instruction files of an instructions event.
	Instructions []InstructionFile `json:"instructions,omitempty"`
	// TokensBefore and TokensAfter are set on a compacted event: the
	// tokens of the agent's context before and after (estimated).
	TokensBefore int64 `json:"tokensBefore,omitempty"`
	TokensAfter  int64 `json:"tokensAfter,omitempty"`
}

// The bounds of a toolResult's Output.
const (
	ToolOutputLines = 40
	ToolOutputBytes = 4096
)

// TaskUpdateParams are the params of agent/taskUpdate.
type TaskUpdateParams struct {
	TaskID    string    `json:"taskId"`
	SessionID string    `json:"sessionId"`
	Seq       uint64    `json:"seq"`
	State     TaskState `json:"state"`
	Subtasks  []Subtask `json:"subtasks"`
	Event     TaskEvent `json:"event"`
}

var errEmptyDocumentChange = errors.New("documentChange has none of textDocumentEdit, createFile, deleteFile")

type unsupportedKindError struct{ kind string }

func (e *unsupportedKindError) Error() string {
	return fmt.Sprintf("documentChanges: unsupported resource operation kind %q", e.kind)
}
