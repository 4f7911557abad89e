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
