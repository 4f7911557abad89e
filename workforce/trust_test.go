package workforce

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// In a workspace the person does not trust (the editor says so), nothing
// runs without their explicit yes: a command even under allow and
// allowCommands, an MCP server's start, an MCP call; deny still refuses
// all of it. (docs/SECURITY.md, "Workspace trust")
func TestUntrustedWorkspace(t *testing.T) {
	untrusted := func(commands string) api.Settings {
		s := settings()
		s.Commands, s.WorkspaceTrust = commands, api.TrustUntrusted
		s.AllowCommands, s.AllowMCPTools = []string{"echo"}, []string{"mcp__srv"}
		return s
	}
	offered := func(reqs []clients.Request) bool {
		for _, tl := range reqs[0].Tools {
			if strings.HasPrefix(tl.Name, api.MCPToolPrefix) {
				return true
			}
		}
		return false
	}
	t.Run("asks before a command that allow and allowCommands would run, saying why", func(t *testing.T) {
		reqs, asked := runMCP(t, untrusted(api.CommandsAllow), "Deny", &fakeTools{}, call("run_command", map[string]any{"command": "echo hi"}))
		var cmd *api.ShowMessageRequestParams
		for i, a := range asked {
			if strings.Contains(a.Message, "run `echo hi`") {
				cmd = &asked[i]
			}
		}
		if cmd == nil || !strings.HasPrefix(cmd.Message, "This workspace is not trusted. ") {
			t.Fatalf("asked %+v", asked)
		}
		if r := lastResult(reqs, 1); !r.IsError || !strings.Contains(r.Content, "refused to run the command") {
			t.Fatalf("result = %+v", r)
		}
	})
	t.Run("starts no MCP server the person did not let start", func(t *testing.T) {
		tools := &fakeTools{}
		reqs, asked := runMCP(t, untrusted(api.CommandsAllow), "Deny", tools, call("mcp__srv__echo", map[string]any{"message": "hi"}))
		if len(asked) == 0 || !strings.Contains(asked[0].Message, "This workspace is not trusted. agentls wants to start the MCP server `srv` (`srv-server --stdio`)") {
			t.Fatalf("asked %+v", asked)
		}
		if offered(reqs) || len(tools.made()) != 0 {
			t.Fatalf("a declined server's tools were offered (%v) or called (%v)", offered(reqs), tools.made())
		}
	})
	t.Run("starts a server the person lets start, and still asks before each call", func(t *testing.T) {
		tools := &fakeTools{}
		reqs, asked := runMCP(t, untrusted(api.CommandsAllow), "Run", tools, call("mcp__srv__echo", map[string]any{"message": "hi"}))
		if !offered(reqs) || len(tools.made()) != 1 {
			t.Fatalf("offered %v, called %v", offered(reqs), tools.made())
		}
		if len(asked) != 2 || !strings.Contains(asked[1].Message, "call the MCP tool `echo`") {
			t.Fatalf("asked %+v: want the start, then the call", asked)
		}
	})
	t.Run("under deny starts nothing and asks nothing", func(t *testing.T) {
		tools := &fakeTools{}
		reqs, asked := runMCP(t, untrusted(api.CommandsDeny), "Run", tools, call("run_command", map[string]any{"command": "echo hi"}))
		if len(asked) != 0 || offered(reqs) {
			t.Fatalf("asked %+v, offered %v", asked, offered(reqs))
		}
	})
	t.Run("a trusted workspace runs what allow lets run without asking", func(t *testing.T) {
		s := untrusted(api.CommandsAllow)
		s.WorkspaceTrust = api.TrustTrusted
		reqs, asked := runMCP(t, s, "Deny", &fakeTools{}, call("run_command", map[string]any{"command": "echo hi"}))
		if len(asked) != 0 || !offered(reqs) {
			t.Fatalf("asked %+v, offered %v", asked, offered(reqs))
		}
	})
}
