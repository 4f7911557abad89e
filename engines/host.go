package engines

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentls/agentls/api"
)

// Host is what an engine's session does through agentls: the workforce's
// worker of the subtask implements it. Every path it is given is
// absolute and inside the workspace (an isolated engine's paths in its
// worktree are translated to the workspace's first); a path outside the
// workspace is given as the agent named it, for the host to refuse.
//
// Its methods are called concurrently (the agent may read while it writes)
// but Update is called from one goroutine, in the order the agent sent the
// updates.
type Host interface {
	// ReadTextFile reads a file as the editor has it (unsaved changes
	// included): fs/read_text_file. line (1-based) and limit (lines) cut
	// it when above 0. A missing file reads as "" with exists false.
	ReadTextFile(ctx context.Context, path string, line, limit int) (content string, exists bool, err error)
	// WriteTextFile replaces the whole file, or creates it, through the
	// editing pipeline: fs/write_text_file.
	WriteTextFile(ctx context.Context, path, content string) error
	// RunCommand runs a command for the agent's terminal (terminal/create):
	// approval, then the editor's agent/runCommand or the sidecar's shell.
	RunCommand(ctx context.Context, command, cwd string, timeout time.Duration) (api.RunCommandResult, error)
	// Permission decides a session/request_permission.
	Permission(ctx context.Context, req Permission) (Decision, error)
	// Update is told what the agent reports (session/update).
	Update(u Update)
}

// Permission is what the agent asks leave for: a tool call about to run.
type Permission struct {
	ToolCallID string
	Title      string
	// Kind is ACP's tool kind: read, edit, delete, move, search, execute,
	// think, fetch, switch_mode, other ("" when the agent gave none).
	Kind string
	// Paths are the files it touches (its locations, the paths of its
	// diffs and of its input), absolute.
	Paths []string
	// Command is the command line of an execute tool call, when the agent
	// gave one.
	Command string
	// Input is the tool's raw input.
	Input json.RawMessage
	// CanAlways: the agent offers to remember an allowance.
	CanAlways bool
}

// Decision answers a Permission.
type Decision int

// Decisions.
const (
	Reject Decision = iota
	Allow
	AllowAlways
)

// Update kinds.
const (
	UpdateMessage  = "message"  // a piece of the agent's answer
	UpdateThought  = "thought"  // a piece of its reasoning
	UpdateToolCall = "toolCall" // a tool call began or changed
	UpdatePlan     = "plan"     // its plan, whole
	UpdateUsage    = "usage"    // its context window
)

// Update is one session/update, decoded into what agentls shows.
type Update struct {
	Kind string
	// Text of a message or thought piece.
	Text string
	// ToolCall, merged over the updates of the same id before.
	ToolCall *ToolCall
	// Plan entries.
	Plan []api.PlanStep
	// Used and Size of the context window, in tokens.
	Used, Size int64
}

// ToolCall is the state of one tool call of the agent, every update of
// its id merged in.
type ToolCall struct {
	ID     string
	Title  string
	Kind   string
	Status string // pending, in_progress, completed, failed
	Input  json.RawMessage
	// Paths are the files it touches, absolute, in the order first seen.
	Paths []string
	// Diffs are the file changes its content shows.
	Diffs []Diff
	// Output is the text of its content (its result), when it has ended.
	Output string
}

// Diff is a file change a tool call shows.
type Diff struct {
	Path    string
	OldText *string // nil: a new file
	NewText string
}

// Job is a subtask as an engine runs it.
type Job struct {
	// Prompt is what the agent is asked.
	Prompt string
	// Root is the workspace root (absolute).
	Root string
	// MCPServers are given to the agent's session (the bridge to the
	// editor's tools), by name. They are agentls's own: each of their
	// calls is held to the worker's approvals, so the agent's permission
	// request for one is allowed without asking.
	MCPServers map[string]api.MCPServer
	// Isolate overrides the engine's own isolation (nil: its own).
	Isolate *bool
	// WorkDir is where isolated engines get their worktrees (a directory
	// of the state dir).
	WorkDir string
	// Closed says why a workspace-relative path ("/" separators) is
	// closed to agents ("" : it is not); an isolated engine's worktree
	// leaves such files out (nil: none).
	Closed func(rel string) string
	// Unset are the secret variables the agent must not inherit (but the
	// engine's own keys).
	Unset []string
	// Commands is the commands setting (ask, deny, allow) the agent is
	// held to: Claude Code, Codex and Gemini CLI are started and their
	// sessions opened so that a command asks first (ask) or cannot run
	// (deny), whatever their own settings say (docs/ENGINES.md).
	Commands string
	// CallTimeout bounds each call to the agent but session/prompt (0: 2
	// minutes); the prompt ends with its subtask.
	CallTimeout time.Duration
	// OnStart is told the agent's process id and how long its start
	// (spawn, initialize, session/new) took.
	OnStart func(pid int, took time.Duration)
}

// Outcome is how an engine's prompt ended.
type Outcome struct {
	// StopReason is ACP's: end_turn, max_tokens, max_turn_requests,
	// refusal, cancelled.
	StopReason string
	// Text is the agent's last message.
	Text  string
	Usage api.Usage
	// Changes are an isolated engine's changes, to bring back through the
	// editing pipeline (empty for an engine that wrote through the host).
	Changes []FileChange
	// Version is what the agent said of itself at initialize.
	Version string
	// Refused are the tool calls whose permission was refused, when the
	// agent ended its turn on a refusal (Codex does: it waits to be told
	// what to do instead); nil otherwise.
	Refused []string
}

// FileChange is one file an isolated engine changed in its worktree.
type FileChange struct {
	// Path is absolute, in the workspace.
	Path string
	// Base is the file's content when the engine started (nil: it did
	// not exist); New its content at the end (nil: deleted).
	Base, New *string
}
