package api

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestMCPServersSetting(t *testing.T) {
	base := DefaultSettings()
	t.Run("has no servers, a two-minute bound and no allowed tools by default", func(t *testing.T) {
		if len(base.MCPServers) != 0 || base.Timeouts.MCPMs != 120000 || len(base.AllowMCPTools) != 0 {
			t.Fatalf("defaults: %v %v %v", base.MCPServers, base.Timeouts.MCPMs, base.AllowMCPTools)
		}
	})
	t.Run("reads a stdio and a streamable HTTP server in the shape other editors use", func(t *testing.T) {
		s, unknown, err := ApplySettings(base, json.RawMessage(`{"mcpServers":{
			"everything":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"],"env":{"DEBUG":"1"},"cwd":"${HOME}/mcp"},
			"remote":{"type":"http","url":"https://example.com/mcp","headers":{"Authorization":"Bearer abc"}},
			"off":{"command":"x","disabled":true},
			"cline":{"command":"y","alwaysAllow":["a"]}},
			"allowMcpTools":["mcp__everything__echo","mcp__remote"]}`))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]MCPServer{
			"everything": {Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}, Env: map[string]string{"DEBUG": "1"}, Cwd: "${HOME}/mcp"},
			"remote":     {URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer abc"}},
			"cline":      {Command: "y"},
		}
		if len(s.MCPServers) != len(want) {
			t.Fatalf("servers: %v", s.MCPServers)
		}
		for name, w := range want {
			if !s.MCPServers[name].Equal(w) {
				t.Errorf("%s = %+v, want %+v", name, s.MCPServers[name], w)
			}
		}
		if s.MCPServers["remote"].Transport() != MCPHTTP || s.MCPServers["everything"].Transport() != MCPStdio {
			t.Error("transports")
		}
		if !slices.Equal(unknown, []string{"mcpServers.cline.alwaysAllow"}) {
			t.Errorf("unknown = %v", unknown)
		}
		if !slices.Equal(s.AllowMCPTools, []string{"mcp__everything__echo", "mcp__remote"}) {
			t.Errorf("allowMcpTools = %v", s.AllowMCPTools)
		}
		if len(base.MCPServers) != 0 {
			t.Error("the base settings were changed")
		}
	})
	t.Run("tells two entries apart by their cwd", func(t *testing.T) {
		if (MCPServer{Command: "x", Cwd: "/a"}).Equal(MCPServer{Command: "x", Cwd: "/b"}) {
			t.Fatal("a changed cwd does not restart the server")
		}
	})
	t.Run("replaces the whole list on a later change", func(t *testing.T) {
		s, _, _ := ApplySettings(base, json.RawMessage(`{"mcpServers":{"a":{"command":"a"}}}`))
		s, _, err := ApplySettings(s, json.RawMessage(`{"mcpServers":{"b":{"url":"http://127.0.0.1:1/mcp"}}}`))
		if err != nil || len(s.MCPServers) != 1 || s.MCPServers["b"].URL == "" {
			t.Fatalf("got %v, %v", s.MCPServers, err)
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses mcpServers that is not an object", `{"mcpServers":[]}`, "mcpServers"},
		{"refuses an entry that is not an object", `{"mcpServers":{"a":"npx"}}`, "mcpServers.a"},
		{"refuses an entry with neither command nor url", `{"mcpServers":{"a":{"args":["x"]}}}`, "mcpServers.a"},
		{"refuses an entry with both command and url", `{"mcpServers":{"a":{"command":"x","url":"http://h/mcp"}}}`, "mcpServers.a"},
		{"refuses args that are not strings", `{"mcpServers":{"a":{"command":"x","args":[1]}}}`, "mcpServers.a.args"},
		{"refuses an env value that is not a string", `{"mcpServers":{"a":{"command":"x","env":{"A":1}}}}`, "mcpServers.a.env"},
		{"refuses an env name with =", `{"mcpServers":{"a":{"command":"x","env":{"A=B":"1"}}}}`, "mcpServers.a.env.A=B"},
		{"refuses a url that is not http", `{"mcpServers":{"a":{"url":"ftp://h/x"}}}`, "mcpServers.a.url"},
		{"refuses headers on a stdio server", `{"mcpServers":{"a":{"command":"x","headers":{"A":"b"}}}}`, "mcpServers.a"},
		{"refuses a header name with a space", `{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"X Y":"b"}}}}`, "mcpServers.a.headers.X Y"},
		{"refuses the sse transport with the way out", `{"mcpServers":{"a":{"type":"sse","url":"http://h/sse"}}}`, "mcpServers.a.type"},
		{"refuses a type that does not fit", `{"mcpServers":{"a":{"type":"http","command":"x"}}}`, "mcpServers.a.type"},
		{"refuses two names that give the same tool names", `{"mcpServers":{"a.b":{"command":"x"},"a_b":{"command":"y"}}}`, "mcpServers.a_b"},
		{"refuses an empty command", `{"mcpServers":{"a":{"command":" "}}}`, "mcpServers.a.command"},
		{"refuses a relative cwd, which would be taken against the workspace", `{"mcpServers":{"a":{"command":"x","cwd":"tools/mcp"}}}`, "mcpServers.a.cwd"},
		{"refuses a cwd of the current directory", `{"mcpServers":{"a":{"command":"x","cwd":"."}}}`, "mcpServers.a.cwd"},
		{"refuses a cwd from the home directory written with a tilde", `{"mcpServers":{"a":{"command":"x","cwd":"~/mcp"}}}`, "mcpServers.a.cwd"},
		{"refuses an empty cwd", `{"mcpServers":{"a":{"command":"x","cwd":""}}}`, "mcpServers.a.cwd"},
		{"refuses a cwd on a streamable HTTP server", `{"mcpServers":{"a":{"url":"http://h/mcp","cwd":"/srv"}}}`, "mcpServers.a"},
		{"refuses an allowMcpTools entry without the prefix", `{"allowMcpTools":["everything"]}`, "allowMcpTools[0]"},
		{"refuses a zero MCP bound", `{"timeouts":{"mcpMs":0}}`, "timeouts.mcpMs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ApplySettings(base, json.RawMessage(c.raw))
			var se *SettingsError
			if !errors.As(err, &se) || se.Key != c.key {
				t.Fatalf("got %v, want an error naming %s", err, c.key)
			}
		})
	}
}

func TestSanitizeMCPName(t *testing.T) {
	for in, want := range map[string]string{
		"echo":          "echo",
		"get-sum":       "get-sum",
		"brave.search":  "brave_search",
		"read file":     "read_file",
		"ünïcode":       "_n_code",
		"a/b:c":         "a_b_c",
		"already_fine9": "already_fine9",
	} {
		if got := SanitizeMCPName(in); got != want {
			t.Errorf("SanitizeMCPName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMCPServersFromACP(t *testing.T) {
	t.Run("turns ACP's list into the setting's entries", func(t *testing.T) {
		got, err := MCPServersFromACP(json.RawMessage(`[
			{"name":"fs","command":"/usr/bin/mcp-fs","args":["/w"],"env":[{"name":"A","value":"1"}]},
			{"type":"http","name":"web","url":"https://h/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]}]`))
		if err != nil {
			t.Fatal(err)
		}
		if !got["fs"].Equal(MCPServer{Command: "/usr/bin/mcp-fs", Args: []string{"/w"}, Env: map[string]string{"A": "1"}}) ||
			!got["web"].Equal(MCPServer{URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}) {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("refuses a name listed twice", func(t *testing.T) {
		_, err := MCPServersFromACP(json.RawMessage(`[{"name":"a","command":"x"},{"name":"a","command":"y"}]`))
		var se *SettingsError
		if !errors.As(err, &se) || se.Key != "mcpServers[1].name" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("refuses the sse transport", func(t *testing.T) {
		_, err := MCPServersFromACP(json.RawMessage(`[{"type":"sse","name":"a","url":"http://h/sse","headers":[]}]`))
		if err == nil {
			t.Fatal("sse accepted")
		}
	})
}
