package handlers

import (
	"context"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/rpc"
)

// drainTimeout bounds how long Serve waits for handlers to return after the
// connection ended; a handler that ignores its context cannot keep the
// process alive past it.
const drainTimeout = 5 * time.Second

// exitGrace bounds how long exit waits for requests already in flight to be
// answered.
const exitGrace = time.Second

// Serve runs one agentls server on in/out until the client sends exit or the
// input ends, and returns the process exit code of docs/PROTOCOL.md §2: exit after
// shutdown is 0, exit without shutdown is 1, the end of the input is 1
// unless shutdown came first. Every goroutine it started has ended when it
// returns, unless a handler ignored its context for longer than the drain
// bound (logged as a bug).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	opts.secure() // before the first log line: the wire's logs are redacted too
	log := opts.Log
	stream := rpc.NewStream(in, out, log)
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
		served <- err
		if err != nil {
			log.Warn("input ended with an error", zap.Error(err))
		} else {
			log.Info("input ended")
		}
		code = 1
		if srv.ShutDown() {
			code = 0
		}
	case <-ctx.Done():
		_ = conn.Close()
		code = 1
	}
	srv.close()
	select {
	case <-served:
	case <-time.After(drainTimeout):
		log.Error("bug: handlers still running after the connection ended")
	}
	return code
}

// close cancels what the server runs and flushes its state: every task is
// stopped and its session written before the heat ticker stops.
func (s *Server) close() {
	s.closeSweep()
	s.closeWork()
	s.closeGraph()
	s.closeMCP()
	s.closeTracking()
}
