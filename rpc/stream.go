package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentls/agentls/api"
	"go.lsp.dev/jsonrpc2"
	"go.uber.org/zap"
)

// MaxMessageSize bounds one frame's body. A larger frame is skipped (its
// bytes read and dropped, so the stream stays in step) and answered with
// -32600.
const MaxMessageSize = 256 << 20

const (
	readBufferSize = 64 << 10
	// writeHighWater bounds the bytes queued behind the write in progress:
	// past it, a call, notification or reply waits for room (with its
	// context), so a client that stops reading cannot make the sidecar
	// buffer without end.
	writeHighWater = 8 << 20
	// keepBuffer is the largest write buffer kept between flushes; a larger
	// one (after a big message) is let go so idle memory stays small.
	keepBuffer = 256 << 10
)

// Stream is JSON-RPC 2.0 over a byte stream, implementing jsonrpc2.Stream
// so that jsonrpc2's Conn can run on it. Its framing is the LSP base
// protocol's (Content-Length headers) by default, or newline-delimited JSON
// with the Lines option (the Agent Client Protocol's): everything below
// holds for both, but for what is said of headers.
//
// Reading: frames are parsed by hand with a reused buffered reader; each
// body is allocated once and every raw value (params, result, id) is a
// sub-slice of it, so nothing is copied or re-marshalled. A body that is not
// JSON is answered with -32700 and a message that is not a JSON-RPC message
// with -32600, and reading goes on. A header that cannot be parsed is logged
// and the reader resynchronises on the next "Content-Length:" it finds; only
// the end of the input (or a read error) ends the stream. Input that ends
// inside a frame ends it with a *TruncatedError saying what was missing.
//
// Writing: every message is encoded straight into its frame and leaves in a
// single write. Messages leave in the order they were written; Write is safe
// for concurrent use. A frame written when nothing is queued is written by
// its caller; frames that arrive while a write is in progress are queued,
// and the queue (the backlog) is written by a goroutine the Stream owns, in
// one system call per batch, so bursts (64 replies in flight) coalesce.
//
// When w can be written without blocking (a pipe or socket registered with
// Go's poller, as os.Pipe's ends and agentls serve's stdout are), no caller
// ever waits on the peer's reading: the caller's write takes what the pipe
// accepts at once and leaves the rest to the backlog. Over any other writer
// (a terminal, a file, io.Pipe) the caller's own write blocks as long as w
// blocks. Past the high-water mark, Conn makes its calls, notifications and
// replies wait for room with their context before they are written.
//
// With a write timeout (SetWriteTimeout), a write that makes no progress for
// that long fails the stream for good with ErrWriteStalled and closes
// Stalled(); after any write error every later write fails with it.
type Stream struct {
	rc  io.ReadCloser
	in  *bufio.Reader
	log *zap.Logger

	// write side
	w        io.Writer
	raw      syscall.RawConn       // w's, when w can be written without blocking
	deadline func(time.Time) error // w's SetWriteDeadline, with raw
	timeout  time.Duration         // no progress for this long: stalled (0: never)

	wmu     sync.Mutex
	busy    bool          // a write is in progress: a caller's or the drainer's
	queue   []byte        // the backlog: frames waiting behind the write in progress
	spare   []byte        // the buffer last written, reused for the next frame
	backlog atomic.Int64  // len(queue), read without the lock
	werr    error         // sticky: once a write failed, every later one fails
	room    chan struct{} // closed when the backlog shrinks (made by a waiter)
	idle    chan struct{} // closed when nothing is queued or written (made by Flush)
	stalled chan struct{} // closed when the stream failed with ErrWriteStalled

	// the write in progress (only its writer touches these)
	rbuf     []byte
	rn       int
	rerr     error
	rwait    bool               // the raw callback waits for room in the pipe
	rawFn    func(uintptr) bool // s.rawWrite, made once
	watch    *time.Timer        // blocking writers: fires when a write stalls
	watching atomic.Int64       // when the blocking write in progress began (since processStart, +1); 0: none

	// resync bookkeeping (read side only)
	skipped int

	lines bool // newline-delimited JSON instead of Content-Length framing
}

// A StreamOption configures a Stream.
type StreamOption func(*Stream)

// Lines frames each message as one line: the JSON text and a "\n", with no
// header (newline-delimited JSON, the framing of the Agent Client Protocol).
//
// Reading, a line that is not a message is answered as a body that is not
// one would be (-32700, -32600) and reading goes on with the next line;
// blank lines and a "\r" before the "\n" are ignored; a line longer than
// MaxMessageSize is skipped and answered with -32600. At the end of the
// input, a last line without its "\n" is read when it is a whole JSON value;
// otherwise the stream ends with a *TruncatedError. Writing, every message
// leaves on one line: a newline inside the JSON text (which can only be
// white space between its tokens) is written as a space.
func Lines() StreamOption { return func(s *Stream) { s.lines = true } }

// NewStream returns a Stream reading r and writing w. Close closes r when it
// is an io.Closer; w stays open so that replies still in flight when the
// input ends can be sent: its owner closes it.
func NewStream(r io.Reader, w io.Writer, log *zap.Logger, opts ...StreamOption) *Stream {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stream{in: bufio.NewReaderSize(r, readBufferSize), w: w, log: log, stalled: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	s.raw, s.deadline = nonBlocking(w)
	s.rawFn = s.rawWrite
	if rc, ok := r.(io.ReadCloser); ok {
		s.rc = rc
	}
	return s
}

// SetWriteTimeout sets how long a write may make no progress before the
// stream gives up on the peer (ErrWriteStalled, Stalled). 0, the default,
// waits for ever. Call it before the first write.
func (s *Stream) SetWriteTimeout(d time.Duration) {
	s.timeout = max(d, 0)
	if s.raw == nil && s.timeout > 0 && s.watch == nil {
		s.watch = time.AfterFunc(time.Hour, s.checkStall)
		s.watch.Stop()
	}
}

// Stalled is closed when a write made no progress for the write timeout:
// the peer stopped reading, and the stream has failed with ErrWriteStalled.
func (s *Stream) Stalled() <-chan struct{} { return s.stalled }

var _ jsonrpc2.Stream = (*Stream)(nil)

// Close closes the reader: a Read in progress returns, and no message is
// read afterwards. Writing goes on until the writer's owner closes it.
func (s *Stream) Close() error {
	if s.rc != nil {
		return s.rc.Close()
	}
	return nil
}

// Read returns the next message. It answers and skips what is not a message,
// so the only errors it returns end the stream: io.EOF at a frame boundary,
// a *TruncatedError (an io.ErrUnexpectedEOF) inside a frame, or the
// reader's own error.
func (s *Stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		var body []byte
		var n int64
		var err error
		if s.lines {
			body, n, err = s.readLine()
		} else {
			body, n, err = s.readFrame()
		}
		if err != nil {
			return nil, n, err
		}
		if body == nil {
			continue // a frame that was skipped; already answered or logged
		}
		msg, err := s.decode(body)
		if err != nil {
			continue // answered in decode
		}
		return msg, n, nil
	}
}

// readFrame reads one frame. It returns (nil, n, nil) for a frame it had to
// skip.
func (s *Stream) readFrame() ([]byte, int64, error) {
	var total int64
	var length int64 = -1
	headers := 0
	resync := false
	for {
		line, err := s.in.ReadSlice('\n')
		total += int64(len(line))
		if err == bufio.ErrBufferFull {
			// A header line longer than the buffer is not a header: drop it.
			s.noteGarbage(len(line))
			resync, length, headers = true, -1, 0
			continue
		}
		if err != nil {
			if err != io.EOF {
				return nil, total, fmt.Errorf("reading header: %w", err)
			}
			if headers == 0 && !resync && s.skipped == 0 && len(bytes.TrimSpace(line)) == 0 {
				// At a frame boundary (blank lines aside): a clean end.
				return nil, total, io.EOF
			}
			s.flushGarbageNote()
			return nil, total, &TruncatedError{Want: length, Header: true}
		}
		if resync {
			// Look for a Content-Length header anywhere in the line: after a
			// body without a trailing newline, the next frame's header starts
			// mid-line.
			idx := indexFold(line, "content-length:")
			if idx < 0 {
				s.noteGarbage(len(line))
				continue
			}
			s.noteGarbage(idx)
			line = line[idx:]
			resync = false
		}
		if idx := indexFold(line, "content-length:"); idx > 0 {
			// A header that starts mid-line: what precedes it is the tail of
			// something that was not a frame.
			s.noteGarbage(idx)
			line, length, headers = line[idx:], -1, 0
		}
		trimmed := bytes.TrimRight(line, "\r\n")
		if len(trimmed) == 0 {
			if headers == 0 {
				continue // stray blank line between frames
			}
			if length < 0 {
				s.log.Warn("rpc: frame without Content-Length skipped")
				headers = 0
				continue
			}
			break
		}
		headers++
		colon := bytes.IndexByte(trimmed, ':')
		if colon <= 0 {
			s.noteGarbage(len(line))
			resync, length, headers = true, -1, 0
			continue
		}
		name, value := trimmed[:colon], bytes.TrimSpace(trimmed[colon+1:])
		switch {
		case asciiEqualFold(name, "content-length"):
			n, perr := strconv.ParseInt(string(value), 10, 64)
			if perr != nil || n < 0 {
				s.log.Warn("rpc: invalid Content-Length; resynchronising", zap.ByteString("value", truncateBytes(value)))
				resync, length, headers = true, -1, 0
				continue
			}
			length = n
		case asciiEqualFold(name, "content-type"):
			// Accepted and ignored: the body is always UTF-8 JSON.
		default:
			// Unknown headers are ignored, as LSP clients expect.
		}
	}
	s.flushGarbageNote()
	if length > MaxMessageSize {
		// Skip the body to stay in step, then tell the client.
		got, err := s.discard(length)
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, total + got, &TruncatedError{Want: length, Got: got}
			}
			return nil, total + got, fmt.Errorf("skipping a body of %d bytes: %w", length, err)
		}
		s.replyError(nil, api.CodeInvalidRequest, fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", length, MaxMessageSize))
		return nil, total + length, nil
	}
	body, got, err := s.readBody(int(length))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, total + int64(got), &TruncatedError{Want: length, Got: int64(got)}
		}
		return nil, total + int64(got), fmt.Errorf("reading a body of %d bytes: %w", length, err)
	}
	return body, total + length, nil
}

// readLine reads one line of newline-delimited JSON (Lines). It returns
// (nil, n, nil) for a line it had to skip.
func (s *Stream) readLine() ([]byte, int64, error) {
	var long []byte // the line so far, when it is longer than the buffer
	var total int64
	tooBig := false
	for {
		chunk, err := s.in.ReadSlice('\n')
		total += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if !tooBig && len(long)+len(chunk) > MaxMessageSize {
				tooBig, long = true, nil
			}
			if !tooBig {
				long = append(long, chunk...)
			}
			continue
		}
		if err != nil && err != io.EOF {
			return nil, total, fmt.Errorf("reading a line: %w", err)
		}
		if tooBig {
			if err == io.EOF {
				return nil, total, &TruncatedError{Want: -1, Got: total, Line: true}
			}
			s.replyError(nil, api.CodeInvalidRequest, fmt.Sprintf("message of %d bytes exceeds the limit of %d bytes", total, MaxMessageSize))
			return nil, total, nil
		}
		// The body is a copy: chunk is the reader's buffer, and the message
		// keeps sub-slices of its body.
		line := append(long, chunk...)
		line = bytes.TrimRight(line, " \t\r\n")
		if err == io.EOF {
			switch {
			case len(bytes.TrimSpace(line)) == 0:
				return nil, total, io.EOF
			case !json.Valid(line):
				return nil, total, &TruncatedError{Want: -1, Got: int64(len(line)), Line: true}
			}
			// A last message without its newline: read it; the next call
			// meets the end.
			return line, total, nil
		}
		if len(bytes.TrimSpace(line)) == 0 {
			long = nil
			continue // a blank line between messages
		}
		return line, total, nil
	}
}

// eagerBody is the largest body allocated whole before its bytes arrive;
// past it the buffer grows as they do, so a header that announces a huge
// body cannot make the sidecar allocate what the client never sends.
const eagerBody = 4 << 20

// readBody reads a body of n bytes; on error it also returns how many
// arrived.
func (s *Stream) readBody(n int) ([]byte, int, error) {
	size := min(n, eagerBody)
	body := make([]byte, size)
	got := 0
	for {
		m, err := io.ReadFull(s.in, body[len(body)-size:])
		got += m
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, got, err
		}
		if len(body) == n {
			return body, got, nil
		}
		size = min(n-len(body), len(body))
		body = append(body, make([]byte, size)...)
	}
}

// discard skips n bytes; it returns how many it skipped.
func (s *Stream) discard(n int64) (int64, error) {
	var done int64
	for done < n {
		step := min(n-done, 1<<30)
		d, err := s.in.Discard(int(step))
		done += int64(d)
		if err != nil {
			if err == io.EOF {
				return done, io.ErrUnexpectedEOF
			}
			return done, err
		}
	}
	return done, nil
}

func (s *Stream) noteGarbage(n int) { s.skipped += n }

func (s *Stream) flushGarbageNote() {
	if s.skipped > 0 {
		s.log.Warn("rpc: skipped bytes that were not a frame header; resynchronised", zap.Int("bytes", s.skipped))
		s.skipped = 0
	}
}

func truncateBytes(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

func asciiEqualFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

func indexFold(b []byte, lower string) int {
	for i := 0; i+len(lower) <= len(b); i++ {
		if asciiEqualFold(b[i:i+len(lower)], lower) {
			return i
		}
	}
	return -1
}

// decode turns a frame body into a message, answering what is not one.
func (s *Stream) decode(body []byte) (jsonrpc2.Message, error) {
	env, err := parseEnvelope(body)
	if err != nil {
		if errors.Is(err, errSyntax) {
			s.log.Warn("rpc: body is not JSON", zap.Error(err))
			s.replyError(nil, api.CodeParseError, "parse error: "+err.Error())
			return nil, err
		}
		s.invalid(env, err.Error())
		return nil, err
	}
	if !env.version {
		err := errors.New(`"jsonrpc" must be "2.0"`)
		s.invalid(env, err.Error())
		return nil, err
	}
	if env.method != nil {
		if env.method[0] != '"' {
			err := errors.New(`"method" must be a string`)
			s.invalid(env, err.Error())
			return nil, err
		}
		method, err := unquote(env.method)
		if err != nil || method == "" {
			err := errors.New(`"method" must be a non-empty string`)
			s.invalid(env, err.Error())
			return nil, err
		}
		if env.params != nil && env.params[0] != '{' && env.params[0] != '[' && string(env.params) != "null" {
			if env.id != nil {
				if id, idErr := parseID(env.id); idErr == nil {
					s.replyError(&id, api.CodeInvalidParams, `invalid params: "params" must be an object or an array`)
					return nil, errors.New("bad params")
				}
			}
			s.log.Warn("rpc: notification with params that are not an object", zap.String("method", method))
			return nil, errors.New("bad params")
		}
		req := &Request{method: method, params: env.params}
		if env.id != nil && string(env.id) != "null" {
			id, err := parseID(env.id)
			if err != nil {
				s.replyError(nil, api.CodeInvalidRequest, err.Error())
				return nil, err
			}
			req.id = id
			req.isCall = true
		}
		return req, nil
	}
	// A response to one of our calls.
	if env.id == nil || string(env.id) == "null" {
		if env.err != nil {
			s.log.Warn("rpc: the client reported an error without an id", zap.ByteString("error", truncateBytes(env.err)))
			return nil, errors.New("error without id")
		}
		err := errors.New(`a message needs "method" or "id"`)
		s.replyError(nil, api.CodeInvalidRequest, err.Error())
		return nil, err
	}
	id, err := parseID(env.id)
	if err != nil || id.isStr || id.num < 1 || id.num > 1<<31-1 {
		s.log.Warn("rpc: response to an id the sidecar never used", zap.ByteString("id", truncateBytes(env.id)))
		return nil, errors.New("unknown response id")
	}
	var rerr error
	if env.err != nil {
		var we api.Error
		if err := json.Unmarshal(env.err, &we); err != nil {
			we = api.Error{Code: api.CodeInternalError, Message: "malformed error object: " + truncate(env.err)}
		}
		if we.Code == 0 {
			we.Code = api.CodeInternalError
		}
		rerr = &we
	}
	result := env.result
	if result == nil {
		result = nullJSON
	}
	resp, err := jsonrpc2.NewResponse(jsonrpc2.NewNumberID(int32(id.num)), RawJSON(result), rerr)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

var nullJSON = []byte("null")

func (s *Stream) invalid(env envelope, msg string) {
	var idp *requestID
	if env.id != nil {
		if id, err := parseID(env.id); err == nil {
			idp = &id
		}
	}
	s.log.Warn("rpc: invalid message", zap.String("reason", msg))
	s.replyError(idp, api.CodeInvalidRequest, "invalid request: "+msg)
}

// replyError answers id (nil: null) with an error; failures are logged.
func (s *Stream) replyError(id *requestID, code api.Code, msg string) {
	if err := s.writeReply(id, nil, &api.Error{Code: code, Message: msg}); err != nil {
		s.log.Debug("rpc: could not send error reply", zap.Error(err))
	}
}

// RawJSON is a value that is already JSON: it is written as it is, never
// re-marshalled. A handler returns RawJSON to reply with bytes it holds.
type RawJSON []byte

// MarshalJSON implements json.Marshaler.
func (r RawJSON) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return nullJSON, nil
	}
	return r, nil
}

// RawJSONParts is a value that is already JSON, in pieces that are written
// one after the other: a handler can wrap bytes it holds (a request's own
// params) without copying them into a new buffer first.
type RawJSONParts [][]byte

// MarshalJSON implements json.Marshaler.
func (r RawJSONParts) MarshalJSON() ([]byte, error) {
	var b []byte
	for _, p := range r {
		b = append(b, p...)
	}
	if len(b) == 0 {
		return nullJSON, nil
	}
	return b, nil
}

// Write implements jsonrpc2.Stream for the messages jsonrpc2's Conn sends
// (calls and notifications).
func (s *Stream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	switch m := msg.(type) {
	case *jsonrpc2.Call:
		id := m.ID()
		idRaw, err := (&id).MarshalJSON()
		if err != nil {
			return 0, err
		}
		return s.writeRequest(idRaw, m.Method(), m.Params())
	case *jsonrpc2.Notification:
		return s.writeRequest(nil, m.Method(), m.Params())
	case *jsonrpc2.Response:
		// jsonrpc2's Conn only replies through its Replier, which agentls
		// does not use; answer as best we can.
		id := m.ID()
		idRaw, err := (&id).MarshalJSON()
		if err != nil {
			return 0, err
		}
		rid := requestID{raw: string(idRaw)}
		return 0, s.writeReply(&rid, RawJSON(m.Result()), m.Err())
	}
	return 0, fmt.Errorf("rpc: cannot write message of type %T", msg)
}

const (
	headerPrefix = "Content-Length: "
	headerSuffix = "\r\n\r\n"
)

func (s *Stream) writeRequest(idRaw []byte, method string, params []byte) (int64, error) {
	// Worst-case length of the quoted method is bounded; encode it first.
	var mbuf [64]byte
	quoted := appendQuoted(mbuf[:0], method)
	n := len(`{"jsonrpc":"2.0","method":`) + len(quoted) + 1
	if idRaw != nil {
		n += len(`"id":,`) + len(idRaw)
	}
	if len(params) > 0 {
		n += len(`,"params":`) + len(params)
	}
	return s.writeFrame(n, func(b []byte) []byte {
		b = append(b, `{"jsonrpc":"2.0",`...)
		if idRaw != nil {
			b = append(b, `"id":`...)
			b = append(b, idRaw...)
			b = append(b, ',')
		}
		b = append(b, `"method":`...)
		b = append(b, quoted...)
		if len(params) > 0 {
			b = append(b, `,"params":`...)
			b = append(b, params...)
		}
		return append(b, '}')
	})
}

// writeReply sends the response for id (nil: null): result when err is nil,
// else err as a wire error (see AsError).
func (s *Stream) writeReply(id *requestID, result any, err error) error {
	idRaw := "null"
	if id != nil {
		idRaw = id.raw
	}
	var body []byte
	var parts RawJSONParts
	if err != nil {
		we := AsError(err)
		eb, merr := json.Marshal(we)
		if merr != nil {
			return fmt.Errorf("encoding an error reply: %w", merr)
		}
		body = eb
	} else {
		switch r := result.(type) {
		case RawJSON:
			body = r
		case RawJSONParts:
			parts = r
			body = []byte{} // not used
		case nil:
			body = nullJSON
		default:
			rb, merr := json.Marshal(result)
			if merr != nil {
				// The handler produced something that is not JSON: say so
				// rather than send nothing.
				return s.writeReply(id, nil, api.Errorf(api.CodeInternalError, "encoding the result: %v", merr))
			}
			body = rb
		}
		if len(body) == 0 && parts == nil {
			body = nullJSON
		}
	}
	member := `,"result":`
	if err != nil {
		member = `,"error":`
	}
	n := len(`{"jsonrpc":"2.0","id":`) + len(idRaw) + len(member) + len(body) + 1
	for _, p := range parts {
		n += len(p)
	}
	_, werr := s.writeFrame(n, func(b []byte) []byte {
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = append(b, idRaw...)
		b = append(b, member...)
		b = append(b, body...)
		for _, p := range parts {
			b = append(b, p...)
		}
		return append(b, '}')
	})
	return werr
}

// appendFrame appends the frame of a body n bytes long, produced by fill:
// with its header, or (Lines) as one line.
func (s *Stream) appendFrame(b []byte, n int, fill func([]byte) []byte) []byte {
	if s.lines {
		return appendLine(b, n, fill)
	}
	b = slices.Grow(b, len(headerPrefix)+20+len(headerSuffix)+n)
	b = append(b, headerPrefix...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, headerSuffix...)
	return fill(b)
}

// appendLine appends a body n bytes long, produced by fill, as one line. A
// newline in valid JSON text can only be white space between tokens (inside
// a string it is escaped), so it is written as a space.
func appendLine(b []byte, n int, fill func([]byte) []byte) []byte {
	b = slices.Grow(b, n+1)
	start := len(b)
	b = fill(b)
	for i := start; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			break
		}
		b[i+j] = ' '
		i += j + 1
	}
	return append(b, '\n')
}

// writeFrame writes one frame of a body n bytes long, produced by fill. When
// no write is in progress the caller writes it (without waiting on the
// peer, when w allows: what the pipe does not take at once goes to the
// backlog); otherwise it is queued in the backlog, which the drainer writes.
// It returns once the frame has been written or queued.
func (s *Stream) writeFrame(n int, fill func([]byte) []byte) (int64, error) {
	s.wmu.Lock()
	if s.werr != nil {
		err := s.werr
		s.wmu.Unlock()
		return 0, err
	}
	if s.busy {
		start := len(s.queue)
		s.queue = s.appendFrame(s.queue, n, fill)
		size := len(s.queue) - start
		s.backlog.Store(int64(len(s.queue)))
		s.wmu.Unlock()
		return int64(size), nil
	}
	s.busy = true
	buf := s.appendFrame(s.spare[:0], n, fill)
	s.spare = nil
	s.wmu.Unlock()

	written, err := s.writeNow(buf)

	s.wmu.Lock()
	if err != nil || s.werr != nil {
		// This write failed, or the stream did meanwhile (the watchdog):
		// nothing more is written.
		if err != nil {
			s.failLocked(fmt.Errorf("writing to the client: %w", err))
		}
		s.busy = false
		s.wakeIdleLocked()
		err = s.werr
		s.wmu.Unlock()
		return 0, err
	}
	if written < len(buf) {
		// The peer is slow to read: the rest of this frame goes first in
		// the backlog.
		rest := buf[written:]
		if len(s.queue) == 0 && len(rest) > keepBuffer {
			// In place: buf belongs to the queue now. Being too big to be
			// kept as the spare, it is let go once written.
			s.queue, buf = rest, nil
		} else {
			// Copied (a tail kept in place would keep all of buf alive as
			// the next spare), before what was queued meanwhile.
			q := make([]byte, 0, len(rest)+len(s.queue))
			s.queue = append(append(q, rest...), s.queue...)
		}
		s.backlog.Store(int64(len(s.queue)))
	}
	if buf != nil && cap(buf) <= keepBuffer {
		s.spare = buf[:0]
	}
	if len(s.queue) > 0 {
		go s.drain() // busy stays set: the drainer owns the writing now
	} else {
		s.busy = false
		s.wakeIdleLocked()
	}
	s.wmu.Unlock()
	return int64(len(buf)), nil
}

// drain writes the backlog until it is empty or the stream failed. It runs
// on a goroutine of the Stream's, started by the writer that left a
// backlog, and holds busy meanwhile.
func (s *Stream) drain() {
	s.wmu.Lock()
	for len(s.queue) > 0 && s.werr == nil {
		buf := s.queue
		s.queue = s.spare[:0]
		s.spare = nil
		s.backlog.Store(0)
		s.wakeRoomLocked()
		s.wmu.Unlock()
		err := s.writeAll(buf)
		s.wmu.Lock()
		if err != nil {
			s.failLocked(fmt.Errorf("writing to the client: %w", err))
		}
		if cap(buf) <= keepBuffer {
			s.spare = buf[:0]
		}
	}
	s.busy = false
	s.wakeIdleLocked()
	s.wmu.Unlock()
}

// writeNow writes what w takes of buf without waiting for the peer to
// read, when w allows; otherwise all of buf, blocking.
func (s *Stream) writeNow(buf []byte) (int, error) {
	if s.raw == nil {
		return s.writeBlocking(buf)
	}
	s.rbuf, s.rn, s.rerr, s.rwait = buf, 0, nil, false
	err := s.raw.Write(s.rawFn)
	n, rerr := s.rn, s.rerr
	s.rbuf = nil
	if rerr != nil {
		return n, rerr
	}
	return n, err
}

// writeAll writes all of buf, waiting for the peer to read. With a write
// timeout, a wait that sees no byte leave for that long fails with
// ErrWriteStalled.
func (s *Stream) writeAll(buf []byte) error {
	if s.raw == nil {
		n, err := s.writeBlocking(buf)
		if err == nil && n < len(buf) {
			err = io.ErrShortWrite
		}
		return err
	}
	s.rbuf, s.rn, s.rwait = buf, 0, true
	defer func() { s.rbuf = nil }()
	for s.rn < len(buf) {
		if s.timeout > 0 {
			// Every byte that leaves starts the timeout again: a peer that
			// reads slowly is waited for, one that reads nothing is not.
			if err := s.deadline(time.Now().Add(s.timeout)); err != nil {
				return err
			}
		}
		s.rerr = nil
		err := s.raw.Write(s.rawFn)
		if s.rerr != nil {
			return s.rerr
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return s.stallError()
		}
		if err != nil {
			return err
		}
	}
	if s.timeout > 0 {
		// A deadline left behind would fail the next caller's write.
		_ = s.deadline(time.Time{})
	}
	return nil
}

// rawWrite is the callback of w's RawConn.Write: it writes rbuf from rn
// with non-blocking system calls. It reports true when it is done for now:
// all written, an error, or (rwait false) the pipe full; with rwait, a full
// pipe makes it ask to be called again once the pipe has room, unless some
// bytes left in this call (so that the caller can restart the timeout).
func (s *Stream) rawWrite(fd uintptr) bool {
	progressed := false
	for s.rn < len(s.rbuf) {
		n, err := sysWrite(fd, s.rbuf[s.rn:])
		if n > 0 {
			s.rn += n
			progressed = true
		}
		switch {
		case err == nil:
			if n <= 0 {
				s.rerr = io.ErrShortWrite
				return true
			}
		case err == errInterrupted:
		case err == errWouldBlock:
			return progressed || !s.rwait
		default:
			s.rerr = err
			return true
		}
	}
	return true
}

// writeBlocking writes buf to a writer that may block; with a write
// timeout, the watchdog fails the stream when the write lasts that long.
func (s *Stream) writeBlocking(buf []byte) (int, error) {
	if s.watch == nil {
		return s.w.Write(buf)
	}
	s.watching.Store(int64(time.Since(processStart)) + 1)
	s.watch.Reset(s.timeout)
	n, err := s.w.Write(buf)
	s.watching.Store(0)
	return n, err
}

// processStart is the origin of the watchdog's monotonic clock.
var processStart = time.Now()

// checkStall is the watchdog of blocking writers: it fails the stream when
// the write in progress has lasted the whole timeout.
func (s *Stream) checkStall() {
	start := s.watching.Load()
	if start == 0 {
		return // no write in progress; the next one re-arms the watchdog
	}
	if left := s.timeout - (time.Since(processStart) - time.Duration(start-1)); left > 0 {
		s.watch.Reset(left)
		return
	}
	s.wmu.Lock()
	s.failLocked(s.stallError())
	s.wmu.Unlock()
}

func (s *Stream) stallError() error {
	return fmt.Errorf("%w: no byte could be written for %s", ErrWriteStalled, s.timeout)
}

// failLocked makes err the stream's sticky write error and wakes every
// waiter; the backlog is dropped.
func (s *Stream) failLocked(err error) {
	if s.werr != nil {
		return
	}
	s.werr = err
	s.queue = nil
	s.backlog.Store(0)
	if errors.Is(err, ErrWriteStalled) {
		close(s.stalled)
		s.log.Warn("rpc: the client stopped reading", zap.Error(err))
	} else {
		s.log.Warn("rpc: the client can no longer be written to", zap.Error(err))
	}
	s.wakeRoomLocked()
	s.wakeIdleLocked()
}

func (s *Stream) wakeRoomLocked() {
	if s.room != nil {
		close(s.room)
		s.room = nil
	}
}

func (s *Stream) wakeIdleLocked() {
	if s.idle != nil {
		close(s.idle)
		s.idle = nil
	}
}

// awaitRoom waits until the backlog is back under the high-water mark. It
// returns ctx's cause when ctx ends first, ErrClosed when done is closed
// first, and nil at once when there is room or the stream has failed (the
// write that follows reports the failure).
func (s *Stream) awaitRoom(ctx context.Context, done <-chan struct{}) error {
	if s.backlog.Load() <= writeHighWater {
		return nil
	}
	s.wmu.Lock()
	for len(s.queue) > writeHighWater && s.werr == nil {
		if s.room == nil {
			s.room = make(chan struct{})
		}
		ch := s.room
		s.wmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-done:
			return ErrClosed
		}
		s.wmu.Lock()
	}
	s.wmu.Unlock()
	return nil
}

// Flush waits until every frame written so far has left, the stream has
// failed (its error), or ctx ends (its cause).
func (s *Stream) Flush(ctx context.Context) error {
	s.wmu.Lock()
	for s.busy && s.werr == nil {
		if s.idle == nil {
			s.idle = make(chan struct{})
		}
		ch := s.idle
		s.wmu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		s.wmu.Lock()
	}
	err := s.werr
	s.wmu.Unlock()
	return err
}
