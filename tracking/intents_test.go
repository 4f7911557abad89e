package tracking

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestIntentList(t *testing.T) {
	open := func(t *testing.T, intents string) *Workspace {
		t.Helper()
		root := t.TempDir()
		if intents != "" {
			dir := filepath.Join(root, ".orchestration")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "active_intents.yaml"), []byte(intents), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		ws, err := Open(Config{Root: root, StateDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ws.Close() })
		return ws
	}

	t.Run("lists the intents in the file's order, completed ones not selectable", func(t *testing.T) {
		ws := open(t, `active_intents:
  - id: INT-001
    name: Greeting
    status: IN_PROGRESS
    owned_scope: ["main.go"]
    constraints: ["Keep what main prints"]
    acceptance_criteria: ["go test ./... passes"]
  - id: INT-000
    name: Setup
    status: COMPLETED
`)
		got := ws.IntentList()
		want := api.IntentsResult{Intents: []api.IntentInfo{
			{ID: "INT-001", Name: "Greeting", Status: "IN_PROGRESS", OwnedScope: []string{"main.go"},
				Constraints: []string{"Keep what main prints"}, AcceptanceCriteria: []string{"go test ./... passes"}, Selectable: true},
			{ID: "INT-000", Name: "Setup", Status: "COMPLETED", OwnedScope: []string{}, Constraints: []string{}, AcceptanceCriteria: []string{}},
		}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %+v\nwant %+v", got, want)
		}
	})

	t.Run("lists none without the file", func(t *testing.T) {
		if got := open(t, "").IntentList(); got.Intents == nil || len(got.Intents) != 0 || got.Error != "" {
			t.Errorf("got %+v", got)
		}
	})

	t.Run("says why a broken file cannot be used", func(t *testing.T) {
		got := open(t, "active_intents:\n  - id: a\n    name: A\n  - id: a\n    name: B\n").IntentList()
		if len(got.Intents) != 0 || !strings.Contains(got.Error, "id already used") {
			t.Errorf("got %+v", got)
		}
	})
}
