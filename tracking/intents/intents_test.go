package intents

import (
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const validYAML = `active_intents:
  - id: INT-001
    name: Auth refactor
    status: IN_PROGRESS
    owned_scope:
      - "src/auth/**"
      - "!src/auth/generated/**"
      - "src/auth/generated/keep.go"
    constraints:
      - Keep the public API
    acceptance_criteria:
      - go test ./... passes
  - id: INT-002
    name: Docs
    owned_scope: ["docs/**"]
`

func workspace(t *testing.T, yamlText *string) string {
	t.Helper()
	root := t.TempDir()
	if yamlText != nil {
		writeIntents(t, root, *yamlText)
	}
	return root
}

func writeIntents(t *testing.T, root, text string) {
	t.Helper()
	p := filepath.Join(root, ".orchestration", "active_intents.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ptr(s string) *string { return &s }

type blocks struct{ paths, reasons []string }

func (b *blocks) Blocked(path, reason string) {
	b.paths = append(b.paths, path)
	b.reasons = append(b.reasons, reason)
}

func TestParse(t *testing.T) {
	t.Run("reads every field of a valid file", func(t *testing.T) {
		list, err := Parse([]byte(validYAML))
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("got %d intents, want 2", len(list))
		}
		in := list[0]
		if in.ID != "INT-001" || in.Name != "Auth refactor" || in.Status != "IN_PROGRESS" ||
			len(in.OwnedScope) != 3 || in.Constraints[0] != "Keep the public API" || in.AcceptanceCriteria[0] != "go test ./... passes" {
			t.Errorf("got %+v", in)
		}
	})
	t.Run("reads an empty file as no intents", func(t *testing.T) {
		if list, err := Parse(nil); err != nil || len(list) != 0 {
			t.Errorf("got %v, %v", list, err)
		}
		if list, err := Parse([]byte("active_intents: []\n")); err != nil || len(list) != 0 {
			t.Errorf("got %v, %v", list, err)
		}
	})
	bad := []struct {
		name, text, want string
	}{
		{"rejects YAML that does not parse", "active_intents: [\n  - id: x\n", "not valid YAML"},
		{"rejects active_intents that is not a list", "active_intents: {id: x}\n", "line 1: active_intents must be a list"},
		{"rejects an intent that is not a mapping", "active_intents:\n  - just text\n", "intent 1 (line 2): must be a mapping"},
		{"rejects an intent without id", "active_intents:\n  - name: x\n", "intent 1 (line 2): id is missing"},
		{"rejects a duplicate id", "active_intents:\n  - {id: a, name: x}\n  - {id: a, name: y}\n", `intent "a" (line 3): id already used by intent 1`},
		{"rejects an intent without name", "active_intents:\n  - id: a\n", `intent "a" (line 2): name is missing`},
		{"rejects a bad owned_scope pattern", "active_intents:\n  - {id: a, name: x, owned_scope: [\"src/[a\"]}\n", `owned_scope pattern 1 ("src/[a")`},
		{"rejects an absolute owned_scope pattern", "active_intents:\n  - {id: a, name: x, owned_scope: [\"/etc/**\"]}\n", "absolute"},
		{"rejects a scope that is not a list of strings", "active_intents:\n  - id: a\n    name: x\n    owned_scope: {a: b}\n", "line 4"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestGate(t *testing.T) {
	cases := []struct {
		name     string
		file     *string
		selected string
		tool     string
		path     string
		want     error
		blocked  bool
	}{
		{"lets every tool run when there is no intents file", nil, "", "write_file", "any.go", nil, false},
		{"lets every tool run when the file lists no intents", ptr("active_intents: []\n"), "", "write_file", "any.go", nil, false},
		{"lets reading tools run without an intent", ptr(validYAML), "", "read_file", "src/auth/a.go", nil, false},
		{"refuses a write without a selected intent", ptr(validYAML), "", "write_file", "src/auth/a.go", ErrNoIntentSelected, true},
		{"refuses a command without a selected intent", ptr(validYAML), "", "run_command", "", ErrNoIntentSelected, false},
		{"lets a command run with a selected intent", ptr(validYAML), "INT-001", "run_command", "", nil, false},
		{"allows a write inside owned_scope", ptr(validYAML), "INT-001", "edit_file", "src/auth/login.go", nil, false},
		{"refuses a write outside owned_scope", ptr(validYAML), "INT-001", "write_file", "src/billing/x.go", ErrOutsideScope, true},
		{"refuses a write the scope excludes with !", ptr(validYAML), "INT-001", "delete_file", "src/auth/generated/x.go", ErrOutsideScope, true},
		{"allows a file a later pattern includes again", ptr(validYAML), "INT-001", "write_file", "src/auth/generated/keep.go", nil, false},
		{"refuses an intent the file does not list", ptr(validYAML), "INT-999", "write_file", "docs/a.md", ErrUnknownIntent, true},
		{"refuses every write while the file is broken", ptr("active_intents: [\n"), "INT-001", "write_file", "src/auth/a.go", ErrBroken, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewStore(workspace(t, c.file), Options{})
			var b blocks
			err := s.Check(c.selected, c.tool, c.path, &b)
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("Check = %v, want %v", err, c.want)
			}
			if got := len(b.paths) == 1 && b.paths[0] == c.path; got != c.blocked {
				t.Errorf("blocked reports %v, want one for %q: %v", b.paths, c.path, c.blocked)
			}
		})
	}
}

func TestStoreReloadsAndReportsOncePerBrokenVersion(t *testing.T) {
	root := workspace(t, ptr(validYAML))
	var reports []error
	s := NewStore(root, Options{OnBroken: func(err error) { reports = append(reports, err) }})
	if list, err := s.Intents(); err != nil || len(list) != 2 {
		t.Fatalf("first load: %v, %v", list, err)
	}
	writeIntents(t, root, "active_intents:\n  - id: only\n    name: One\n")
	if list, _ := s.Intents(); len(list) != 1 || list[0].ID != "only" {
		t.Fatalf("after an edit: %+v, want the new intent", list)
	}
	writeIntents(t, root, "active_intents:\n  - id: [\n")
	for range 3 {
		if _, err := s.Intents(); !errors.Is(err, ErrBroken) {
			t.Fatalf("broken file: err = %v", err)
		}
	}
	if len(reports) != 1 {
		t.Fatalf("got %d reports for one broken version, want 1", len(reports))
	}
	writeIntents(t, root, "active_intents:\n  - id: 2\n    name: [\n")
	s.Intents()
	if len(reports) != 2 {
		t.Fatalf("a second broken version: %d reports, want 2", len(reports))
	}
	writeIntents(t, root, validYAML)
	if list, err := s.Intents(); err != nil || len(list) != 2 {
		t.Fatalf("after the fix: %v, %v", list, err)
	}
	os.Remove(filepath.Join(root, RelPath))
	if list, err := s.Intents(); err != nil || list != nil {
		t.Fatalf("after removal: %v, %v; want no intents", list, err)
	}
}

func TestSelectReturnsAnEscapedContextBlock(t *testing.T) {
	nasty := `a "quoted" <tag> & 'x'` + "\x01\r"
	text := "active_intents:\n  - id: 'I&\"1'\n    name: " + yamlQuote(nasty) +
		"\n    owned_scope: ['src/**', '!src/gen/**']\n    constraints: [" + yamlQuote("no </intent_context> breakout") + "]\n"
	s := NewStore(workspace(t, &text), Options{})
	in, block, err := s.Select(`I&"1`)
	if err != nil {
		t.Fatal(err)
	}
	if in.ID != `I&"1` {
		t.Fatalf("got intent %q", in.ID)
	}
	var got struct {
		XMLName     xml.Name `xml:"intent_context"`
		ID          string   `xml:"intent_id,attr"`
		Name        string   `xml:"name"`
		Patterns    []string `xml:"owned_scope>pattern"`
		Constraints []string `xml:"constraints>constraint"`
		Criteria    []string `xml:"acceptance_criteria>criterion"`
	}
	if err := xml.Unmarshal([]byte(block), &got); err != nil {
		t.Fatalf("the block is not well-formed XML: %v\n%s", err, block)
	}
	if got.ID != `I&"1` || got.Name != `a "quoted" <tag> & 'x'`+"\r" {
		t.Errorf("round trip: id %q name %q", got.ID, got.Name)
	}
	if strings.Join(got.Patterns, ",") != "src/**,!src/gen/**" || got.Constraints[0] != "no </intent_context> breakout" || len(got.Criteria) != 0 {
		t.Errorf("round trip: %+v", got)
	}
	if _, _, err := s.Select("nope"); !errors.Is(err, ErrUnknownIntent) || !strings.Contains(err.Error(), `"I&\"1"`) {
		t.Errorf("unknown id: %v; want ErrUnknownIntent naming the intents", err)
	}
}

func yamlQuote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\x01", `\x01`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

func TestSelectRefusesACompletedIntent(t *testing.T) {
	text := `active_intents:
  - id: INT-001
    name: Auth refactor
    status: IN_PROGRESS
  - id: INT-002
    name: Docs
    status: Completed
`
	s := NewStore(workspace(t, &text), Options{})
	if _, _, err := s.Select("INT-001"); err != nil {
		t.Fatalf("an intent in progress is refused: %v", err)
	}
	_, block, err := s.Select("INT-002")
	if !errors.Is(err, ErrCompleted) || block != "" {
		t.Fatalf("Select(INT-002) = %q, %v; want ErrCompleted", block, err)
	}
	for _, want := range []string{`"INT-002" (Docs) is Completed`, `select one of "INT-001" (Auth refactor)`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}

	t.Run("says so when every intent is completed", func(t *testing.T) {
		done := "active_intents:\n  - {id: A, name: Only, status: COMPLETED}\n"
		_, _, err := NewStore(workspace(t, &done), Options{}).Select("A")
		if !errors.Is(err, ErrCompleted) || !strings.Contains(err.Error(), "every intent of the file is completed") {
			t.Errorf("err = %v", err)
		}
	})
}
