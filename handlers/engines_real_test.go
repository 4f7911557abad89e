package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// realAgent is one of the real agents the engine tests run from npm, with
// the tool calls its fake model makes it do.
type realAgent struct {
	name   string // the subtest
	engine string // its name in the engines setting
	bin    string // enginestest.Bin's key
	args   []string
	model  func(testing.TB, ...enginestest.Turn) *enginestest.Server
	env    func(testing.TB, string, string) map[string]string
	read   func(rel string) enginestest.Turn
	write  func(rel, content string) enginestest.Turn
	// routesReads: its reads come through fs/read_text_file, so they see
	// the editor's buffers.
	routesReads bool
	// readsShow: its reads are tool calls with locations (heat).
	readsShow bool
	// rejectEnds: a refused permission ends its turn (Claude Code 0.17
	// takes a refusal as the person interrupting it), so it says nothing
	// after.
	rejectEnds bool
}

var realAgents = []realAgent{
	{name: "claude-agent-acp 0.17.1", engine: "claude", bin: "claude-0.17", model: enginestest.Anthropic, env: enginestest.ClaudeEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("mcp__acp__Read", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("mcp__acp__Write", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		routesReads: true, readsShow: true, rejectEnds: true},
	{name: "claude-agent-acp 0.23.1", engine: "claude", bin: "claude", model: enginestest.Anthropic, env: enginestest.ClaudeEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("Read", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("Write", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		readsShow: true},
	{name: "codex-acp 0.16.0", engine: "codex", bin: "codex", model: enginestest.OpenAIResponses, env: enginestest.CodexEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("exec_command", map[string]any{"cmd": "cat " + rel, "workdir": "{cwd}"})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("exec_command", map[string]any{"cmd": "mkdir -p " + filepath.Dir(rel) + " && printf '%s' '" + c + "' > " + rel, "workdir": "{cwd}"})
		}},
	{name: "gemini-cli 0.61.0", engine: "gemini", bin: "gemini", args: []string{"--experimental-acp"}, model: enginestest.Gemini, env: enginestest.GeminiEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("read_file", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("write_file", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		readsShow: true},
}

// realEnv is a sidecar whose subtask 1 runs on a real agent talking to a
// fake model, and subtask 2 on the built-in worker.
type realEnv struct {
	ed    *headless.Editor
	root  string
	model *enginestest.Server
	mark  string // in the agent's environment, to find its processes
}

const twoSubtasksScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
    {"id": "1", "content": "Read main.txt and write out.txt", "engine": "%s"},
    {"id": "2", "content": "Write the notes"}]}}]}],
  "2": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "notes\n"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "notes written"}}]}]}}`

func startReal(t *testing.T, npm, agentls string, a realAgent, editMode string, turns ...enginestest.Turn) *realEnv {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{"main.txt": "on disk\n", "secret/key.txt": "k\n", ".orchestration/.keep": ""})
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(strings.Replace(twoSubtasksScript, "%s", a.engine, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	model := a.model(t, turns...)
	env := a.env(t, t.TempDir(), model.URL)
	var b [8]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	env["AGENTLS_ENGINE_TEST_MARK"] = mark
	command := append([]string{"node", enginestest.Bin(t, npm, a.bin)}, a.args...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ed, err := headless.Start(ctx, headless.Options{
		Root: root,
		Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
			return Serve(ctx, in, out, Options{Version: "test", Cwd: root, Getenv: func(string) string { return "" }, bridgeExecutable: agentls})
		},
		Caps: headless.FullCapabilities(),
		InitializationOptions: map[string]any{
			"model": "script:" + script, "editMode": editMode, "commands": "allow",
			"zones":   map[string]any{"deny": []string{"secret/**"}},
			"engines": map[string]any{a.engine: map[string]any{"command": command, "env": env}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	return &realEnv{ed: ed, root: root, model: model, mark: mark}
}

func (r *realEnv) events(t *testing.T, kind, sub string) []api.TaskEvent {
	t.Helper()
	var out []api.TaskEvent
	for _, n := range r.ed.Notifications() {
		if n.Method != api.MethodTaskUpdate {
			continue
		}
		var p api.TaskUpdateParams
		if err := n.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if (kind == "" || p.Event.Kind == kind) && (sub == "" || p.Event.SubtaskID == sub) {
			out = append(out, p.Event)
		}
	}
	return out
}

// agentProcesses lists the processes whose environment holds mark.
func agentProcesses(mark string) []string {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []string
	for _, e := range envs {
		data, err := os.ReadFile(e)
		if err != nil || !strings.Contains(string(data), "AGENTLS_ENGINE_TEST_MARK="+mark) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(e), "stat"))
		if end := strings.LastIndexByte(string(stat), ')'); end > 0 {
			if f := strings.Fields(string(stat[end+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(e), "cmdline"))
		out = append(out, filepath.Base(filepath.Dir(e))+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// awaitNoAgent polls the process table until no process of the agent is
// left.
func (r *realEnv) awaitNoAgent(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := agentProcesses(r.mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the agent left running: %q", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *realEnv) file(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRealEngines runs the real agents from npm (scripts/engines-npm.sh),
// offline against their fake model servers, as the engine of subtask 1
// beside a built-in worker on subtask 2.
func TestRealEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("the real agents take seconds each to start")
	}
	npm := enginestest.NPM(t)
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and node is not installed")
		}
		t.Skip("node is not installed")
	}
	agentls := buildAgentls(t)
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			t.Run("works beside a built-in worker, through the editor, the zones, the heat and the trace", func(t *testing.T) {
				r := startReal(t, npm, agentls, a, api.EditApply,
					a.read("main.txt"), a.write("out.txt", "from the engine\n"), a.write("secret/key.txt", "stolen\n"),
					enginestest.Say("The engine is done."))
				r.ed.OpenBuffer("main.txt", "unsaved in the editor\n")
				var res api.RunResult
				if err := r.ed.Call(testkit.Context(t), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res); err != nil {
					t.Fatal(err)
				}
				if res.State != api.TaskDone {
					t.Fatalf("state %s: %s\n%s", res.State, res.Summary, r.ed.Stderr())
				}
				var order []string
				for _, e := range r.events(t, "", "") {
					if e.Kind == api.EventSubtaskStarted || e.Kind == api.EventSubtaskFinished {
						order = append(order, e.Kind+":"+e.SubtaskID)
					}
				}
				if len(order) < 2 || order[0] != "subtaskStarted:1" || order[1] != "subtaskStarted:2" {
					t.Errorf("order %v: both subtasks start before either ends", order)
				}
				want := "The engine is done."
				if a.rejectEnds {
					want = a.engine + " ended its turn without a summary."
				}
				if !strings.HasPrefix(res.Subtasks[0].Result, want) || res.Subtasks[0].Engine != a.engine {
					t.Errorf("subtask 1: %+v", res.Subtasks[0])
				}
				if got := r.file(t, "out.txt"); got != "from the engine\n" {
					t.Errorf("out.txt = %q", got)
				}
				if got := r.file(t, "secret/key.txt"); got != "k\n" {
					t.Errorf("secret/key.txt = %q: a write outside the zones got through", got)
				}
				blocked := false
				for _, e := range r.events(t, api.EventBlocked, "1") {
					blocked = blocked || e.Path == "secret/key.txt"
				}
				if !blocked {
					t.Errorf("no blocked event for secret/key.txt: %+v", r.events(t, api.EventBlocked, ""))
				}
				if a.routesReads {
					seen := false
					for _, q := range r.model.Requests() {
						seen = seen || strings.Contains(string(q.Body), "unsaved in the editor")
					}
					if !seen {
						t.Errorf("the model never saw the editor's unsaved buffer")
					}
				}
				var snap api.HeatSnapshot
				if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "t1"}, &snap); err != nil {
					t.Fatal(err)
				}
				heat := map[string]string{}
				for _, n := range snap.Nodes {
					heat[n.Path] = n.LastAction
				}
				if heat["out.txt"] != api.ActionWrite || (a.readsShow && heat["main.txt"] == "") {
					t.Errorf("heat: %v", heat)
				}
				var tr api.TraceResult
				if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "out.txt"}, &tr); err != nil {
					t.Fatal(err)
				}
				if len(tr.Entries) != 1 || tr.Entries[0].SubtaskID != "1" {
					t.Errorf("trace of out.txt: %+v", tr.Entries)
				}
				r.awaitNoAgent(t)
			})
			t.Run("in propose mode, nothing reaches the disk before approval", func(t *testing.T) {
				r := startReal(t, npm, agentls, a, api.EditPropose, a.write("out.txt", "proposed\n"), enginestest.Say("Proposed."))
				asked := make(chan string, 4)
				release := make(chan bool)
				r.ed.ConfirmEdits(func(ctx context.Context, p api.ApplyWorkspaceEditParams) (bool, error) {
					asked <- p.Label
					return <-release, nil
				})
				done := make(chan error, 1)
				var res api.RunResult
				go func() {
					done <- r.ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res)
				}()
				for n := 0; n < 2; n++ {
					select {
					case label := <-asked:
						if _, err := os.Stat(filepath.Join(r.root, "out.txt")); err == nil {
							t.Fatalf("out.txt is on disk while its approval is asked (%s)", label)
						}
						release <- true
					case err := <-done:
						t.Fatalf("the run ended (%v) before its changes were approved: %s", err, res.Summary)
					case <-time.After(2 * time.Minute):
						t.Fatal("no approval was asked")
					}
				}
				if err := <-done; err != nil || res.State != api.TaskDone {
					t.Fatalf("run: %v %s", err, res.Summary)
				}
				if got := r.file(t, "out.txt"); got != "proposed\n" {
					t.Fatalf("out.txt = %q after approval", got)
				}
				r.awaitNoAgent(t)
			})
			t.Run("start-up figures, with the model answering at once", func(t *testing.T) {
				r := startReal(t, npm, agentls, a, api.EditApply, enginestest.Say("Hello."))
				start := time.Now()
				done := make(chan error, 1)
				var res api.RunResult
				go func() {
					done <- r.ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res)
				}()
				var started api.TaskEvent
				first := time.Duration(0)
				_, err := r.ed.Await(testkit.Context(t), func(n headless.Notification) bool {
					var p api.TaskUpdateParams
					if n.Method != api.MethodTaskUpdate || n.Decode(&p) != nil || p.Event.SubtaskID != "1" {
						return false
					}
					if p.Event.Kind == api.EventEngineStarted {
						started = p.Event
					}
					if p.Event.Kind == api.EventMessageDelta {
						first = time.Since(start)
						return true
					}
					return false
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil || res.State != api.TaskDone {
					t.Fatalf("run: %v %s", err, res.Summary)
				}
				t.Logf("figures: agent/run to the engine's first update %d ms; the agent's own start (spawn, initialize, session/new) %s",
					first.Milliseconds(), started.Summary)
				r.awaitNoAgent(t)
			})
			t.Run("stop ends it and leaves no process", func(t *testing.T) {
				r := startReal(t, npm, agentls, a, api.EditApply, enginestest.Turn{Hold: true})
				done := make(chan error, 1)
				var res api.RunResult
				go func() {
					done <- r.ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res)
				}()
				select {
				case <-r.model.Held():
				case err := <-done:
					t.Fatalf("the run ended (%v) before the agent called its model: %s\n%s", err, res.Summary, r.ed.Stderr())
				case <-time.After(2 * time.Minute):
					t.Fatal("the agent never called its model")
				}
				if len(agentProcesses(r.mark)) == 0 {
					t.Fatal("no process of the agent was found while it runs: the test cannot see it")
				}
				start := time.Now()
				if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t1"}, nil); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil || res.State != api.TaskStopped {
					t.Fatalf("run: %v %s", err, res.Summary)
				}
				answered := time.Since(start)
				if left := agentProcesses(r.mark); len(left) > 0 {
					t.Fatalf("agent/run answered stopped with processes of the agent left: %q", left)
				}
				t.Logf("stopped: agent/run answered, no process left, %v after agent/stop", answered)
			})
		})
	}
}
