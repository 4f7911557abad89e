package handlers_test

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines/enginestest"
)

// The editor says the workspace is not trusted (workspaceTrust in
// initializationOptions): over real pipes, the engine's subtask and the
// command under allow each wait for the person's yes, and a no stops them.
// (docs/SECURITY.md, "Workspace trust")
func TestUntrustedWorkspaceAsksFirst(t *testing.T) {
	script := `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
    {"id": "1", "content": "Work on main.txt", "engine": "fake"},
    {"id": "2", "content": "Run the check"}]}}]}],
  "2": [{"toolCalls": [{"name": "run_command", "arguments": {"command": "echo checked"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "checked"}}]}]}}`
	for _, c := range []struct {
		name    string
		answer  string
		engine  string // subtask 1's state
		command bool   // the command ran
	}{
		{"a no stops the engine and the command", "Deny", api.SubtaskFailed, false},
		{"a yes lets each go on", "Run", api.SubtaskDone, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startRun(t, runOpts{
				files:  map[string]string{"main.txt": "x\n"},
				script: script,
				options: map[string]any{
					"workspaceTrust": "untrusted", "commands": "allow", "allowCommands": []string{"echo"},
					"engines": fakeEngine(t, false, enginestest.Step{Say: "engine ran"}),
				},
			})
			a := &approvals{}
			a.handle(r.ed, c.answer)
			res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t1"})
			if err != nil {
				t.Fatal(err)
			}
			asked := strings.Join(a.list(), "\n")
			for _, want := range []string{"This workspace is not trusted. agentls wants to run subtask 1 on the engine fake", "This workspace is not trusted. agentls wants to run `echo checked`"} {
				if !strings.Contains(asked, want) {
					t.Fatalf("the person was not asked %q; asked:\n%s", want, asked)
				}
			}
			if got := subtaskState(res, "1"); got.State != c.engine {
				t.Fatalf("subtask 1 (the engine's) = %+v, want %s", got, c.engine)
			}
			ran := false
			for _, e := range eventsOf(r, t, api.EventCommandFinished, "2") {
				ran = ran || e.Text == "echo checked"
			}
			if ran != c.command {
				t.Fatalf("the command ran: %v, want %v", ran, c.command)
			}
		})
	}
}
