package handlers

import (
	"context"
	"errors"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/rpc"
)

// The process exit codes of docs/PROTOCOL.md §2 that Serve returns
// (agentls serve exits 2 on a bad command line before serving).
const (
	// ExitOK: exit after shutdown, or the end of the input after shutdown.
	ExitOK = 0
	// ExitError: exit without shutdown, the end of the input without
	// shutdown, input that ended inside a frame, or a signal.
	ExitError = 1
	// ExitEditorGone: the editor read nothing agentls wrote for the write
	// timeout; the running tasks were interrupted.
	ExitEditorGone = 3
)

// exitGrace bounds how long exit waits for requests already in flight to be
// answered.
const exitGrace = time.Second

// Serve runs one agentls server on in/out until the client sends exit or the
// input ends, and returns the process exit code of docs/PROTOCOL.md §2
// (ExitOK, ExitError, ExitEditorGone): exit after shutdown is 0, exit
// without shutdown is 1, the end of the input is 1 unless shutdown came
// first and the input ended at a frame boundary, and an editor that read
// nothing for opts.WriteTimeout is 3. What was written is flushed before it
// returns (within the drain bound). Every goroutine it started has ended
// when it returns, unless a handler ignored its context for longer than the
// drain bound (logged as a bug).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	opts.secure() // before the first log line: the wire's logs are redacted too
	log := opts.Log
	stream := rpc.NewStream(in, out, log)
	stream.SetWriteTimeout(opts.WriteTimeout)
	conn := rpc.NewConn(stream, log)
	srv := New(conn, opts)
	if opts.onServer != nil {
		opts.onServer(srv)
	}

	served := make(chan error, 1)
	go func() { served <- conn.Serve(ctx, srv) }()

	var code int
	select {
	case code = <-srv.Exit():
		log.Info("exit", zap.Int("code", code))
		// Requests that arrived before exit still get their answers, within
		// a short grace; then everything is cancelled.
		grace, cancel := context.WithTimeout(ctx, exitGrace)
		if err := conn.WaitIdle(grace); err != nil {
			log.Warn("exit: requests still in flight are cancelled", zap.Error(err))
		}
		cancel()
		_ = conn.Close()
	case err := <-served:
		var truncated *rpc.TruncatedError
		switch {
		case errors.As(err, &truncated):
			log.Error("input ended inside a frame", zap.Error(err), zap.Bool("inHeader", truncated.Header),
				zap.Int64("announced", truncated.Want), zap.Int64("missing", max(truncated.Want-truncated.Got, 0)))
		case err != nil:
			log.Warn("input ended with an error", zap.Error(err))
		default:
			log.Info("input ended")
		}
		code = ExitError
		if err == nil && srv.ShutDown() {
			code = ExitOK
		}
	case <-stream.Stalled():
		log.Error("the editor stopped reading: nothing it was sent could be written for the write timeout; the running tasks are interrupted and agentls exits",
			zap.Duration("writeTimeout", opts.WriteTimeout), zap.Int("code", ExitEditorGone))
		srv.interruptWork()
		_ = conn.Close()
		code = ExitEditorGone
	case <-ctx.Done():
		_ = conn.Close()
		code = ExitError
	}
	srv.close()
	// Replies and notifications still queued leave before the process
	// does; a handler that ignores its context cannot keep it alive.
	conn.Drain(rpc.DrainTimeout)
	return code
}
