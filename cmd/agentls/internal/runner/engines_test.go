package runner

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestTreeShowsEngines(t *testing.T) {
	subs := []api.Subtask{
		{ID: "1", Content: "add greet", State: api.SubtaskRunning, Engine: "claude",
			Steps: []api.PlanStep{{Content: "read main.go", Status: "completed"}, {Content: "write greet", Status: "in_progress"}, {Content: "test it", Status: "pending"}}},
		{ID: "2", Content: "write the notes", State: api.SubtaskRunning},
	}
	update := func(ev api.TaskEvent) *api.TaskUpdateParams {
		return &api.TaskUpdateParams{State: api.TaskRunning, Subtasks: subs, Event: ev}
	}
	tr := newTree()
	for _, c := range []struct {
		name string
		ev   api.TaskEvent
		want string
	}{
		{"says which engine a subtask starts on", api.TaskEvent{Kind: api.EventSubtaskStarted, SubtaskID: "1", Text: "add greet"}, "[1] started on claude: add greet"},
		{"says nothing of an engine for the built-in worker", api.TaskEvent{Kind: api.EventSubtaskStarted, SubtaskID: "2", Text: "write the notes"}, "[2] started: write the notes"},
		{"tells the engine's start in one line", api.TaskEvent{Kind: api.EventEngineStarted, SubtaskID: "1", Text: "claude", Summary: "started in 840 ms"}, "[1] engine claude started in 840 ms"},
		{"tells the engine's own plan in one line", api.TaskEvent{Kind: api.EventSteps, SubtaskID: "1"}, "[1] steps: [x] read main.go · [>] write greet · [ ] test it"},
		{"names the instruction files a worker found changed", api.TaskEvent{Kind: api.EventInstructions, SubtaskID: "2", Instructions: []api.InstructionFile{
			{Path: "AGENTS.md", Tokens: 9}, {Path: "pkg/AGENTS.md", Tokens: 8190, Cut: true}, {Path: "web/CLAUDE.md", Cut: true}}},
			"[2] instructions: AGENTS.md (9 tokens), pkg/AGENTS.md (cut at 8190 tokens), web/CLAUDE.md (left out)"},
		{"tells a compaction of a worker's context", api.TaskEvent{Kind: api.EventCompacted, SubtaskID: "2", TokensBefore: 160000, TokensAfter: 42000},
			"[2] context compacted: 160000 → 42000 tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if line := tr.apply(update(c.ev)); line != c.want {
				t.Errorf("line = %q, want %q", line, c.want)
			}
		})
	}
	t.Run("draws the engine after the subtask's content and its steps under it", func(t *testing.T) {
		got := strings.Join(tr.render(false), "\n")
		for _, want := range []string{
			"◐ 1 add greet [claude]\n      [x] read main.go\n      [>] write greet\n      [ ] test it\n",
			"◐ 2 write the notes",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("tree lacks %q:\n%s", want, got)
			}
		}
		if strings.Contains(got, "write the notes [") {
			t.Errorf("the built-in worker's subtask names an engine:\n%s", got)
		}
	})
}

func TestEnginesCommand(t *testing.T) {
	res := api.EnginesResult{Engines: []api.EngineInfo{
		{Name: "claude", Builtin: true, Command: []string{"/usr/bin/claude-agent-acp"}, Source: "path", Version: "0.23.1", Isolated: true, Usable: true},
		{Name: "codex", Builtin: true, Command: []string{}, Reason: "codex-acp is not on PATH nor in npm's cache (/home/me/.npm): npx -y @zed-industries/codex-acp installs it"},
		{Name: "goose", Command: []string{"goose", "acp"}, Source: "settings", Usable: true, Note: "version unknown: the package its command runs cannot be told without starting it"},
	}}
	var probed bool
	f := &fakeServer{control: func(m string, params json.RawMessage) (any, error) {
		if m != api.MethodEngines {
			return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", m)
		}
		var p api.EnginesParams
		_ = json.Unmarshal(params, &p)
		probed = p.Probe
		return res, nil
	}}
	t.Run("lists each engine with its version and command, or why it cannot be used", func(t *testing.T) {
		code, out, errs := queryFake(t, f, Engines, Options{})
		if code != ExitDone {
			t.Fatalf("exit %d, stderr:\n%s", code, errs)
		}
		want := "3 engines (agentls run --engine NAME; agentls: the built-in worker)\n" +
			"claude 0.23.1: usable, isolated: /usr/bin/claude-agent-acp (from PATH)\n" +
			"codex: cannot be used: codex-acp is not on PATH nor in npm's cache (/home/me/.npm): npx -y @zed-industries/codex-acp installs it\n" +
			"goose: usable: goose acp (from the engines setting); version unknown: the package its command runs cannot be told without starting it\n"
		if out != want || probed {
			t.Errorf("stdout (probed %v):\n%s\nwant:\n%s", probed, out, want)
		}
	})
	t.Run("asks the server to probe them with --probe", func(t *testing.T) {
		if code, _, errs := queryFake(t, f, Engines, Options{Probe: true}); code != ExitDone || !probed {
			t.Fatalf("exit %d, probed %v, stderr:\n%s", code, probed, errs)
		}
	})
	t.Run("prints the server's answer as one line of JSON with --json", func(t *testing.T) {
		code, out, _ := queryFake(t, f, Engines, Options{JSON: true})
		var got api.EnginesResult
		if code != ExitDone || json.Unmarshal([]byte(out), &got) != nil || len(got.Engines) != 3 || got.Engines[0].Version != "0.23.1" || strings.Count(out, "\n") != 1 {
			t.Fatalf("exit %d, stdout:\n%s", code, out)
		}
	})
}
