//go:build unix

package acpface_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// chooses answers every permission request with the option named name.
func chooses(name string) func(*acp.RequestPermissionRequest) acp.PermissionOutcome {
	return func(p *acp.RequestPermissionRequest) acp.PermissionOutcome {
		for _, o := range p.Options {
			if o.Name == name {
				return acp.Selected(o.OptionID)
			}
		}
		return acp.Cancelled
	}
}

// editOnly plans one subtask that edits main.go and finishes.
var editOnly = script(map[string][]turn{
	"coordinator": onePlan("Add greet"),
	"1": {
		{calls: []call{{"read_file", map[string]any{"path": "main.go"}}}},
		{calls: []call{{"edit_file", map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { greet() }"}}}},
		finish("edited"),
	},
})

func TestProposeMode(t *testing.T) {
	for _, c := range []struct {
		name, choice string
		applied      bool
	}{
		{"applies a change the person approves, its diff shown first", "Apply", true},
		{"leaves the file as it was when the person rejects the change", "Reject", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo}, script: editOnly})
			// Each question must come after the call it is about: the
			// client has seen the tool call when the question arrives.
			var announced bool
			e.client.answer = func(p *acp.RequestPermissionRequest) acp.PermissionOutcome {
				must(t, e.conn.Settle(testkit.Context(t)))
				for _, call := range of[acp.ToolCall](e.client.seen()) {
					announced = announced || call.ToolCallID == p.ToolCall.ToolCallID
				}
				return chooses(c.choice)(p)
			}
			res, err := e.prompt(t, sid, acp.Text("add greet"))
			must(t, err)
			if res.StopReason != acp.StopEndTurn {
				t.Fatalf("stop reason %s", res.StopReason)
			}
			e.client.mu.Lock()
			perms := e.client.permissions
			e.client.mu.Unlock()
			if len(perms) != 1 {
				t.Fatalf("%d permission requests", len(perms))
			}
			p := perms[0]
			if !announced {
				t.Fatalf("asked about %s before announcing it", p.ToolCall.ToolCallID)
			}
			if p.ToolCall.Title != "Edit main.go" || p.ToolCall.Kind != acp.KindEdit || len(p.ToolCall.Content) != 1 {
				t.Fatalf("toolCall %+v", p.ToolCall)
			}
			d := p.ToolCall.Content[0]
			if d.Type != acp.ToolContentDiff || d.Path != filepath.Join(e.root, "main.go") || *d.OldText != mainGo || !strings.Contains(d.NewText, "greet()") {
				t.Fatalf("diff %+v", d)
			}
			if len(p.Options) != 2 || p.Options[0].Kind != acp.AllowOnce || p.Options[1].Kind != acp.RejectOnce {
				t.Fatalf("options %+v", p.Options)
			}
			got := e.read(t, "main.go")
			if applied := got != mainGo; applied != c.applied {
				t.Fatalf("main.go = %q", got)
			}
			if !c.applied && e.client.called(acp.MethodFSWriteTextFile) != 0 {
				t.Fatal("a rejected change was written")
			}
			var last acp.ToolCallUpdate
			for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
				if u.ToolCallID == p.ToolCall.ToolCallID && u.Status != "" {
					last = u
				}
			}
			want := acp.StatusCompleted
			if !c.applied {
				want = acp.StatusFailed
			}
			if last.Status != want {
				t.Fatalf("the edit's call ended %q, want %q", last.Status, want)
			}
		})
	}
}

// twoCommands runs `echo one` twice and finishes.
var twoCommands = script(map[string][]turn{
	"coordinator": onePlan("Run it twice"),
	"1": {
		{calls: []call{{"run_command", map[string]any{"command": "echo one"}}}},
		{calls: []call{{"run_command", map[string]any{"command": "echo one"}}}},
		finish("ran"),
	},
})

func TestCommandApproval(t *testing.T) {
	for _, c := range []struct {
		name, choice string
		asked, ran   int
	}{
		{"runs an approved command and asks again for the next", "Run", 2, 2},
		{"remembers Always allow for the rest of the session", "Always allow", 1, 2},
		{"runs nothing the person denies", "Deny", 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, sid := ready(t, opts{script: twoCommands, meta: map[string]any{"commands": "ask"}})
			e.client.answer = chooses(c.choice)
			_, err := e.prompt(t, sid, acp.Text("run it"))
			must(t, err)
			e.client.mu.Lock()
			perms := e.client.permissions
			e.client.mu.Unlock()
			if len(perms) != c.asked {
				t.Fatalf("asked %d times, want %d", len(perms), c.asked)
			}
			if ran := e.client.called(acp.MethodTerminalCreate); ran != c.ran {
				t.Fatalf("ran %d commands, want %d", ran, c.ran)
			}
			p := perms[0]
			names := []string{}
			for _, o := range p.Options {
				names = append(names, o.Name+":"+o.Kind)
			}
			if strings.Join(names, ",") != "Run:allow_once,Always allow:allow_always,Deny:reject_once" {
				t.Fatalf("options %v", names)
			}
			if !strings.Contains(p.ToolCall.Content[0].Content.Text, "echo one") {
				t.Fatalf("question %+v", p.ToolCall)
			}
			// The question is asked on the run_command's own call.
			calls := of[acp.ToolCall](e.client.seen())
			if len(calls) == 0 || calls[0].ToolCallID != p.ToolCall.ToolCallID || calls[0].Kind != acp.KindExecute {
				t.Fatalf("asked on %s, the calls are %+v", p.ToolCall.ToolCallID, calls)
			}
		})
	}
}

func TestAskHuman(t *testing.T) {
	t.Run("asks a question with options as a permission request and gives the model the answer", func(t *testing.T) {
		e, sid := ready(t, opts{script: script(map[string][]turn{
			"coordinator": onePlan("Pick a name"),
			"1": {
				{calls: []call{{"ask_human", map[string]any{"question": "Which name?", "options": []string{"greet", "hello"}}}}},
				finish("picked"),
			},
		})})
		e.client.answer = chooses("hello")
		_, err := e.prompt(t, sid, acp.Text("pick"))
		must(t, err)
		var result string
		for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
			if u.Status == acp.StatusCompleted {
				result = u.Content[len(u.Content)-1].Content.Text
			}
		}
		if !strings.Contains(result, "The user answered: hello") {
			t.Fatalf("ask_human's result %q", result)
		}
	})
}

var _ = context.Background

func TestReviewMode(t *testing.T) {
	t.Run("proposes the prompt's changes at its end, file by file, and applies those approved", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"a.txt": "a\n", "b.txt": "b\n"}, script: script(map[string][]turn{
			"coordinator": onePlan("Change both files"),
			"1": {
				{calls: []call{{"read_file", map[string]any{"path": "a.txt"}}, {"read_file", map[string]any{"path": "b.txt"}}}},
				{calls: []call{{"write_file", map[string]any{"path": "a.txt", "content": "A\n"}}, {"write_file", map[string]any{"path": "b.txt", "content": "B\n"}}}},
				finish("both changed"),
			},
		})})
		_, err := e.agent.SetSessionMode(testkit.Context(t), &acp.SetSessionModeRequest{SessionID: sid, ModeID: "review"})
		must(t, err)
		e.client.answer = func(p *acp.RequestPermissionRequest) acp.PermissionOutcome {
			if strings.HasSuffix(p.ToolCall.Content[0].Path, "b.txt") {
				return chooses("Reject")(p)
			}
			return chooses("Apply")(p)
		}
		res, err := e.prompt(t, sid, acp.Text("change both"))
		must(t, err)
		if res.StopReason != acp.StopEndTurn {
			t.Fatalf("stop reason %s", res.StopReason)
		}
		e.client.mu.Lock()
		perms := e.client.permissions
		e.client.mu.Unlock()
		if len(perms) != 2 || perms[0].ToolCall.Title != "Edit a.txt" || perms[1].ToolCall.Title != "Edit b.txt" {
			t.Fatalf("permissions %+v", perms)
		}
		if a, b := e.read(t, "a.txt"), e.read(t, "b.txt"); a != "A\n" || b != "b\n" {
			t.Fatalf("a.txt %q, b.txt %q", a, b)
		}
	})
}
