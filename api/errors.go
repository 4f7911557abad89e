package api

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Code is a JSON-RPC error code.
type Code int32

// Error codes of docs/PROTOCOL.md §7.
const (
	CodeParseError       Code = -32700
	CodeInvalidRequest   Code = -32600
	CodeMethodNotFound   Code = -32601
	CodeInvalidParams    Code = -32602
	CodeInternalError    Code = -32603
	CodeNotInitialized   Code = -32002
	CodeRequestCancelled Code = -32800
	// CodeRequestFailed (LSP's RequestFailed) answers a reverse call the
	// editor understood but could not carry out, e.g. an approval with no
	// one to ask.
	CodeRequestFailed    Code = -32803
	CodeModelUnavailable Code = -32010
	CodeUnknownTask      Code = -32011
	CodeWrongState       Code = -32012
)

// Error is an error that carries its protocol code. Packages return it (or
// wrap it with %w) where the code matters to the peer; the wire (rpc) sends
// it as the error object of a reply, and turns every other error into one at
// that edge. An error the peer answered with arrives as an *Error too.
type Error struct {
	Code    Code             `json:"code"`
	Message string           `json:"message"`
	Data    *json.RawMessage `json:"data,omitempty"`
}

// Error implements error: the message alone, as the peer reads it.
func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with the given code.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrTimeout is wrapped by the error of a reverse call the editor did not
// answer in time.
var ErrTimeout = errors.New("the editor did not answer in time")

// ErrUnsupported is wrapped by the error of a reverse call the client did not
// advertise. Callers use it to pick the fallback of docs/PROTOCOL.md §4.
var ErrUnsupported = errors.New("not supported by the editor")
