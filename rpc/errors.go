package rpc

import (
	"context"
	"errors"

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
