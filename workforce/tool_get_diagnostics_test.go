package workforce

import (
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestGetDiagnostics(t *testing.T) {
	files := map[string]string{
		"main.go":     "package main\n\nvar x = BROKEN\n",
		"pkg/a.go":    "package pkg\n\nvar y = BROKEN\n",
		"pkg/b.go":    "package pkg\n",
		"secret/k.go": "package secret\n\nvar k = BROKEN\n",
	}
	t.Run("the editor's", func(t *testing.T) {
		h, ed := newDiagHarness(t, files, diagCaps)
		h.settings.Zones.Deny = append(h.settings.Zones.Deny, "secret/**")
		for name, text := range files {
			ed.SetDiagnostics(name, compile(text))
		}
		ed.SetDiagnostics("pkg/b.go", []api.Diagnostic{{Severity: api.SeverityWarning, Message: "unused", Code: "U1000", Source: "staticcheck"},
			{Severity: api.SeverityHint, Message: "could be simpler"}})
		ed.SetDiagnostics(filepath.Join(filepath.Dir(h.root), "elsewhere.go"), compile("BROKEN"))
		h.check("get_diagnostics", []toolCase{
			{name: "of the workspace, but what lies outside it or in a denied zone", args: map[string]any{},
				says: []string{"2 errors, 1 warning, 1 hint in 3 files of the workspace, from the editor's language servers:\n" +
					"main.go:3:9: error: undefined: BROKEN (compiler)\npkg/a.go:3:9: error: undefined: BROKEN (compiler)\n" +
					"pkg/b.go:1:1: warning: unused (staticcheck U1000)\npkg/b.go:1:1: hint: could be simpler"}},
			{name: "of a file", args: map[string]any{"path": "main.go"},
				says: []string{"1 error in 1 file of main.go, from the editor's language servers:\nmain.go:3:9: error: undefined: BROKEN (compiler)"}, path: "main.go"},
			{name: "of a directory", args: map[string]any{"path": "pkg"},
				says: []string{"1 error, 1 warning, 1 hint in 2 files of pkg,"}},
			{name: "of a file without any", args: map[string]any{"path": "pkg/c.go"},
				says: []string{"No diagnostics in pkg/c.go, from the editor's language servers."}},
			{name: "not of a denied file", args: map[string]any{"path": "secret/k.go"}, isErr: true, says: []string{"denied by zones.deny"}},
			{name: "not of a file outside", args: map[string]any{"path": "../elsewhere.go"}, isErr: true, says: []string{"not under the workspace root"}},
		})
	})
	t.Run("the diagnostics command's", func(t *testing.T) {
		h := newToolHarness(t, files)
		h.settings.Diagnostics.Commands = map[string]string{"go": `awk '/BROKEN/ { print FILENAME ":" FNR ":" index($0, "BROKEN") ": undefined: BROKEN" }' *.go pkg/*.go`,
			"python": "echo"}
		h.check("get_diagnostics", []toolCase{
			{name: "of the workspace: every command's", args: map[string]any{},
				says: []string{"2 errors in 2 files of the workspace, from `awk", "`echo` (the diagnostics setting):\nmain.go:3:9: error: undefined: BROKEN\npkg/a.go:3:9: error: undefined: BROKEN"}},
			{name: "of a file: its language's", args: map[string]any{"path": "pkg/a.go"},
				says: []string{"1 error in 1 file of pkg/a.go, from `awk"}},
			{name: "of a file of a language no command checks", args: map[string]any{"path": "x.ts"}, isErr: true,
				says: []string{"no diagnostics for typescript files here: the editor gives none, and the diagnostics setting names commands for go, python only"}},
		})
	})
	t.Run("none", func(t *testing.T) {
		h := newToolHarness(t, files)
		h.check("get_diagnostics", []toolCase{
			{name: "says why", args: map[string]any{}, isErr: true,
				says: []string{"no diagnostics here: the editor gives none, and the diagnostics setting names no command; check by building or testing (run_command)"}},
		})
	})
}
