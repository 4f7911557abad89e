package rpc

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/jsonrpc2"
)

// Error codes of docs/PROTOCOL.md §7.
const (
	CodeParseError       = jsonrpc2.ParseError           // -32700
	CodeInvalidRequest   = jsonrpc2.InvalidRequest       // -32600
	CodeMethodNotFound   = jsonrpc2.MethodNotFound       // -32601
	CodeInvalidParams    = jsonrpc2.InvalidParams        // -32602
	CodeInternalError    = jsonrpc2.InternalError        // -32603
	CodeNotInitialized   = jsonrpc2.ServerNotInitialized // -32002
	CodeRequestCancelled = jsonrpc2.Code(-32800)
	CodeModelUnavailable = jsonrpc2.Code(-32010)
	CodeUnknownTask      = jsonrpc2.Code(-32011)
	CodeWrongState       = jsonrpc2.Code(-32012)
)

// Code is a JSON-RPC error code.
type Code = jsonrpc2.Code

// Error is a JSON-RPC error with its code. It is the only error type that
// leaves the process: every other error is turned into one at the edge by
// AsError.
type Error = jsonrpc2.Error

// Errorf returns an *Error with the given code.
func Errorf(code jsonrpc2.Code, format string, args ...any) *Error {
	return jsonrpc2.Errorf(code, format, args...)
}

// AsError turns any error into a wire error: an *Error anywhere in the chain
// keeps its code (with the outer message, which carries the context), a
// cancelled context becomes -32800, anything else -32603. The message is never
// empty and the code never 0.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var we *jsonrpc2.Error
	if errors.As(err, &we) {
		code := we.Code
		if code == 0 {
			code = CodeInternalError
		}
		return &Error{Code: code, Message: nonEmpty(err.Error()), Data: we.Data}
	}
	if errors.Is(err, context.Canceled) {
		return Errorf(CodeRequestCancelled, "%s", nonEmpty(err.Error()))
	}
	return Errorf(CodeInternalError, "%s", nonEmpty(err.Error()))
}

func nonEmpty(s string) string {
	if s == "" {
		return "internal error"
	}
	return s
}

// ErrTimeout is wrapped by the error of a reverse call the editor did not
// answer in time.
var ErrTimeout = errors.New("the editor did not answer in time")

// ErrClosed is returned by calls on a connection that has ended.
var ErrClosed = errors.New("connection closed")

// ErrUnsupported is wrapped by the error of a reverse call the client did not
// advertise. Callers use it to pick the fallback of docs/PROTOCOL.md §4.
var ErrUnsupported = errors.New("not supported by the editor")

var errEmptyDocumentChange = errors.New("documentChange has none of textDocumentEdit, createFile, deleteFile")

type unsupportedKindError struct{ kind string }

func (e *unsupportedKindError) Error() string {
	return fmt.Sprintf("documentChanges: unsupported resource operation kind %q", e.kind)
}
