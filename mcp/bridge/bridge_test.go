package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeHost serves one tool that says who called it.
type fakeHost struct {
	mu    sync.Mutex
	calls []string
}

func (h *fakeHost) tools(context.Context) []api.MCPTool {
	return []api.MCPTool{{Name: "read_file", Description: "Reads.", ReadOnly: true,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}}
}

func (h *fakeHost) BridgeCall(_ context.Context, task, sub, tool string, args json.RawMessage) (string, bool, error) {
	h.mu.Lock()
	h.calls = append(h.calls, task+"/"+sub+" "+tool+" "+string(args))
	h.mu.Unlock()
	return "read by " + task + "/" + sub, false, nil
}

// relay runs Relay with the entry's environment over pipes and returns an
// MCP client session on them.
func relay(t *testing.T, entry api.MCPServer) (*sdk.ClientSession, <-chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := Relay(context.Background(), inR, outW, func(k string) string { return entry.Env[k] })
		outW.CloseWithError(io.EOF)
		done <- err
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test"}, nil)
	s, err := client.Connect(ctxT(t), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, done
}

func TestBridge(t *testing.T) {
	host := &fakeHost{}
	red := redact.New()
	l := New(Options{Dir: t.TempDir(), Executable: "/usr/bin/agentls", Redactor: red}, host)
	t.Cleanup(l.Close)
	entry, revoke, err := l.Open("t1", "2", host.tools)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("hands out an entry that starts agentls mcp with the socket and a token", func(t *testing.T) {
		if entry.Command != "/usr/bin/agentls" || len(entry.Args) != 1 || entry.Args[0] != "mcp" ||
			entry.Env[EnvSocket] == "" || len(entry.Env[EnvToken]) != 64 {
			t.Fatalf("entry = %+v", entry)
		}
		st, err := os.Stat(entry.Env[EnvSocket])
		if err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Fatalf("socket: %v, %v", st, err)
		}
		if got := red.String("token " + entry.Env[EnvToken]); strings.Contains(got, entry.Env[EnvToken]) {
			t.Fatalf("the token is not known as a secret: %q", got)
		}
	})
	s, done := relay(t, entry)
	t.Run("serves the host's tools as the subtask of the grant", func(t *testing.T) {
		tools, err := s.ListTools(ctxT(t), nil)
		if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "read_file" {
			t.Fatalf("tools = %+v, %v", tools, err)
		}
		res, err := s.CallTool(ctxT(t), &sdk.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "a.go"}})
		if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "read by t1/2" {
			t.Fatalf("result = %+v, %v", res, err)
		}
		if host.calls[0] != `t1/2 read_file {"path":"a.go"}` {
			t.Fatalf("calls = %q", host.calls)
		}
	})
	t.Run("ends the session when the grant is revoked", func(t *testing.T) {
		revoke()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("relay: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the relay did not end")
		}
	})
	t.Run("refuses a revoked token", func(t *testing.T) {
		err := Relay(ctxT(t), strings.NewReader(""), io.Discard, func(k string) string { return entry.Env[k] })
		if err == nil || !strings.Contains(err.Error(), "refused the connection: unknown or revoked token") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("refuses a made-up token", func(t *testing.T) {
		env := map[string]string{EnvSocket: entry.Env[EnvSocket], EnvToken: strings.Repeat("0", 64)}
		err := Relay(ctxT(t), strings.NewReader(""), io.Discard, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "unknown or revoked token") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("says how it is meant to be started when run by hand", func(t *testing.T) {
		err := Relay(ctxT(t), strings.NewReader(""), io.Discard, func(string) string { return "" })
		if !errors.Is(err, ErrNotStarted) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestBridgeServesEachGrantItsOwnTools(t *testing.T) {
	host := &fakeHost{}
	l := New(Options{Dir: t.TempDir(), Executable: "agentls"}, host)
	t.Cleanup(l.Close)
	echo := func(context.Context) []api.MCPTool {
		return append(host.tools(context.Background()), api.MCPTool{Name: "mcp__everything__echo", Description: "Echoes.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)})
	}
	with, _, err := l.Open("t1", "1", echo)
	if err != nil {
		t.Fatal(err)
	}
	without, _, err := l.Open("t1", "2", host.tools)
	if err != nil {
		t.Fatal(err)
	}
	names := func(entry api.MCPServer) []string {
		s, _ := relay(t, entry)
		defer s.Close()
		res, err := s.ListTools(ctxT(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tl := range res.Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := strings.Join(names(with), " "); got != "mcp__everything__echo read_file" && got != "read_file mcp__everything__echo" {
		t.Fatalf("subtask 1 is served %q", got)
	}
	if got := strings.Join(names(without), " "); got != "read_file" {
		t.Fatalf("subtask 2 is served %q", got)
	}
	if _, _, err := l.Open("t1", "3", nil); err == nil {
		t.Fatal("a grant without tools was opened")
	}
}

func TestBridgeClose(t *testing.T) {
	dir := t.TempDir()
	host := &fakeHost{}
	l := New(Options{Dir: dir, Executable: "agentls"}, host)
	entry, _, err := l.Open("t1", "1", host.tools)
	if err != nil {
		t.Fatal(err)
	}
	_, done := relay(t, entry)
	l.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay did not end when the bridge closed")
	}
	if _, err := os.Stat(entry.Env[EnvSocket]); !os.IsNotExist(err) {
		t.Fatalf("the socket is left: %v", err)
	}
	if _, _, err := l.Open("t1", "1", host.tools); !errors.Is(err, ErrClosed) {
		t.Fatalf("Open after Close: %v", err)
	}
}

func TestLongStateDir(t *testing.T) {
	dir := t.TempDir() + "/" + strings.Repeat("d", 120)
	host := &fakeHost{}
	l := New(Options{Dir: dir, Executable: "agentls"}, host)
	entry, _, err := l.Open("t1", "1", host.tools)
	if err != nil {
		t.Fatal(err)
	}
	sock := entry.Env[EnvSocket]
	if len(sock) > 100 {
		t.Fatalf("socket path %q is too long", sock)
	}
	l.Close()
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Fatalf("the private directory is left: %v", err)
	}
}
