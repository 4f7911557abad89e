package main

import (
	"bytes"
	"errors"
	"fmt"
)

// message is what the driver needs of a frame from a server, found by a
// one-pass scan of the top-level object: no reflection, no copy, and a long
// string value is skipped with bytes.IndexByte. The slices alias the frame.
type message struct {
	id     int64
	hasID  bool
	method []byte // set for a request or notification from the server
	result []byte // the raw result value, nil when absent
	err    []byte // the raw error value, nil when absent
}

var errSyntax = errors.New("malformed JSON")

// scanMessage scans one JSON-RPC message. Numeric ids are parsed; a string id
// is an error, because the driver only sends numeric ids.
func scanMessage(b []byte) (message, error) {
	var m message
	var idErr error
	err := walkObject(b, func(key, value []byte) bool {
		switch string(key) {
		case "id":
			if len(value) > 0 && value[0] != 'n' { // null: the reply to an unreadable request
				id, ok := parseID(value)
				if !ok {
					idErr = fmt.Errorf("id %.40s is not an id the driver sent", value)
					return false
				}
				m.id, m.hasID = id, true
			}
		case "method":
			m.method = value
		case "result":
			m.result = value
		case "error":
			m.err = value
		}
		return true
	})
	if err != nil {
		return m, err
	}
	return m, idErr
}

// field returns the raw value of key in the JSON object obj, or nil.
func field(obj []byte, key string) ([]byte, error) {
	var found []byte
	err := walkObject(obj, func(k, value []byte) bool {
		if string(k) == key {
			found = value
			return false
		}
		return true
	})
	return found, err
}

// walkObject calls fn with each key (raw, without quotes) and raw value of
// the JSON object b, in order, until fn returns false.
func walkObject(b []byte, fn func(key, value []byte) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("%w: not an object: %.40q", errSyntax, b)
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("%w: expected a key at offset %d", errSyntax, i)
		}
		end, err := skipString(b, i)
		if err != nil {
			return err
		}
		key := b[i+1 : end-1]
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("%w: expected ':' at offset %d", errSyntax, i)
		}
		start := skipSpace(b, i+1)
		end, err = skipValue(b, start)
		if err != nil {
			return err
		}
		if !fn(key, b[start:end]) {
			return nil
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return fmt.Errorf("%w: unterminated object", errSyntax)
		}
		if b[i] == '}' {
			return nil
		}
		if b[i] != ',' {
			return fmt.Errorf("%w: expected ',' or '}' at offset %d", errSyntax, i)
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the offset just past the string that starts at b[i].
func skipString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, fmt.Errorf("%w: unterminated string at offset %d", errSyntax, i)
		}
		q := j + k
		backslashes := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1, nil
		}
		j = q + 1
	}
}

// skipValue returns the offset just past the JSON value that starts at b[i].
// It checks the structure (strings closed, brackets balanced), not the
// spelling of numbers and literals.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, fmt.Errorf("%w: missing value", errSyntax)
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var stack [64]byte
		depth := 0
		for j := i; j < len(b); j++ {
			switch c := b[j]; c {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				if depth == len(stack) {
					return 0, fmt.Errorf("%w: nested deeper than %d", errSyntax, len(stack))
				}
				stack[depth] = c
				depth++
			case '}', ']':
				if depth == 0 || (c == '}') != (stack[depth-1] == '{') {
					return 0, fmt.Errorf("%w: unbalanced %q at offset %d", errSyntax, c, j)
				}
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unterminated container at offset %d", errSyntax, i)
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				if j == i {
					return 0, fmt.Errorf("%w: unexpected %q at offset %d", errSyntax, b[j], j)
				}
				return j, nil
			}
			j++
		}
		if j == i {
			return 0, fmt.Errorf("%w: missing value", errSyntax)
		}
		return j, nil
	}
}

// parseID parses a non-negative integer id.
func parseID(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + int64(d-'0')
	}
	return n, true
}
