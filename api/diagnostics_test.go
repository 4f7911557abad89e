package api

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"
)

func TestDiagnosticsSetting(t *testing.T) {
	base := DefaultSettings()
	t.Run("waits two seconds and names no command by default", func(t *testing.T) {
		if base.Diagnostics.WaitMs != 2000 || base.Diagnostics.Commands == nil || len(base.Diagnostics.Commands) != 0 {
			t.Fatalf("default = %#v", base.Diagnostics)
		}
	})
	t.Run("reads the wait and the commands by language", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"diagnostics":{"waitMs":500,"commands":{"go":"go vet ./...","typescript":"tsc --noEmit","python":""}}}`))
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"go": "go vet ./...", "typescript": "tsc --noEmit"}
		if s.Diagnostics.WaitMs != 500 || !maps.Equal(s.Diagnostics.Commands, want) {
			t.Fatalf("got %#v", s.Diagnostics)
		}
		if len(base.Diagnostics.Commands) != 0 {
			t.Fatal("the base settings were changed")
		}
	})
	t.Run("keeps the commands when only the wait changes", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{"diagnostics":{"commands":{"go":"go build ./..."}}}`))
		if err != nil {
			t.Fatal(err)
		}
		s, _, err = ApplySettings(s, json.RawMessage(`{"diagnostics":{"waitMs":0}}`))
		if err != nil || s.Diagnostics.WaitMs != 0 || s.Diagnostics.Commands["go"] != "go build ./..." {
			t.Fatalf("got %#v, %v", s.Diagnostics, err)
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses diagnostics that are not an object", `{"diagnostics":"go vet"}`, "diagnostics"},
		{"refuses an unknown key", `{"diagnostics":{"wait":1}}`, "diagnostics.wait"},
		{"refuses a negative wait", `{"diagnostics":{"waitMs":-1}}`, "diagnostics.waitMs"},
		{"refuses a wait past five minutes", `{"diagnostics":{"waitMs":300001}}`, "diagnostics.waitMs"},
		{"refuses commands that are not an object", `{"diagnostics":{"commands":["go vet"]}}`, "diagnostics.commands"},
		{"refuses a language it does not know", `{"diagnostics":{"commands":{"golang":"go vet ./..."}}}`, "diagnostics.commands.golang"},
		{"refuses a command that is not a string", `{"diagnostics":{"commands":{"go":["go","vet"]}}}`, "diagnostics.commands.go"},
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

func TestDiagnosticCodeReadsStringsAndNumbers(t *testing.T) {
	for raw, want := range map[string]DiagnosticCode{
		`{"code":"TS2304","message":"m","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`: "TS2304",
		`{"code":2304,"message":"m","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`:     "2304",
		`{"code":null,"message":"m","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}}}`:     "",
		`{"code":{"value":"SA1000","target":"https://staticcheck.dev"},"message":"m"}`:                              "SA1000",
		`{"code":{"value":7},"message":"m"}`: "7",
		`{"code":[1],"message":"m"}`:         "",
		`{"code":true,"message":"m"}`:        "",
	} {
		var d Diagnostic
		if err := json.Unmarshal([]byte(raw), &d); err != nil || d.Code != want {
			t.Errorf("%s: code %q, %v; want %q", raw, d.Code, err, want)
		}
	}
}
