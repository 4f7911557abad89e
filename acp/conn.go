package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

// NewStream returns the stream of an ACP connection over r and w:
// newline-delimited JSON (rpc.Lines), with every guarantee of rpc.Stream.
func NewStream(r io.Reader, w io.Writer, log *zap.Logger) *rpc.Stream {
	return rpc.NewStream(r, w, log, rpc.Lines())
}

// NewConn returns an ACP connection over stream: rpc.Conn's ordering and
// concurrency, with $/cancel_request {requestId} as the cancel
// notification in both directions. Serve it with ServeAgent or ServeClient.
func NewConn(stream *rpc.Stream, log *zap.Logger) *rpc.Conn {
	return rpc.NewConn(stream, log, rpc.CancelNotification(MethodCancelRequest, "requestId"))
}

// Timeouts bound the calls of AgentConn and ClientConn, each on top of the
// caller's context. A zero field leaves that kind of call bounded by the
// context alone. A call that passes its bound is cancelled on the peer
// ($/cancel_request) and fails with an error wrapping api.ErrTimeout.
type Timeouts struct {
	// Call bounds a call the peer answers by itself: initialize,
	// session/new, fs/*, terminal/create…
	Call time.Duration
	// Human bounds a call a person answers: session/request_permission.
	Human time.Duration
	// Long bounds a call that lasts as long as its work: session/prompt
	// and terminal/wait_for_exit.
	Long time.Duration
	// CancelGrace is how long AgentConn.Prompt waits for the agent's stop
	// reason after it sent session/cancel, before it gives up on the call.
	CancelGrace time.Duration
}

// DefaultTimeouts are 30 s for calls a program answers, no bound but the
// context for a person's answer and for a prompt turn or a command, and 10
// s of grace after session/cancel.
func DefaultTimeouts() Timeouts {
	return Timeouts{Call: 30 * time.Second, CancelGrace: 10 * time.Second}
}

// call makes one call bounded by d (0: by ctx alone).
func call(ctx context.Context, c rpc.Caller, d time.Duration, method string, params, result any) error {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, fmt.Errorf("%s: %w (%s)", method, api.ErrTimeout, d))
		defer cancel()
	}
	err := c.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, api.ErrTimeout) {
			return cause
		}
	}
	return fmt.Errorf("%s: %w", method, err)
}

// callFor makes one call bounded by d and returns its result.
func callFor[R any](ctx context.Context, c rpc.Caller, d time.Duration, method string, params any) (*R, error) {
	var r R
	if err := call(ctx, c, d, method, params, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// notifyTimeout bounds a notification that waits for room because the
// peer is slow to read.
const notifyTimeout = 30 * time.Second

func notify(ctx context.Context, c rpc.Caller, method string, params any) error {
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	if err := c.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}
