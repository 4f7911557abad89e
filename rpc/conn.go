package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/queue"
	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"
)

var jsonUnmarshal = json.Unmarshal

// Request is an incoming request or notification. Params are raw: the
// handler decodes them once (DecodeParams).
type Request struct {
	// jsonrpc2's Message interface is closed; embedding one of its types is
	// how a message of our own reaches its Conn. Never used otherwise.
	jsonrpc2.Notification

	method string
	params json.RawMessage
	id     requestID
	isCall bool
}

// Method is the method name.
func (r *Request) Method() string { return r.method }

// Params are the raw params (nil when absent).
func (r *Request) Params() json.RawMessage { return r.params }

// IsCall reports whether the request expects a reply.
func (r *Request) IsCall() bool { return r.isCall }

// ID is the request's id as the client wrote it ("" for a notification).
func (r *Request) ID() string { return r.id.raw }

// NewRequest builds a request for tests of handlers.
func NewRequest(method string, params json.RawMessage, id string) *Request {
	r := &Request{method: method, params: params}
	if id != "" {
		r.isCall = true
		r.id = requestID{raw: id, num: 0}
		if parsed, err := parseID([]byte(id)); err == nil {
			r.id = parsed
		}
	}
	return r
}

// Handler serves one connection's incoming messages.
//
// Gate runs on the read loop for every request and notification, in arrival
// order, before anything else happens to it, so state it changes (the
// lifecycle) is seen by the next message. It must not block. A non-nil error
// is sent as the reply to a call; a notification it refuses is dropped.
//
// HandleCall runs on a goroutine of its own for each call; its result (or
// error, turned into a code by AsError) is the reply. HandleNotification runs
// on the connection's one notification goroutine, one at a time, in arrival
// order; one that needs to wait for something must hand the waiting to a
// goroutine it owns.
type Handler interface {
	Gate(req *Request) error
	HandleCall(ctx context.Context, req *Request) (any, error)
	HandleNotification(ctx context.Context, req *Request)
}

// InlineHandler is implemented by a Handler some of whose calls are cheap
// and never wait (agent/ping): Inline reports them, and they run on the read
// loop itself, sparing a goroutine hand-off per request. An inline call must
// not block on anything (no reverse call, no lock a waiting goroutine may
// hold); it cannot be cancelled, since it has finished before the next
// message, a cancel among them, is read.
type InlineHandler interface {
	Inline(req *Request) bool
}

// Conn is one JSON-RPC connection over a Stream, in both directions: it
// serves the peer's requests with a Handler and makes calls to the peer.
//
// Ordering and concurrency (what every package may rely on):
//   - Messages are read one at a time, in order, by one goroutine that never
//     waits on a handler or on a reply: a slow request never delays the
//     reading of the next message, and a handler may make calls to the peer
//     (reverse calls) without deadlock.
//   - Handler.Gate sees every request and notification in arrival order.
//   - Calls run concurrently, each on its own goroutine (or, for the few an
//     InlineHandler marks as cheap, on the read loop); replies leave in the
//     order the calls finish. A call's handler starts once the
//     notifications read before it have been handled (as LSP clients
//     expect: a didChangeConfiguration then a request sees the new
//     settings); an inline call does not wait.
//   - Notifications are handled one at a time, in arrival order, on one
//     goroutine, never concurrently with each other; the cancel
//     notification ($/cancelRequest, or the one CancelNotification names)
//     is handled on the read loop itself, so it is never queued behind them.
//     Settle waits until the notifications read so far have been handled.
//     At most 65536 wait for their handler (package queue): one read past
//     that is dropped and logged, since the read loop never waits. A
//     handler that panics is logged as a bug and the next one is handled.
//   - The cancel notification (numeric or string id) cancels the call's
//     context; the call then answers -32800 whatever its handler returns.
//   - Calls and notifications sent to the peer leave in the order they were
//     made, one write per message, coalesced when several are ready.
//   - Sending never waits on the peer's reading while the backlog (what is
//     written but not yet taken by the peer, Stream) is under its
//     high-water mark of 8 MiB, provided the stream's writer can be written
//     without blocking (a pipe or socket, as agentls serve's stdout is).
//     Past the mark, Call, Notify and the replies of handler goroutines wait
//     for room, each as long as its context and the connection last; the
//     read loop's own replies (inline calls, refusals, malformed input)
//     never wait, so the reading of the next message is never held up by a
//     client that does not read.
//   - Serve returns after the input ended and every handler goroutine it
//     started has returned: nothing is left running but the Stream's own
//     writer, while what was sent is still being written (Stream.Flush
//     waits for it).
type Conn struct {
	stream *Stream
	jc     jsonrpc2.Conn
	log    *zap.Logger

	ctx    context.Context // cancelled when the connection ends
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	inflight map[idKey]*inflightCall
	replying int             // calls whose reply is being written
	idle     []chan struct{} // closed when no call is in flight or replying

	// notes are the notifications waiting for their handler, handled one
	// at a time in arrival order by the queue's goroutine (package queue);
	// handler is Serve's.
	notes   *queue.Queue[*Request]
	handler Handler

	handlers sync.WaitGroup
	served   chan struct{}

	// the notification that cancels a call, and its id member
	cancelMethod, cancelMember string
}

// A ConnOption configures a Conn.
type ConnOption func(*Conn)

// CancelNotification names the notification that cancels a call in flight,
// in both directions: its method, and the member of its params that holds
// the call's id. The default is LSP's $/cancelRequest {"id"}; the Agent
// Client Protocol's is $/cancel_request {"requestId"}.
func CancelNotification(method, idMember string) ConnOption {
	return func(c *Conn) { c.cancelMethod, c.cancelMember = method, idMember }
}

type inflightCall struct {
	cancel    context.CancelCauseFunc
	cancelled bool // by $/cancelRequest
}

// errCancelledByClient is the cause of a context cancelled by $/cancelRequest.
var errCancelledByClient = errors.New("request cancelled by the client")

// NewConn returns a connection over stream. Serve starts it.
func NewConn(stream *Stream, log *zap.Logger, opts ...ConnOption) *Conn {
	if log == nil {
		log = zap.NewNop()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	c := &Conn{
		stream:   stream,
		jc:       jsonrpc2.NewConn(stream),
		log:      log,
		ctx:      ctx,
		cancel:   cancel,
		inflight: make(map[idKey]*inflightCall),
		served:   make(chan struct{}),

		cancelMethod: api.MethodCancelRequest,
		cancelMember: "id",
	}
	for _, o := range opts {
		o(c)
	}
	c.notes = queue.New(c.runNotification, queue.Options{Name: "notifications", Limit: maxQueuedNotes, Log: log})
	return c
}

// maxQueuedNotes bounds the notifications waiting for their handler: a
// notification read past it is dropped (and logged), since the read loop
// never waits on a handler. A peer that far ahead of a handler is flooding
// the connection.
const maxQueuedNotes = queue.DefaultLimit

// Serve reads and serves messages until the input ends or ctx is done, then
// cancels every handler's context, waits for all of them, and returns why
// reading stopped: nil at a clean end of input (or Close), a
// *TruncatedError when the input ended inside a frame.
func (c *Conn) Serve(ctx context.Context, h Handler) error {
	defer close(c.served)
	stop := context.AfterFunc(ctx, func() { c.cancel(context.Cause(ctx)); _ = c.jc.Close() })
	defer stop()
	c.handler = h // before the read loop starts: its notifications use it

	c.jc.Go(c.ctx, func(_ context.Context, _ jsonrpc2.Replier, m jsonrpc2.Request) error {
		req, ok := m.(*Request)
		if !ok {
			return nil // the stream only produces *Request
		}
		c.dispatch(h, req)
		return nil
	})
	<-c.jc.Done()
	err := c.jc.Err()
	c.cancel(ErrClosed)
	// What arrived before the end (exit among them) is still handled.
	c.notes.Close()
	c.handlers.Wait()
	var truncated *TruncatedError
	if errors.As(err, &truncated) {
		return err
	}
	if err == nil || errors.Is(err, ErrClosed) || isEOF(err) {
		return nil
	}
	return err
}

func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, os.ErrClosed) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, context.Canceled)
}

// writeTimeoutForCancel bounds the $/cancelRequest sent for an abandoned call.
const writeTimeoutForCancel = 5 * time.Second

// WaitIdle waits until no call of the peer is in flight (every one has been
// answered) or ctx ends.
func (c *Conn) WaitIdle(ctx context.Context) error {
	c.mu.Lock()
	if len(c.inflight) == 0 && c.replying == 0 {
		c.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	c.idle = append(c.idle, ch)
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Done is closed when the connection has ended and Serve has returned.
func (c *Conn) Done() <-chan struct{} { return c.served }

// DrainTimeout is how long the end of a connection waits, at most, for
// its handlers to return and for what was sent to be written (Drain).
const DrainTimeout = 5 * time.Second

// Drain is the end of a connection that was closed (or whose input
// ended): it waits, within bound, for Serve to return, and then, within
// bound again, for what was sent to be written, so the replies and
// notifications still queued leave before the process does. A handler
// that ignores its context past the bound is logged as a bug; a peer that
// does not read what is left, as a warning (its messages are dropped).
func (c *Conn) Drain(bound time.Duration) {
	select {
	case <-c.served:
	case <-time.After(bound):
		c.log.Error("bug: handlers still running after the connection ended")
	}
	flush, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := c.stream.Flush(flush); errors.Is(err, context.DeadlineExceeded) {
		c.log.Warn("the peer did not read the last messages in time; they are dropped", zap.Duration("waited", bound))
	} // a write error was logged when it happened
}

// Close ends the connection: reading stops and Serve returns.
func (c *Conn) Close() error {
	c.cancel(ErrClosed)
	return c.jc.Close()
}

func (c *Conn) dispatch(h Handler, req *Request) {
	if !req.isCall {
		if req.method == c.cancelMethod {
			c.cancelRequest(req.params)
			return
		}
		if err := h.Gate(req); err != nil {
			c.log.Debug("rpc: notification refused", zap.String("method", req.method), zap.Error(err))
			return
		}
		if !c.notes.Push(req) {
			c.log.Warn("rpc: notification dropped: too many are waiting for their handler", zap.String("method", req.method))
		}
		return
	}
	// Replies written on the read loop never wait for room in the backlog:
	// reading goes on (agent/stop, $/cancelRequest, exit) however slowly
	// the client reads.
	if err := h.Gate(req); err != nil {
		c.reply(req, nil, err, false)
		return
	}
	if ih, ok := h.(InlineHandler); ok && ih.Inline(req) {
		result, err := c.run(c.ctx, h, req)
		c.reply(req, result, err, false)
		return
	}
	key := req.id.key()
	ctx, cancel := context.WithCancelCause(c.ctx)
	call := &inflightCall{cancel: cancel}
	c.mu.Lock()
	if _, dup := c.inflight[key]; dup {
		c.mu.Unlock()
		cancel(nil)
		c.reply(req, nil, api.Errorf(api.CodeInvalidRequest, "invalid request: id %s is already in use by a request in flight", req.id.raw), false)
		return
	}
	c.inflight[key] = call
	c.mu.Unlock()
	mark := c.notes.Mark() // the notifications read before this call
	c.handlers.Go(func() {
		var result any
		err := c.settleTo(ctx, mark)
		if err == nil {
			result, err = c.run(ctx, h, req)
		}
		// The id is free again before the reply leaves: a client may reuse
		// it as soon as it has the reply.
		c.mu.Lock()
		cancelled := call.cancelled
		delete(c.inflight, key)
		c.replying++
		c.mu.Unlock()
		cancel(nil)
		if cancelled {
			result, err = nil, api.Errorf(api.CodeRequestCancelled, "%s: request cancelled by the client", req.method)
		}
		c.reply(req, result, err, true) // fails quietly when the stream is closed
		c.mu.Lock()
		c.replying--
		if len(c.inflight) == 0 && c.replying == 0 {
			for _, ch := range c.idle {
				close(ch)
			}
			c.idle = nil
		}
		c.mu.Unlock()
	})
}

// run calls the handler, turning a panic into an internal error so the
// connection keeps serving.
func (c *Conn) run(ctx context.Context, h Handler, req *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("rpc: bug: handler panicked", zap.String("method", req.method), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
			result, err = nil, api.Errorf(api.CodeInternalError, "internal error in %s: %v", req.method, p)
		}
	}()
	return h.HandleCall(ctx, req)
}

// reply answers req. With wait, it first waits for room in the backlog
// while the connection lasts (a handler's goroutine); the read loop never
// waits.
func (c *Conn) reply(req *Request, result any, err error, wait bool) {
	if wait {
		if werr := c.stream.awaitRoom(c.ctx, nil); werr != nil {
			c.log.Debug("rpc: reply not sent", zap.String("method", req.method), zap.Error(werr))
			return
		}
	}
	id := req.id
	if werr := c.stream.writeReply(&id, result, err); werr != nil {
		c.log.Debug("rpc: reply not sent", zap.String("method", req.method), zap.Error(werr))
	}
}

func (c *Conn) cancelRequest(params json.RawMessage) {
	raw, err := Member(params, c.cancelMember)
	if err != nil || len(raw) == 0 {
		c.log.Warn("rpc: cancel notification without a valid id", zap.String("method", c.cancelMethod), zap.ByteString("params", truncateBytes(params)))
		return
	}
	id, err := parseID(bytes.TrimSpace(raw))
	if err != nil {
		c.log.Warn("rpc: cancel notification with a bad id", zap.String("method", c.cancelMethod), zap.Error(err))
		return
	}
	c.mu.Lock()
	call, ok := c.inflight[id.key()]
	if ok {
		call.cancelled = true
	}
	c.mu.Unlock()
	if ok {
		call.cancel(errCancelledByClient)
	}
	// A cancel for a request that already finished is normal and ignored.
}

// Settle waits until every notification read before it was called has been
// handled, or ctx ends (its cause), or the connection ends. A caller that
// has a reply uses it to know the notifications the peer sent before that
// reply have been handled: they were read before it.
func (c *Conn) Settle(ctx context.Context) error { return c.settleTo(ctx, c.notes.Mark()) }

// settleTo waits until mark notifications have been handled, or ctx ends
// (its cause). When the connection ends, what was queued is still handled
// (Serve drains it), so the wait ends then too.
func (c *Conn) settleTo(ctx context.Context, mark uint64) error {
	return c.notes.Await(ctx, mark)
}

// runNotification hands one notification to the handler; a panic in it is
// recovered by the queue, logged as a bug, and the next one is handled.
func (c *Conn) runNotification(req *Request) {
	c.handler.HandleNotification(c.ctx, req)
}

// Call sends a request to the peer and decodes its result into result
// (which may be nil). When ctx ends first, the cancel notification
// ($/cancelRequest by default) is sent for the call and ctx's cause is
// returned; when the connection ends, ErrClosed. An
// error reply is returned as *api.Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	if err := c.stream.awaitRoom(ctx, c.ctx.Done()); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(c.ctx, func() { cancel(ErrClosed) })
	defer stop()
	id, err := c.jc.Call(callCtx, method, params, result)
	if err == nil {
		return nil
	}
	if callCtx.Err() != nil {
		cause := context.Cause(callCtx)
		if !errors.Is(cause, ErrClosed) {
			// Tell the peer it may stop working on it.
			nctx, ncancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeoutForCancel)
			_ = c.jc.Notify(nctx, c.cancelMethod, map[string]*jsonrpc2.ID{c.cancelMember: &id})
			ncancel()
		}
		return cause
	}
	return err
}

// Notify sends a notification to the peer. Past the high-water mark it
// waits for room first, until ctx ends (its cause) or the connection does
// (ErrClosed).
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", method, ErrClosed)
	}
	if err := c.stream.awaitRoom(ctx, c.ctx.Done()); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return c.jc.Notify(ctx, method, params)
}

// DecodeParams decodes raw params into v. Absent, null or empty-array params
// decode as {}. A type mismatch is an *api.Error with -32602 whose message names the field.
func DecodeParams(raw json.RawMessage, v any) error {
	switch t := bytes.TrimSpace(raw); {
	case len(t) == 0, string(t) == "null":
		raw = []byte("{}")
	case len(t) >= 2 && t[0] == '[' && t[len(t)-1] == ']' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0:
		// An empty array says "no params" as well as an absent member does:
		// Neovim's client.request(method, {}) sends [] for an empty Lua table.
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				return api.Errorf(api.CodeInvalidParams, "invalid params: must be %s, got %s", describeType(te.Type.String()), te.Value)
			}
			return api.Errorf(api.CodeInvalidParams, "invalid params: %q must be %s, got %s", field, describeType(te.Type.String()), te.Value)
		}
		return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	}
	return nil
}

func describeType(t string) string {
	switch t {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int32", "int64", "uint32", "uint64", "float64":
		return "a number"
	}
	if len(t) > 2 && t[:2] == "[]" {
		return "an array"
	}
	if len(t) > 4 && t[:4] == "map[" {
		return "an object"
	}
	return "an object (" + t + ")"
}
