package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// The figures of docs/BENCHMARKS.md (MCP):
//
//	go test -run '^$' -bench . -benchmem ./mcp/                      # in-process
//	AGENTLS_MCP_NPM=$(bash scripts/mcp-npm.sh) go test -run '^$' -bench . -benchtime 20x ./mcp/
//
// Call/*/sdk is the Go SDK's own ClientSession.CallTool on the same
// connection: the Manager's overhead per call is the difference to
// Call/*/manager. Start/* is a Manager's start of one server up to its tool
// list, then its stop.

// benchNpm is the directory of scripts/mcp-npm.sh, or a skip.
func benchNpm(b *testing.B) string {
	dir := os.Getenv("AGENTLS_MCP_NPM")
	if dir == "" {
		b.Skip("AGENTLS_MCP_NPM is not set: AGENTLS_MCP_NPM=$(bash scripts/mcp-npm.sh)")
	}
	return dir
}

func everythingEntry(dir string) api.MCPServer {
	return api.MCPServer{Command: "node", Args: []string{filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}}
}

// inMemory makes a Manager whose server "mem" is testServer over the SDK's
// in-memory transport.
func inMemory(b *testing.B) *Manager {
	m := New(Options{Dir: b.TempDir()})
	m.dial = func(ctx context.Context, _ *server) (sdk.Transport, *process, error) {
		ct, st := sdk.NewInMemoryTransports()
		if _, err := testServer(nil).Connect(ctx, st, nil); err != nil {
			return nil, nil, err
		}
		return ct, nil, nil
	}
	m.Configure(map[string]api.MCPServer{"mem": {Command: "in-memory"}}, time.Minute)
	b.Cleanup(m.Close)
	return m
}

// session is the live SDK session of a Manager's only server.
func session(b *testing.B, m *Manager) *sdk.ClientSession {
	m.Tools(context.Background())
	s := m.list()[0]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		b.Fatalf("%s did not start: %s", s.name, s.err)
	}
	return s.conn.session
}

func benchCalls(b *testing.B, m *Manager, name, tool string) {
	ctx := context.Background()
	args := json.RawMessage(`{"message":"hello"}`)
	raw := session(b, m)
	b.Run("sdk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := raw.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("manager", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := m.Call(ctx, name, args, time.Minute)
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	})
}

func BenchmarkCall(b *testing.B) {
	b.Run("in-memory", func(b *testing.B) {
		benchCalls(b, inMemory(b), "mcp__mem__echo", "echo")
	})
	b.Run("everything-stdio", func(b *testing.B) {
		dir := benchNpm(b)
		m := New(Options{Dir: b.TempDir()})
		b.Cleanup(m.Close)
		m.Configure(map[string]api.MCPServer{"everything": everythingEntry(dir)}, time.Minute)
		benchCalls(b, m, "mcp__everything__echo", "echo")
	})
}

func benchStart(b *testing.B, entry api.MCPServer) {
	for b.Loop() {
		m := New(Options{Dir: b.TempDir()})
		m.Configure(map[string]api.MCPServer{"s": entry}, time.Minute)
		if n := len(m.Tools(context.Background())); n == 0 {
			b.Fatalf("no tools: %+v", m.Status(context.Background(), false))
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

func BenchmarkStart(b *testing.B) {
	b.Run("in-memory", func(b *testing.B) {
		for b.Loop() {
			m := inMemory(b)
			if len(m.Tools(context.Background())) == 0 {
				b.Fatal("no tools")
			}
			b.StopTimer()
			m.Close()
			b.StartTimer()
		}
	})
	b.Run("everything-node", func(b *testing.B) {
		benchStart(b, everythingEntry(benchNpm(b)))
	})
	b.Run("everything-npx", func(b *testing.B) {
		dir := benchNpm(b)
		benchStart(b, api.MCPServer{Command: "npx", Args: []string{"--offline", "--prefix", dir, "mcp-server-everything", "stdio"},
			Env: map[string]string{"NPM_CONFIG_USERCONFIG": os.DevNull}})
	})
	b.Run("everything-http", func(b *testing.B) {
		dir := benchNpm(b)
		url := everythingHTTP(b, dir)
		benchStart(b, api.MCPServer{URL: url})
	})
}

// everythingHTTP runs the everything server's streamable HTTP mode for the
// benchmark and returns its endpoint.
func everythingHTTP(b *testing.B, dir string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	e := everythingEntry(dir)
	cmd := exec.Command(e.Command, e.Args[0], "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	testkit.Group(cmd)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		testkit.KillGroup(cmd)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the everything server did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// BenchmarkOwnWork is what the Manager adds to a call on its own, without
// the SDK and the server: finding the tool by the model's name, and
// rendering a result (text and structured content) as the model's text.
func BenchmarkOwnWork(b *testing.B) {
	m := inMemory(b)
	m.Tools(context.Background())
	res := &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: `{"temperature": 22, "conditions": "Sunny"}`}},
		StructuredContent: map[string]any{"temperature": 22, "conditions": "Sunny"},
	}
	b.ReportAllocs()
	for b.Loop() {
		s, tool := m.lookup("mcp__mem__echo")
		if s == nil || tool != "echo" {
			b.Fatal("not found")
		}
		if r := render(res); r.Text == "" {
			b.Fatal("empty")
		}
	}
}
