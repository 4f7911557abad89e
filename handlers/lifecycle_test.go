package handlers_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/internal/testkit"
)

// serveFunc runs the real server in-process.
func serveFunc(dir string) headless.ServeFunc {
	return func(ctx context.Context, in io.Reader, out io.Writer) int {
		return handlers.Serve(ctx, in, out, handlers.Options{Version: "test", Cwd: dir, Base: api.DefaultSettings()})
	}
}

func start(t *testing.T, opts headless.Options) *headless.Editor {
	t.Helper()
	if opts.Root == "" {
		opts.Root = t.TempDir()
	}
	if opts.Serve == nil && len(opts.Command) == 0 {
		opts.Serve = serveFunc(opts.Root)
	}
	ed, err := headless.Start(testkit.Context(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	return ed
}

func code(err error) api.Code {
	var we *api.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func TestInitialize(t *testing.T) {
	t.Run("answers with serverInfo and the agent capability", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true, Caps: headless.FullCapabilities()})
		res, err := ed.Initialize(testkit.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		if res.ServerInfo.Name != "agentls" || res.ServerInfo.Version != "test" || res.Capabilities.Experimental.Agent.Version != 1 {
			t.Fatalf("initialize result = %+v", res)
		}
		if !res.Capabilities.Experimental.Agent.Attachments {
			t.Fatalf("initialize result = %+v: attachments are not advertised", res)
		}
	})

	for _, c := range []struct {
		name, opts, want string
	}{
		{"names the key of a wrong type", `{"maxWorkers":"three"}`, "maxWorkers"},
		{"names a nested key", `{"timeouts":{"commandMs":"soon"}}`, "timeouts.commandMs"},
		{"names an enum value that is not allowed", `{"editMode":"yolo"}`, "editMode"},
		{"names a bad zone glob", `{"zones":{"deny":["src/[a"]}}`, "zones.deny[0]"},
		{"refuses options that are not an object", `[1]`, "initializationOptions"},
	} {
		t.Run("refuses bad initializationOptions with -32602 and "+c.name, func(t *testing.T) {
			ed := start(t, headless.Options{NoInitialize: true})
			err := ed.Call(testkit.Context(t), api.MethodInitialize, json.RawMessage(`{"capabilities":{},"initializationOptions":`+c.opts+`}`), nil)
			if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("initialize = %v; want -32602 naming %s", err, c.want)
			}
			// The client may fix it and try again.
			if _, err := ed.Initialize(testkit.Context(t)); err != nil {
				t.Fatalf("second initialize: %v", err)
			}
		})
	}

	t.Run("refuses a rootUri that is not a directory", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true})
		err := ed.Call(testkit.Context(t), api.MethodInitialize, map[string]any{"capabilities": map[string]any{}, "rootUri": "file:///no/such/dir"}, nil)
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "rootUri") {
			t.Fatalf("initialize = %v", err)
		}
	})

	t.Run("refuses a rootUri whose unescaped # would cut the name, saying how to write it", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true})
		err := ed.Call(testkit.Context(t), api.MethodInitialize, map[string]any{"capabilities": map[string]any{}, "rootUri": "file:///tmp/c#proj"}, nil)
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "rootUri") || !strings.Contains(err.Error(), "%23") {
			t.Fatalf("initialize = %v", err)
		}
	})

	t.Run("refuses a second initialize", func(t *testing.T) {
		ed := start(t, headless.Options{})
		if _, err := ed.Initialize(testkit.Context(t)); code(err) != api.CodeInvalidRequest {
			t.Fatalf("second initialize = %v", err)
		}
	})
}

func TestLifecycle(t *testing.T) {
	t.Run("answers a request before initialize with -32002", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true})
		if err := ed.Call(testkit.Context(t), api.MethodPing, nil, nil); code(err) != api.CodeNotInitialized {
			t.Fatalf("ping before initialize = %v", err)
		}
	})

	t.Run("answers a request after shutdown with -32600", func(t *testing.T) {
		ed := start(t, headless.Options{})
		if err := ed.Call(testkit.Context(t), api.MethodShutdown, nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := ed.Call(testkit.Context(t), api.MethodPing, nil, nil); code(err) != api.CodeInvalidRequest {
			t.Fatalf("ping after shutdown = %v", err)
		}
	})

	t.Run("exits 0 on exit after shutdown", func(t *testing.T) {
		ed := start(t, headless.Options{})
		if c, err := ed.Shutdown(testkit.Context(t)); err != nil || c != 0 {
			t.Fatalf("exit code %d, %v", c, err)
		}
	})

	t.Run("exits 1 on exit without shutdown", func(t *testing.T) {
		ed := start(t, headless.Options{})
		if err := ed.Notify(testkit.Context(t), api.MethodExit, nil); err != nil {
			t.Fatal(err)
		}
		if c, err := ed.Wait(testkit.Context(t)); err != nil || c != 1 {
			t.Fatalf("exit code %d, %v", c, err)
		}
	})

	t.Run("answers unknown methods with -32601 and ignores unknown notifications", func(t *testing.T) {
		ed := start(t, headless.Options{})
		for _, m := range []string{"agent/nope", "textDocument/hover", "$/unknown"} {
			if err := ed.Call(testkit.Context(t), m, nil, nil); code(err) != api.CodeMethodNotFound {
				t.Errorf("%s = %v", m, err)
			}
		}
		if err := ed.Notify(testkit.Context(t), "agent/whatever", map[string]int{"a": 1}); err != nil {
			t.Fatal(err)
		}
		ping(t, ed, `"still here"`)
	})

	t.Run("answers wrong param types with -32602 and keeps serving", func(t *testing.T) {
		ed := start(t, headless.Options{})
		if err := ed.Call(testkit.Context(t), api.MethodPing, []int{1}, nil); code(err) != api.CodeInvalidParams {
			t.Fatalf("ping with an array = %v", err)
		}
		ping(t, ed, `{"ok":true}`)
	})
}

func ping(t *testing.T, ed *headless.Editor, data string) {
	t.Helper()
	var res struct {
		Data json.RawMessage `json:"data"`
	}
	if err := ed.Call(testkit.Context(t), api.MethodPing, map[string]json.RawMessage{"data": json.RawMessage(data)}, &res); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if string(res.Data) != data {
		t.Fatalf("ping data = %s, want %s", res.Data, data)
	}
}

func TestPing(t *testing.T) {
	ed := start(t, headless.Options{})
	for _, d := range []string{`1`, `"é😀\n"`, `null`, `[1,{"a":[]}]`, `{"big":"` + strings.Repeat("x", 1<<20) + `"}`} {
		ping(t, ed, d)
	}
	var res map[string]json.RawMessage
	if err := ed.Call(testkit.Context(t), api.MethodPing, nil, &res); err != nil || string(res["data"]) != "null" {
		t.Fatalf("ping without params = %v, %v", res, err)
	}
}

// rawServer runs the server in-process on pipes the test writes raw bytes
// to.
type rawServer struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan int
}

func startRaw(t *testing.T) *rawServer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawServer{in: inW, out: bufio.NewReader(outR), done: make(chan int, 1)}
	dir := t.TempDir()
	go func() {
		s.done <- handlers.Serve(context.Background(), inR, outW, handlers.Options{Cwd: dir, Base: api.DefaultSettings()})
		_ = outW.Close()
	}()
	t.Cleanup(func() { _ = inW.Close() })
	return s
}

func (s *rawServer) send(t *testing.T, raw string) {
	t.Helper()
	if _, err := io.WriteString(s.in, raw); err != nil {
		t.Fatal(err)
	}
}

func (s *rawServer) frame(t *testing.T, body string) {
	s.send(t, fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}

func (s *rawServer) read(t *testing.T) map[string]any {
	t.Helper()
	n := -1
	for {
		line, err := s.out.ReadString('\n')
		if err != nil {
			t.Fatalf("reading: %v", err)
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
	if _, err := io.ReadFull(s.out, buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf, &m); err != nil {
		t.Fatalf("reply is not JSON: %s", buf)
	}
	return m
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

func TestBadInput(t *testing.T) {
	s := startRaw(t)
	s.frame(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	if m := s.read(t); m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	s.frame(t, `{"jsonrpc":"2.0","method":"initialized","params":{}}`)

	steps := []struct {
		name string
		send func()
		want int
	}{
		{"malformed JSON answers -32700", func() { s.frame(t, `{"jsonrpc":"2.0","id":2,"method":"agent/ping",`) }, -32700},
		{"a garbage header line is skipped", func() { s.send(t, "this is not a header\r\n") }, 0},
		{"an invalid request answers -32600", func() { s.frame(t, `{"jsonrpc":"1.0","id":3,"method":"agent/ping"}`) }, -32600},
		{"an unknown method answers -32601", func() { s.frame(t, `{"jsonrpc":"2.0","id":4,"method":"agent/unknown"}`) }, -32601},
		{"invalid params answer -32602", func() { s.frame(t, `{"jsonrpc":"2.0","id":5,"method":"agent/ping","params":"x"}`) }, -32602},
	}
	for _, st := range steps {
		t.Run(st.name+" and the server keeps serving", func(t *testing.T) {
			st.send()
			if st.want != 0 {
				if m := s.read(t); errCode(m) != st.want {
					t.Fatalf("reply = %v, want code %d", m, st.want)
				}
			}
			s.frame(t, `{"jsonrpc":"2.0","id":"p","method":"agent/ping","params":{"data":7}}`)
			m := s.read(t)
			if res, _ := m["result"].(map[string]any); res == nil || res["data"] != float64(7) {
				t.Fatalf("ping after bad input = %v", m)
			}
		})
	}

	t.Run("the end of input exits 1 without shutdown", func(t *testing.T) {
		_ = s.in.Close()
		if c := <-s.done; c != 1 {
			t.Fatalf("exit code %d", c)
		}
	})
}

func TestEndOfInputAfterShutdownExits0(t *testing.T) {
	s := startRaw(t)
	s.frame(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`)
	s.read(t)
	s.frame(t, `{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	s.read(t)
	_ = s.in.Close()
	if c := <-s.done; c != 0 {
		t.Fatalf("exit code %d", c)
	}
}

// TestNoGoroutinesLeftAfterExit checks that Serve leaves nothing running.
func TestNoGoroutinesLeftAfterExit(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 5 {
		ed, err := headless.Start(testkit.Context(t), headless.Options{Root: t.TempDir(), Serve: serveFunc(t.TempDir())})
		if err != nil {
			t.Fatal(err)
		}
		ping(t, ed, `1`)
		if c, err := ed.Shutdown(testkit.Context(t)); err != nil || c != 0 {
			t.Fatalf("exit %d, %v", c, err)
		}
	}
	// Goroutines end asynchronously after their last action; give them a
	// moment, then look at what is left by name.
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		leaked := strings.Contains(stacks, "agentls/rpc.") || strings.Contains(stacks, "agentls/handlers.") ||
			strings.Contains(stacks, "jsonrpc2.(*conn)")
		if !leaked && runtime.NumGoroutine() <= before {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after exit (%d before, %d now):\n%s", before, runtime.NumGoroutine(), stacks)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
