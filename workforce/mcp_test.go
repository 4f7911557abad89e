package workforce

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/mcp"
	"github.com/agentls/agentls/tracking"
)

// fakeTools is a ToolSource with two tools; their results carry images
// when it has some.
type fakeTools struct {
	mu     sync.Mutex
	calls  []string
	images []clients.Image
	// the approval of its one server's start, as mcp.Manager keeps it
	decided  bool
	declined error
}

func (f *fakeTools) Tools(ctx context.Context, approve mcp.Approve) []api.MCPTool {
	if approve != nil {
		f.mu.Lock()
		if !f.decided {
			f.declined, f.decided = approve(ctx, "srv", api.MCPServer{Command: "srv-server", Args: []string{"--stdio"}}), true
		}
		declined := f.declined
		f.mu.Unlock()
		if declined != nil {
			return nil
		}
	}
	return []api.MCPTool{
		{Name: "mcp__srv__echo", Server: "srv", Tool: "echo", Description: "Echoes.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)},
		{Name: "mcp__srv__write", Server: "srv", Tool: "write", Description: "Writes.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
}

func (f *fakeTools) Call(_ context.Context, name string, args json.RawMessage, _ time.Duration) (ToolOutput, error) {
	f.mu.Lock()
	f.calls = append(f.calls, name)
	f.mu.Unlock()
	return ToolOutput{Text: "called " + name + " with " + string(args), Images: f.images}, nil
}

func (f *fakeTools) Unavailable(string) error { return nil }

func (f *fakeTools) made() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// runMCP runs one worker that makes the calls, then finishes, and returns
// the model's requests of the worker.
func runMCP(t *testing.T, s api.Settings, answer string, tools *fakeTools, calls ...clients.ToolCall) ([]clients.Request, []api.ShowMessageRequestParams) {
	t.Helper()
	turn := 0
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			return planOf(map[string]any{"id": "1", "content": "use the tools"}), nil
		}
		turn++
		if turn <= len(calls) {
			return &clients.Response{ToolCalls: []clients.ToolCall{calls[turn-1]}}, nil
		}
		return finish("done"), nil
	}}
	root := t.TempDir()
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ed := headlesstest.New(root, api.Caps{})
	ed.SetAnswer(answer)
	e, err := New(Config{Root: root, Editor: ed, Events: &fakeEvents{}, Tracking: ws, Models: m, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if _, err := e.Run(context.Background(), api.RunParams{Prompt: "go"}, s); err != nil {
		t.Fatal(err)
	}
	return m.requests("1"), ed.Asked()
}

func lastResult(reqs []clients.Request, turn int) clients.ToolResult {
	msgs := reqs[turn].Messages
	return msgs[len(msgs)-1].ToolResults[0]
}

func TestMCPTools(t *testing.T) {
	t.Run("offers the MCP tools with their schemas and gives the model their results", func(t *testing.T) {
		tools := &fakeTools{}
		reqs, _ := runMCP(t, settings(), "Run", tools, call("mcp__srv__echo", map[string]any{"message": "hi"}))
		var offered *clients.Tool
		for i, tl := range reqs[0].Tools {
			if tl.Name == "mcp__srv__echo" {
				offered = &reqs[0].Tools[i]
			}
		}
		if offered == nil || !strings.Contains(string(offered.Parameters), `"message"`) || offered.Description != "Echoes." {
			t.Fatalf("offered = %+v", offered)
		}
		if r := lastResult(reqs, 1); r.IsError || r.Content != `called mcp__srv__echo with {"message":"hi"}` {
			t.Fatalf("result = %+v", r)
		}
	})
	for _, c := range []struct {
		name     string
		commands string
		allow    []string
		answer   string
		asked    int
		called   bool
		says     string
	}{
		{"asks the person under the ask policy and calls when they accept", api.CommandsAsk, nil, "Run", 1, true, "called"},
		{"does not call when the person refuses", api.CommandsAsk, nil, "Deny", 1, false, "refused to call the MCP tool write"},
		{"calls a tool of a server allowMcpTools names without asking", api.CommandsAsk, []string{"mcp__srv"}, "Deny", 0, true, "called"},
		{"calls a tool allowMcpTools names without asking", api.CommandsAsk, []string{"mcp__srv__write"}, "Deny", 0, true, "called"},
		{"asks for a tool allowMcpTools does not name", api.CommandsAsk, []string{"mcp__srv__echo", "mcp__other"}, "Run", 1, true, "called"},
		{"calls without asking under the allow policy", api.CommandsAllow, nil, "Deny", 0, true, "called"},
		{"refuses every MCP tool under the deny policy", api.CommandsDeny, nil, "Run", 0, false, "MCP tools are turned off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := settings()
			s.Commands, s.AllowMCPTools = c.commands, c.allow
			tools := &fakeTools{}
			reqs, asked := runMCP(t, s, c.answer, tools, call("mcp__srv__write", map[string]any{"path": "x"}))
			if len(asked) != c.asked {
				t.Errorf("asked %+v", asked)
			}
			if c.asked > 0 && !strings.Contains(asked[0].Message, "`write` of the server `srv` with {\"path\":\"x\"}") {
				t.Errorf("approval = %q", asked[0].Message)
			}
			if called := len(tools.made()) == 1; called != c.called {
				t.Errorf("called = %v", called)
			}
			if r := lastResult(reqs, 1); !strings.Contains(r.Content, c.says) {
				t.Errorf("result = %+v", r)
			}
		})
	}
	t.Run("tells the model the tools when it names one that does not exist", func(t *testing.T) {
		reqs, _ := runMCP(t, settings(), "Run", &fakeTools{}, call("mcp__srv__nope", map[string]any{}))
		if r := lastResult(reqs, 1); !r.IsError || !strings.Contains(r.Content, "mcp__srv__echo, mcp__srv__write") {
			t.Fatalf("result = %+v", r)
		}
	})
	t.Run("refuses arguments that are not an object", func(t *testing.T) {
		tools := &fakeTools{}
		reqs, _ := runMCP(t, settings(), "Run", tools, clients.ToolCall{ID: "x", Name: "mcp__srv__echo", Arguments: json.RawMessage(`[1]`)})
		if r := lastResult(reqs, 1); !r.IsError || len(tools.made()) != 0 {
			t.Fatalf("result = %+v, calls %v", r, tools.made())
		}
	})
}

func TestMCPResultImages(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n")
	tools := &fakeTools{images: []clients.Image{
		{MimeType: "image/png", Data: png},
		{MimeType: "image/bmp", Data: []byte("BM")},
		{MimeType: "image/png", Data: make([]byte, 2048)},
	}}
	s := settings()
	s.Attachments.MaxImageBytes = 1024
	reqs, _ := runMCP(t, s, "Run", tools, call("mcp__srv__echo", map[string]any{"message": "shot"}))
	r := lastResult(reqs, 1)
	t.Run("gives the model the images of a tool's result with its text", func(t *testing.T) {
		if len(r.Images) != 1 || string(r.Images[0].Data) != string(png) {
			t.Errorf("images = %+v", r.Images)
		}
	})
	t.Run("leaves out an image of a type models do not take, and says so", func(t *testing.T) {
		if !strings.Contains(r.Content, "[image 2 is not given to the model: image/bmp is not an image type models take") {
			t.Errorf("content = %q", r.Content)
		}
	})
	t.Run("leaves out an image larger than attachments.maxImageBytes, and says so", func(t *testing.T) {
		if !strings.Contains(r.Content, "[image 3 is not given to the model: 2048 bytes, more than attachments.maxImageBytes (1024)]") {
			t.Errorf("content = %q", r.Content)
		}
	})
}
