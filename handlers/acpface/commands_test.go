//go:build unix

package acpface_test

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

const intents = `active_intents:
  - id: INT-1
    name: Source work
    status: IN_PROGRESS
    owned_scope: ["src/**"]
`

func TestSlashCommands(t *testing.T) {
	t.Run("lists the intents, picks one for the next prompts and drops it", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{".orchestration/active_intents.yaml": intents, "src/a.txt": "a\n"},
			script: script(map[string][]turn{
				"coordinator": onePlan("Write outside the intent"),
				"1":           {{calls: []call{{"write_file", map[string]any{"path": "docs/out.txt", "content": "no\n"}}}}, finish("refused")},
			}), meta: map[string]any{"editMode": "apply"}})
		if got := listOf(t, e, sid, "/intent"); !strings.Contains(got, "INT-1: Source work") || strings.Contains(got, "(selected)") {
			t.Fatalf("/intent = %q", got)
		}
		if got := listOf(t, e, sid, "/intent INT-1"); !strings.Contains(got, "intent INT-1 (Source work)") {
			t.Fatalf("/intent INT-1 = %q", got)
		}
		if got := listOf(t, e, sid, "/intent"); !strings.Contains(got, "INT-1: Source work (selected)") {
			t.Fatalf("/intent after picking = %q", got)
		}
		// The prompt works under INT-1: a write outside src/ is refused.
		_, err := e.prompt(t, sid, acp.Text("write docs/out.txt"))
		must(t, err)
		thoughts := ""
		for _, c := range of[acp.AgentThoughtChunk](e.client.seen()) {
			thoughts += c.Content.Text
		}
		if !strings.Contains(thoughts, "Blocked: docs/out.txt") {
			t.Fatalf("thoughts %q", thoughts)
		}
		if got := listOf(t, e, sid, "/intent none"); !strings.Contains(got, "no intent") {
			t.Fatalf("/intent none = %q", got)
		}
		if got := listOf(t, e, sid, "/intent INT-9"); !strings.Contains(got, "No intent INT-9") {
			t.Fatalf("/intent INT-9 = %q", got)
		}
	})

	t.Run("shows the hottest files and the sessions", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"notes.txt": "hello\n"}, script: twoRuns})
		if got := listOf(t, e, sid, "/heat"); !strings.Contains(got, "No file is warm") {
			t.Fatalf("/heat before = %q", got)
		}
		if got := listOf(t, e, sid, "/sessions"); !strings.Contains(got, "no sessions yet") {
			t.Fatalf("/sessions before = %q", got)
		}
		_, err := e.prompt(t, sid, acp.Text("What do the notes say?"))
		must(t, err)
		if got := listOf(t, e, sid, "/heat"); !strings.Contains(got, "- notes.txt: ") {
			t.Fatalf("/heat = %q", got)
		}
		if got := listOf(t, e, sid, "/sessions"); !strings.Contains(got, "What do the notes say? (this one) — "+sid+", 1 prompt(s)") {
			t.Fatalf("/sessions = %q", got)
		}
	})

	t.Run("stops a subtask of the running prompt, the rest going on", func(t *testing.T) {
		e, sid := ready(t, opts{script: script(map[string][]turn{
			"coordinator": {{calls: []call{{"plan", map[string]any{"subtasks": []any{
				map[string]any{"id": "1", "content": "Wait a long time"},
				map[string]any{"id": "2", "content": "Then say done", "dependsOn": []string{"1"}},
			}}}}}},
			"1": {{calls: []call{{"run_command", map[string]any{"command": "sleep 60"}}}}, finish("waited")},
			"2": {finish("done")},
		})})
		e.client.termSeen = make(chan string, 1)
		if got := listOf(t, e, sid, "/stop-subtask 1"); !strings.Contains(got, "No prompt is running") {
			t.Fatalf("/stop-subtask without a prompt = %q", got)
		}
		done := e.promptInBackground(t, sid, acp.Text("wait, then say done"))
		<-e.client.termSeen
		if got := listOf(t, e, sid, "/stop-subtask 1"); !strings.Contains(got, "Subtask 1 stopped") {
			t.Fatalf("/stop-subtask 1 = %q", got)
		}
		res := <-done
		if res == nil || res.StopReason != acp.StopEndTurn || metaOf(t, res.Meta)["state"] != "done" {
			t.Fatalf("prompt = %+v", res)
		}
		plans := of[acp.Plan](e.client.seen())
		last := plans[len(plans)-1]
		if metaOf(t, last.Entries[0].Meta)["state"] != "skipped" || metaOf(t, last.Entries[1].Meta)["state"] != "done" {
			t.Fatalf("last plan %+v", last)
		}
		if _, err := e.prompt(t, sid, acp.Text("/stop-subtask")); codeOf(err) != api.CodeInvalidParams {
			t.Fatalf("/stop-subtask without an id = %v", err)
		}
	})
}
