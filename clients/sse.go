package clients

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxEventBytes bounds one server-sent event (its data lines together),
// and so one line: a server that never ends an event cannot make the
// reader hold more.
const maxEventBytes = 32 << 20

// errEventTooLarge: an event longer than maxEventBytes.
var errEventTooLarge = fmt.Errorf("an event of the stream is longer than %d bytes", maxEventBytes)

// sseReader reads the events of a text/event-stream body, as the HTML
// standard says: lines end with LF, CRLF or CR (bufio.ScanLines and a CR
// alone both count); a line that begins with ':' is a comment (a
// keep-alive) and is skipped; "event: NAME" names the event; each
// "data: TEXT" line adds TEXT and a newline to its data; a blank line
// dispatches the event, unless it has no data; the "id" and "retry"
// fields, and any other, are ignored. The single space after the colon
// is not part of the value. An event not ended by a blank line when the
// body ends is dropped. Not safe for concurrent use.
type sseReader struct {
	scan  *bufio.Scanner
	event string
	data  []byte
	err   error
}

func newSSEReader(r io.Reader) *sseReader {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 4096), maxEventBytes)
	s.Split(scanSSELines)
	return &sseReader{scan: s}
}

// next reads up to the next event; false at the end of the body or on a
// read error (err says which).
func (s *sseReader) next() bool {
	if s.err != nil {
		return false
	}
	s.event, s.data = "", s.data[:0]
	for s.scan.Scan() {
		line := s.scan.Bytes()
		if len(line) == 0 {
			if len(s.data) > 0 {
				return true
			}
			s.event = ""
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			s.event = string(value)
		case "data":
			if len(s.data)+len(value)+1 > maxEventBytes {
				s.err = errEventTooLarge
				return false
			}
			s.data = append(s.data, value...)
			s.data = append(s.data, '\n')
		}
	}
	s.err = s.scan.Err()
	if errors.Is(s.err, bufio.ErrTooLong) {
		s.err = errEventTooLarge
	}
	return false
}

// name is the current event's name ("" when the server gave none).
func (s *sseReader) name() string { return s.event }

// bytes is the current event's data, its last newline removed; valid
// until the next call of next.
func (s *sseReader) bytes() []byte { return bytes.TrimSuffix(s.data, []byte("\n")) }

// failed is the read error that ended the events, nil at the end of the
// body.
func (s *sseReader) failed() error { return s.err }

// scanSSELines is bufio.ScanLines that also ends a line at a CR alone.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A CR: with the LF that may follow it, once that byte is here.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // wait for the byte after the CR
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
