package workforce

import (
	"context"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

// commandEditor runs commands by their name: "fail" exits 3, any other
// prints its command line. It records what it was asked.
type commandEditor struct {
	Editor
	asked []api.RunCommandParams
}

func (e *commandEditor) RunCommand(_ context.Context, p api.RunCommandParams) (api.RunCommandResult, error) {
	e.asked = append(e.asked, p)
	if p.Command == "fail" {
		return api.RunCommandResult{ExitCode: 3, Output: "it failed\n"}, nil
	}
	return api.RunCommandResult{Output: "ran " + p.Command + "\n"}, nil
}

func TestRunCommand(t *testing.T) {
	h := newToolHarness(t, nil)
	ed := &commandEditor{Editor: h.e.cfg.Editor}
	h.e.cfg.Editor = ed
	res := h.check("run_command", []toolCase{
		{name: "runs a command through the editor and gives its exit code and output", args: map[string]any{"command": "go vet ./..."}, says: []string{"Exit code 0.\nran go vet ./..."}},
		{name: "gives a failing command as an error with its exit code and output", args: map[string]any{"command": "fail"}, isErr: true, says: []string{"Exit code 3.\nit failed"}},
		{name: "passes a shorter time limit on", args: map[string]any{"command": "sleep 1", "timeoutMs": 1500}, says: []string{"ran sleep 1"}},
		{name: "refuses a blank command", args: map[string]any{"command": "  "}, isErr: true, says: []string{"run_command needs command"}},
		{name: "refuses a time limit that is not an integer", args: map[string]any{"command": "ls", "timeoutMs": "1s"}, isErr: true, says: []string{"run_command's timeoutMs must be an integer"}},
	})
	if len(ed.asked) != 3 {
		t.Fatalf("the editor was asked to run %+v", ed.asked)
	}
	if p := ed.asked[0]; p.Cwd != h.root || p.Command != "go vet ./..." {
		t.Errorf("the first command ran as %+v, want it in %s", p, h.root)
	}
	if p := ed.asked[2]; p.TimeoutMs != 1500 {
		t.Errorf("the time limit was %d ms, want 1500", p.TimeoutMs)
	}
	var cmds []string
	for _, ev := range h.events(res.TaskID, api.EventCommandFinished) {
		cmds = append(cmds, ev.Text+" "+ev.Summary)
	}
	if got := strings.Join(cmds, ", "); got != "go vet ./... exit code 0, fail exit code 3, sleep 1 exit code 0" {
		t.Errorf("commandFinished events: %s", got)
	}
}
