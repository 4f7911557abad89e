package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The editor's diagnostics (docs/PROTOCOL.md §4, agent/diagnostics; §3,
// agent/didChangeDiagnostics) and the diagnostics setting (§2).

// DiagnosticSeverity is LSP's: 1 error, 2 warning, 3 information, 4 hint.
type DiagnosticSeverity int

// The severities of LSP.
const (
	SeverityError       DiagnosticSeverity = 1
	SeverityWarning     DiagnosticSeverity = 2
	SeverityInformation DiagnosticSeverity = 3
	SeverityHint        DiagnosticSeverity = 4
)

// String names the severity as the worker reads it ("error" when it is
// unknown or not given: LSP leaves it to the client, and an error is what
// a check that names no severity means).
func (s DiagnosticSeverity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "note"
	case SeverityHint:
		return "hint"
	}
	return "error"
}

// DiagnosticCode is a diagnostic's code as LSP's Diagnostic has it, a
// string or a number; a number is read as its digits, and an object with a
// value (as VS Code's API gives a code with a link) as that value. Any
// other value is read as no code: a diagnostic is not refused for it.
type DiagnosticCode string

// UnmarshalJSON reads a string, a number, {"value": …}, or anything else as
// no code.
func (c *DiagnosticCode) UnmarshalJSON(b []byte) error {
	*c = ""
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err == nil {
			*c = DiagnosticCode(s)
		}
	case '{':
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &v); err == nil && len(v.Value) > 0 && v.Value[0] != '{' {
			return c.UnmarshalJSON(v.Value)
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		if err := json.Unmarshal(b, &n); err == nil {
			*c = DiagnosticCode(n.String())
		}
	}
	return nil
}

// Diagnostic is LSP's Diagnostic, as much of it as agentls reads: where,
// how severe, what says so and what it says.
type Diagnostic struct {
	Range Range `json:"range"`
	// Severity is absent when the language server gave none (read as an
	// error).
	Severity DiagnosticSeverity `json:"severity,omitempty"`
	Code     DiagnosticCode     `json:"code,omitempty"`
	// Source names what produced it: "compiler", "go vet", "ts", "eslint".
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
}

// DiagnosticsParams are the params of agent/diagnostics: the documents
// whose diagnostics are wanted; none: every document the editor has
// diagnostics for.
type DiagnosticsParams struct {
	URIs []string `json:"uris,omitempty"`
}

// DocumentDiagnostics are the diagnostics of one document.
type DocumentDiagnostics struct {
	URI         string       `json:"uri"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

// DiagnosticsResult is the answer of agent/diagnostics: a document the
// editor has no diagnostics for may be left out or listed with none.
type DiagnosticsResult struct {
	Items []DocumentDiagnostics `json:"items"`
}

// DidChangeDiagnosticsParams are the params of agent/didChangeDiagnostics:
// the documents whose diagnostics the editor's language servers have just
// published anew (changed or not).
type DidChangeDiagnosticsParams struct {
	URIs []string `json:"uris"`
}

// DiagnosticsSettings is the diagnostics setting (docs/PROTOCOL.md §2):
// how long agentls waits after an edit for the editor's language servers
// to report on it, and, where no editor reports, the command that checks
// each language.
type DiagnosticsSettings struct {
	// WaitMs bounds the wait for the editor's report on an edited file
	// (0: the diagnostics the editor has at once, without waiting).
	WaitMs int64 `json:"waitMs"`
	// Commands are shell commands by language (DiagnosticsLanguages), run
	// in the workspace root when the editor gives no diagnostics: their
	// output is read as file:line:col: message lines.
	Commands map[string]string `json:"commands"`
}

// DiagnosticsLanguages are the languages the diagnostics setting's
// commands are keyed by: those of the code graph, whose file extensions
// say which files each covers.
var DiagnosticsLanguages = []string{"go", "python", "javascript", "typescript", "rust", "java", "c", "cpp"}

// MaxDiagnosticsWaitMs bounds diagnostics.waitMs: an edit's result waits
// at most this long for the editor.
const MaxDiagnosticsWaitMs = 300000

func decodeDiagnostics(v json.RawMessage, d *DiagnosticsSettings) error {
	fields, err := objectFields("diagnostics", v, `{"waitMs", "commands"}`, "waitMs", "commands")
	if err != nil {
		return err
	}
	next := DiagnosticsSettings{WaitMs: d.WaitMs, Commands: d.Commands}
	if fv, ok := fields["waitMs"]; ok && !isNull(fv) {
		if err := decodeMillis("diagnostics.waitMs", fv, &next.WaitMs); err != nil {
			return err
		}
		if next.WaitMs > MaxDiagnosticsWaitMs {
			return &SettingsError{Key: "diagnostics.waitMs", Reason: fmt.Sprintf("must be at most %d (5 minutes), got %d", MaxDiagnosticsWaitMs, next.WaitMs)}
		}
	}
	if fv, ok := fields["commands"]; ok && !isNull(fv) {
		var cmds map[string]json.RawMessage
		if err := json.Unmarshal(fv, &cmds); err != nil || cmds == nil {
			return &SettingsError{Key: "diagnostics.commands", Reason: `must be an object {"<language>": "<command>"}, got ` + jsonKind(fv)}
		}
		next.Commands = make(map[string]string, len(cmds))
		langs := map[string]bool{}
		for _, l := range DiagnosticsLanguages {
			langs[l] = true
		}
		keys := make([]string, 0, len(cmds))
		for k := range cmds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, lang := range keys {
			key := "diagnostics.commands." + lang
			if !langs[lang] {
				return &SettingsError{Key: key, Reason: "unknown language; the languages are " + strings.Join(DiagnosticsLanguages, ", ")}
			}
			var cmd string
			if err := decodeString(key, cmds[lang], &cmd); err != nil {
				return err
			}
			if strings.TrimSpace(cmd) == "" {
				continue // an empty command means none for that language
			}
			next.Commands[lang] = cmd
		}
	}
	*d = next
	return nil
}
