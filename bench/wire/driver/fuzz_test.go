package main

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"
)

// FuzzScanMessage checks that the driver's scanner never panics on what a
// server sends, and that on valid JSON it finds what encoding/json finds.
func FuzzScanMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","result":{"data":"x"},"id":1}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","method":"window/logMessage","params":{"message":"\"id\":3"}}`,
		`{"id":null,"error":{}}`,
		`{"result":[1,{"a":"\\"}],"id":4}`,
		`{"id":"5"}`,
		`[1]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := scanMessage(b)
		if err != nil || !json.Valid(b) {
			return
		}
		var ref map[string]json.RawMessage
		if json.Unmarshal(b, &ref) != nil {
			t.Fatalf("scanMessage accepted %q, which is not a JSON object", b)
		}
		if _, dup := duplicateKeys(b); dup {
			return // with a repeated key the two may rightly disagree (a refused id before a valid one)
		}
		if r, ok := ref["result"]; ok != (m.result != nil) || ok && !bytes.Equal(bytes.TrimSpace(r), m.result) {
			t.Fatalf("result %q, encoding/json finds %q in %q", m.result, r, b)
		}
		if e, ok := ref["error"]; ok != (m.err != nil) || ok && !bytes.Equal(bytes.TrimSpace(e), m.err) {
			t.Fatalf("error %q, encoding/json finds %q in %q", m.err, e, b)
		}
		if id, ok := ref["id"]; ok && m.hasID {
			var n int64
			if json.Unmarshal(id, &n) != nil || n != m.id {
				t.Fatalf("id %d, encoding/json finds %s in %q", m.id, id, b)
			}
		}
	})
}

// duplicateKeys reports whether the top-level object b repeats a key.
func duplicateKeys(b []byte) (string, bool) {
	seen := map[string]bool{}
	dup := ""
	_ = walkObject(b, func(k, _ []byte) bool {
		if seen[string(k)] {
			dup = string(k)
			return false
		}
		seen[string(k)] = true
		return true
	})
	return dup, dup != ""
}

// FuzzReadFrame checks that framing never panics and never returns a body
// longer than its Content-Length allows.
func FuzzReadFrame(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Type: x\r\ncontent-length: 4\r\n\r\nnull",
		"Content-Length: 99999999999\r\n\r\n",
		"Content-Length: 3\r\n\r\n{}",
		"\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newConn(bytes.NewReader(b), io.Discard)
		total := 0
		for range 100 {
			body, err := c.readFrame()
			if err != nil {
				return
			}
			total += len(body)
			if total > len(b) {
				t.Fatalf("frames hold %d bytes, more than the %d read", total, len(b))
			}
		}
	})
}
