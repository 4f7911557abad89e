package api

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestEnginesSetting(t *testing.T) {
	base := DefaultSettings()
	t.Run("has no entries by default", func(t *testing.T) {
		if base.Engines == nil || len(base.Engines) != 0 {
			t.Fatalf("default engines = %#v", base.Engines)
		}
	})
	t.Run("reads a built-in engine's command and environment", func(t *testing.T) {
		s, unknown, err := ApplySettings(base, json.RawMessage(`{"engines":{
			"claude":{"command":["node","/opt/claude-agent-acp/dist/index.js"],"env":{"IS_SANDBOX":"1"},"isolate":true,"alwaysAllow":[]}}}`))
		if err != nil {
			t.Fatal(err)
		}
		c := s.Engines["claude"]
		if !slices.Equal(c.Command, []string{"node", "/opt/claude-agent-acp/dist/index.js"}) || c.Env["IS_SANDBOX"] != "1" || c.Isolate == nil || !*c.Isolate {
			t.Fatalf("got %+v", c)
		}
		if !slices.Equal(unknown, []string{"engines.claude.alwaysAllow"}) {
			t.Fatalf("unknown = %v", unknown)
		}
		if len(base.Engines) != 0 {
			t.Fatal("the base settings were changed")
		}
	})
	t.Run("adds an engine of another name", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"engines":{"goose":{"command":["goose","acp"]}}}`))
		if err != nil || !slices.Equal(s.Engines["goose"].Command, []string{"goose", "acp"}) {
			t.Fatalf("got %v, %v", s.Engines, err)
		}
	})
	t.Run("takes a built-in engine without a command as its default, and disables one", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"engines":{"gemini":{"env":{"A":"b"}},"codex":{"disabled":true},"claude":null}}`))
		if err != nil || s.Engines["gemini"].Env["A"] != "b" || !s.Engines["codex"].Disabled {
			t.Fatalf("got %v, %v", s.Engines, err)
		}
		if _, ok := s.Engines["claude"]; ok {
			t.Fatal("a null entry is the default, not an entry")
		}
	})
	t.Run("keeps the user's MCP servers from an engine whose entry says mcpServers: false", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"engines":{"codex":{"mcpServers":false},"gemini":{"mcpServers":true}}}`))
		if err != nil || s.Engines["codex"].MCPServers == nil || *s.Engines["codex"].MCPServers || !*s.Engines["gemini"].MCPServers {
			t.Fatalf("got %+v, %v", s.Engines, err)
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses mcpServers that is not a boolean", `{"engines":{"codex":{"mcpServers":{}}}}`, "engines.codex.mcpServers"},
		{"refuses engines that is not an object", `{"engines":["claude"]}`, "engines"},
		{"refuses an entry that is not an object", `{"engines":{"claude":"claude-agent-acp"}}`, "engines.claude"},
		{"refuses a command that is a string", `{"engines":{"claude":{"command":"claude-agent-acp"}}}`, "engines.claude.command"},
		{"refuses an empty command", `{"engines":{"claude":{"command":[]}}}`, "engines.claude.command"},
		{"refuses a command whose program is empty", `{"engines":{"claude":{"command":["", "x"]}}}`, "engines.claude.command"},
		{"refuses an environment that is not strings", `{"engines":{"claude":{"env":{"A":1}}}}`, "engines.claude.env"},
		{"refuses an environment name with '='", `{"engines":{"claude":{"env":{"A=B":"1"}}}}`, "engines.claude.env.A=B"},
		{"refuses isolate that is not a boolean", `{"engines":{"codex":{"isolate":"yes"}}}`, "engines.codex.isolate"},
		{"refuses a name with capitals or spaces", `{"engines":{"My Agent":{"command":["x"]}}}`, "engines.My Agent"},
		{"refuses the built-in worker's name", `{"engines":{"agentls":{"command":["x"]}}}`, "engines.agentls"},
		{"refuses a new engine without a command", `{"engines":{"goose":{"env":{}}}}`, "engines.goose"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := ApplySettings(base, json.RawMessage(c.raw))
			var se *SettingsError
			if !errors.As(err, &se) || se.Key != c.key {
				t.Fatalf("got %v, want an error naming %s", err, c.key)
			}
			t.Log(err)
		})
	}
}
