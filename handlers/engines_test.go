package handlers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// twoSubtasks plans subtask 1 on engine (or the built-in worker when it is
// "") and subtask 2 on the built-in worker, in parallel; the worker of 2
// writes notes.txt.
func twoSubtasks(engine string) string {
	eng := ""
	if engine != "" {
		eng = `, "engine": "` + engine + `"`
	}
	return `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
    {"id": "1", "content": "Work on main.txt"` + eng + `},
    {"id": "2", "content": "Write the notes"}]}}]}],
  "2": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "notes\n"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "notes written"}}]}]}}`
}

// fakeEngine is the engines setting with the fake agent playing script as
// engine "fake".
func fakeEngine(t *testing.T, isolate bool, script ...enginestest.Step) map[string]any {
	t.Helper()
	argv, env := enginestest.FakeAgent(t, script...)
	return map[string]any{"fake": map[string]any{"command": argv, "env": env, "isolate": isolate}}
}

func eventsOf(r *runEnv, t *testing.T, k, sub string) []api.TaskEvent {
	var out []api.TaskEvent
	for _, u := range r.updates(t, "") {
		if u.Event.Kind == k && (sub == "" || u.Event.SubtaskID == sub) {
			out = append(out, u.Event)
		}
	}
	return out
}

func TestEngineSubtask(t *testing.T) {
	r := startRun(t, runOpts{
		files:  map[string]string{"main.txt": "on disk\n", "secret/key.txt": "k\n", ".orchestration/.keep": ""},
		script: twoSubtasks("fake"),
		options: map[string]any{
			"zones": map[string]any{"deny": []string{"secret/**"}},
			// The workspace's path is only known once it is made: the
			// fake reads and writes by relative path through the host.
			"engines": fakeEngine(t, false,
				enginestest.Step{Plan: []string{"read main.txt", "write out.txt"}},
				enginestest.Step{Read: "main.txt"},
				enginestest.Step{Write: "out.txt", Content: "from the engine\n"},
				enginestest.Step{Write: "secret/key.txt", Content: "stolen\n"},
				enginestest.Step{Twice: "main.txt"},
				enginestest.Step{Say: "The engine is done."}),
		},
	})
	r.ed.OpenBuffer("main.txt", "unsaved in the editor\n")
	res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != api.TaskDone {
		t.Fatalf("state %s: %s", res.State, res.Summary)
	}
	one := subtaskState(res, "1")
	t.Run("runs subtask 1 on the engine and 2 on the built-in worker, in parallel", func(t *testing.T) {
		if one.Engine != "fake" || subtaskState(res, "2").Engine != "" {
			t.Fatalf("engines: %+v", res.Subtasks)
		}
		var order []string
		for _, u := range r.updates(t, "t1") {
			if u.Event.Kind == api.EventSubtaskStarted || u.Event.Kind == api.EventSubtaskFinished {
				order = append(order, u.Event.Kind+":"+u.Event.SubtaskID)
			}
		}
		if len(order) < 2 || order[0] != "subtaskStarted:1" || order[1] != "subtaskStarted:2" {
			t.Fatalf("order %v: both subtasks start before either ends", order)
		}
		if !strings.HasPrefix(one.Result, "The engine is done.") {
			t.Fatalf("subtask 1's result %q is not the engine's last message", one.Result)
		}
	})
	t.Run("the engine's read sees the editor's unsaved buffer", func(t *testing.T) {
		var said strings.Builder
		for _, e := range eventsOf(r, t, api.EventMessageDelta, "1") {
			said.WriteString(e.Text)
		}
		if !strings.Contains(said.String(), "read: unsaved in the editor") {
			t.Fatalf("the engine said %q", said.String())
		}
	})
	t.Run("its write goes through the editing pipeline, into the trace", func(t *testing.T) {
		if got := r.file(t, "out.txt"); got != "from the engine\n" {
			t.Fatalf("out.txt = %q", got)
		}
		var tr api.TraceResult
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "out.txt"}, &tr); err != nil {
			t.Fatal(err)
		}
		if len(tr.Entries) != 1 || tr.Entries[0].SubtaskID != "1" || tr.Entries[0].Operation != api.OpCreate {
			t.Fatalf("trace of out.txt: %+v", tr.Entries)
		}
		found := false
		for _, c := range res.Changes {
			found = found || c.Path == "out.txt" && c.Applied
		}
		if !found {
			t.Fatalf("the run's changes do not list out.txt: %+v", res.Changes)
		}
	})
	t.Run("its write outside the zones is refused without asking", func(t *testing.T) {
		if got := r.file(t, "secret/key.txt"); got != "k\n" {
			t.Fatalf("secret/key.txt = %q", got)
		}
		blocked := eventsOf(r, t, api.EventBlocked, "1")
		if len(blocked) == 0 || blocked[0].Path != "secret/key.txt" {
			t.Fatalf("blocked events: %+v", blocked)
		}
		for _, c := range r.ed.ReverseCalls() {
			if c.Method == api.MethodShowMessageRequest {
				t.Fatalf("the person was asked: %s", c.Params)
			}
		}
	})
	t.Run("heat records its accesses", func(t *testing.T) {
		var snap api.HeatSnapshot
		if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "t1"}, &snap); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, n := range snap.Nodes {
			got[n.Path] = n.LastAction
		}
		if got["main.txt"] != api.ActionRead || got["out.txt"] != api.ActionWrite || got["secret/key.txt"] != api.ActionBlocked {
			t.Fatalf("heat: %v", got)
		}
	})
	t.Run("its tool calls are told once each, its plan as the subtask's steps", func(t *testing.T) {
		calls := eventsOf(r, t, api.EventToolCall, "1")
		results := eventsOf(r, t, api.EventToolResult, "1")
		if len(calls) != 4 || len(results) != 4 {
			t.Fatalf("%d toolCall and %d toolResult events: %+v", len(calls), len(results), calls)
		}
		if last := calls[3]; last.Tool != "read" || last.Text != "Read main.txt" || last.Path != "main.txt" {
			t.Fatalf("the call announced twice: %+v", last)
		}
		if len(one.Steps) != 2 || one.Steps[0].Content != "read main.txt" || one.Steps[0].Status != "in_progress" {
			t.Fatalf("steps: %+v", one.Steps)
		}
		if len(eventsOf(r, t, api.EventEngineStarted, "1")) != 1 {
			t.Fatal("no engineStarted event")
		}
	})
}

func TestEngineProposeMode(t *testing.T) {
	r := startRun(t, runOpts{
		files:  map[string]string{"main.txt": "main\n"},
		script: twoSubtasks("fake"),
		options: map[string]any{"editMode": "propose",
			"engines": fakeEngine(t, false, enginestest.Step{Write: "out.txt", Content: "proposed\n"}, enginestest.Step{Say: "proposed it"})},
	})
	asked := make(chan string, 4)
	release := make(chan bool)
	r.ed.ConfirmEdits(func(ctx context.Context, p api.ApplyWorkspaceEditParams) (bool, error) {
		asked <- p.Label
		return <-release, nil
	})
	done := r.runAsync(t, api.RunParams{Prompt: "work", TaskID: "t1"})
	for range 2 { // the engine's out.txt and the worker's notes.txt
		label := within(t, testkit.Timeout, asked)
		if _, err := os.Stat(filepath.Join(r.root, "out.txt")); err == nil {
			t.Fatalf("out.txt reached the disk before it was approved (asked: %s)", label)
		}
		release <- true
	}
	out := within(t, testkit.Timeout, done)
	if out.err != nil || out.res.State != api.TaskDone {
		t.Fatalf("run: %v %+v", out.err, out.res)
	}
	if got := r.file(t, "out.txt"); got != "proposed\n" {
		t.Fatalf("out.txt = %q after approval", got)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(testkit.Timeout)
	for {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written", file)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEngineStopAndSkip(t *testing.T) {
	for _, c := range []struct {
		name    string
		control func(r *runEnv) error
		state   string
	}{
		{"agent/stop ends the engine and leaves no process", func(r *runEnv) error {
			var res api.StopResult
			return r.ed.Call(context.Background(), api.MethodStop, api.StopParams{TaskID: "t1"}, &res)
		}, api.TaskStopped},
		{"agent/skipSubtask ends the engine's subtask and leaves no process", func(r *runEnv) error {
			return r.ed.Call(context.Background(), api.MethodSkipSubtask, api.SubtaskParams{TaskID: "t1", SubtaskID: "1"}, nil)
		}, api.TaskDone},
	} {
		t.Run(c.name, func(t *testing.T) {
			pids := t.TempDir()
			agentPid, childPid := filepath.Join(pids, "agent"), filepath.Join(pids, "child")
			r := startRun(t, runOpts{
				files:  map[string]string{"main.txt": "main\n"},
				script: twoSubtasks("fake"),
				options: map[string]any{"engines": fakeEngine(t, false,
					enginestest.Step{PidFile: agentPid}, enginestest.Step{Child: childPid}, enginestest.Step{Stubborn: true})},
			})
			done := r.runAsync(t, api.RunParams{Prompt: "work", TaskID: "t1"})
			agent, child := readPid(t, agentPid), readPid(t, childPid)
			r.awaitEvent(t, kind(api.EventSubtaskFinished, "2"))
			start := time.Now()
			if err := c.control(r); err != nil {
				t.Fatal(err)
			}
			out := within(t, testkit.Timeout, done)
			t.Logf("the run answered %v after the control", time.Since(start))
			if out.err != nil || out.res.State != c.state {
				t.Fatalf("run: %v, state %s: %s", out.err, out.res.State, out.res.Summary)
			}
			if testkit.Alive(agent) || testkit.Alive(child) {
				t.Fatalf("left running: agent %v, its child %v", testkit.Alive(agent), testkit.Alive(child))
			}
		})
	}
}

func TestEngineIsolated(t *testing.T) {
	r := startRun(t, runOpts{
		files:  map[string]string{"a.txt": "a\n", "b.txt": "b\n"},
		script: twoSubtasks("fake"),
		options: map[string]any{"engines": fakeEngine(t, true,
			enginestest.Step{WriteDisk: "a.txt", Content: "a, by the engine\n"},
			enginestest.Step{WriteDisk: "b.txt", Content: "b, by the engine\n"},
			enginestest.Step{WriteDisk: "c.txt", Content: "c\n"},
			enginestest.Step{Say: "changed three files"})},
	})
	// The editor changes b.txt while the engine works on its own copy.
	r.ed.OpenBuffer("b.txt", "b, edited in the editor\n")
	res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.file(t, "a.txt"); got != "a, by the engine\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got := r.file(t, "c.txt"); got != "c\n" {
		t.Fatalf("c.txt = %q", got)
	}
	if got, _, _ := r.ed.Buffer("b.txt"); got != "b, edited in the editor\n" {
		t.Fatalf("b.txt's buffer = %q: the editor's text was overwritten", got)
	}
	applied, refused := map[string]bool{}, map[string]bool{}
	for _, c := range res.Changes {
		if c.Applied {
			applied[c.Path] = true
		} else {
			refused[c.Path] = true
		}
	}
	if !applied["a.txt"] || !applied["c.txt"] || !refused["b.txt"] {
		t.Fatalf("changes: %+v", res.Changes)
	}
	one := subtaskState(res, "1")
	if !strings.Contains(one.Result, "2 of the 3 files fake changed were brought back") || !strings.Contains(one.Result, "b.txt: not applied: conflict") {
		t.Fatalf("result: %q", one.Result)
	}
}

func TestEnginePlanRepair(t *testing.T) {
	r := startRun(t, runOpts{
		files: map[string]string{"main.txt": "main\n"},
		script: `{"agents": {
  "coordinator": [
    {"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "one", "engine": "nosuch"}]}}]},
    {"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "one", "engine": "fake"}]}}]}]}}`,
		options: map[string]any{"engines": fakeEngine(t, false, enginestest.Step{Say: "done by the engine"})},
	})
	res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone || subtaskState(res, "1").Result != "done by the engine" {
		t.Fatalf("%v %+v", err, res)
	}
	var told string
	for _, e := range eventsOf(r, t, api.EventMessage, "") {
		told += e.Text
	}
	if !strings.Contains(told, `subtask "1": unknown engine "nosuch"`) || !strings.Contains(told, "the engines are fake") {
		t.Fatalf("the coordinator was told %q", told)
	}
}

func TestEngineSettings(t *testing.T) {
	r := startRun(t, runOpts{
		files: map[string]string{"main.txt": "main\n"},
		script: `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "one", "engine": "fake"}]}}]}],
  "1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "built in"}}]}],
  "2:coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "one"}]}}]}]}}`,
		options: map[string]any{"engines": fakeEngine(t, false, enginestest.Step{Say: "hi"})},
	})
	t.Run("agent/engines lists the built-in engines and the configured ones", func(t *testing.T) {
		var res api.EnginesResult
		if err := r.ed.Call(testkit.Context(t), api.MethodEngines, api.EnginesParams{Probe: true}, &res); err != nil {
			t.Fatal(err)
		}
		names := map[string]api.EngineInfo{}
		for _, e := range res.Engines {
			names[e.Name] = e
			if !e.Usable && e.Reason == "" {
				t.Errorf("%s is not usable and says not why", e.Name)
			}
		}
		for _, n := range []string{"claude", "codex", "gemini"} {
			if !names[n].Builtin {
				t.Errorf("%s is missing or not built in: %+v", n, names[n])
			}
		}
		if f := names["fake"]; !f.Usable || f.Version != "9.9.9" || f.Source != "settings" || f.Builtin {
			t.Fatalf("fake: %+v", f)
		}
	})
	t.Run("a run may force the built-in worker", func(t *testing.T) {
		res, err := r.run(t, api.RunParams{Prompt: "work", Engine: "agentls"})
		if err != nil || res.State != api.TaskDone || subtaskState(res, "1").Engine != "" || subtaskState(res, "1").Result != "built in" {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("a run may force an engine", func(t *testing.T) {
		res, err := r.run(t, api.RunParams{Prompt: "work", Engine: "fake"})
		if err != nil || res.State != api.TaskDone || subtaskState(res, "1").Engine != "fake" || subtaskState(res, "1").Result != "hi" {
			t.Fatalf("%v %+v", err, res)
		}
	})
	t.Run("a run that names an unknown engine is refused, naming the engines", func(t *testing.T) {
		_, err := r.run(t, api.RunParams{Prompt: "work", Engine: "nosuch"})
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), `"engine"`) || !strings.Contains(err.Error(), "claude") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a bad engines setting fails initialize, naming the key", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true})
		err := ed.Call(testkit.Context(t), api.MethodInitialize, json.RawMessage(`{"capabilities":{},"initializationOptions":{"engines":{"claude":{"command":"claude-agent-acp"}}}}`), nil)
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "initializationOptions.engines.claude.command: must be an array of strings") {
			t.Fatalf("initialize = %v", err)
		}
	})
}
