package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// maxFrame bounds the body the driver accepts from a server, so a corrupt
// Content-Length becomes a clear error instead of a huge allocation.
const maxFrame = 64 << 20

// bodyPrefix opens every request body the driver writes; the id follows it.
const bodyPrefix = `{"jsonrpc":"2.0","id":`

// conn is the driver's end of one server's stdio. Its framing is its own and
// cheap on purpose, so that the driver is never the bottleneck: one reused
// bufio.Reader and body buffer for reads, requests encoded once (a call is
// bodyPrefix, the id and a pre-encoded tail), and a bufio.Writer that the
// caller flushes when it wants the bytes on the wire.
//
// Reads and writes may run in two goroutines at once (one each); neither side
// is safe for more than one goroutine.
type conn struct {
	r       *bufio.Reader
	w       *bufio.Writer
	body    []byte
	scratch [64]byte
	nextID  int64
}

func newConn(r io.Reader, w io.Writer) *conn {
	return &conn{
		r:      bufio.NewReaderSize(r, 64<<10),
		w:      bufio.NewWriterSize(w, 64<<10),
		nextID: 1,
	}
}

// call is a pre-encoded request: everything of the body after the id.
type call struct {
	method string
	tail   []byte // `,"method":"…","params":…}`
}

// newCall encodes the method and the params (already JSON, or nil) once.
func newCall(method string, params []byte) call {
	tail := make([]byte, 0, len(method)+len(params)+24)
	tail = append(tail, `,"method":`...)
	tail = strconv.AppendQuote(tail, method)
	if params != nil {
		tail = append(tail, `,"params":`...)
		tail = append(tail, params...)
	}
	tail = append(tail, '}')
	return call{method: method, tail: tail}
}

// notification encodes a whole notification frame body.
func notification(method string, params []byte) []byte {
	b := []byte(`{"jsonrpc":"2.0","method":`)
	b = strconv.AppendQuote(b, method)
	if params != nil {
		b = append(b, `,"params":`...)
		b = append(b, params...)
	}
	return append(b, '}')
}

// newID returns the id of the next call. Only the writing goroutine calls it.
func (c *conn) newID() int64 {
	id := c.nextID
	c.nextID++
	return id
}

// writeCall buffers one request frame with the given id; flush sends it.
func (c *conn) writeCall(id int64, k call) error {
	digits := strconv.AppendInt(c.scratch[:0], id, 10)
	n := len(bodyPrefix) + len(digits) + len(k.tail)
	hdr := strconv.AppendInt(append(c.scratch[len(digits):len(digits)], "Content-Length: "...), int64(n), 10)
	hdr = append(hdr, "\r\n\r\n"...)
	if _, err := c.w.Write(hdr); err != nil {
		return fmt.Errorf("write %s: %w", k.method, err)
	}
	if _, err := c.w.WriteString(bodyPrefix); err != nil {
		return fmt.Errorf("write %s: %w", k.method, err)
	}
	if _, err := c.w.Write(digits); err != nil {
		return fmt.Errorf("write %s: %w", k.method, err)
	}
	if _, err := c.w.Write(k.tail); err != nil {
		return fmt.Errorf("write %s: %w", k.method, err)
	}
	return nil
}

// writeBody buffers one frame with a complete body (a notification).
func (c *conn) writeBody(body []byte) error {
	hdr := strconv.AppendInt(append(c.scratch[:0], "Content-Length: "...), int64(len(body)), 10)
	hdr = append(hdr, "\r\n\r\n"...)
	if _, err := c.w.Write(hdr); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	if _, err := c.w.Write(body); err != nil {
		return fmt.Errorf("write frame: %w", err)
	}
	return nil
}

func (c *conn) flush() error {
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return nil
}

// readFrame returns the body of the next frame. The slice is valid until the
// next call. Headers other than Content-Length (Content-Type) are skipped.
func (c *conn) readFrame() ([]byte, error) {
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			if err == io.EOF && length < 0 && len(line) == 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read header: %w", err)
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			return nil, fmt.Errorf("malformed header line %q", line)
		}
		if !bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")) {
			continue
		}
		n, ok := parseLength(bytes.TrimSpace(value))
		if !ok {
			return nil, fmt.Errorf("bad Content-Length %q", value)
		}
		if n > maxFrame {
			return nil, fmt.Errorf("Content-Length %d exceeds the driver's limit of %d", n, maxFrame)
		}
		length = n
	}
	if length < 0 {
		return nil, fmt.Errorf("frame without Content-Length header")
	}
	if cap(c.body) < length {
		c.body = make([]byte, length)
	}
	c.body = c.body[:length]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return nil, fmt.Errorf("read body of %d bytes: %w", length, err)
	}
	return c.body, nil
}

// parseLength parses a Content-Length value without allocating.
func parseLength(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int(d-'0')
	}
	return n, true
}
