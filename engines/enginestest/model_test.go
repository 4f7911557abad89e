package enginestest

import (
	"testing"
)

func TestAgentCwd(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"finds Claude Code's working directory", `{"system":[{"text":"Primary working directory: /tmp/wt/tree\n  - Is a git repository: false"}]}`, "/tmp/wt/tree"},
		{"finds Codex's cwd", `{"input":[{"content":[{"text":"<environment_context>\n  <cwd>/tmp/a b/x</cwd>\n"}]}]}`, "/tmp/a b/x"},
		{"finds Gemini CLI's workspace directory", `{"contents":[{"parts":[{"text":"- **Workspace Directories:**\n  - /home/me/project\n- **Directory"}]}]}`, "/home/me/project"},
		{"finds nothing in a request without one", `{"messages":[]}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := agentCwd([]byte(c.body)); got != c.want {
				t.Fatalf("agentCwd = %q, want %q", got, c.want)
			}
		})
	}
}

func TestOfferedTool(t *testing.T) {
	body := `{"tools":[{"name":"Read"},{"name":"mcp__agentls__mcp__everything__echo","description":"x"}],"functionDeclarations":[{"name": "agentls__read_file"}]}`
	for suffix, want := range map[string]string{
		"mcp__everything__echo": "mcp__agentls__mcp__everything__echo",
		"read_file":             "agentls__read_file",
		"nope":                  "nope",
	} {
		if got := offeredTool([]byte(body), suffix); got != want {
			t.Errorf("offeredTool(%q) = %q, want %q", suffix, got, want)
		}
	}
}
