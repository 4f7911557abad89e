//go:build unix

package acpface_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// TestMain lets the test binary play a stdio MCP server with an echo tool
// when AGENTLS_ACP_TEST_MCP is set: a session's mcpServers start it as a
// real process. It is also the fake ACP agent of the engine tests
// (enginestest.ServeFakeAgent plays it in the processes they start).
func TestMain(m *testing.M) {
	enginestest.ServeFakeAgent()
	if os.Getenv("AGENTLS_ACP_TEST_MCP") == "1" {
		srv := sdk.NewServer(&sdk.Implementation{Name: "acp-test", Version: "1"}, nil)
		type echoArgs struct {
			Message string `json:"message"`
		}
		sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes the message."},
			func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Echo: " + a.Message}}}, nil, nil
			})
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test MCP server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if code == 0 {
		// Every goroutine a session started has ended with the server: a
		// leak fails the package, whichever test left it.
		if err := goleak.Find(goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"), goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func TestInitialize(t *testing.T) {
	t.Run("answers version 1 whatever is asked, with what agentls offers", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		res, err := e.agent.Initialize(testkit.Context(t), &acp.InitializeRequest{ProtocolVersion: 2, ClientCapabilities: fullCaps})
		must(t, err)
		c := res.AgentCapabilities
		switch {
		case res.ProtocolVersion != 1:
			t.Errorf("protocolVersion %d", res.ProtocolVersion)
		case !c.LoadSession || !c.PromptCapabilities.EmbeddedContext || !c.PromptCapabilities.Image || c.PromptCapabilities.Audio || !c.MCPCapabilities.HTTP || c.MCPCapabilities.SSE:
			t.Errorf("agentCapabilities %+v", c)
		case c.SessionCapabilities.List == nil || c.SessionCapabilities.Resume == nil || c.SessionCapabilities.Close == nil:
			t.Errorf("sessionCapabilities %+v", c.SessionCapabilities)
		case len(res.AuthMethods) != 1 || res.AuthMethods[0].ID != "agentls-model" || !strings.Contains(res.AuthMethods[0].Description, "AGENTLS_MODEL"):
			t.Errorf("authMethods %+v", res.AuthMethods)
		case res.AgentInfo == nil || res.AgentInfo.Name != "agentls" || res.AgentInfo.Version != "test":
			t.Errorf("agentInfo %+v", res.AgentInfo)
		}
	})

	t.Run("refuses a session before initialize", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		_, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		if codeOf(err) != api.CodeInvalidRequest || !strings.Contains(err.Error(), "initialize first") {
			t.Fatalf("session/new before initialize = %v", err)
		}
	})

	t.Run("refuses settings in _meta.agentls that do not fit, naming the key", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		_, err := e.agent.Initialize(testkit.Context(t), &acp.InitializeRequest{ProtocolVersion: 1,
			Meta: acp.MetaOf(acp.MetaKey, map[string]any{"editMode": "yolo"})})
		if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "_meta.agentls.editMode") {
			t.Fatalf("initialize = %v", err)
		}
		// The connection goes on: a good initialize follows.
		e.initialize(t, opts{})
	})
}

func TestAuthenticate(t *testing.T) {
	t.Run("succeeds when a model can be used", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		e.initialize(t, opts{})
		_, err := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "agentls-model"})
		must(t, err)
	})

	t.Run("says which variable to set when there is no model", func(t *testing.T) {
		e := start(t, opts{})
		e.initialize(t, opts{})
		_, err := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "agentls-model"})
		if codeOf(err) != acp.CodeAuthRequired || !strings.Contains(err.Error(), "AGENTLS_MODEL") || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
			t.Fatalf("authenticate = %v", err)
		}
		_, err = e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		if codeOf(err) != acp.CodeAuthRequired {
			t.Fatalf("session/new without a model = %v", err)
		}
	})

	t.Run("names the key a provider's model lacks", func(t *testing.T) {
		e := start(t, opts{env: map[string]string{"AGENTLS_MODEL": "anthropic:claude-sonnet-4-5"}})
		e.initialize(t, opts{})
		_, err := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "agentls-model"})
		if codeOf(err) != acp.CodeAuthRequired || !strings.Contains(err.Error(), "needs ANTHROPIC_API_KEY") {
			t.Fatalf("authenticate = %v", err)
		}
	})

	t.Run("refuses a method it did not offer", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		e.initialize(t, opts{})
		_, err := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "oauth"})
		if codeOf(err) != api.CodeInvalidParams {
			t.Fatalf("authenticate = %v", err)
		}
	})
}

func TestNewSession(t *testing.T) {
	t.Run("answers the session with its modes, its model and engine options and its commands", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		e.initialize(t, opts{})
		res, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		must(t, err)
		if res.SessionID == "" || res.Modes == nil || res.Modes.CurrentModeID != "propose" || len(res.Modes.AvailableModes) != len(api.EditModes) || res.Modes.AvailableModes[3].ID != "review" {
			t.Fatalf("session/new = %+v", res)
		}
		if len(res.ConfigOptions) != 3 || !strings.HasPrefix(res.ConfigOptions[0].CurrentValue.(string), "script:") || res.ConfigOptions[1].CurrentValue != "propose" {
			t.Fatalf("configOptions = %+v", res.ConfigOptions)
		}
		// Each option with the category the schema gives it: model and
		// mode its own, the engine one of an agent's ("_").
		var ids []string
		for _, o := range res.ConfigOptions {
			ids = append(ids, o.ID+":"+o.Category)
		}
		if strings.Join(ids, ",") != "model:model,mode:mode,engine:_engine" {
			t.Fatalf("options and categories %v", ids)
		}
		// The older model selection, for the clients that read it
		// (CodeCompanion): the same values, the same current one.
		if res.Models == nil || res.Models.CurrentModelID != res.ConfigOptions[0].CurrentValue || len(res.Models.AvailableModels) != len(res.ConfigOptions[0].Options) ||
			res.Models.AvailableModels[0].ModelID != res.Models.CurrentModelID {
			t.Fatalf("models = %+v", res.Models)
		}
		u := e.client.await(t, "available_commands_update", func(u acp.SessionUpdate) bool {
			_, ok := u.(acp.AvailableCommandsUpdate)
			return ok
		}).(acp.AvailableCommandsUpdate)
		var names []string
		for _, c := range u.AvailableCommands {
			names = append(names, c.Name)
		}
		if strings.Join(names, ",") != "stop-subtask,intent,sessions,heat" {
			t.Fatalf("commands %v", names)
		}
	})

	for _, c := range []struct{ name, cwd, want string }{
		{"refuses a relative cwd", "project", "must be an absolute path"},
		{"refuses a cwd that is not a directory", "/nonexistent/agentls", "is not a directory"},
		{"refuses an empty cwd", "", `"cwd" is required`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := start(t, opts{script: script(nil)})
			e.initialize(t, opts{})
			_, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: c.cwd})
			if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("session/new = %v", err)
			}
		})
	}

	t.Run("refuses an sse MCP server", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		e.initialize(t, opts{})
		_, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root,
			McpServers: []acp.McpServer{{Type: "sse", Name: "old", URL: "http://127.0.0.1:1/sse"}}})
		if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "mcpServers") {
			t.Fatalf("session/new = %v", err)
		}
	})
}

func TestSessionOptions(t *testing.T) {
	t.Run("sets a mode it offers and refuses another", func(t *testing.T) {
		e, sid := ready(t, opts{script: script(nil)})
		_, err := e.agent.SetSessionMode(testkit.Context(t), &acp.SetSessionModeRequest{SessionID: sid, ModeID: "apply"})
		must(t, err)
		_, err = e.agent.SetSessionMode(testkit.Context(t), &acp.SetSessionModeRequest{SessionID: sid, ModeID: "yolo"})
		if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "propose") {
			t.Fatalf("set_mode yolo = %v", err)
		}
		_, err = e.agent.SetSessionMode(testkit.Context(t), &acp.SetSessionModeRequest{SessionID: "nope", ModeID: "apply"})
		if codeOf(err) != acp.CodeResourceNotFound {
			t.Fatalf("set_mode of an unknown session = %v", err)
		}
	})

	t.Run("offers the models the providers list, when they have listed them, and sets one", func(t *testing.T) {
		// An OpenAI-compatible server that lists two models.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/models" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"local-large","object":"model"},{"id":"local-small","object":"model"}]}`))
		}))
		defer srv.Close()
		e, sid := ready(t, opts{script: script(nil), env: map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1"}})
		u := e.client.await(t, "config_option_update with the listed models", func(u acp.SessionUpdate) bool {
			_, ok := u.(acp.ConfigOptionUpdate)
			return ok
		}).(acp.ConfigOptionUpdate)
		var values []string
		for _, o := range u.ConfigOptions[0].Options {
			values = append(values, o.Value)
		}
		if !slices.Contains(values, "openai:local-large") || !slices.Contains(values, "openai:local-small") ||
			!strings.HasPrefix(u.ConfigOptions[0].CurrentValue.(string), "script:") {
			t.Fatalf("model values %v, current %v", values, u.ConfigOptions[0].CurrentValue)
		}
		res, err := e.agent.SetSessionConfigOption(testkit.Context(t), &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "model", Value: "openai:local-small"})
		must(t, err)
		if res.ConfigOptions[0].CurrentValue != "openai:local-small" {
			t.Fatalf("configOptions = %+v", res.ConfigOptions)
		}
		for _, bad := range []acp.SetSessionConfigOptionRequest{
			{SessionID: sid, ConfigID: "model", Value: "openai:gpt-5-ultra"},
			{SessionID: sid, ConfigID: "temperature", Value: "hot"},
			{SessionID: sid, ConfigID: "model", Type: "boolean", Value: true},
		} {
			if _, err := e.agent.SetSessionConfigOption(testkit.Context(t), &bad); codeOf(err) != api.CodeInvalidParams {
				t.Errorf("set_config_option %+v = %v", bad, err)
			}
		}
	})
}

func TestMCPServersOfASession(t *testing.T) {
	t.Run("offers a session's MCP servers to its workers", func(t *testing.T) {
		exe, err := os.Executable()
		must(t, err)
		e, _ := ready(t, opts{files: map[string]string{"a.txt": "a\n"}, script: script(map[string][]turn{
			"coordinator": onePlan("Echo through the MCP server"),
			"1":           {{calls: []call{{"mcp__echoer__echo", map[string]any{"message": "through ACP"}}}}, finish("echoed")},
		})})
		s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root, McpServers: []acp.McpServer{{
			Name: "echoer", Command: exe, Args: []string{"-test.run=^$"},
			Env: []acp.EnvVariable{{Name: "AGENTLS_ACP_TEST_MCP", Value: "1"}},
		}}})
		must(t, err)
		res, err := e.prompt(t, s.SessionID, acp.Text("echo"))
		must(t, err)
		if res.StopReason != acp.StopEndTurn {
			t.Fatalf("stop reason %s", res.StopReason)
		}
		var result string
		for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
			if u.Status == acp.StatusCompleted && len(u.Content) > 0 {
				result = u.Content[len(u.Content)-1].Content.Text
			}
		}
		if !strings.Contains(result, "Echo: through ACP") {
			t.Fatalf("the MCP call's result = %q", result)
		}
		calls := of[acp.ToolCall](e.client.seen())
		if len(calls) != 1 || calls[0].Title != "echoer: echo" {
			t.Fatalf("tool calls %+v", calls)
		}
	})
}

var _ = json.Marshal
var _ = filepath.Join
