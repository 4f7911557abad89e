package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/internal/testkit"
	"go.lsp.dev/jsonrpc2"
)

// readLines feeds input to a Stream with Lines framing and returns the
// messages it produced, the lines it wrote back (its error replies) and the
// error that ended it.
func readLines(t testing.TB, input string) (msgs []jsonrpc2.Message, replies []string, err error) {
	t.Helper()
	var out bytes.Buffer
	s := NewStream(strings.NewReader(input), &out, nil, Lines())
	for {
		m, _, rerr := s.Read(context.Background())
		if rerr != nil {
			err = rerr
			break
		}
		msgs = append(msgs, m)
	}
	for _, l := range strings.SplitAfter(out.String(), "\n") {
		if l == "" {
			continue
		}
		if !strings.HasSuffix(l, "\n") {
			t.Fatalf("reply without its newline: %q", l)
		}
		replies = append(replies, l)
	}
	return msgs, replies, err
}

func methodsOf(msgs []jsonrpc2.Message) []string {
	var out []string
	for _, m := range msgs {
		if r, ok := m.(*Request); ok {
			out = append(out, r.Method())
		} else {
			out = append(out, "(response)")
		}
	}
	return out
}

const lineBody = `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s1"}}`

func TestLinesRead(t *testing.T) {
	cases := []struct {
		name    string
		input   string
		methods []string
		replies []string // substrings of the error replies, in order
		err     string   // substring of the error that ended the stream; "" for io.EOF
	}{
		{"reads one message per line", lineBody + "\n" + lineBody + "\n", []string{"session/prompt", "session/prompt"}, nil, ""},
		{"accepts \\r\\n line ends and skips blank lines", "\r\n\n" + lineBody + "\r\n\n" + lineBody + "\n", []string{"session/prompt", "session/prompt"}, nil, ""},
		{"reads a last message without its newline", lineBody + "\n" + lineBody, []string{"session/prompt", "session/prompt"}, nil, ""},
		{"answers a line that is not JSON with -32700 and reads the next",
			`{"jsonrpc":"2.0","id":1,` + "\n" + lineBody + "\n",
			[]string{"session/prompt"}, []string{`"id":null,"error":{"code":-32700`}, ""},
		{"answers a message without jsonrpc 2.0 with -32600 and its string id",
			`{"id":"a-1","method":"x"}` + "\n" + lineBody + "\n",
			[]string{"session/prompt"}, []string{`"id":"a-1","error":{"code":-32600`}, ""},
		{"answers a batch with -32600", `[` + lineBody + `]` + "\n", nil, []string{`-32600`}, ""},
		{"reads a notification and a response",
			`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}` + "\n" + `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n",
			[]string{"session/cancel", "(response)"}, nil, ""},
		{"ends with a truncation error on a cut last line", lineBody + "\n" + `{"jsonrpc":"2.0","id":2,"meth`, []string{"session/prompt"}, nil,
			"the input ended inside a message: 29 bytes without their closing newline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, replies, err := readLines(t, c.input)
			if got := methodsOf(msgs); strings.Join(got, ",") != strings.Join(c.methods, ",") {
				t.Errorf("methods = %v, want %v", got, c.methods)
			}
			if len(replies) != len(c.replies) {
				t.Fatalf("replies = %q, want %d", replies, len(c.replies))
			}
			for i, want := range c.replies {
				if !strings.Contains(replies[i], want) {
					t.Errorf("reply %d = %s, want it to contain %s", i, replies[i], want)
				}
			}
			switch {
			case c.err == "" && err != io.EOF:
				t.Errorf("ended with %v, want io.EOF", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Errorf("ended with %v, want %q", err, c.err)
			case c.err != "":
				var te *TruncatedError
				if !errors.As(err, &te) || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Errorf("ended with %T, want a *TruncatedError", err)
				}
			}
		})
	}

	t.Run("reads a line longer than its buffer whole", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":9,"method":"echo","params":{"data":"` + strings.Repeat("x", 3*readBufferSize) + `"}}`
		msgs, replies, err := readLines(t, big+"\n"+lineBody+"\n")
		if err != io.EOF || len(replies) != 0 || len(msgs) != 2 {
			t.Fatalf("msgs %d replies %q err %v", len(msgs), replies, err)
		}
		if p := msgs[0].(*Request).Params(); len(p) != len(big)-len(`{"jsonrpc":"2.0","id":9,"method":"echo","params":}`) {
			t.Fatalf("params of %d bytes", len(p))
		}
	})

	t.Run("keeps each body when the next line reuses the buffer", func(t *testing.T) {
		msgs, _, _ := readLines(t, `{"jsonrpc":"2.0","method":"a","params":{"n":1}}`+"\n"+`{"jsonrpc":"2.0","method":"b","params":{"n":2}}`+"\n")
		if len(msgs) != 2 || string(msgs[0].(*Request).Params()) != `{"n":1}` {
			t.Fatalf("first params = %s", msgs[0].(*Request).Params())
		}
	})
}

func TestLinesWrite(t *testing.T) {
	t.Run("writes each message as one line, newlines of raw JSON turned into spaces", func(t *testing.T) {
		var out bytes.Buffer
		s := NewStream(strings.NewReader(""), &out, nil, Lines())
		id := requestID{raw: `"x"`}
		if err := s.writeReply(&id, RawJSON("{\n  \"a\": \"b\\nc\"\n}"), nil); err != nil {
			t.Fatal(err)
		}
		if err := s.writeReply(&id, map[string]string{"text": "two\nlines"}, nil); err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":"x","result":{   "a": "b\nc" }}` + "\n" +
			`{"jsonrpc":"2.0","id":"x","result":{"text":"two\nlines"}}` + "\n"
		if out.String() != want {
			t.Fatalf("wrote\n%s\nwant\n%s", out.String(), want)
		}
		for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if !json.Valid([]byte(l)) {
				t.Fatalf("not JSON: %s", l)
			}
		}
	})
}

// linePair connects two Conns with Lines framing and ACP's cancel
// notification over real OS pipes.
func linePair(t testing.TB, serverH, clientH Handler) (server, client *Conn) {
	t.Helper()
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	opt := CancelNotification("$/cancel_request", "requestId")
	server = NewConn(NewStream(r1, w2, nil, Lines()), nil, opt)
	client = NewConn(NewStream(r2, w1, nil, Lines()), nil, opt)
	var wg sync.WaitGroup
	wg.Go(func() { _ = server.Serve(context.Background(), serverH) })
	wg.Go(func() { _ = client.Serve(context.Background(), clientH) })
	t.Cleanup(func() {
		_ = client.Close()
		_ = server.Close()
		wg.Wait()
	})
	return server, client
}

func TestLinesConn(t *testing.T) {
	t.Run("serves calls, reverse calls and notifications", func(t *testing.T) {
		sh := newTestHandler()
		var server *Conn
		sh.peer = func() *Conn { return server }
		server, client := linePair(t, sh, newTestHandler())
		ctx := testkit.Context(t)
		var out json.RawMessage
		if err := client.Call(ctx, "reverse", nil, &out); err != nil || string(out) != `{"x":"back"}` {
			t.Fatalf("reverse = %s, %v", out, err)
		}
		if err := client.Notify(ctx, "note", []int{1}); err != nil {
			t.Fatal(err)
		}
		if got := <-sh.notes; got != "note [1]" {
			t.Fatalf("note = %q", got)
		}
	})

	for _, id := range []string{`7`, `"req-7"`} {
		t.Run("cancels a call by $/cancel_request with the id "+id, func(t *testing.T) {
			h := newTestHandler()
			r1, w1, _ := os.Pipe()
			r2, w2, _ := os.Pipe()
			server := NewConn(NewStream(r1, w2, nil, Lines()), nil, CancelNotification("$/cancel_request", "requestId"))
			done := make(chan struct{})
			go func() { _ = server.Serve(context.Background(), h); close(done) }()
			defer func() { _ = w1.Close(); <-done; _ = r2.Close() }()
			write := func(s string) {
				if _, err := w1.WriteString(s + "\n"); err != nil {
					t.Fatal(err)
				}
			}
			write(`{"jsonrpc":"2.0","id":` + id + `,"method":"block"}`)
			<-h.slowStarted
			// LSP's cancel is an ordinary notification here: it cancels nothing.
			write(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":` + id + `}}`)
			if got := <-h.notes; !strings.HasPrefix(got, "$/cancelRequest ") {
				t.Fatalf("note = %q", got)
			}
			write(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + id + `}}`)
			if cause := <-h.cancelled; !errors.Is(cause, errCancelledByClient) {
				t.Fatalf("handler saw cause %v", cause)
			}
			line, err := bufio.NewReader(r2).ReadString('\n')
			if err != nil || !strings.Contains(line, `"id":`+id) || !strings.Contains(line, `"code":-32800`) {
				t.Fatalf("reply = %q, %v", line, err)
			}
		})
	}

	t.Run("sends $/cancel_request with requestId when the caller gives up", func(t *testing.T) {
		sh := newTestHandler()
		_, client := linePair(t, sh, newTestHandler())
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- client.Call(ctx, "block", nil, nil) }()
		<-sh.slowStarted
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Call = %v, want context.Canceled", err)
		}
		if cause := <-sh.cancelled; !errors.Is(cause, errCancelledByClient) {
			t.Fatalf("server handler saw %v, want the client's cancel", cause)
		}
	})
}

// gatedHandler holds its notifications until released, and answers "ping".
type gatedHandler struct {
	testHandler
	gate chan struct{}
	seen []string
	mu   sync.Mutex
}

func (h *gatedHandler) HandleNotification(_ context.Context, req *Request) {
	<-h.gate
	h.mu.Lock()
	h.seen = append(h.seen, string(req.Params()))
	h.mu.Unlock()
}

func TestSettle(t *testing.T) {
	t.Run("waits for the notifications read before the reply that follows them", func(t *testing.T) {
		// The server sends three notifications, then answers; the client's
		// notification goroutine is held, so the reply arrives first.
		ch := &gatedHandler{testHandler: *newTestHandler(), gate: make(chan struct{})}
		sh := &notifyingHandler{}
		server, client := linePair(t, sh, ch)
		sh.peer = server
		ctx := testkit.Context(t)
		if err := client.Call(ctx, "notify-then-answer", nil, nil); err != nil {
			t.Fatal(err)
		}
		settled := make(chan error, 1)
		go func() { settled <- client.Settle(ctx) }()
		close(ch.gate)
		if err := <-settled; err != nil {
			t.Fatal(err)
		}
		ch.mu.Lock()
		defer ch.mu.Unlock()
		if strings.Join(ch.seen, ",") != "[1],[2],[3]" {
			t.Fatalf("handled before Settle returned: %v", ch.seen)
		}
	})

	t.Run("returns at once when nothing is pending", func(t *testing.T) {
		_, client := linePair(t, newTestHandler(), newTestHandler())
		if err := client.Settle(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
	})
}

// notifyingHandler answers notify-then-answer after sending three
// notifications to its peer.
type notifyingHandler struct {
	testHandler
	peer *Conn
}

func (h *notifyingHandler) HandleCall(ctx context.Context, req *Request) (any, error) {
	for i := 1; i <= 3; i++ {
		if err := h.peer.Notify(ctx, "update", []int{i}); err != nil {
			return nil, err
		}
	}
	return map[string]bool{"ok": true}, nil
}

// BenchmarkRoundTripLines is BenchmarkRoundTrip with newline-delimited
// framing: what the ACP face's calls cost on the wire.
func BenchmarkRoundTripLines(b *testing.B) {
	_, client := linePair(b, echoHandler{}, echoHandler{})
	ctx := context.Background()
	params := json.RawMessage(`{"data":1}`)
	var out json.RawMessage
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Call(ctx, "agent/ping", params, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPayload1MiBLines is BenchmarkPayload1MiB with newline-delimited
// framing: a line is read in buffer-sized pieces and scanned for newlines.
func BenchmarkPayload1MiBLines(b *testing.B) {
	_, client := linePair(b, echoHandler{}, echoHandler{})
	ctx := context.Background()
	params := json.RawMessage(`{"data":"` + strings.Repeat("x", 1<<20) + `"}`)
	var out json.RawMessage
	b.SetBytes(int64(2 * len(params)))
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Call(ctx, "agent/ping", params, &out); err != nil {
			b.Fatal(err)
		}
		if len(out) != len(params) {
			b.Fatalf("echo of %d bytes, want %d", len(out), len(params))
		}
	}
}

// FuzzLines holds the newline-delimited framing (ACP's) to what FuzzStream
// holds the Content-Length one: whatever comes in, reading ends with io.EOF
// or a *TruncatedError saying a line was cut, never a panic, and every
// answer agentls writes (a parse error, an invalid request) is one line of
// JSON.
func FuzzLines(f *testing.F) {
	f.Add(pingBody + "\n")
	f.Add(pingBody)
	f.Add("{}\n{\n")
	f.Add("garbage\n" + `{"jsonrpc":"2.0","id":"a","method":"m","params":[]}` + "\n")
	f.Add("\n\n \r\n" + `{"jsonrpc":"2.0","id":2,"result":null}` + "\r\n")
	f.Add(`{"jsonrpc":"2.0","id":1e400,"method":"m"}` + "\n")
	f.Fuzz(func(t *testing.T, input string) {
		var out bytes.Buffer
		s := NewStream(strings.NewReader(input), &out, nil, Lines())
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
			case !te.Line:
				t.Fatalf("a line-framed stream reported a truncated frame: %+v", te)
			}
			break
		}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				t.Fatalf("wrote a line that is not JSON: %q", line)
			}
		}
	})
}
