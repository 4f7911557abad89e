package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"go.lsp.dev/jsonrpc2"
)

// readAll feeds input to a Stream and returns the messages it produced and
// the frames it wrote back (its error replies).
func readAll(t testing.TB, input string) (msgs []jsonrpc2.Message, replies []string, err error) {
	t.Helper()
	var out bytes.Buffer
	s := NewStream(strings.NewReader(input), &out, nil)
	for {
		m, _, rerr := s.Read(context.Background())
		if rerr != nil {
			err = rerr
			break
		}
		msgs = append(msgs, m)
	}
	r := bufio.NewReader(&out)
	for {
		if _, perr := r.Peek(1); perr != nil {
			break
		}
		replies = append(replies, readFrame(t, r))
	}
	return msgs, replies, err
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

const pingBody = `{"jsonrpc":"2.0","id":1,"method":"agent/ping","params":{"data":1}}`

func TestStreamRead(t *testing.T) {
	cases := []struct {
		name    string
		input   string
		methods []string // methods of the messages read, in order
		replies []string // substrings of the error replies, in order
	}{
		{"reads a plain frame", frame(pingBody), []string{"agent/ping"}, nil},
		{"accepts a Content-Type header and any header case",
			"content-length: " + fmt.Sprint(len(pingBody)) + "\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n" + pingBody,
			[]string{"agent/ping"}, nil},
		{"answers a body that is not JSON with -32700 and goes on",
			frame(`{"jsonrpc":"2.0","id":1,`) + frame(pingBody),
			[]string{"agent/ping"}, []string{`"id":null,"error":{"code":-32700`}},
		{"answers a message without jsonrpc 2.0 with -32600 and its id",
			frame(`{"id":5,"method":"x"}`) + frame(pingBody),
			[]string{"agent/ping"}, []string{`"id":5,"error":{"code":-32600`}},
		{"answers a batch with -32600", frame(`[` + pingBody + `]`), nil, []string{`-32600`}},
		{"answers a non-object with -32600", frame(`42`), nil, []string{`-32600`}},
		{"answers an id that is neither string nor integer with -32600",
			frame(`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`), nil, []string{`"id":null,"error":{"code":-32600`}},
		{"answers params that are a scalar with -32602",
			frame(`{"jsonrpc":"2.0","id":3,"method":"x","params":7}`), nil, []string{`"id":3,"error":{"code":-32602`}},
		{"resynchronises after a garbage line",
			"hello there\r\n" + frame(pingBody), []string{"agent/ping"}, nil},
		{"resynchronises after a body shorter than announced header",
			"Content-Length: abc\r\n\r\n" + frame(pingBody), []string{"agent/ping"}, nil},
		{"resynchronises on a header that starts mid-line",
			"garbage" + frame(pingBody), []string{"agent/ping"}, nil},
		{"skips a frame without Content-Length",
			"X-Other: 1\r\n\r\n" + frame(pingBody), []string{"agent/ping"}, nil},
		{"skips stray blank lines between frames", "\r\n\r\n" + frame(pingBody) + "\r\n" + frame(pingBody),
			[]string{"agent/ping", "agent/ping"}, nil},
		{"reads a notification and a response", frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
			frame(`{"jsonrpc":"2.0","id":9,"result":{"applied":true}}`), []string{"initialized", "<response>"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, replies, err := readAll(t, c.input)
			if err != io.EOF {
				t.Errorf("stream ended with %v, want io.EOF", err)
			}
			var got []string
			for _, m := range msgs {
				switch m := m.(type) {
				case *Request:
					got = append(got, m.Method())
				case *jsonrpc2.Response:
					got = append(got, "<response>")
				}
			}
			if strings.Join(got, ",") != strings.Join(c.methods, ",") {
				t.Errorf("messages = %v, want %v", got, c.methods)
			}
			if len(replies) != len(c.replies) {
				t.Fatalf("replies = %q, want %d matching %q", replies, len(c.replies), c.replies)
			}
			for i, want := range c.replies {
				if !strings.Contains(replies[i], want) {
					t.Errorf("reply %d = %s, want it to contain %s", i, replies[i], want)
				}
			}
		})
	}

	ends := []struct {
		name  string
		input string
		want  string // the error's message; "" for a clean io.EOF
	}{
		{"ends cleanly at a frame boundary", frame(pingBody), ""},
		{"ends cleanly after blank lines between frames", frame(pingBody) + "\r\n\r\n", ""},
		{"says how many body bytes are missing when a body is cut short",
			"Content-Length: 50\r\n\r\n{}", "the input ended inside a frame: 48 of the 50 body bytes announced are missing"},
		{"says the whole body is missing after a huge Content-Length",
			"Content-Length: 2147483648\r\n\r\n", "2147483648 of the 2147483648 body bytes announced are missing"},
		{"says so when the input ends inside a header", frame(pingBody) + "Content-Length: 10\r\n",
			"the input ended inside the header of a frame announcing 10 bytes"},
		{"says so when the input ends inside a header line", "Content-Len", "the input ended inside a frame header"},
	}
	for _, c := range ends {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readAll(t, c.input)
			if c.want == "" {
				if err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", err)
				}
				return
			}
			var te *TruncatedError
			if !errors.As(err, &te) || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a *TruncatedError saying %q", err, c.want)
			}
		})
	}

	t.Run("skips a frame over the size limit and stays in step", func(t *testing.T) {
		var out bytes.Buffer
		big := fmt.Sprintf("Content-Length: %d\r\n\r\n", MaxMessageSize+1)
		r := io.MultiReader(strings.NewReader(big), io.LimitReader(zeroReader{}, MaxMessageSize+1), strings.NewReader(frame(pingBody)))
		s := NewStream(r, &out, nil)
		m, _, err := s.Read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if req, ok := m.(*Request); !ok || req.Method() != "agent/ping" {
			t.Fatalf("got %#v", m)
		}
		if !strings.Contains(out.String(), "exceeds the limit") {
			t.Fatalf("no error reply: %q", out.String())
		}
	})
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestStreamWrite(t *testing.T) {
	t.Run("writes calls, notifications and replies as single well-formed frames", func(t *testing.T) {
		var out bytes.Buffer
		s := NewStream(strings.NewReader(""), &out, nil)
		call, _ := jsonrpc2.NewCall(jsonrpc2.NewNumberID(3), "agent/readFile", api.ReadFileParams{Path: "a\"b.go"})
		note, _ := jsonrpc2.NewNotification("agent/taskUpdate", map[string]string{"s": "é\u2028"})
		if _, err := s.Write(context.Background(), call); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Write(context.Background(), note); err != nil {
			t.Fatal(err)
		}
		id := requestID{raw: `"x"`}
		if err := s.writeReply(&id, map[string]int{"n": 1}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.writeReply(&id, nil, fmt.Errorf("oops")); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(&out)
		want := []string{
			`{"jsonrpc":"2.0","id":3,"method":"agent/readFile","params":{"path":"a\"b.go","uri":""}}`,
			`{"jsonrpc":"2.0","method":"agent/taskUpdate","params":{"s":"é\u2028"}}`,
			`{"jsonrpc":"2.0","id":"x","result":{"n":1}}`,
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"oops"}}`,
		}
		for i, w := range want {
			got := readFrame(t, r)
			if !json.Valid([]byte(got)) {
				t.Fatalf("frame %d is not JSON: %s", i, got)
			}
			var a, b any
			_ = json.Unmarshal([]byte(got), &a)
			_ = json.Unmarshal([]byte(w), &b)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("frame %d = %s, want %s", i, got, w)
			}
		}
	})

	t.Run("fails every write after the writer failed", func(t *testing.T) {
		s := NewStream(strings.NewReader(""), failWriter{}, nil)
		id := requestID{raw: "1"}
		if err := s.writeReply(&id, 1, nil); err == nil {
			t.Fatal("first write succeeded")
		}
		if err := s.writeReply(&id, 1, nil); err == nil {
			t.Fatal("second write succeeded")
		}
	})
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s", "\x00\x1f\n\r\t", "é中😀", "\u2028\u2029", "bad\xffutf8"} {
		got := appendQuoted(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("appendQuoted(%q) = %s: %v", s, got, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("round trip of %q = %q", s, back)
		}
	}
}

// TestEnvelopeAgreesWithEncodingJSON checks the hand-written validator
// against encoding/json on a table of tricky bodies.
func TestEnvelopeAgreesWithEncodingJSON(t *testing.T) {
	bodies := []string{
		`{}`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":[1,2,]}`, `{"a":01}`, `{"a":-}`, `{"a":1.}`, `{"a":1e}`,
		`{"a":1e+5}`, `{"a":-0.5E-3}`, `{"a":"\u12"}`, `{"a":"\u12zz"}`, `{"a":"\x"}`, "{\"a\":\"\x01\"}",
		`{"a":tru}`, `{"a":true}`, `{"a":nul}`, `{"a":null} x`, `{"a":"\ud83d\ude00"}`, `{"a":{"b":{"c":[]}}}`,
		`{"a":"` + strings.Repeat("x", 100) + `"}`, `{"a":"` + strings.Repeat("\\\"", 30) + `"}`, ` {"a" : [ 1 , { } ] } `,
		`{"a":"é"}`, `{"a":[[[[[[]]]]]]}`, `{"a":"abcdefgh\"}`, `{"a":"abcdefghijklmnop"}`,
	}
	for _, b := range bodies {
		_, err := parseEnvelope([]byte(b))
		gotValid := err == nil || !isSyntax(err)
		if want := json.Valid([]byte(b)); gotValid != want {
			t.Errorf("%q: envelope valid=%v (%v), encoding/json valid=%v", b, gotValid, err, want)
		}
	}
}

func isSyntax(err error) bool {
	_, ok := err.(*syntaxError)
	return ok
}

func TestMember(t *testing.T) {
	obj := []byte(`{"a":1,"data":{"x":[1,"}"]},"z":null}`)
	got, err := Member(obj, "data")
	if err != nil || string(got) != `{"x":[1,"}"]}` {
		t.Fatalf("Member = %s, %v", got, err)
	}
	if got, err := Member(obj, "nope"); err != nil || got != nil {
		t.Fatalf("absent member = %s, %v", got, err)
	}
	if _, err := Member([]byte(`[1]`), "a"); err == nil {
		t.Fatal("Member of an array succeeded")
	}
}

// FuzzStream feeds arbitrary bytes to the reader: it must never panic, must
// end, and everything it writes back must be well-formed frames of valid
// JSON.
func FuzzStream(f *testing.F) {
	f.Add(frame(pingBody))
	f.Add("Content-Length: 3\r\n\r\n{}}")
	f.Add("Content-Length: -1\r\n\r\n")
	f.Add("garbage\r\n" + frame(`{"jsonrpc":"2.0","id":"a","method":"m","params":[]}`))
	f.Add(frame(`{"jsonrpc":"2.0","id":2,"result":null}`) + frame(`{"jsonrpc":"2.0","id":2,"error":{"code":1}}`))
	f.Add(frame(`{"jsonrpc":"2.0","id":1e400,"method":"m"}`))
	f.Fuzz(func(t *testing.T, input string) {
		var out bytes.Buffer
		s := NewStream(strings.NewReader(input), &out, nil)
		for range len(input) + 2 {
			_, _, err := s.Read(context.Background())
			if err == nil {
				continue
			}
			var te *TruncatedError
			switch {
			case err == io.EOF:
			case !errors.As(err, &te):
				t.Fatalf("the input ended with %v, want io.EOF or a *TruncatedError", err)
			case !te.Header && (te.Got < 0 || te.Got >= te.Want):
				t.Fatalf("truncated body: got %d of %d", te.Got, te.Want)
			case te.Header && te.Got != 0:
				t.Fatalf("truncated header with %d body bytes", te.Got)
			}
			break
		}
		r := bufio.NewReader(&out)
		for {
			if _, err := r.Peek(1); err != nil {
				break
			}
			body := readFrame(t, r)
			if !json.Valid([]byte(body)) {
				t.Fatalf("wrote a frame that is not JSON: %q", body)
			}
		}
	})
}

// FuzzEnvelope checks the validator against encoding/json on arbitrary
// bodies: both must agree on what is JSON (for valid UTF-8, which
// encoding/json does not check).
func FuzzEnvelope(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[1,2,{"b":"\u00e9"}]}}`)
	f.Add(`{"a":"\"\\\/\b\f\n\r\t"}`)
	f.Add(`{"a":-1.5e+10,"b":[true,false,null]}`)
	f.Fuzz(func(t *testing.T, body string) {
		if !utf8.ValidString(body) {
			return
		}
		env, err := parseEnvelope([]byte(body))
		valid := err == nil || !isSyntax(err)
		if want := json.Valid([]byte(body)); valid != want {
			t.Fatalf("%q: envelope valid=%v (%v), encoding/json valid=%v", body, valid, err, want)
		}
		if err == nil && env.params != nil && !json.Valid(env.params) {
			t.Fatalf("params %q are not valid JSON", env.params)
		}
	})
}

// FuzzMember checks Member against encoding/json on valid objects.
func FuzzMember(f *testing.F) {
	f.Add(`{"data":1}`)
	f.Add(`{"a":"x\"}","data":[1,{"b":"\\"}],"data":"last"}`)
	f.Add(`{"data" : -1.5e3 , "z":true}`)
	f.Fuzz(func(t *testing.T, obj string) {
		var m map[string]json.RawMessage
		if !json.Valid([]byte(obj)) || json.Unmarshal([]byte(obj), &m) != nil {
			return
		}
		got, err := Member([]byte(obj), "data")
		if err != nil {
			t.Fatalf("Member(%q): %v", obj, err)
		}
		if want := m["data"]; string(got) != string(want) {
			t.Fatalf("Member(%q) = %q, want %q", obj, got, want)
		}
	})
}
