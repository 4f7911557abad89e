package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// SessionNotification is the params of session/update.
type SessionNotification struct {
	SessionID string        `json:"sessionId"`
	Update    SessionUpdate `json:"update"`
	Meta      Meta          `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes the update into the Go type of its kind.
func (n *SessionNotification) UnmarshalJSON(b []byte) error {
	var j struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      Meta            `json:"_meta"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	u, err := DecodeUpdate(j.Update)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	*n = SessionNotification{SessionID: j.SessionID, Update: u, Meta: j.Meta}
	return nil
}

// MarshalJSON writes the update with its sessionUpdate kind.
func (n SessionNotification) MarshalJSON() ([]byte, error) {
	if n.Update == nil {
		return nil, errors.New("session/update without an update")
	}
	u, err := EncodeUpdate(n.Update)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		SessionID string          `json:"sessionId"`
		Update    json.RawMessage `json:"update"`
		Meta      Meta            `json:"_meta,omitempty"`
	}{n.SessionID, u, n.Meta})
}

// SessionUpdate is one of the updates of session/update: a value of one of
// the types below (UnknownUpdate for a kind this package does not know).
type SessionUpdate interface {
	// UpdateKind is the update's sessionUpdate member.
	UpdateKind() string
}

// Session update kinds.
const (
	UpdateUserMessageChunk  = "user_message_chunk"
	UpdateAgentMessageChunk = "agent_message_chunk"
	UpdateAgentThoughtChunk = "agent_thought_chunk"
	UpdateToolCall          = "tool_call"
	UpdateToolCallUpdate    = "tool_call_update"
	UpdatePlan              = "plan"
	UpdateAvailableCommands = "available_commands_update"
	UpdateCurrentMode       = "current_mode_update"
	UpdateConfigOption      = "config_option_update"
	UpdateSessionInfo       = "session_info_update"
	UpdateUsage             = "usage_update"
	UpdateNotice            = "notice"
)

// ContentChunk is a piece of a message, streamed.
type ContentChunk struct {
	Content   ContentBlock `json:"content"`
	MessageID string       `json:"messageId,omitempty"`
	Meta      Meta         `json:"_meta,omitempty"`
}

// UserMessageChunk is a piece of the user's message (session/load replays
// them).
type UserMessageChunk ContentChunk

// AgentMessageChunk is a piece of the agent's answer.
type AgentMessageChunk ContentChunk

// AgentThoughtChunk is a piece of the agent's reasoning.
type AgentThoughtChunk ContentChunk

// ToolCall announces a tool call.
type ToolCall struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title"`
	Kind       string             `json:"kind,omitempty"`
	Status     string             `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitempty"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// ToolCallUpdate changes a tool call: only the fields set change, and
// Content and Locations, when set, replace the call's whole lists. It is
// also the toolCall of session/request_permission.
type ToolCallUpdate struct {
	ToolCallID string             `json:"toolCallId"`
	Title      string             `json:"title,omitempty"`
	Kind       string             `json:"kind,omitempty"`
	Status     string             `json:"status,omitempty"`
	Content    []ToolCallContent  `json:"content,omitempty"`
	Locations  []ToolCallLocation `json:"locations,omitempty"`
	RawInput   json.RawMessage    `json:"rawInput,omitempty"`
	RawOutput  json.RawMessage    `json:"rawOutput,omitempty"`
	Meta       Meta               `json:"_meta,omitempty"`
}

// Tool call content types.
const (
	ToolContentContent  = "content"
	ToolContentDiff     = "diff"
	ToolContentTerminal = "terminal"
)

// ToolCallContent is one piece of a tool call's content. Type picks the
// members written:
//
//   - "content": Content, a content block;
//   - "diff": Path (absolute), OldText (nil for a new file), NewText;
//   - "terminal": TerminalID, a terminal of terminal/create shown live.
type ToolCallContent struct {
	Type       string        `json:"type"`
	Content    *ContentBlock `json:"content,omitempty"`
	Path       string        `json:"path,omitempty"`
	OldText    *string       `json:"oldText,omitempty"`
	NewText    string        `json:"newText,omitempty"`
	TerminalID string        `json:"terminalId,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// TextContent is tool call content holding text.
func TextContent(s string) ToolCallContent {
	b := Text(s)
	return ToolCallContent{Type: ToolContentContent, Content: &b}
}

// DiffContent is tool call content showing a file's change; old is nil for
// a file the change creates.
func DiffContent(path string, old *string, new string) ToolCallContent {
	return ToolCallContent{Type: ToolContentDiff, Path: path, OldText: old, NewText: new}
}

// TerminalContent is tool call content showing a terminal.
func TerminalContent(id string) ToolCallContent {
	return ToolCallContent{Type: ToolContentTerminal, TerminalID: id}
}

// MarshalJSON writes the members of the content's type.
func (c ToolCallContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case ToolContentContent:
		var block ContentBlock
		if c.Content != nil {
			block = *c.Content
		}
		return json.Marshal(struct {
			Type    string       `json:"type"`
			Content ContentBlock `json:"content"`
			Meta    Meta         `json:"_meta,omitempty"`
		}{c.Type, block, c.Meta})
	case ToolContentDiff:
		return json.Marshal(struct {
			Type    string  `json:"type"`
			Path    string  `json:"path"`
			OldText *string `json:"oldText,omitempty"`
			NewText string  `json:"newText"`
			Meta    Meta    `json:"_meta,omitempty"`
		}{c.Type, c.Path, c.OldText, c.NewText, c.Meta})
	case ToolContentTerminal:
		return json.Marshal(struct {
			Type       string `json:"type"`
			TerminalID string `json:"terminalId"`
			Meta       Meta   `json:"_meta,omitempty"`
		}{c.Type, c.TerminalID, c.Meta})
	}
	type plain ToolCallContent
	return json.Marshal(plain(c))
}

// ToolCallLocation is a file (and line, from 1) a tool call works on, for
// the client to follow.
type ToolCallLocation struct {
	Path string `json:"path"`
	Line *int   `json:"line,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// Plan is the agent's plan, whole: each update replaces the last.
type Plan struct {
	Entries []PlanEntry `json:"entries"`
	Meta    Meta        `json:"_meta,omitempty"`
}

// MarshalJSON writes entries as [] when there are none.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan
	q := plain(p)
	q.Entries = orEmpty(q.Entries)
	return json.Marshal(q)
}

// PlanEntry is one step of a plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// AvailableCommandsUpdate lists the slash commands a prompt may start with.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
	Meta              Meta               `json:"_meta,omitempty"`
}

// AvailableCommand is one slash command.
type AvailableCommand struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Input       *CommandInput `json:"input,omitempty"`
	Meta        Meta          `json:"_meta,omitempty"`
}

// CommandInput says what a command takes after its name.
type CommandInput struct {
	Hint string `json:"hint"`
	Meta Meta   `json:"_meta,omitempty"`
}

// CurrentModeUpdate says the session's mode changed.
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
	Meta          Meta   `json:"_meta,omitempty"`
}

// ConfigOptionUpdate gives the session's configuration options as they
// are now.
type ConfigOptionUpdate struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// SessionInfoUpdate changes what session/list says of the session.
type SessionInfoUpdate struct {
	Title     string `json:"title,omitempty"`
	UpdatedAt string `json:"updatedAt,omitempty"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// UsageUpdate is the session's use of the model's context window.
type UsageUpdate struct {
	Used int64 `json:"used"`
	Size int64 `json:"size"`
	Cost *Cost `json:"cost,omitempty"`
	Meta Meta  `json:"_meta,omitempty"`
}

// Cost is a session's cumulative cost.
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
	Meta     Meta    `json:"_meta,omitempty"`
}

// Notice tells the person something outside the conversation (a retry, a
// fallback); clients that advertise session.notices show it.
type Notice struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// Notice severities.
const (
	SeverityInfo    = "info"
	SeverityWarning = "warning"
	SeverityError   = "error"
)

// UnknownUpdate is an update of a kind this package does not know, kept
// as it came.
type UnknownUpdate struct {
	Kind string
	Raw  json.RawMessage
}

// UpdateKind implements SessionUpdate.
func (u UserMessageChunk) UpdateKind() string        { return UpdateUserMessageChunk }
func (u AgentMessageChunk) UpdateKind() string       { return UpdateAgentMessageChunk }
func (u AgentThoughtChunk) UpdateKind() string       { return UpdateAgentThoughtChunk }
func (u ToolCall) UpdateKind() string                { return UpdateToolCall }
func (u ToolCallUpdate) UpdateKind() string          { return UpdateToolCallUpdate }
func (u Plan) UpdateKind() string                    { return UpdatePlan }
func (u AvailableCommandsUpdate) UpdateKind() string { return UpdateAvailableCommands }
func (u CurrentModeUpdate) UpdateKind() string       { return UpdateCurrentMode }
func (u ConfigOptionUpdate) UpdateKind() string      { return UpdateConfigOption }
func (u SessionInfoUpdate) UpdateKind() string       { return UpdateSessionInfo }
func (u UsageUpdate) UpdateKind() string             { return UpdateUsage }
func (u Notice) UpdateKind() string                  { return UpdateNotice }
func (u UnknownUpdate) UpdateKind() string           { return u.Kind }

// EncodeUpdate writes an update as ACP has it: its members with
// "sessionUpdate" first.
func EncodeUpdate(u SessionUpdate) (json.RawMessage, error) {
	if v, ok := u.(UnknownUpdate); ok {
		return v.Raw, nil
	}
	body, err := json.Marshal(u)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("%s: not a JSON object", u.UpdateKind())
	}
	kind, err := json.Marshal(u.UpdateKind())
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+len(kind)+20)
	out = append(out, `{"sessionUpdate":`...)
	out = append(out, kind...)
	if rest := bytes.TrimSpace(body[1:]); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// DecodeUpdate reads an update into the Go type of its kind; a kind it
// does not know is an UnknownUpdate.
func DecodeUpdate(raw json.RawMessage) (SessionUpdate, error) {
	var probe struct {
		Kind string `json:"sessionUpdate"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	switch probe.Kind {
	case UpdateUserMessageChunk:
		return decodeAs[UserMessageChunk](raw)
	case UpdateAgentMessageChunk:
		return decodeAs[AgentMessageChunk](raw)
	case UpdateAgentThoughtChunk:
		return decodeAs[AgentThoughtChunk](raw)
	case UpdateToolCall:
		return decodeAs[ToolCall](raw)
	case UpdateToolCallUpdate:
		return decodeAs[ToolCallUpdate](raw)
	case UpdatePlan:
		return decodeAs[Plan](raw)
	case UpdateAvailableCommands:
		return decodeAs[AvailableCommandsUpdate](raw)
	case UpdateCurrentMode:
		return decodeAs[CurrentModeUpdate](raw)
	case UpdateConfigOption:
		return decodeAs[ConfigOptionUpdate](raw)
	case UpdateSessionInfo:
		return decodeAs[SessionInfoUpdate](raw)
	case UpdateUsage:
		return decodeAs[UsageUpdate](raw)
	case UpdateNotice:
		return decodeAs[Notice](raw)
	case "":
		return nil, errors.New(`"sessionUpdate" is missing`)
	}
	return UnknownUpdate{Kind: probe.Kind, Raw: append(json.RawMessage(nil), raw...)}, nil
}

func decodeAs[T SessionUpdate](raw json.RawMessage) (SessionUpdate, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}
