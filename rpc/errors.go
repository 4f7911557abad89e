package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentls/agentls/api"
)

// AsError turns any error into a wire error: an *api.Error anywhere in the
// chain keeps its code (with the outer message, which carries the context), a
// cancelled context becomes -32800, anything else -32603. The message is never
// empty and the code never 0.
func AsError(err error) *api.Error {
	if err == nil {
		return nil
	}
	var we *api.Error
	if errors.As(err, &we) {
		code := we.Code
		if code == 0 {
			code = api.CodeInternalError
		}
		return &api.Error{Code: code, Message: nonEmpty(err.Error()), Data: we.Data}
	}
	if errors.Is(err, context.Canceled) {
		return api.Errorf(api.CodeRequestCancelled, "%s", nonEmpty(err.Error()))
	}
	return api.Errorf(api.CodeInternalError, "%s", nonEmpty(err.Error()))
}

func nonEmpty(s string) string {
	if s == "" {
		return "internal error"
	}
	return s
}

// ErrClosed is returned by calls on a connection that has ended.
var ErrClosed = errors.New("connection closed")

// ErrWriteStalled is the stream's error once a write made no progress for
// the write timeout: the peer stopped reading (Stream.SetWriteTimeout).
var ErrWriteStalled = errors.New("the client stopped reading")

// TruncatedError ends a stream whose input ended inside a frame: a header
// without its end, or a body shorter than its Content-Length; with Lines
// framing, a last line without its newline that is not a whole JSON value.
type TruncatedError struct {
	// Want is the body length the frame announced; -1 when the input ended
	// before a Content-Length was read.
	Want int64
	// Got is how many body bytes arrived.
	Got int64
	// Header is true when the input ended inside the header.
	Header bool
	// Line is true for newline-delimited JSON (Lines): Got bytes arrived
	// after the last newline.
	Line bool
}

func (e *TruncatedError) Error() string {
	switch {
	case e.Line:
		return fmt.Sprintf("the input ended inside a message: %d bytes without their closing newline, and not a whole JSON value", e.Got)
	case e.Header && e.Want < 0:
		return "the input ended inside a frame header"
	case e.Header:
		return fmt.Sprintf("the input ended inside the header of a frame announcing %d bytes: all %d body bytes missing", e.Want, e.Want)
	}
	return fmt.Sprintf("the input ended inside a frame: %d of the %d body bytes announced are missing", e.Want-e.Got, e.Want)
}

// Unwrap makes a TruncatedError an io.ErrUnexpectedEOF.
func (e *TruncatedError) Unwrap() error { return io.ErrUnexpectedEOF }
