package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

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
	// writeHighWater bounds the bytes queued behind a write in progress; a
	// writer past it waits, so a client that stops reading cannot make the
	// sidecar buffer without end.
	writeHighWater = 8 << 20
	// keepBuffer is the largest write buffer kept between flushes; a larger
	// one (after a big message) is let go so idle memory stays small.
	keepBuffer = 256 << 10
)

// Stream is the LSP base protocol (Content-Length framing) over a byte
// stream, implementing jsonrpc2.Stream so that jsonrpc2's Conn can run on it.
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
// single write. Writers that arrive while a write is in progress append to a
// queue that the writer in progress flushes in the same system call after
// its own, so bursts (64 replies in flight) coalesce. Write is safe for
// concurrent use; messages leave in the order Write was called.
type Stream struct {
	rc  io.ReadCloser
	in  *bufio.Reader
	log *zap.Logger

	// write side
	w        io.Writer
	wmu      sync.Mutex
	wcond    *sync.Cond // signalled when a flush ends
	queue    []byte     // frames waiting to be written
	spare    []byte     // the buffer last written, reused for the next queue
	flushing bool
	werr     error // sticky: once a write failed, every later one fails

	// resync bookkeeping (read side only)
	skipped int
}

// NewStream returns a Stream reading r and writing w. Close closes r when it
// is an io.Closer; w stays open so that replies still in flight when the
// input ends can be sent: its owner closes it.
func NewStream(r io.Reader, w io.Writer, log *zap.Logger) *Stream {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stream{in: bufio.NewReaderSize(r, readBufferSize), w: w, log: log}
	s.wcond = sync.NewCond(&s.wmu)
	if rc, ok := r.(io.ReadCloser); ok {
		s.rc = rc
	}
	return s
}

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
		body, n, err := s.readFrame()
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

// writeFrame queues one frame of a body n bytes long, produced by fill, and
// flushes the queue unless another writer is already doing so (in which case
// that writer sends this frame in its next write).
func (s *Stream) writeFrame(n int, fill func([]byte) []byte) (int64, error) {
	s.wmu.Lock()
	for s.werr == nil && s.flushing && len(s.queue) > writeHighWater {
		s.wcond.Wait()
	}
	if s.werr != nil {
		err := s.werr
		s.wmu.Unlock()
		return 0, err
	}
	start := len(s.queue)
	s.queue = slices.Grow(s.queue, len(headerPrefix)+20+len(headerSuffix)+n)
	s.queue = append(s.queue, headerPrefix...)
	s.queue = strconv.AppendInt(s.queue, int64(n), 10)
	s.queue = append(s.queue, headerSuffix...)
	s.queue = fill(s.queue)
	written := int64(len(s.queue) - start)
	if s.flushing {
		s.wmu.Unlock()
		return written, nil
	}
	s.flushing = true
	for len(s.queue) > 0 && s.werr == nil {
		buf := s.queue
		s.queue = s.spare[:0]
		s.spare = nil
		s.wmu.Unlock()
		_, err := s.w.Write(buf)
		s.wmu.Lock()
		if err != nil {
			s.werr = fmt.Errorf("writing to the client: %w", err)
		}
		if cap(buf) <= keepBuffer {
			s.spare = buf[:0]
		}
		s.wcond.Broadcast()
	}
	s.flushing = false
	err := s.werr
	s.wcond.Broadcast()
	s.wmu.Unlock()
	return written, err
}
