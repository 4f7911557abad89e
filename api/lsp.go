package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// The base types of the Language Server Protocol that agentls speaks. They
// are written here, not imported, so that this package depends on nothing
// but the standard library: a package that needs a Range does not pull in a
// JSON-RPC implementation with it.

// Position is a zero-based line and UTF-16 code-unit offset in that line.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a half-open span between two positions.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// ServerInfo names the server in the reply to initialize.
type ServerInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// MessageType is the severity of window/showMessage, window/logMessage and
// window/showMessageRequest.
type MessageType int

// The message types of LSP.
const (
	MessageTypeError   MessageType = 1
	MessageTypeWarning MessageType = 2
	MessageTypeInfo    MessageType = 3
	MessageTypeLog     MessageType = 4
)

// MessageActionItem is one action of window/showMessageRequest.
type MessageActionItem struct {
	Title string `json:"title"`
}

// ShowMessageRequestParams are the params of window/showMessageRequest.
type ShowMessageRequestParams struct {
	Type    MessageType         `json:"type"`
	Message string              `json:"message"`
	Actions []MessageActionItem `json:"actions"`
}

// ShowMessageParams are the params of window/showMessage.
type ShowMessageParams struct {
	Type    MessageType `json:"type"`
	Message string      `json:"message"`
}

// LogMessageParams are the params of window/logMessage.
type LogMessageParams struct {
	Type    MessageType `json:"type"`
	Message string      `json:"message"`
}

// ProgressToken is LSP's ProgressToken: an integer or a string. The zero
// value is the empty string token.
type ProgressToken struct {
	name     string
	number   int32
	isNumber bool
}

// NewProgressToken returns a string token.
func NewProgressToken(s string) *ProgressToken { return &ProgressToken{name: s} }

// NewNumberProgressToken returns an integer token.
func NewNumberProgressToken(n int32) *ProgressToken {
	return &ProgressToken{number: n, isNumber: true}
}

// String returns the token as text: the string itself, or the number in
// decimal. Two tokens are the same token when both their String and
// IsNumber agree.
func (t ProgressToken) String() string {
	if t.isNumber {
		return strconv.FormatInt(int64(t.number), 10)
	}
	return t.name
}

// IsNumber reports whether the token is an integer.
func (t ProgressToken) IsNumber() bool { return t.isNumber }

// MarshalJSON implements json.Marshaler.
func (t ProgressToken) MarshalJSON() ([]byte, error) {
	if t.isNumber {
		return strconv.AppendInt(nil, int64(t.number), 10), nil
	}
	return json.Marshal(t.name)
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *ProgressToken) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*t = ProgressToken{name: s}
		return nil
	}
	var n int32
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("a progress token must be a string or an integer: %w", err)
	}
	*t = ProgressToken{number: n, isNumber: true}
	return nil
}
