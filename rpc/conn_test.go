package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// testHandler serves a few methods for the connection tests.
type testHandler struct {
	slowStarted chan struct{}
	release     chan struct{}
	cancelled   chan error // cause seen by "block"
	peer        func() *Conn
	notes       chan string
}

func newTestHandler() *testHandler {
	return &testHandler{
		slowStarted: make(chan struct{}, 16),
		release:     make(chan struct{}),
		cancelled:   make(chan error, 16),
		notes:       make(chan string, 64),
	}
}

func (h *testHandler) Gate(*Request) error { return nil }

func (h *testHandler) HandleNotification(_ context.Context, req *Request) {
	h.notes <- req.Method() + " " + string(req.Params())
}

func (h *testHandler) HandleCall(ctx context.Context, req *Request) (any, error) {
	switch req.Method() {
	case "echo":
		return RawJSON(req.Params()), nil
	case "slow":
		h.slowStarted <- struct{}{}
		select {
		case <-h.release:
			return "slow done", nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	case "block":
		h.slowStarted <- struct{}{}
		<-ctx.Done()
		h.cancelled <- context.Cause(ctx)
		return "finished anyway", nil
	case "reverse":
		// A handler that calls back into the peer while its own request is
		// open: the read loop must stay free to read the reply.
		var res json.RawMessage
		if err := h.peer().Call(ctx, "echo", map[string]string{"x": "back"}, &res); err != nil {
			return nil, err
		}
		return RawJSON(res), nil
	case "fail":
		return nil, errors.New("plain Go error")
	case "coded":
		return nil, fmt.Errorf("wrapped: %w", api.Errorf(api.CodeUnknownTask, "no task t1"))
	case "panic":
		panic("boom")
	case "badresult":
		return func() {}, nil
	}
	return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", req.Method())
}

// pipePair connects two Conns over real OS pipes.
func pipePair(t testing.TB, serverH, clientH Handler) (server, client *Conn) {
	t.Helper()
	r1, w1, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r2, w2, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	server = NewConn(NewStream(r1, w2, nil), nil)
	client = NewConn(NewStream(r2, w1, nil), nil)
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

func TestConn(t *testing.T) {
	t.Run("answers a request while a slow one is still running", func(t *testing.T) {
		h := newTestHandler()
		_, client := pipePair(t, h, newTestHandler())
		ctx := testkit.Context(t)
		slowDone := make(chan error, 1)
		go func() {
			var out string
			slowDone <- client.Call(ctx, "slow", nil, &out)
		}()
		<-h.slowStarted
		var got map[string]int
		if err := client.Call(ctx, "echo", map[string]int{"n": 1}, &got); err != nil || got["n"] != 1 {
			t.Fatalf("echo during slow: %v %v", got, err)
		}
		select {
		case err := <-slowDone:
			t.Fatalf("slow finished before it was released: %v", err)
		default:
		}
		close(h.release)
		if err := <-slowDone; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("completes a reverse call made from a handler", func(t *testing.T) {
		sh, ch := newTestHandler(), newTestHandler()
		server, client := pipePair(t, sh, ch)
		sh.peer = func() *Conn { return server }
		var out json.RawMessage
		if err := client.Call(testkit.Context(t), "reverse", nil, &out); err != nil {
			t.Fatal(err)
		}
		if string(out) != `{"x":"back"}` {
			t.Fatalf("reverse = %s", out)
		}
	})

	for _, idForm := range []string{"numeric", "string"} {
		t.Run("cancels a request by its "+idForm+" id and answers -32800", func(t *testing.T) {
			h := newTestHandler()
			r1, w1, _ := os.Pipe()
			r2, w2, _ := os.Pipe()
			server := NewConn(NewStream(r1, w2, nil), nil)
			done := make(chan struct{})
			go func() { _ = server.Serve(context.Background(), h); close(done) }()
			defer func() { _ = w1.Close(); <-done; _ = r2.Close() }()
			id := `7`
			if idForm == "string" {
				id = `"req-7"`
			}
			writeFrame(t, w1, `{"jsonrpc":"2.0","id":`+id+`,"method":"block"}`)
			<-h.slowStarted
			writeFrame(t, w1, `{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":`+id+`}}`)
			if cause := <-h.cancelled; !errors.Is(cause, errCancelledByClient) {
				t.Fatalf("handler saw cause %v", cause)
			}
			resp := readFrame(t, bufio.NewReader(r2))
			if !strings.Contains(resp, `"id":`+id) || !strings.Contains(resp, `"code":-32800`) {
				t.Fatalf("reply = %s", resp)
			}
		})
	}

	t.Run("sends errors with their code and a message, never code 0", func(t *testing.T) {
		_, client := pipePair(t, newTestHandler(), newTestHandler())
		for method, want := range map[string]api.Code{
			"fail": api.CodeInternalError, "coded": api.CodeUnknownTask, "panic": api.CodeInternalError,
			"badresult": api.CodeInternalError, "nosuch": api.CodeMethodNotFound,
		} {
			err := client.Call(testkit.Context(t), method, nil, nil)
			var we *api.Error
			if !errors.As(err, &we) || we.Code != want || we.Message == "" {
				t.Errorf("%s: got %v, want code %d", method, err, want)
			}
		}
		var out map[string]int
		if err := client.Call(testkit.Context(t), "echo", map[string]int{"still": 1}, &out); err != nil {
			t.Fatalf("not serving after errors: %v", err)
		}
	})

	t.Run("handles notifications one at a time in arrival order", func(t *testing.T) {
		h := newTestHandler()
		_, client := pipePair(t, h, newTestHandler())
		for i := range 50 {
			if err := client.Notify(testkit.Context(t), "note", []int{i}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 50 {
			if got := <-h.notes; got != "note ["+strconv.Itoa(i)+"]" {
				t.Fatalf("notification %d = %q", i, got)
			}
		}
	})

	t.Run("sends $/cancelRequest when the caller gives up", func(t *testing.T) {
		sh, ch := newTestHandler(), newTestHandler()
		_, client := pipePair(t, sh, ch)
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

func TestEditor(t *testing.T) {
	t.Run("fails a reverse call the editor never answers at its timeout and cancels it", func(t *testing.T) {
		sh, ch := newTestHandler(), &neverHandler{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1)}
		server, _ := pipePair(t, sh, ch)
		ed := NewEditor(server, api.Caps{ReadFile: true}, api.Timeouts{ReverseCallMs: 50})
		_, err := ed.ReadFile(testkit.Context(t), "a.go", "file:///w/a.go")
		if !errors.Is(err, api.ErrTimeout) {
			t.Fatalf("ReadFile = %v, want api.ErrTimeout", err)
		}
		<-ch.started
		<-ch.cancelled // the editor was told with $/cancelRequest
	})

	t.Run("refuses a call the client did not advertise", func(t *testing.T) {
		ed := NewEditor(nil, api.Caps{}, api.DefaultSettings().Timeouts)
		if _, err := ed.ReadFile(context.Background(), "a", "file:///a"); !errors.Is(err, api.ErrUnsupported) {
			t.Fatalf("ReadFile = %v", err)
		}
		if _, err := ed.ApplyEdit(context.Background(), api.ApplyWorkspaceEditParams{}, api.Machine); !errors.Is(err, api.ErrUnsupported) {
			t.Fatalf("ApplyEdit = %v", err)
		}
	})

	t.Run("decodes applyEdit replies as api.ApplyWorkspaceEditResult", func(t *testing.T) {
		ch := &answerHandler{answers: map[string]any{
			api.MethodApplyEdit:          RawJSON(`{"applied":false,"failureReason":"stale","failedChange":2}`),
			api.MethodShowMessageRequest: RawJSON(`{"title":"Apply"}`),
			api.MethodAsk:                RawJSON(`{"answer":null}`),
		}}
		server, _ := pipePair(t, newTestHandler(), ch)
		ed := NewEditor(server, api.Caps{ApplyEdit: true, Ask: true}, api.DefaultSettings().Timeouts)
		res, err := ed.ApplyEdit(testkit.Context(t), api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{}}, api.Human)
		if err != nil || res.Applied || res.FailureReason != "stale" || res.FailedChange == nil || *res.FailedChange != 2 {
			t.Fatalf("ApplyEdit = %+v, %v", res, err)
		}
		item, err := ed.ShowMessageRequest(testkit.Context(t), api.ShowMessageRequestParams{Message: "ok?", Actions: []api.MessageActionItem{{Title: "Apply"}}})
		if err != nil || item == nil || item.Title != "Apply" {
			t.Fatalf("ShowMessageRequest = %v, %v", item, err)
		}
		ans, err := ed.Ask(testkit.Context(t), api.AskParams{Question: "?"})
		if err != nil || ans != nil {
			t.Fatalf("Ask = %v, %v", ans, err)
		}
	})
}

func TestEditorLocations(t *testing.T) {
	loc := func(uri string, line uint32) api.Location {
		return api.Location{URI: uri, Range: api.Range{Start: api.Position{Line: line, Character: 1}, End: api.Position{Line: line, Character: 4}}}
	}
	for _, tc := range []struct {
		name   string
		answer string
		want   []api.Location
		bad    bool
	}{
		{"reads null as no language server", `null`, nil, false},
		{"reads a list of Locations", `[{"uri":"file:///w/a.go","range":{"start":{"line":2,"character":1},"end":{"line":2,"character":4}}}]`,
			[]api.Location{loc("file:///w/a.go", 2)}, false},
		{"reads one Location", `{"uri":"file:///w/b.go","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":4}}}`,
			[]api.Location{loc("file:///w/b.go", 3)}, false},
		{"reads LocationLinks as their target's name", `[{"targetUri":"file:///w/c.go","targetRange":{"start":{"line":0,"character":0},"end":{"line":9,"character":1}},
			"targetSelectionRange":{"start":{"line":4,"character":1},"end":{"line":4,"character":4}}}]`, []api.Location{loc("file:///w/c.go", 4)}, false},
		{"reads an empty list as none", `[]`, []api.Location{}, false},
		{"refuses what is not locations", `"somewhere"`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &answerHandler{answers: map[string]any{api.MethodReferences: RawJSON(tc.answer), api.MethodDefinition: RawJSON(tc.answer)}}
			server, _ := pipePair(t, newTestHandler(), ch)
			ed := NewEditor(server, api.Caps{References: true, Definition: true}, api.DefaultSettings().Timeouts)
			refs, err := ed.References(testkit.Context(t), api.ReferenceParams{})
			defs, derr := ed.Definition(testkit.Context(t), api.TextDocumentPositionParams{})
			if tc.bad {
				if err == nil || derr == nil {
					t.Fatalf("References = %v, %v; Definition = %v, %v: want errors", refs, err, defs, derr)
				}
				return
			}
			if err != nil || derr != nil {
				t.Fatalf("References: %v, Definition: %v", err, derr)
			}
			if !reflect.DeepEqual(refs, tc.want) || !reflect.DeepEqual(defs, tc.want) {
				t.Fatalf("References = %#v, Definition = %#v, want %#v", refs, defs, tc.want)
			}
		})
	}
	t.Run("refuses both without the capabilities", func(t *testing.T) {
		ed := NewEditor(nil, api.Caps{}, api.DefaultSettings().Timeouts)
		if _, err := ed.References(context.Background(), api.ReferenceParams{}); !errors.Is(err, api.ErrUnsupported) {
			t.Fatalf("References = %v", err)
		}
		if _, err := ed.Definition(context.Background(), api.TextDocumentPositionParams{}); !errors.Is(err, api.ErrUnsupported) {
			t.Fatalf("Definition = %v", err)
		}
	})
}

func TestEditorDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string
		want   api.DiagnosticsResult
		bad    bool
	}{
		{"reads null as none", `null`, api.DiagnosticsResult{}, false},
		{"reads the documents and their diagnostics", `{"items":[{"uri":"file:///w/a.go","diagnostics":[{"range":{"start":{"line":5,"character":1},"end":{"line":5,"character":2}},"severity":1,"code":"UndeclaredName","source":"compiler","message":"undefined: x"}]}]}`,
			api.DiagnosticsResult{Items: []api.DocumentDiagnostics{{URI: "file:///w/a.go", Diagnostics: []api.Diagnostic{{
				Range: api.Range{Start: api.Position{Line: 5, Character: 1}, End: api.Position{Line: 5, Character: 2}}, Severity: api.SeverityError,
				Code: "UndeclaredName", Source: "compiler", Message: "undefined: x"}}}}}, false},
		{"refuses what is not a result", `[1,2]`, api.DiagnosticsResult{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &answerHandler{answers: map[string]any{api.MethodDiagnostics: RawJSON(tc.answer)}}
			server, _ := pipePair(t, newTestHandler(), ch)
			ed := NewEditor(server, api.Caps{Diagnostics: true}, api.DefaultSettings().Timeouts)
			res, err := ed.Diagnostics(testkit.Context(t), api.DiagnosticsParams{URIs: []string{"file:///w/a.go"}})
			if tc.bad {
				if err == nil {
					t.Fatalf("Diagnostics = %v: want an error", res)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(res, tc.want) {
				t.Fatalf("Diagnostics = %#v, %v; want %#v", res, err, tc.want)
			}
		})
	}
	t.Run("refuses without the capability", func(t *testing.T) {
		ed := NewEditor(nil, api.Caps{}, api.DefaultSettings().Timeouts)
		if _, err := ed.Diagnostics(context.Background(), api.DiagnosticsParams{}); !errors.Is(err, api.ErrUnsupported) {
			t.Fatalf("Diagnostics = %v", err)
		}
	})
}

type neverHandler struct {
	started, cancelled chan struct{}
}

func (h *neverHandler) Gate(*Request) error                          { return nil }
func (h *neverHandler) HandleNotification(context.Context, *Request) {}
func (h *neverHandler) HandleCall(ctx context.Context, req *Request) (any, error) {
	h.started <- struct{}{}
	<-ctx.Done()
	h.cancelled <- struct{}{}
	return nil, ctx.Err()
}

type answerHandler struct{ answers map[string]any }

func (h *answerHandler) Gate(*Request) error                          { return nil }
func (h *answerHandler) HandleNotification(context.Context, *Request) {}
func (h *answerHandler) HandleCall(_ context.Context, req *Request) (any, error) {
	return h.answers[req.Method()], nil
}

func writeFrame(t testing.TB, w io.Writer, body string) {
	t.Helper()
	if _, err := fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
}

func readFrame(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading header: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	return string(buf)
}
