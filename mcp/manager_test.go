package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/testkit"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds, failing the test after a bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func findTool(tools []api.MCPTool, name string) *api.MCPTool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

func call(t *testing.T, m *Manager, name, args string) (Result, error) {
	t.Helper()
	return m.Call(ctxT(t), name, json.RawMessage(args), 10*time.Second)
}

func TestHTTPServer(t *testing.T) {
	p := &probe{hanging: make(chan struct{}, 1)}
	srv, url := httpServer(t, p)
	m := newManager(t, Options{}, map[string]api.MCPServer{"test": {URL: url}}, 10*time.Second)

	t.Run("is not started before it is needed", func(t *testing.T) {
		st := m.Status(ctxT(t), false)
		if len(st.Servers) != 1 || st.Servers[0].State != api.MCPNotStarted || st.Servers[0].Transport != api.MCPHTTP {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("lists its tools under names models accept, with their schemas", func(t *testing.T) {
		tools := m.Tools(ctxT(t))
		echo := findTool(tools, "mcp__test__echo")
		if echo == nil {
			t.Fatalf("no mcp__test__echo in %v", tools)
		}
		if echo.Server != "test" || echo.Tool != "echo" || !echo.ReadOnly || echo.Description != "Echoes the message." {
			t.Errorf("echo = %+v", echo)
		}
		if !strings.Contains(string(echo.InputSchema), `"message"`) || !strings.Contains(string(echo.InputSchema), `"object"`) {
			t.Errorf("schema = %s", echo.InputSchema)
		}
		if f := findTool(tools, "mcp__test__fail"); f == nil || f.ReadOnly {
			t.Errorf("fail = %+v", f)
		}
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPReady || st.ToolCount != len(tools) || st.ToolCount == 0 {
			t.Errorf("status = %+v", st)
		}
	})
	t.Run("gives a tool's text back", func(t *testing.T) {
		res, err := call(t, m, "mcp__test__echo", `{"message":"hi"}`)
		if err != nil || res.Text != "Echo: hi" || res.IsError {
			t.Fatalf("got %+v, %v", res, err)
		}
	})
	t.Run("renders images, links, resources and structured content as text", func(t *testing.T) {
		res, err := call(t, m, "mcp__test__mixed", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Images) != 1 || res.Images[0].MIMEType != "image/png" || len(res.Images[0].Data) != 70 {
			t.Errorf("images = %+v, want the one png of 70 bytes", res.Images)
		}
		for _, want := range []string{
			"hello",
			"[image 1: image/png, 70 bytes]",
			"[resource link: file:///w/a.txt (a.txt), text/plain] a file",
			"[resource: test://r/1, text/plain]\ninside",
			"[resource: test://r/2, application/octet-stream, 3 bytes of binary data; not shown]",
			"Structured content:\n{\"sum\":3}",
		} {
			if !strings.Contains(res.Text, want) {
				t.Errorf("missing %q in:\n%s", want, res.Text)
			}
		}
	})
	t.Run("does not repeat structured content a text already holds", func(t *testing.T) {
		res, err := call(t, m, "mcp__test__structured", `{}`)
		if err != nil || res.Text != `{"sum": 3}` {
			t.Fatalf("got %q, %v", res.Text, err)
		}
	})
	t.Run("gives a tool's failure as an error result", func(t *testing.T) {
		res, err := call(t, m, "mcp__test__fail", `{}`)
		if err != nil || !res.IsError || res.Text != "it went wrong" {
			t.Fatalf("got %+v, %v", res, err)
		}
	})
	t.Run("refuses a tool no server offers", func(t *testing.T) {
		_, err := call(t, m, "mcp__test__nope", `{}`)
		if !errors.Is(err, ErrUnknownTool) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("cancels a call on the server when its time is up", func(t *testing.T) {
		before := p.cancels()
		_, err := m.Call(ctxT(t), "mcp__test__hang", json.RawMessage(`{}`), 300*time.Millisecond)
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "timeouts.mcpMs") {
			t.Fatalf("got %v", err)
		}
		eventually(t, "the server saw notifications/cancelled", func() bool { return p.cancels() == before+1 })
	})
	t.Run("cancels a call on the server when its context ends (a stop)", func(t *testing.T) {
		before := p.cancels()
		select {
		case <-p.hanging: // the signal of the call before
		default:
		}
		ctx, cancel := context.WithCancelCause(ctxT(t))
		go func() {
			<-p.hanging
			cancel(errors.New("stopped by the user"))
		}()
		_, err := m.Call(ctx, "mcp__test__hang", json.RawMessage(`{}`), 0)
		if err == nil || err.Error() != "stopped by the user" {
			t.Fatalf("got %v", err)
		}
		eventually(t, "the server saw notifications/cancelled", func() bool { return p.cancels() == before+1 })
		if res, err := call(t, m, "mcp__test__echo", `{"message":"after"}`); err != nil || res.Text != "Echo: after" {
			t.Fatalf("the server is unusable after a cancel: %+v, %v", res, err)
		}
	})
	t.Run("lists the tools again on tools/list_changed", func(t *testing.T) {
		sdk.AddTool(srv, &sdk.Tool{Name: "late", Description: "Added later."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
			})
		eventually(t, "the new tool is offered", func() bool { return findTool(m.Tools(ctxT(t)), "mcp__test__late") != nil })
		if res, err := call(t, m, "mcp__test__late", `{}`); err != nil || res.Text != "late" {
			t.Fatalf("got %+v, %v", res, err)
		}
		srv.RemoveTools("late")
		eventually(t, "the removed tool is gone", func() bool { return findTool(m.Tools(ctxT(t)), "mcp__test__late") == nil })
	})
}

func TestHTTPHeaders(t *testing.T) {
	srv := testServer(nil)
	var mu sync.Mutex
	var seen []string
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	environ := []string{"PATH=" + os.Getenv("PATH"), "SERVICE_TOKEN=tok-0123456789abcdef"}
	red := redact.FromEnviron(environ)
	m := newManager(t, Options{Environ: environ, Redactor: red}, map[string]api.MCPServer{
		"web": {URL: ts.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${SERVICE_TOKEN}", "X-Api-Key": "literal-key-value-42"}},
	}, 10*time.Second)
	if res, err := call(t, m, "mcp__web__echo", `{"message":"x"}`); err != nil || res.Text != "Echo: x" {
		t.Fatalf("got %+v, %v", res, err)
	}
	t.Run("sends the entry's headers, ${NAME} expanded", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[0] != "Bearer tok-0123456789abcdef" {
			t.Fatalf("Authorization headers seen: %q", seen)
		}
	})
	t.Run("knows a literal credential header as a secret", func(t *testing.T) {
		if got := red.String("key literal-key-value-42"); strings.Contains(got, "literal-key-value-42") {
			t.Fatalf("not redacted: %q", got)
		}
	})
}

func TestStdioServer(t *testing.T) {
	environ := append(os.Environ(), "OPENAI_API_KEY=sk-test-0123456789abcdef", "GITHUB_TOKEN=ghp_0123456789abcdef", "PLAIN_SETTING=plain")
	red := redact.FromEnviron(environ)
	m := newManager(t, Options{Environ: environ, Redactor: red}, map[string]api.MCPServer{
		"local": stdioEntry(t, map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "MY_VAR": "mine"}),
	}, 20*time.Second)

	envOf := func(name string) string {
		t.Helper()
		res, err := call(t, m, "mcp__local__env", `{"name":"`+name+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	t.Run("runs with the sidecar's environment less its secrets, plus its own env", func(t *testing.T) {
		if got := envOf("OPENAI_API_KEY"); got != "(unset)" {
			t.Errorf("OPENAI_API_KEY = %q: a provider key reached the server", got)
		}
		if got := envOf("MY_VAR"); got != "mine" {
			t.Errorf("MY_VAR = %q", got)
		}
		if got := envOf("PLAIN_SETTING"); got != "plain" {
			t.Errorf("PLAIN_SETTING = %q", got)
		}
		// The value reaches the server; what the server gives back is
		// redacted later, by the worker.
		if got := envOf("GITHUB_TOKEN"); got != "ghp_0123456789abcdef" {
			t.Errorf("GITHUB_TOKEN = %q: the entry named it", got)
		}
	})
	t.Run("is ready over stdio", func(t *testing.T) {
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPReady || st.Transport != api.MCPStdio {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("fails the call in flight when it crashes, restarts once, then stays failed", func(t *testing.T) {
		_, err := call(t, m, "mcp__local__crash", `{}`)
		if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "crashing on purpose") {
			t.Fatalf("got %v", err)
		}
		if !strings.Contains(err.Error(), "restarted at the next call") {
			t.Errorf("the error does not say what happens next: %v", err)
		}
		if st := m.Status(ctxT(t), false).Servers[0]; st.State != api.MCPFailed {
			t.Errorf("after the crash: %+v", st)
		}
		if res, err := call(t, m, "mcp__local__echo", `{"message":"back"}`); err != nil || res.Text != "Echo: back" {
			t.Fatalf("after the restart: %+v, %v", res, err)
		}
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPRestarted || st.Restarts != 1 || st.ToolCount == 0 {
			t.Errorf("after the restart: %+v", st)
		}
		if _, err := call(t, m, "mcp__local__crash", `{}`); !errors.Is(err, ErrCrashed) {
			t.Fatalf("second crash: %v", err)
		}
		_, err = call(t, m, "mcp__local__echo", `{"message":"again"}`)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "not restarted again") {
			t.Fatalf("after the second crash: %v", err)
		}
		if st := m.Status(ctxT(t), false).Servers[0]; st.State != api.MCPFailed || st.Restarts != 1 || st.ToolCount != 0 {
			t.Errorf("after the second crash: %+v", st)
		}
	})
}

func TestStopKillsTheGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to see processes")
	}
	m := New(Options{Dir: t.TempDir()})
	m.Configure(map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
	res, err := m.Call(ctxT(t), "mcp__local__pid", json.RawMessage(`{}`), 10*time.Second)
	if errors.Is(err, ErrUnknownTool) {
		m.Tools(ctxT(t))
		res, err = m.Call(ctxT(t), "mcp__local__pid", json.RawMessage(`{}`), 10*time.Second)
	}
	if err != nil {
		t.Fatal(err)
	}
	server, _ := strconv.Atoi(res.Text)
	res, err = m.Call(ctxT(t), "mcp__local__child", json.RawMessage(`{}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(res.Text)
	if server == 0 || child == 0 || !testkit.Alive(child) {
		t.Fatalf("pids %d, %d", server, child)
	}
	m.Close()
	eventually(t, "the server and its child are gone", func() bool { return !testkit.Alive(server) && !testkit.Alive(child) })
}

func TestStartFailures(t *testing.T) {
	t.Run("a command that cannot run fails the server with the reason", func(t *testing.T) {
		m := newManager(t, Options{}, map[string]api.MCPServer{"nope": {Command: "/nonexistent/agentls-mcp-server"}}, 5*time.Second)
		if tools := m.Tools(ctxT(t)); len(tools) != 0 {
			t.Fatalf("tools = %v", tools)
		}
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPFailed || !strings.Contains(st.Error, "cannot run") {
			t.Fatalf("status = %+v", st)
		}
		if _, err := call(t, m, "mcp__nope__x", `{}`); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cannot run") {
			t.Fatalf("a call of one of its tools: %v", err)
		}
	})
	t.Run("a server that never answers initialize fails after the bound", func(t *testing.T) {
		m := newManager(t, Options{}, map[string]api.MCPServer{"mute": {Command: "sleep", Args: []string{"600"}}}, 300*time.Millisecond)
		m.Tools(ctxT(t))
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPFailed || !strings.Contains(st.Error, "within 300ms (timeouts.mcpMs)") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("a server that exits at once says what it printed", func(t *testing.T) {
		m := newManager(t, Options{}, map[string]api.MCPServer{"bad": {Command: "sh", Args: []string{"-c", "echo missing module >&2; exit 1"}}}, 10*time.Second)
		m.Tools(ctxT(t))
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPFailed || !strings.Contains(st.Error, "missing module") {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestConfigure(t *testing.T) {
	m := newManager(t, Options{}, map[string]api.MCPServer{"local": stdioEntry(t, map[string]string{"V": "1"})}, 20*time.Second)
	m.Tools(ctxT(t))
	res, err := call(t, m, "mcp__local__pid", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := strconv.Atoi(res.Text)
	t.Run("keeps a server whose entry did not change", func(t *testing.T) {
		m.Configure(map[string]api.MCPServer{"local": stdioEntry(t, map[string]string{"V": "1"})}, 20*time.Second)
		res, err := call(t, m, "mcp__local__pid", `{}`)
		if err != nil || res.Text != strconv.Itoa(first) {
			t.Fatalf("got %+v, %v; want the same process %d", res, err, first)
		}
	})
	t.Run("stops a server whose entry changed and starts the new one when needed", func(t *testing.T) {
		m.Configure(map[string]api.MCPServer{"local": stdioEntry(t, map[string]string{"V": "2"})}, 20*time.Second)
		eventually(t, "the old process is gone", func() bool { return !testkit.Alive(first) })
		if st := m.Status(ctxT(t), false).Servers[0]; st.State != api.MCPNotStarted {
			t.Fatalf("status = %+v", st)
		}
		m.Tools(ctxT(t))
		if res, err := call(t, m, "mcp__local__env", `{"name":"V"}`); err != nil || res.Text != "2" {
			t.Fatalf("got %+v, %v", res, err)
		}
	})
	t.Run("stops a server that is no longer listed", func(t *testing.T) {
		res, _ := call(t, m, "mcp__local__pid", `{}`)
		pid, _ := strconv.Atoi(res.Text)
		m.Configure(map[string]api.MCPServer{}, 0)
		eventually(t, "the process is gone", func() bool { return !testkit.Alive(pid) })
		if st := m.Status(ctxT(t), true); len(st.Servers) != 0 {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestToolNames(t *testing.T) {
	t.Run("keeps a short clean name", func(t *testing.T) {
		if got := toolNames("everything", []string{"get-sum"}); got[0] != "mcp__everything__get-sum" {
			t.Fatal(got)
		}
	})
	t.Run("replaces what model APIs refuse", func(t *testing.T) {
		if got := toolNames("my.server", []string{"read file"}); got[0] != "mcp__my_server__read_file" {
			t.Fatal(got)
		}
	})
	t.Run("cuts a long name to 64 and keeps it unique", func(t *testing.T) {
		long := strings.Repeat("x", 80)
		got := toolNames("srv", []string{long + "a", long + "b"})
		if len(got[0]) != 64 || len(got[1]) != 64 || got[0] == got[1] || !strings.HasPrefix(got[0], "mcp__srv__xxx") {
			t.Fatal(got)
		}
	})
	t.Run("keeps two tools that sanitize alike apart", func(t *testing.T) {
		got := toolNames("s", []string{"a.b", "a_b"})
		if got[0] != "mcp__s__a_b" || got[1] == got[0] || len(got[1]) > 64 {
			t.Fatal(got)
		}
	})
}

func TestHTTPServerGone(t *testing.T) {
	srv := testServer(nil)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	m := newManager(t, Options{}, map[string]api.MCPServer{"web": {URL: ts.URL + "/mcp"}}, 5*time.Second)
	if res, err := call(t, m, "mcp__web__echo", `{"message":"x"}`); err != nil || res.Text != "Echo: x" {
		t.Fatalf("got %+v, %v", res, err)
	}
	ts.CloseClientConnections()
	ts.Close()
	t.Run("fails the call when the server has gone away", func(t *testing.T) {
		_, err := call(t, m, "mcp__web__echo", `{"message":"y"}`)
		if !errors.Is(err, ErrCrashed) || !strings.Contains(err.Error(), "restarted at the next call") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("tries it once more at the next call, and says it cannot start", func(t *testing.T) {
		_, err := call(t, m, "mcp__web__echo", `{"message":"z"}`)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "failed to start") {
			t.Fatalf("got %v", err)
		}
		st := m.Status(ctxT(t), false).Servers[0]
		if st.State != api.MCPFailed || st.Restarts != 1 {
			t.Fatalf("status = %+v", st)
		}
	})
}

func TestToolsAddedWhileStarting(t *testing.T) {
	// A server that adds a tool once initialized announces it while the
	// client is still starting: the tool must be offered all the same.
	var srv *sdk.Server
	srv = sdk.NewServer(&sdk.Implementation{Name: "late", Version: "1"}, &sdk.ServerOptions{
		InitializedHandler: func(context.Context, *sdk.InitializedRequest) {
			sdk.AddTool(srv, &sdk.Tool{Name: "added"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "here"}}}, nil, nil
			})
		},
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "first"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{}, nil, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	m := newManager(t, Options{}, map[string]api.MCPServer{"s": {URL: ts.URL + "/mcp"}}, 10*time.Second)
	eventually(t, "the tool added at initialized is offered", func() bool { return findTool(m.Tools(ctxT(t)), "mcp__s__added") != nil })
}
