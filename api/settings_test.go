package api

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestCommandEnvSetting(t *testing.T) {
	base := DefaultSettings()
	t.Run("passes nothing by default", func(t *testing.T) {
		if base.CommandEnv.Pass == nil || len(base.CommandEnv.Pass) != 0 {
			t.Fatalf("default pass = %#v", base.CommandEnv.Pass)
		}
	})
	t.Run("reads the names to pass", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"commandEnv":{"pass":["GITHUB_TOKEN","NPM_TOKEN"]}}`))
		if err != nil || !slices.Equal(s.CommandEnv.Pass, []string{"GITHUB_TOKEN", "NPM_TOKEN"}) {
			t.Fatalf("got %v, %v", s.CommandEnv, err)
		}
		if len(base.CommandEnv.Pass) != 0 {
			t.Fatal("the base settings were changed")
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses a commandEnv that is not an object", `{"commandEnv":["A"]}`, "commandEnv"},
		{"refuses an unknown key of commandEnv", `{"commandEnv":{"allow":["A"]}}`, "commandEnv.allow"},
		{"refuses pass that is not a list of strings", `{"commandEnv":{"pass":"A"}}`, "commandEnv.pass"},
		{"refuses a name that is not a variable name", `{"commandEnv":{"pass":["A","B=1"]}}`, "commandEnv.pass[1]"},
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

func TestWorkspaceTrustSetting(t *testing.T) {
	base := DefaultSettings()
	if base.WorkspaceTrust != TrustTrusted || base.Untrusted() {
		t.Fatalf("default trust = %q", base.WorkspaceTrust)
	}
	s, _, err := ApplySettings(base, json.RawMessage(`{"workspaceTrust":"untrusted"}`))
	if err != nil || !s.Untrusted() {
		t.Fatalf("got %q, %v", s.WorkspaceTrust, err)
	}
	_, _, err = ApplySettings(base, json.RawMessage(`{"workspaceTrust":"maybe"}`))
	var se *SettingsError
	if !errors.As(err, &se) || se.Key != "workspaceTrust" {
		t.Fatalf("got %v, want an error naming workspaceTrust", err)
	}
}

func TestInstructionsSetting(t *testing.T) {
	base := DefaultSettings()
	t.Run("reads every instruction file within 8192 tokens by default", func(t *testing.T) {
		in := base.Instructions
		if in.MaxTokens != 8192 || in.Add == nil || len(in.Add) != 0 || in.Remove == nil || len(in.Remove) != 0 {
			t.Fatalf("default = %#v", in)
		}
	})
	t.Run("reads the files added and removed and the budget", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"instructions":{"add":["docs/STYLE.md",".cursor/rules/*.md"],"remove":["CLAUDE.md"],"maxTokens":2048}}`))
		if err != nil {
			t.Fatal(err)
		}
		in := s.Instructions
		if !slices.Equal(in.Add, []string{"docs/STYLE.md", ".cursor/rules/*.md"}) || !slices.Equal(in.Remove, []string{"CLAUDE.md"}) || in.MaxTokens != 2048 {
			t.Fatalf("got %#v", in)
		}
		if len(base.Instructions.Add) != 0 {
			t.Fatal("the base settings were changed")
		}
	})
	t.Run("keeps what a partial object leaves out", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"instructions":{"maxTokens":0}}`))
		if err != nil || s.Instructions.MaxTokens != 0 || s.Instructions.Add == nil {
			t.Fatalf("got %#v, %v", s.Instructions, err)
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses instructions that are not an object", `{"instructions":["AGENTS.md"]}`, "instructions"},
		{"refuses an unknown key", `{"instructions":{"files":["A.md"]}}`, "instructions.files"},
		{"refuses an absolute path", `{"instructions":{"add":["/etc/passwd"]}}`, "instructions.add[0]"},
		{"refuses a bad glob", `{"instructions":{"remove":["a/[b"]}}`, "instructions.remove[0]"},
		{"refuses a budget past the bound", `{"instructions":{"maxTokens":70000}}`, "instructions.maxTokens"},
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

func TestCompactionSetting(t *testing.T) {
	base := DefaultSettings()
	if base.Compaction.Threshold != 0.8 {
		t.Fatalf("default threshold = %v", base.Compaction.Threshold)
	}
	for _, c := range []struct {
		raw  string
		want float64
	}{{`{"compaction":{"threshold":0.5}}`, 0.5}, {`{"compaction":{"threshold":0}}`, 0}, {`{"compaction":{}}`, 0.8}} {
		s, _, err := ApplySettings(base, json.RawMessage(c.raw))
		if err != nil || s.Compaction.Threshold != c.want {
			t.Errorf("%s: got %v, %v", c.raw, s.Compaction.Threshold, err)
		}
	}
	for _, raw := range []string{`{"compaction":{"threshold":1}}`, `{"compaction":{"threshold":-0.1}}`, `{"compaction":{"threshold":"high"}}`} {
		_, _, err := ApplySettings(base, json.RawMessage(raw))
		var se *SettingsError
		if !errors.As(err, &se) || se.Key != "compaction.threshold" {
			t.Errorf("%s: got %v, want an error naming compaction.threshold", raw, err)
		}
	}
}
