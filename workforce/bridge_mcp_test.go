package workforce

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/tracking"
)

// grantBridge is a Bridge that keeps what its one grant serves.
type grantBridge struct {
	mu                sync.Mutex
	taskID, subtaskID string
	tools             func(context.Context) []api.MCPTool
}

func (b *grantBridge) Open(taskID, subtaskID string, tools func(context.Context) []api.MCPTool) (api.MCPServer, func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.taskID, b.subtaskID, b.tools = taskID, subtaskID, tools
	return api.MCPServer{Command: "agentls", Args: []string{"mcp"}}, func() {}, nil
}

// bridgeRunner is an engine whose agent, in its turn, lists the bridge's
// tools and calls one of them, as a real agent does through agentls mcp.
type bridgeRunner struct {
	e      *Engine
	b      *grantBridge
	shares bool
	tool   string

	listed []string
	text   string
	isErr  bool
	err    error
	job    engines.Job
}

func (r *bridgeRunner) Usable(string) error        { return nil }
func (r *bridgeRunner) Available() []string        { return []string{"fake"} }
func (r *bridgeRunner) SharesMCP(name string) bool { return r.shares }
func (r *bridgeRunner) Run(ctx context.Context, name string, job engines.Job, host engines.Host) (engines.Outcome, error) {
	r.job = job
	for _, tl := range r.b.tools(ctx) {
		r.listed = append(r.listed, tl.Name)
	}
	r.text, r.isErr, r.err = r.e.BridgeCall(ctx, r.b.taskID, r.b.subtaskID, r.tool, json.RawMessage(`{"message":"hi"}`))
	return engines.Outcome{StopReason: "end_turn", Text: "done"}, nil
}

func runBridged(t *testing.T, commands, answer string, shares bool, change ...func(*api.Settings)) (*bridgeRunner, *fakeTools, []api.ShowMessageRequestParams) {
	t.Helper()
	root := t.TempDir()
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ed := headlesstest.New(root, api.Caps{})
	ed.SetAnswer(answer)
	tools := &fakeTools{}
	r := &bridgeRunner{b: &grantBridge{}, shares: shares, tool: "mcp__srv__echo"}
	m := &funcModel{fn: func(context.Context, *clients.Request) (*clients.Response, error) {
		return planOf(map[string]any{"id": "1", "content": "use the server"}), nil
	}}
	e, err := New(Config{Root: root, Editor: ed, Events: &fakeEvents{}, Tracking: ws, Models: m, Tools: tools,
		Bridge: r.b, Engines: r, EngineWorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r.e = e
	s := settings()
	s.Commands = commands
	for _, f := range change {
		f(&s)
	}
	res, err := e.Run(context.Background(), api.RunParams{Prompt: "go", Engine: "fake"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.State != api.TaskDone {
		t.Fatalf("state %s: %s", res.State, res.Summary)
	}
	return r, tools, ed.Asked()
}

func TestEnginesCallTheUsersMCPServersThroughTheBridge(t *testing.T) {
	t.Run("an engine is served the worker's MCP tools beside the editor's", func(t *testing.T) {
		r, tools, asked := runBridged(t, api.CommandsAsk, "Run", true)
		if !slices.Contains(r.listed, "mcp__srv__echo") || !slices.Contains(r.listed, "read_file") {
			t.Fatalf("listed %v", r.listed)
		}
		if r.err != nil || r.isErr || !strings.Contains(r.text, "called mcp__srv__echo") {
			t.Fatalf("call: %q %v %v", r.text, r.isErr, r.err)
		}
		if got := tools.made(); !slices.Equal(got, []string{"mcp__srv__echo"}) {
			t.Fatalf("the server got %v", got)
		}
		if len(asked) != 1 || !strings.Contains(asked[0].Message, "echo") {
			t.Fatalf("under ask the person is asked once, as for the worker's own call: %+v", asked)
		}
	})
	t.Run("under deny the call is refused, as the worker's would be", func(t *testing.T) {
		r, tools, asked := runBridged(t, api.CommandsDeny, "Run", true)
		if r.err != nil || !r.isErr || !strings.Contains(r.text, "commands setting is deny") || len(tools.made()) != 0 || len(asked) != 0 {
			t.Fatalf("call: %q %v %v, made %v, asked %v", r.text, r.isErr, r.err, tools.made(), asked)
		}
	})
	t.Run("the person's Deny refuses it", func(t *testing.T) {
		r, tools, _ := runBridged(t, api.CommandsAsk, "Deny", true)
		if !r.isErr || len(tools.made()) != 0 {
			t.Fatalf("call: %q %v, made %v", r.text, r.isErr, tools.made())
		}
	})
	t.Run("an engine whose entry says mcpServers: false gets only the editor's tools", func(t *testing.T) {
		r, tools, _ := runBridged(t, api.CommandsAllow, "Run", false)
		if slices.Contains(r.listed, "mcp__srv__echo") || r.err == nil || len(tools.made()) != 0 {
			t.Fatalf("listed %v, call %q %v", r.listed, r.text, r.err)
		}
	})
	t.Run("the engine is held to the commands setting it runs under", func(t *testing.T) {
		r, _, _ := runBridged(t, api.CommandsDeny, "Run", true)
		if r.job.Commands != api.CommandsDeny {
			t.Fatalf("job.Commands = %q", r.job.Commands)
		}
	})
	t.Run("in a workspace the person does not trust, allow holds the engine to ask", func(t *testing.T) {
		r, _, _ := runBridged(t, api.CommandsAllow, "Run", true, func(s *api.Settings) { s.WorkspaceTrust = api.TrustUntrusted })
		if r.job.Commands != api.CommandsAsk {
			t.Fatalf("job.Commands = %q", r.job.Commands)
		}
	})
}
