package workforce

import (
	"testing"

	"github.com/agentls/agentls/api"
)

func TestSelectIntent(t *testing.T) {
	t.Run("in a workspace with intents", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{
			".orchestration/active_intents.yaml": "active_intents:\n  - id: INT-1\n    name: Docs\n    owned_scope: [\"docs/**\"]\n",
			"src/a.go":                           "package a\n",
		})
		res := h.check("select_intent", []toolCase{
			{name: "gives the intent's context", args: map[string]any{"intent_id": "INT-1"}, says: []string{`<intent_context intent_id="INT-1"`, "docs/**"}},
			{name: "refuses an intent that is not listed", args: map[string]any{"intent_id": "INT-9"}, isErr: true, says: []string{"INT-9"}},
			{name: "needs an intent id", args: map[string]any{}, isErr: true, says: []string{"select_intent needs intent_id"}},
		})
		if got := h.events(res.TaskID, api.EventIntentSelected); len(got) != 1 || got[0].Text != "INT-1" {
			t.Errorf("intentSelected events = %+v", got)
		}
	})

	t.Run("keeps the worker's writes in the selected intent's scope", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{
			".orchestration/active_intents.yaml": "active_intents:\n  - id: INT-1\n    name: Docs\n    owned_scope: [\"docs/**\"]\n",
		})
		h.check("write_file", []toolCase{
			{name: "writes in the scope", args: map[string]any{"path": "docs/a.md", "content": "a\n"}, says: []string{"Created docs/a.md"}},
			{name: "refuses a write out of the scope", args: map[string]any{"path": "src/a.go", "content": "package a\n"}, isErr: true, says: []string{"owned_scope"}},
		}, call("select_intent", map[string]any{"intent_id": "INT-1"}))
	})

	t.Run("in a workspace without intents", func(t *testing.T) {
		h := newToolHarness(t, nil)
		h.check("select_intent", []toolCase{
			{name: "says that no intent is needed", args: map[string]any{"intent_id": "INT-1"}, isErr: true, says: []string{"this workspace has no intents"}},
		})
	})
}
