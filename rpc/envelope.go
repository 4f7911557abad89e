package rpc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// envelope is one JSON-RPC message as it came off the wire: the top-level
// members, each as a sub-slice of the frame body. Nothing is copied and no
// value is decoded beyond what routing needs; params and result reach their
// consumer raw and are decoded once, there.
type envelope struct {
	version bool   // "jsonrpc":"2.0" present
	id      []byte // raw id, nil when absent
	method  []byte // raw method string (with quotes), nil when absent
	params  []byte // raw params, nil when absent
	result  []byte // raw result, nil when absent
	err     []byte // raw error object, nil when absent
}

// errSyntax marks a body that is not JSON (-32700). Other envelope errors are
// invalid requests (-32600).
var errSyntax = errors.New("parse error")

type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid JSON at byte %d: %s", e.off, e.msg) }
func (e *syntaxError) Unwrap() error { return errSyntax }

// parseEnvelope validates b as one JSON value and, when it is an object,
// picks out the members of a JSON-RPC message. The whole body is validated
// (strings, escapes, UTF-8, numbers, nesting) in one pass.
func parseEnvelope(b []byte) (envelope, error) {
	var env envelope
	i := skipSpace(b, 0)
	if i >= len(b) {
		return env, &syntaxError{off: i, msg: "empty message"}
	}
	if b[i] != '{' {
		end, err := skipValue(b, i, 0)
		if err != nil {
			return env, err
		}
		if j := skipSpace(b, end); j != len(b) {
			return env, &syntaxError{off: j, msg: "data after the JSON value"}
		}
		if b[i] == '[' {
			return env, errors.New("batch messages are not supported")
		}
		return env, errors.New("a message must be a JSON object")
	}
	i++
	first := true
	var badVersion error
	for {
		i = skipSpace(b, i)
		if i >= len(b) {
			return env, &syntaxError{off: i, msg: "unterminated object"}
		}
		if b[i] == '}' {
			if !first {
				return env, &syntaxError{off: i, msg: "trailing comma"}
			}
			i++
			break
		}
		if b[i] != '"' {
			return env, &syntaxError{off: i, msg: "expected a member name"}
		}
		kend, err := skipString(b, i)
		if err != nil {
			return env, err
		}
		key := b[i+1 : kend-1]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return env, &syntaxError{off: i, msg: "expected ':'"}
		}
		i = skipSpace(b, i+1)
		vstart := i
		i, err = skipValue(b, i, 1)
		if err != nil {
			return env, err
		}
		val := b[vstart:i]
		switch string(key) { // no allocation: the compiler recognises this form
		case "jsonrpc":
			// Not returned yet: a body that is not JSON at all must be
			// reported as such (-32700) even when this member comes first.
			if string(val) != `"2.0"` && badVersion == nil {
				badVersion = fmt.Errorf(`"jsonrpc" must be "2.0", got %s`, truncate(val))
			}
			env.version = badVersion == nil
		case "id":
			env.id = val
		case "method":
			env.method = val
		case "params":
			env.params = val
		case "result":
			env.result = val
		case "error":
			env.err = val
		}
		i = skipSpace(b, i)
		if i < len(b) && b[i] == ',' {
			i++
			first = false
			i = skipSpace(b, i)
			if i < len(b) && b[i] == '}' {
				return env, &syntaxError{off: i, msg: "trailing comma"}
			}
			continue
		}
		if i < len(b) && b[i] == '}' {
			i++
			break
		}
		return env, &syntaxError{off: i, msg: "expected ',' or '}'"}
	}
	if j := skipSpace(b, i); j != len(b) {
		return env, &syntaxError{off: j, msg: "data after the JSON value"}
	}
	return env, badVersion
}

func truncate(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "…"
	}
	return string(b)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 512

// skipValue validates the JSON value starting at b[i] and returns the index
// just past it.
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, &syntaxError{off: i, msg: "unexpected end of input"}
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{':
		if depth >= maxDepth {
			return i, &syntaxError{off: i, msg: "nested too deeply"}
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != '"' {
				return i, &syntaxError{off: i, msg: "expected a member name"}
			}
			var err error
			if i, err = skipString(b, i); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, &syntaxError{off: i, msg: "expected ':'"}
			}
			if i, err = skipValue(b, skipSpace(b, i+1), depth+1); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == '}' {
				return i + 1, nil
			}
			return i, &syntaxError{off: i, msg: "expected ',' or '}'"}
		}
	case c == '[':
		if depth >= maxDepth {
			return i, &syntaxError{off: i, msg: "nested too deeply"}
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, skipSpace(b, i), depth+1); err != nil {
				return i, err
			}
			i = skipSpace(b, i)
			if i < len(b) && b[i] == ',' {
				i++
				continue
			}
			if i < len(b) && b[i] == ']' {
				return i + 1, nil
			}
			return i, &syntaxError{off: i, msg: "expected ',' or ']'"}
		}
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(b, i)
	}
	return i, &syntaxError{off: i, msg: fmt.Sprintf("unexpected character %q", b[i])}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	return i, &syntaxError{off: i, msg: "invalid literal"}
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > s
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return start, &syntaxError{off: start, msg: "invalid number"}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return start, &syntaxError{off: start, msg: "invalid number"}
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return start, &syntaxError{off: start, msg: "invalid number"}
		}
	}
	return i, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainWord reports whether none of the 8 bytes of w needs a closer look in
// a JSON string: no '"', no '\\', no control character, no non-ASCII byte.
func plainWord(w uint64) bool {
	ctl := (w - lsb*0x20) &^ w    // high bit set for bytes < 0x20 (or >= 0x80)
	quo := w ^ (lsb * '"')        // zero byte where '"'
	bsl := w ^ (lsb * '\\')       // zero byte where '\\'
	zq := (quo - lsb) &^ quo      // high bit where quo byte was 0
	zb := (bsl - lsb) &^ bsl      // high bit where bsl byte was 0
	return (ctl|zq|zb|w)&msb == 0 // w&msb catches non-ASCII
}

// skipString validates the string starting at b[i] (which is '"') and
// returns the index just past its closing quote. Plain ASCII runs are
// checked eight bytes at a time; escapes and UTF-8 are checked exactly.
func skipString(b []byte, i int) (int, error) {
	start := i
	i++
	nonASCII := false
	for {
		for i+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return start, &syntaxError{off: start, msg: "unterminated string"}
		}
		c := b[i]
		switch {
		case c == '"':
			if nonASCII && !utf8.Valid(b[start+1:i]) {
				return start, &syntaxError{off: start, msg: "string is not valid UTF-8"}
			}
			return i + 1, nil
		case c == '\\':
			if i+1 >= len(b) {
				return start, &syntaxError{off: i, msg: "unterminated escape"}
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return start, &syntaxError{off: i, msg: "short \\u escape"}
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return start, &syntaxError{off: i, msg: "invalid \\u escape"}
					}
				}
				i += 6
			default:
				return start, &syntaxError{off: i, msg: fmt.Sprintf("invalid escape \\%c", b[i+1])}
			}
		case c < 0x20:
			return start, &syntaxError{off: i, msg: "control character in string"}
		default:
			if c >= 0x80 {
				nonASCII = true
			}
			i++
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// requestID is an incoming request's id: a string or an integer. The raw
// bytes are echoed in the reply exactly as they came.
type requestID struct {
	raw   string // as on the wire, e.g. `7` or `"abc"`
	isStr bool
	num   int64
	str   string
}

// String is the id as a client would write it: 7 or "abc".
func (id requestID) String() string { return id.raw }

// key is comparable and identifies the id for $/cancelRequest: the number 7
// and the string "7" are different requests.
type idKey struct {
	isStr bool
	num   int64
	str   string
}

func (id requestID) key() idKey { return idKey{isStr: id.isStr, num: id.num, str: id.str} }

// parseID decodes a validated raw id (string or integer number).
func parseID(raw []byte) (requestID, error) {
	id := requestID{raw: string(raw)}
	if len(raw) == 0 {
		return id, errors.New(`"id" is empty`)
	}
	switch raw[0] {
	case '"':
		s, err := unquote(raw)
		if err != nil {
			return id, fmt.Errorf(`"id": %w`, err)
		}
		id.isStr, id.str = true, s
		return id, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(string(raw), 64)
			if ferr != nil || f != float64(int64(f)) || f > 1<<53 || f < -(1<<53) {
				return id, fmt.Errorf(`"id" must be a string or an integer, got %s`, truncate(raw))
			}
			n = int64(f)
		}
		id.num = n
		return id, nil
	}
	return id, fmt.Errorf(`"id" must be a string or an integer, got %s`, truncate(raw))
}

// unquote decodes a validated JSON string.
func unquote(raw []byte) (string, error) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", errors.New("not a string")
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), nil
	}
	var s string
	if err := jsonUnmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\ufffd`...)
				i++
				start = i
				continue
			}
			if r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				dst = append(dst, `\u202`...)
				dst = append(dst, hexDigits[r&0xF])
				i += size
				start = i
				continue
			}
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Member returns the raw value of the top-level member name of the JSON
// object obj, or nil when obj has no such member. obj must be valid JSON, as
// params and results that came through a Stream are (the stream validated
// the whole message): values are skipped, not validated again. A
// malformed obj gives an error or a wrong answer, never a panic. It lets a
// handler pick out one value without decoding (or re-encoding) the rest.
func Member(obj []byte, name string) ([]byte, error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil, nil
	}
	var found []byte
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil, &syntaxError{off: i, msg: "expected a member name"}
		}
		kstart := i
		kend, err := skipTrustedString(obj, i)
		if err != nil {
			return nil, err
		}
		key := obj[i+1 : kend-1]
		i = skipSpace(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return nil, &syntaxError{off: i, msg: "expected ':'"}
		}
		i = skipSpace(obj, i+1)
		vstart := i
		if i, err = skipTrusted(obj, i); err != nil {
			return nil, err
		}
		if string(key) == name || (bytes.IndexByte(key, '\\') >= 0 && unquotedEquals(obj[kstart:kend], name)) {
			found = obj[vstart:i] // the last one wins, as encoding/json has it
		}
		i = skipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i++
			continue
		}
		if i < len(obj) && obj[i] == '}' {
			return found, nil
		}
		return nil, &syntaxError{off: i, msg: "expected ',' or '}'"}
	}
}

// skipTrustedString skips the string at b[i] of input already known to be
// valid JSON: it only looks for the closing quote, a memchr-speed scan.
func skipTrustedString(b []byte, i int) (int, error) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return i, &syntaxError{off: i, msg: "unterminated string"}
		}
		j += k
		// An odd run of backslashes before the quote escapes it.
		bs := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			bs++
		}
		if bs%2 == 0 {
			return j + 1, nil
		}
		j++
	}
}

// skipTrusted skips the value at b[i] of input already known to be valid
// JSON.
func skipTrusted(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, &syntaxError{off: i, msg: "unexpected end of input"}
	}
	switch b[i] {
	case '"':
		return skipTrustedString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, err := skipTrustedString(b, i)
				if err != nil {
					return i, err
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return i, &syntaxError{off: i, msg: "unterminated value"}
	}
	// A number or a literal: up to the next delimiter.
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
		j++
	}
	if j == i {
		return i, &syntaxError{off: i, msg: "expected a value"}
	}
	return j, nil
}

func unquotedEquals(quoted []byte, name string) bool {
	s, err := unquote(quoted)
	return err == nil && s == name
}
