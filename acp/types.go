package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Meta is the _meta object every ACP type may carry: extension data, by
// key, kept as JSON. agentls writes its own under the key "agentls".
type Meta map[string]json.RawMessage

// MetaKey is the key of agentls's own _meta data (docs/ACP.md).
const MetaKey = "agentls"

// MetaOf returns a Meta holding v under key; nil when v cannot be encoded.
func MetaOf(key string, v any) Meta {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return Meta{key: b}
}

// Get decodes the value under key into v and reports whether it was there.
func (m Meta) Get(key string, v any) (bool, error) {
	raw, ok := m[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("_meta.%s: %w", key, err)
	}
	return true, nil
}

// Implementation names a client or an agent.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// ---- initialize ----

// InitializeRequest is the params of initialize.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities,omitzero"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
	Meta               Meta               `json:"_meta,omitempty"`
}

// ClientCapabilities say which of its methods a client serves. A field
// absent is false: the agent does the work itself or goes without.
type ClientCapabilities struct {
	FS       FileSystemCapabilities `json:"fs,omitzero"`
	Terminal bool                   `json:"terminal,omitempty"`
	Auth     *AuthCapabilities      `json:"auth,omitempty"`
	// Session and Elicitation are kept as they came (agentls reads
	// neither's members but session.notices).
	Session     json.RawMessage `json:"session,omitempty"`
	Elicitation json.RawMessage `json:"elicitation,omitempty"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// FileSystemCapabilities are the fs/* methods a client serves.
type FileSystemCapabilities struct {
	ReadTextFile  bool `json:"readTextFile,omitempty"`
	WriteTextFile bool `json:"writeTextFile,omitempty"`
	Meta          Meta `json:"_meta,omitempty"`
}

// AuthCapabilities are the authentication methods a client can run.
type AuthCapabilities struct {
	Terminal bool `json:"terminal,omitempty"`
	Meta     Meta `json:"_meta,omitempty"`
}

// Notices reports whether the client takes "notice" session updates
// (clientCapabilities.session.notices).
func (c ClientCapabilities) Notices() bool {
	if len(c.Session) == 0 {
		return false
	}
	var s struct {
		Notices json.RawMessage `json:"notices"`
	}
	if json.Unmarshal(c.Session, &s) != nil {
		return false
	}
	n := bytes.TrimSpace(s.Notices)
	return len(n) > 0 && !bytes.Equal(n, []byte("null"))
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities,omitzero"`
	AuthMethods       []AuthMethod      `json:"authMethods,omitempty"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	Meta              Meta              `json:"_meta,omitempty"`
}

// AgentCapabilities say what an agent offers beyond the baseline
// (session/new, session/prompt, session/cancel).
type AgentCapabilities struct {
	LoadSession         bool                `json:"loadSession,omitempty"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities,omitzero"`
	MCPCapabilities     MCPCapabilities     `json:"mcpCapabilities,omitzero"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities,omitzero"`
	Meta                Meta                `json:"_meta,omitempty"`
}

// PromptCapabilities are the content blocks a prompt may hold beyond text
// and resource links.
type PromptCapabilities struct {
	Image           bool `json:"image,omitempty"`
	Audio           bool `json:"audio,omitempty"`
	EmbeddedContext bool `json:"embeddedContext,omitempty"`
	Meta            Meta `json:"_meta,omitempty"`
}

// MCPCapabilities are the MCP transports beyond stdio an agent connects to.
type MCPCapabilities struct {
	HTTP bool `json:"http,omitempty"`
	SSE  bool `json:"sse,omitempty"`
	Meta Meta `json:"_meta,omitempty"`
}

// SessionCapabilities are the session methods beyond new, prompt and
// cancel (session/load is AgentCapabilities.LoadSession): a non-nil field
// offers the method.
type SessionCapabilities struct {
	List                  *Capability `json:"list,omitempty"`
	Resume                *Capability `json:"resume,omitempty"`
	Close                 *Capability `json:"close,omitempty"`
	Delete                *Capability `json:"delete,omitempty"`
	AdditionalDirectories *Capability `json:"additionalDirectories,omitempty"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// Capability is a capability that is an object with nothing but _meta.
type Capability struct {
	Meta Meta `json:"_meta,omitempty"`
}

// AuthMethod is one way to authenticate. Type "" is a method the agent
// carries out itself when authenticate names it; "terminal" is one the
// client runs (the agent's binary with Args and Env in a terminal).
type AuthMethod struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        Meta              `json:"_meta,omitempty"`
}

// AuthenticateRequest is the params of authenticate.
type AuthenticateRequest struct {
	MethodID string `json:"methodId"`
	Meta     Meta   `json:"_meta,omitempty"`
}

// AuthenticateResponse is the result of authenticate.
type AuthenticateResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ---- sessions ----

// EnvVariable is one variable of an environment.
type EnvVariable struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// HTTPHeader is one header of an HTTP request.
type HTTPHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// McpServer is one MCP server a session connects to: stdio (Type "",
// Command with Args and Env) or "http" / "sse" (URL with Headers).
type McpServer struct {
	Type    string        `json:"type,omitempty"`
	Name    string        `json:"name"`
	Command string        `json:"command,omitempty"`
	Args    []string      `json:"args,omitempty"`
	Env     []EnvVariable `json:"env,omitempty"`
	URL     string        `json:"url,omitempty"`
	Headers []HTTPHeader  `json:"headers,omitempty"`
	Meta    Meta          `json:"_meta,omitempty"`
}

// MarshalJSON writes the members of the server's transport, the required
// lists as [] when empty.
func (s McpServer) MarshalJSON() ([]byte, error) {
	if s.Type == "" {
		return json.Marshal(struct {
			Name    string        `json:"name"`
			Command string        `json:"command"`
			Args    []string      `json:"args"`
			Env     []EnvVariable `json:"env"`
			Meta    Meta          `json:"_meta,omitempty"`
		}{s.Name, s.Command, orEmpty(s.Args), orEmpty(s.Env), s.Meta})
	}
	return json.Marshal(struct {
		Type    string       `json:"type"`
		Name    string       `json:"name"`
		URL     string       `json:"url"`
		Headers []HTTPHeader `json:"headers"`
		Meta    Meta         `json:"_meta,omitempty"`
	}{s.Type, s.Name, s.URL, orEmpty(s.Headers), s.Meta})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// NewSessionRequest is the params of session/new.
type NewSessionRequest struct {
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer `json:"mcpServers"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON writes mcpServers as [] when there are none: it is required.
func (r NewSessionRequest) MarshalJSON() ([]byte, error) {
	type plain NewSessionRequest
	p := plain(r)
	p.McpServers = orEmpty(p.McpServers)
	return json.Marshal(p)
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     string                `json:"sessionId"`
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	// Models is the older, unstable model selection (session/set_model),
	// which clients that predate configOptions read (CodeCompanion).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   Meta               `json:"_meta,omitempty"`
}

// LoadSessionRequest is the params of session/load.
type LoadSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer `json:"mcpServers"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// MarshalJSON writes mcpServers as [] when there are none: it is required.
func (r LoadSessionRequest) MarshalJSON() ([]byte, error) {
	type plain LoadSessionRequest
	p := plain(r)
	p.McpServers = orEmpty(p.McpServers)
	return json.Marshal(p)
}

// LoadSessionResponse is the result of session/load, sent after the
// session's history was replayed as session/update notifications.
type LoadSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	// Models is the older, unstable model selection (session/set_model),
	// which clients that predate configOptions read (CodeCompanion).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   Meta               `json:"_meta,omitempty"`
}

// ResumeSessionRequest is the params of session/resume: load without the
// replay.
type ResumeSessionRequest struct {
	SessionID             string      `json:"sessionId"`
	Cwd                   string      `json:"cwd"`
	AdditionalDirectories []string    `json:"additionalDirectories,omitempty"`
	McpServers            []McpServer `json:"mcpServers,omitempty"`
	Meta                  Meta        `json:"_meta,omitempty"`
}

// ResumeSessionResponse is the result of session/resume.
type ResumeSessionResponse struct {
	Modes         *SessionModeState     `json:"modes,omitempty"`
	ConfigOptions []SessionConfigOption `json:"configOptions,omitempty"`
	// Models is the older, unstable model selection (session/set_model),
	// which clients that predate configOptions read (CodeCompanion).
	Models *SessionModelState `json:"models,omitempty"`
	Meta   Meta               `json:"_meta,omitempty"`
}

// ListSessionsRequest is the params of session/list.
type ListSessionsRequest struct {
	Cwd    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// ListSessionsResponse is the result of session/list.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor string        `json:"nextCursor,omitempty"`
	Meta       Meta          `json:"_meta,omitempty"`
}

// SessionInfo is one session of session/list.
type SessionInfo struct {
	SessionID             string   `json:"sessionId"`
	Cwd                   string   `json:"cwd"`
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	Title                 string   `json:"title,omitempty"`
	UpdatedAt             string   `json:"updatedAt,omitempty"`
	Meta                  Meta     `json:"_meta,omitempty"`
}

// CloseSessionRequest is the params of session/close.
type CloseSessionRequest struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// CloseSessionResponse is the result of session/close.
type CloseSessionResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ---- modes and configuration options ----

// SessionModeState is the modes of a session and the one in force.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
	Meta           Meta          `json:"_meta,omitempty"`
}

// SessionMode is one mode a session can be in.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SetSessionModeRequest is the params of session/set_mode.
type SetSessionModeRequest struct {
	SessionID string `json:"sessionId"`
	ModeID    string `json:"modeId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionModeResponse is the result of session/set_mode.
type SetSessionModeResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// SessionModelState is a session's models in the unstable model selection
// that came before configOptions: the one in use and those
// session/set_model may pick.
type SessionModelState struct {
	CurrentModelID  string      `json:"currentModelId"`
	AvailableModels []ModelInfo `json:"availableModels"`
	Meta            Meta        `json:"_meta,omitempty"`
}

// ModelInfo is one model of a SessionModelState.
type ModelInfo struct {
	ModelID     string `json:"modelId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SetSessionModelRequest is the params of session/set_model (unstable).
type SetSessionModelRequest struct {
	SessionID string `json:"sessionId"`
	ModelID   string `json:"modelId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionModelResponse is the result of session/set_model.
type SetSessionModelResponse struct {
	Meta Meta `json:"_meta,omitempty"`
}

// Config option types and the categories ACP names.
const (
	ConfigSelect  = "select"
	ConfigBoolean = "boolean"

	CategoryMode         = "mode"
	CategoryModel        = "model"
	CategoryThoughtLevel = "thought_level"
)

// SessionConfigOption is one option of a session's configuration: a
// select (CurrentValue a string, one of Options or of the Groups' options)
// or a boolean (CurrentValue a bool).
type SessionConfigOption struct {
	ID           string                `json:"id"`
	Name         string                `json:"name"`
	Description  string                `json:"description,omitempty"`
	Category     string                `json:"category,omitempty"`
	Type         string                `json:"type"`
	CurrentValue any                   `json:"currentValue"`
	Options      []SessionConfigSelect `json:"-"`
	Groups       []SessionConfigGroup  `json:"-"`
	Meta         Meta                  `json:"_meta,omitempty"`
}

// SessionConfigSelect is one value of a select option.
type SessionConfigSelect struct {
	Value       string `json:"value"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Meta        Meta   `json:"_meta,omitempty"`
}

// SessionConfigGroup is a named group of a select option's values.
type SessionConfigGroup struct {
	Group   string                `json:"group"`
	Name    string                `json:"name"`
	Options []SessionConfigSelect `json:"options"`
	Meta    Meta                  `json:"_meta,omitempty"`
}

type configOptionJSON struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	Category     string          `json:"category,omitempty"`
	Type         string          `json:"type"`
	CurrentValue any             `json:"currentValue"`
	Options      json.RawMessage `json:"options,omitempty"`
	Meta         Meta            `json:"_meta,omitempty"`
}

// MarshalJSON writes a select's options flat, or grouped when Groups is set.
func (o SessionConfigOption) MarshalJSON() ([]byte, error) {
	j := configOptionJSON{ID: o.ID, Name: o.Name, Description: o.Description, Category: o.Category,
		Type: o.Type, CurrentValue: o.CurrentValue, Meta: o.Meta}
	if o.Type == ConfigSelect {
		var err error
		if o.Groups != nil {
			j.Options, err = json.Marshal(o.Groups)
		} else {
			j.Options, err = json.Marshal(orEmpty(o.Options))
		}
		if err != nil {
			return nil, err
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads flat or grouped options.
func (o *SessionConfigOption) UnmarshalJSON(b []byte) error {
	var j configOptionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = SessionConfigOption{ID: j.ID, Name: j.Name, Description: j.Description, Category: j.Category,
		Type: j.Type, CurrentValue: j.CurrentValue, Meta: j.Meta}
	if len(j.Options) == 0 {
		return nil
	}
	var probe []map[string]json.RawMessage
	if err := json.Unmarshal(j.Options, &probe); err != nil {
		return fmt.Errorf("options: %w", err)
	}
	if len(probe) > 0 {
		if _, grouped := probe[0]["group"]; grouped {
			return json.Unmarshal(j.Options, &o.Groups)
		}
	}
	return json.Unmarshal(j.Options, &o.Options)
}

// SetSessionConfigOptionRequest is the params of session/set_config_option:
// Value is a string (a select's value) or, with Type "boolean", a bool.
type SetSessionConfigOptionRequest struct {
	SessionID string `json:"sessionId"`
	ConfigID  string `json:"configId"`
	Type      string `json:"type,omitempty"`
	Value     any    `json:"value"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// SetSessionConfigOptionResponse is the result of
// session/set_config_option: every option, as it is now.
type SetSessionConfigOptionResponse struct {
	ConfigOptions []SessionConfigOption `json:"configOptions"`
	Meta          Meta                  `json:"_meta,omitempty"`
}

// ---- prompt turns ----

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	Meta      Meta           `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt, sent when the turn ends.
type PromptResponse struct {
	StopReason string `json:"stopReason"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// CancelNotification is the params of session/cancel.
type CancelNotification struct {
	SessionID string `json:"sessionId"`
	Meta      Meta   `json:"_meta,omitempty"`
}

// CancelRequestNotification is the params of $/cancel_request.
type CancelRequestNotification struct {
	RequestID json.RawMessage `json:"requestId"`
	Meta      Meta            `json:"_meta,omitempty"`
}
