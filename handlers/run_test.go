package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/internal/testkit"
)

// workspace writes files into a new temporary directory.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	return workspaceIn(t, t.TempDir(), files)
}

// workspaceIn writes files into root, which it makes.
func workspaceIn(t *testing.T, root string, files map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, files)
	return root
}

// runEnv is a server with a scripted model over a workspace.
type runEnv struct {
	ed   *headless.Editor
	root string
}

type runOpts struct {
	files   map[string]string
	script  string         // a scripted model's script (docs/MODELS.md)
	options map[string]any // initializationOptions over the defaults below
	caps    *headless.Capabilities
	// skipUndeclared plays an editor that claims resource operations it
	// did not declare (headless.Options.SkipUndeclaredResourceOps).
	skipUndeclared bool
	noModel        bool
	getenv         func(string) string
	dirName        string // the workspace directory's name (default: a temporary name)
}

// fixture reads testdata/NAME.txtar: the scripted model's script
// (script.json) and the workspace (the files under workspace/).
func fixture(t *testing.T, name string) runOpts {
	t.Helper()
	a := testkit.ReadArchive(t, filepath.Join("testdata", name+".txtar"))
	return runOpts{files: a.Under("workspace"), script: a.File(t, "script.json")}
}

// startRun starts an in-process server whose model is the script; by default
// edits are applied and commands allowed.
func startRun(t *testing.T, o runOpts) *runEnv {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root := workspace(t, o.files)
	if o.dirName != "" {
		root = workspaceIn(t, filepath.Join(t.TempDir(), o.dirName), o.files)
	}
	opts := map[string]any{"editMode": "apply", "commands": "allow", "maxWorkers": 3}
	if !o.noModel {
		sp := filepath.Join(t.TempDir(), "script.json")
		if err := os.WriteFile(sp, []byte(o.script), 0o644); err != nil {
			t.Fatal(err)
		}
		opts["model"] = "script:" + sp
	}
	for k, v := range o.options {
		opts[k] = v
	}
	caps := headless.FullCapabilities()
	if o.caps != nil {
		caps = *o.caps
	}
	getenv := o.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	ed := start(t, headless.Options{
		Root: root,
		Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
			return handlers.Serve(ctx, in, out, handlers.Options{Version: "test", Cwd: root, Base: api.DefaultSettings(), Getenv: getenv})
		},
		Caps:                      caps,
		SkipUndeclaredResourceOps: o.skipUndeclared,
		InitializationOptions:     opts,
	})
	return &runEnv{ed: ed, root: ed.Root()}
}

// run calls agent/run and returns its result.
func (r *runEnv) run(t *testing.T, p api.RunParams) (*api.RunResult, error) {
	t.Helper()
	var res api.RunResult
	err := r.ed.Call(testkit.Context(t), api.MethodRun, p, &res)
	return &res, err
}

// runAsync starts agent/run and returns a channel with its outcome.
func (r *runEnv) runAsync(t *testing.T, p api.RunParams) <-chan runOutcome {
	ch := make(chan runOutcome, 1)
	go func() {
		var res api.RunResult
		err := r.ed.Call(context.Background(), api.MethodRun, p, &res)
		ch <- runOutcome{&res, err}
	}()
	return ch
}

type runOutcome struct {
	res *api.RunResult
	err error
}

func (r *runEnv) file(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// updates returns the agent/taskUpdate notifications of a task so far.
func (r *runEnv) updates(t *testing.T, taskID string) []api.TaskUpdateParams {
	t.Helper()
	var out []api.TaskUpdateParams
	for _, n := range r.ed.Notifications() {
		if n.Method != api.MethodTaskUpdate {
			continue
		}
		var p api.TaskUpdateParams
		if err := n.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if taskID == "" || p.TaskID == taskID {
			out = append(out, p)
		}
	}
	return out
}

// awaitEvent waits for a task event matching pred.
func (r *runEnv) awaitEvent(t *testing.T, pred func(api.TaskUpdateParams) bool) api.TaskUpdateParams {
	t.Helper()
	var got api.TaskUpdateParams
	_, err := r.ed.Await(testkit.Context(t), func(n headless.Notification) bool {
		if n.Method != api.MethodTaskUpdate {
			return false
		}
		var p api.TaskUpdateParams
		if n.Decode(&p) != nil || !pred(p) {
			return false
		}
		got = p
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func kind(k, sub string) func(api.TaskUpdateParams) bool {
	return func(p api.TaskUpdateParams) bool {
		return p.Event.Kind == k && (sub == "" || p.Event.SubtaskID == sub)
	}
}

func subtaskState(res *api.RunResult, id string) api.Subtask {
	for _, s := range res.Subtasks {
		if s.ID == id {
			return s
		}
	}
	return api.Subtask{}
}

// within fails the test when ch does not deliver within d.
func within[T any](t *testing.T, d time.Duration, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("nothing within %s", d)
	}
	var zero T
	return zero
}

func TestRunEndToEnd(t *testing.T) {
	t.Run("plans, runs the workers, edits, creates, runs a command and answers done", func(t *testing.T) {
		r := startRun(t, fixture(t, "demo"))
		tok := "tok-1"
		res, err := r.run(t, api.RunParams{Prompt: "rename and document", TaskID: "t1", WorkDoneToken: protocolToken(tok)})
		if err != nil {
			t.Fatal(err)
		}
		if res.State != api.TaskDone || res.TaskID != "t1" || res.SessionID == "" {
			t.Fatalf("result = %+v", res)
		}
		if got := r.file(t, "main.txt"); got != "say goodbye\n" {
			t.Errorf("main.txt = %q", got)
		}
		if got := r.file(t, "docs/NOTES.md"); got != "notes\n" {
			t.Errorf("docs/NOTES.md = %q", got)
		}
		if len(res.Changes) != 2 {
			t.Fatalf("changes = %+v", res.Changes)
		}
		for _, c := range res.Changes {
			if !c.Applied || c.Diff == "" {
				t.Errorf("change %+v", c)
			}
		}
		if s := subtaskState(res, "3"); s.State != api.SubtaskDone || s.Result != "checked" {
			t.Errorf("subtask 3 = %+v", s)
		}
		if res.Usage.InputTokens != 100 || res.Usage.OutputTokens != 10 {
			t.Errorf("usage = %+v", res.Usage)
		}
		// The command's output went back to the model.
		var sawOutput bool
		for _, u := range r.updates(t, "t1") {
			if u.Event.Kind == api.EventToolResult && u.Event.Tool == "run_command" && strings.Contains(u.Event.Summary, "goodbye") {
				sawOutput = true
			}
		}
		if !sawOutput {
			t.Error("no toolResult of run_command with the command's output")
		}
	})

	t.Run("works in a workspace whose directory name has a #, a % and a space", func(t *testing.T) {
		o := fixture(t, "demo")
		o.dirName = "c#proj 100%done"
		r := startRun(t, o)
		if filepath.Base(r.root) != "c#proj 100%done" {
			t.Fatalf("root = %s", r.root)
		}
		res, err := r.run(t, api.RunParams{Prompt: "rename and document", TaskID: "t1"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if got := r.file(t, "main.txt"); got != "say goodbye\n" {
			t.Errorf("main.txt = %q: the edit did not reach the file", got)
		}
		if got := r.file(t, "docs/NOTES.md"); got != "notes\n" {
			t.Errorf("docs/NOTES.md = %q: the creation did not reach the file", got)
		}
		if s := subtaskState(res, "3"); s.State != api.SubtaskDone {
			t.Errorf("the command's subtask = %+v", s)
		}
		var ran bool
		for _, u := range r.updates(t, "t1") {
			if u.Event.Kind == api.EventToolResult && u.Event.Tool == "run_command" && strings.Contains(u.Event.Summary, "goodbye") && strings.Contains(u.Event.Summary, "notes") {
				ran = true
			}
		}
		if !ran {
			t.Error("the command did not run in the workspace or did not read its files")
		}
		entries, err := os.ReadDir(filepath.Dir(r.root))
		if err != nil || len(entries) != 1 {
			t.Errorf("the workspace's parent holds %v, %v; want only the workspace (nothing written at a name cut at # or %%)", entries, err)
		}
	})

	t.Run("sends taskUpdate with seq rising by one, $/progress begin and end, and heat updates", func(t *testing.T) {
		r := startRun(t, fixture(t, "demo"))
		if _, err := r.run(t, api.RunParams{Prompt: "rename and document", TaskID: "t1", WorkDoneToken: protocolToken("p1")}); err != nil {
			t.Fatal(err)
		}
		ups := r.updates(t, "t1")
		if len(ups) < 10 {
			t.Fatalf("only %d updates", len(ups))
		}
		for i, u := range ups {
			if u.Seq != uint64(i+1) {
				t.Fatalf("update %d has seq %d", i, u.Seq)
			}
		}
		last := ups[len(ups)-1]
		if last.Event.Kind != api.EventStateChanged || last.State != api.TaskDone {
			t.Errorf("last update = %+v", last)
		}
		var kinds []string
		for _, n := range r.ed.Notifications() {
			if n.Method != api.MethodProgress {
				continue
			}
			var p struct {
				Token json.RawMessage `json:"token"`
				Value struct {
					Kind string `json:"kind"`
				} `json:"value"`
			}
			if err := n.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if string(p.Token) != `"p1"` {
				t.Errorf("progress token = %s", p.Token)
			}
			kinds = append(kinds, p.Value.Kind)
		}
		if len(kinds) < 3 || kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || kinds[1] != "report" {
			t.Errorf("progress kinds = %v", kinds)
		}
		if _, err := r.ed.Await(testkit.Context(t), headless.Method(api.MethodHeatUpdate)); err != nil {
			t.Error(err)
		}
	})
}

func protocolToken(s string) *api.ProgressToken { return api.NewProgressToken(s) }

func TestRunScheduling(t *testing.T) {
	t.Run("overlaps independent subtasks, waits for a dependant and respects maxWorkers", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
		    {"id": "a", "content": "A"}, {"id": "b", "content": "B"}, {"id": "c", "content": "C"},
		    {"id": "d", "content": "D", "dependsOn": ["a", "b", "c"]}]}}]}],
		  "a": [{"delayMs": 60, "toolCalls": [{"name": "finish", "arguments": {"summary": "a done"}}]}],
		  "b": [{"delayMs": 60, "toolCalls": [{"name": "finish", "arguments": {"summary": "b done"}}]}],
		  "c": [{"delayMs": 60, "toolCalls": [{"name": "finish", "arguments": {"summary": "c done"}}]}],
		  "d": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "d done"}}]}]}}`
		r := startRun(t, runOpts{script: script, options: map[string]any{"maxWorkers": 2}})
		res, err := r.run(t, api.RunParams{Prompt: "four things", TaskID: "t"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		running, maxRunning, overlapped := map[string]bool{}, 0, false
		for _, u := range r.updates(t, "t") {
			n := 0
			for _, s := range u.Subtasks {
				if s.State == api.SubtaskRunning {
					n++
				}
			}
			maxRunning = max(maxRunning, n)
			switch u.Event.Kind {
			case api.EventSubtaskStarted:
				if u.Event.SubtaskID == "d" {
					for _, s := range u.Subtasks {
						if s.ID != "d" && s.State != api.SubtaskDone {
							t.Errorf("d started while %s was %s", s.ID, s.State)
						}
					}
				}
				running[u.Event.SubtaskID] = true
				if len(running) >= 2 {
					overlapped = true
				}
			case api.EventSubtaskFinished:
				delete(running, u.Event.SubtaskID)
			}
		}
		if !overlapped {
			t.Error("no two subtasks ran at the same time")
		}
		if maxRunning != 2 {
			t.Errorf("at most %d subtasks ran at once, want exactly maxWorkers 2", maxRunning)
		}
	})

	t.Run("blocks the dependants of a failed subtask and fails the task with both reasons", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
		    {"id": "1", "content": "build"}, {"id": "2", "content": "test", "dependsOn": ["1"]},
		    {"id": "3", "content": "other"}]}}]}],
		  "1": [{"error": "the provider is on fire"}],
		  "3": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "other done"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		res, err := r.run(t, api.RunParams{Prompt: "build and test"})
		if err != nil {
			t.Fatal(err)
		}
		if res.State != api.TaskFailed {
			t.Fatalf("state = %s", res.State)
		}
		one, two, three := subtaskState(res, "1"), subtaskState(res, "2"), subtaskState(res, "3")
		if one.State != api.SubtaskFailed || !strings.Contains(one.Error, "the provider is on fire") {
			t.Errorf("subtask 1 = %+v", one)
		}
		if two.State != api.SubtaskBlocked || !strings.Contains(two.Error, "subtask 1 failed") {
			t.Errorf("subtask 2 = %+v", two)
		}
		if three.State != api.SubtaskDone {
			t.Errorf("subtask 3 = %+v", three)
		}
		if !strings.Contains(res.Summary, "the provider is on fire") || !strings.Contains(res.Summary, "subtask 1 failed") {
			t.Errorf("summary lacks a reason:\n%s", res.Summary)
		}
	})

	t.Run("makes an answer without a plan one subtask holding the whole prompt", func(t *testing.T) {
		script := `{"agents": {"coordinator": [{"text": "Simple enough."}],
		  "1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "did it"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		res, err := r.run(t, api.RunParams{Prompt: "do the thing"})
		if err != nil || res.State != api.TaskDone || len(res.Subtasks) != 1 || res.Subtasks[0].Content != "do the thing" || res.Summary != "did it" {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})

	t.Run("sends an invalid plan back once, then runs the repaired plan", func(t *testing.T) {
		script := `{"agents": {"coordinator": [
		    {"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "x", "dependsOn": ["2"]}, {"id": "2", "content": "y", "dependsOn": ["1"]}]}}]},
		    {"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "x"}, {"id": "2", "content": "y", "dependsOn": ["1"]}]}}]}],
		  "1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "x"}}]}],
		  "2": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "y"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		res, err := r.run(t, api.RunParams{Prompt: "x then y", TaskID: "t"})
		if err != nil || res.State != api.TaskDone || len(res.Subtasks) != 2 {
			t.Fatalf("run = %+v, %v", res, err)
		}
		var told bool
		for _, u := range r.updates(t, "t") {
			if u.Event.Kind == api.EventMessage && strings.Contains(u.Event.Text, "cycle") {
				told = true
			}
		}
		if !told {
			t.Error("the cycle was not reported")
		}
	})

	t.Run("answers -32010 naming the ways to configure a model when none is", func(t *testing.T) {
		r := startRun(t, runOpts{noModel: true})
		_, err := r.run(t, api.RunParams{Prompt: "anything"})
		if code(err) != api.CodeModelUnavailable || !strings.Contains(err.Error(), "AGENTLS_MODEL") || !strings.Contains(err.Error(), "script:") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("refuses a run without a prompt with -32602", func(t *testing.T) {
		r := startRun(t, fixture(t, "demo"))
		if _, err := r.run(t, api.RunParams{}); code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "prompt") {
			t.Fatalf("err = %v", err)
		}
	})
}

// blockingAsk answers agent/ask only when release is closed.
func blockingAsk(release <-chan struct{}, answer string) headless.CallHandler {
	return func(ctx context.Context, _ json.RawMessage) (any, error) {
		select {
		case <-release:
			return api.AskResult{Answer: &answer}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func TestRunControls(t *testing.T) {
	slowScript := `{"agents": {
	  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "slow"}]}}]}],
	  "1": [{"delayMs": 60000, "toolCalls": [{"name": "finish", "arguments": {"summary": "never"}}]}]}}`

	t.Run("stops during a model call and answers stopped within a second", func(t *testing.T) {
		r := startRun(t, runOpts{script: slowScript})
		out := r.runAsync(t, api.RunParams{Prompt: "slow", TaskID: "t"})
		r.awaitEvent(t, kind(api.EventSubtaskStarted, "1"))
		var sr api.StopResult
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, &sr); err != nil || !sr.Stopped {
			t.Fatalf("stop = %+v, %v", sr, err)
		}
		o := within(t, time.Second, out)
		if o.err != nil || o.res.State != api.TaskStopped {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, &sr); err != nil || sr.Stopped {
			t.Fatalf("stopping an ended task = %+v, %v; want stopped false", sr, err)
		}
	})

	t.Run("stops during an unanswered agent/ask, after showing the task waiting", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "ask"}]}}]}],
		  "1": [{"toolCalls": [{"name": "ask_human", "arguments": {"question": "Which one?", "options": ["a", "b"]}}]}]}}`
		r := startRun(t, runOpts{script: script})
		asked := make(chan struct{})
		r.ed.Handle(api.MethodAsk, func(ctx context.Context, p json.RawMessage) (any, error) {
			close(asked)
			return headless.NeverAnswer()(ctx, p)
		})
		out := r.runAsync(t, api.RunParams{Prompt: "ask", TaskID: "t"})
		r.awaitEvent(t, func(p api.TaskUpdateParams) bool { return p.State == api.TaskWaiting })
		within(t, 5*time.Second, asked)
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		o := within(t, time.Second, out)
		if o.err != nil || o.res.State != api.TaskStopped {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
	})

	t.Run("stops during a command the editor runs and answers stopped within a second", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "cmd"}]}}]}],
		  "1": [{"toolCalls": [{"name": "run_command", "arguments": {"command": "sleep 60"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		running, cancelled := make(chan struct{}), make(chan struct{})
		r.ed.Handle(api.MethodRunCommand, func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(running)
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		})
		out := r.runAsync(t, api.RunParams{Prompt: "cmd", TaskID: "t"})
		within(t, 5*time.Second, running)
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		o := within(t, time.Second, out)
		if o.err != nil || o.res.State != api.TaskStopped {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
		within(t, 5*time.Second, cancelled) // the editor saw $/cancelRequest
	})

	// window/workDoneProgress/cancel: the person pressed cancel on the
	// progress agentls reports for a task (its begin says cancellable).
	for _, c := range []struct {
		name, token string
		yours       bool
	}{
		{"stops the task whose progress the person cancels, with the token agentls created", "agentls/t", false},
		{"stops the task whose progress the person cancels, with the client's workDoneToken", "mine-1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startRun(t, runOpts{script: slowScript})
			p := api.RunParams{Prompt: "slow", TaskID: "t"}
			if c.yours {
				p.WorkDoneToken = api.NewProgressToken(c.token)
			}
			out := r.runAsync(t, p)
			r.awaitEvent(t, kind(api.EventSubtaskStarted, "1"))
			begin, err := r.ed.Await(testkit.Context(t), func(n headless.Notification) bool {
				return n.Method == api.MethodProgress && strings.Contains(string(n.Params), `"kind":"begin"`)
			})
			if err != nil {
				t.Fatal(err)
			}
			var bp struct {
				Token json.RawMessage `json:"token"`
				Value struct {
					Cancellable bool `json:"cancellable"`
				} `json:"value"`
			}
			if err := begin.Decode(&bp); err != nil || string(bp.Token) != strconv.Quote(c.token) || !bp.Value.Cancellable {
				t.Fatalf("progress begin = %s, %v; want token %q, cancellable", begin.Params, err, c.token)
			}
			// A token of no task is ignored, and the server goes on.
			if err := r.ed.Notify(testkit.Context(t), api.MethodWorkDoneProgressCancel, map[string]any{"token": "agentls/nosuch"}); err != nil {
				t.Fatal(err)
			}
			if err := r.ed.Notify(testkit.Context(t), api.MethodWorkDoneProgressCancel, map[string]any{"token": c.token}); err != nil {
				t.Fatal(err)
			}
			o := within(t, 5*time.Second, out)
			if o.err != nil || o.res.State != api.TaskStopped {
				t.Fatalf("run = %+v, %v; want stopped", o.res, o.err)
			}
			if got := subtaskState(o.res, "1"); got.State != api.SubtaskFailed || !strings.Contains(got.Error, "stopped") {
				t.Errorf("subtask = %+v, want failed: stopped before it finished", got)
			}
		})
	}

	t.Run("stops the task when the client cancels agent/run", func(t *testing.T) {
		r := startRun(t, runOpts{script: slowScript})
		ctx, cancel := context.WithCancel(testkit.Context(t))
		errc := make(chan error, 1)
		go func() { errc <- r.ed.Call(ctx, api.MethodRun, api.RunParams{Prompt: "slow", TaskID: "t"}, nil) }()
		r.awaitEvent(t, kind(api.EventSubtaskStarted, "1"))
		cancel()
		within(t, time.Second, errc)
		r.awaitEvent(t, func(p api.TaskUpdateParams) bool { return p.State == api.TaskStopped })
	})

	t.Run("skips a running subtask and lets its dependant go on", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "slow"}, {"id": "2", "content": "after", "dependsOn": ["1"]}]}}]}],
		  "1": [{"delayMs": 60000, "toolCalls": [{"name": "finish", "arguments": {"summary": "never"}}]}],
		  "2": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "went on"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		out := r.runAsync(t, api.RunParams{Prompt: "x", TaskID: "t"})
		r.awaitEvent(t, kind(api.EventSubtaskStarted, "1"))
		if err := r.ed.Call(testkit.Context(t), api.MethodSkipSubtask, api.SubtaskParams{TaskID: "t", SubtaskID: "1"}, nil); err != nil {
			t.Fatal(err)
		}
		o := within(t, 5*time.Second, out)
		if o.err != nil || o.res.State != api.TaskDone || subtaskState(o.res, "1").State != api.SubtaskSkipped || subtaskState(o.res, "2").Result != "went on" {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
	})

	t.Run("adds a subtask mid-run, removes a pending one and refuses controls in the wrong state", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "ask"}, {"id": "2", "content": "later", "dependsOn": ["1"]}]}}]}],
		  "1": [{"toolCalls": [{"name": "ask_human", "arguments": {"question": "go?"}}]},
		        {"toolCalls": [{"name": "finish", "arguments": {"summary": "asked"}}]}],
		  "3": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "added work done"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		release := make(chan struct{})
		r.ed.Handle(api.MethodAsk, blockingAsk(release, "yes"))
		out := r.runAsync(t, api.RunParams{Prompt: "x", TaskID: "t"})
		r.awaitEvent(t, kind(api.EventAsk, "1"))
		ctx := testkit.Context(t)

		err := r.ed.Call(ctx, api.MethodRemoveSubtask, api.SubtaskParams{TaskID: "t", SubtaskID: "1"}, nil)
		if code(err) != api.CodeWrongState {
			t.Errorf("removing a running subtask: %v, want -32012", err)
		}
		if err := r.ed.Call(ctx, api.MethodRemoveSubtask, api.SubtaskParams{TaskID: "t", SubtaskID: "2"}, nil); err != nil {
			t.Errorf("removing a pending subtask: %v", err)
		}
		var add api.AddSubtaskResult
		if err := r.ed.Call(ctx, api.MethodAddSubtask, api.AddSubtaskParams{TaskID: "t", Content: "added work", DependsOn: []string{"1"}}, &add); err != nil || add.SubtaskID != "3" {
			t.Fatalf("add = %+v, %v", add, err)
		}
		if err := r.ed.Call(ctx, api.MethodSkipSubtask, api.SubtaskParams{TaskID: "t", SubtaskID: "9"}, nil); code(err) != api.CodeUnknownTask {
			t.Errorf("skipping an unknown subtask: %v, want -32011", err)
		}
		if err := r.ed.Call(ctx, api.MethodStop, api.StopParams{TaskID: "nope"}, nil); code(err) != api.CodeUnknownTask {
			t.Errorf("stopping an unknown task: %v, want -32011", err)
		}
		close(release)
		o := within(t, 5*time.Second, out)
		if o.err != nil || o.res.State != api.TaskDone || len(o.res.Subtasks) != 2 || subtaskState(o.res, "3").Result != "added work done" {
			t.Fatalf("run = %+v, %v", o.res, o.err)
		}
		err = r.ed.Call(ctx, api.MethodSkipSubtask, api.SubtaskParams{TaskID: "t", SubtaskID: "1"}, nil)
		if code(err) != api.CodeWrongState {
			t.Errorf("skipping in an ended task: %v, want -32012", err)
		}
	})
}

func TestRunEditsAndIntents(t *testing.T) {
	t.Run("tells the model a change the editor rejected in propose mode, and lists it unapplied", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "write"}]}}]}],
		  "1": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}]},
		        {"toolCalls": [{"name": "finish", "arguments": {"summary": "tried"}}]}]}}`
		r := startRun(t, runOpts{script: script, options: map[string]any{"editMode": "propose"}})
		res, err := r.run(t, api.RunParams{Prompt: "write", TaskID: "t"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if len(res.Changes) != 1 || res.Changes[0].Applied || res.Changes[0].Operation != api.OpCreate {
			t.Fatalf("changes = %+v", res.Changes)
		}
		if _, err := os.Stat(filepath.Join(r.root, "new.txt")); !os.IsNotExist(err) {
			t.Errorf("new.txt exists: %v", err)
		}
		var told bool
		for _, u := range r.updates(t, "t") {
			if u.Event.Kind == api.EventToolResult && u.Event.Tool == "write_file" {
				told = !*u.Event.OK && strings.Contains(u.Event.Summary, "Not applied") && strings.Contains(u.Event.Summary, "rejected")
			}
		}
		if !told {
			t.Error("the model was not told of the rejection")
		}
	})

	t.Run("applies a change the person approves through showMessageRequest in propose mode", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "write"}]}}]}],
		  "1": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}]},
		        {"toolCalls": [{"name": "finish", "arguments": {"summary": "written"}}]}]}}`
		caps := headless.FullCapabilities()
		caps.ChangeAnnotation = false
		r := startRun(t, runOpts{script: script, caps: &caps, options: map[string]any{"editMode": "propose"}})
		r.ed.Handle(api.MethodShowMessageRequest, headless.ChooseAction("Apply"))
		res, err := r.run(t, api.RunParams{Prompt: "write"})
		if err != nil || len(res.Changes) != 1 || !res.Changes[0].Applied || r.file(t, "new.txt") != "x\n" {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})

	t.Run("gates mutating tools on an intent, blocks writes outside its scope, traces only applied changes", func(t *testing.T) {
		r := startRun(t, fixture(t, "intents"))
		res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if r.file(t, "src/b.txt") != "b\n" {
			t.Error("src/b.txt not written")
		}
		if _, err := os.Stat(filepath.Join(r.root, "docs/out.txt")); !os.IsNotExist(err) {
			t.Error("docs/out.txt was written outside the scope")
		}
		var results []bool
		var blocked []string
		for _, u := range r.updates(t, "t") {
			switch {
			case u.Event.Kind == api.EventToolResult && u.Event.Tool == "write_file":
				results = append(results, *u.Event.OK)
			case u.Event.Kind == api.EventBlocked:
				blocked = append(blocked, u.Event.Path+": "+u.Event.Reason)
			}
		}
		if len(results) != 3 || results[0] || results[1] || !results[2] {
			t.Errorf("write_file results = %v, want refused, refused, applied", results)
		}
		if len(blocked) < 2 || !strings.Contains(blocked[0], "select_intent") || !strings.Contains(strings.Join(blocked, "\n"), "docs/out.txt") {
			t.Errorf("blocked events = %q", blocked)
		}
		var tr api.TraceResult
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "src/b.txt"}, &tr); err != nil {
			t.Fatal(err)
		}
		if len(tr.Entries) != 1 || tr.Entries[0].IntentID == nil || *tr.Entries[0].IntentID != "INT-1" || tr.Entries[0].SubtaskID != "1" || !strings.HasPrefix(tr.Entries[0].Model, "script:") {
			t.Errorf("trace = %+v", tr.Entries)
		}
		data, _ := os.ReadFile(filepath.Join(r.root, ".orchestration/agent_trace.jsonl"))
		if n := strings.Count(string(data), "\n"); n != 1 {
			t.Errorf("agent_trace.jsonl has %d lines, want 1:\n%s", n, data)
		}
	})
}

// TestRunNotifications holds the events of a task to a golden file: what an
// editor's task view is built from, in order.
func TestRunNotifications(t *testing.T) {
	t.Run("sends the events of a one-worker task in one order, as the golden file has them", func(t *testing.T) {
		r := startRun(t, fixture(t, "intents"))
		res, err := r.run(t, api.RunParams{Prompt: "work", TaskID: "t"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for _, u := range r.updates(t, "t") {
			err := enc.Encode(struct {
				Seq      uint64        `json:"seq"`
				State    string        `json:"state"`
				Subtasks string        `json:"subtasks"`
				Event    api.TaskEvent `json:"event"`
			}{u.Seq, u.State, subtaskStates(u.Subtasks), u.Event})
			if err != nil {
				t.Fatal(err)
			}
		}
		testkit.Golden(t, "testdata/intents.events.golden", strings.ReplaceAll(b.String(), r.root, "$ROOT"))
	})
}

// subtaskStates writes the subtasks of an update as "id:state ...".
func subtaskStates(subs []api.Subtask) string {
	var parts []string
	for _, s := range subs {
		parts = append(parts, s.ID+":"+s.State)
	}
	return strings.Join(parts, " ")
}

func TestRunSessions(t *testing.T) {
	t.Run("continues a session: the second run reads the N:-keys and the session holds both tasks", func(t *testing.T) {
		script := `{"agents": {
		  "coordinator": [{"text": "one step"}],
		  "1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "first answer"}}]}],
		  "2:coordinator": [{"text": "again"}],
		  "2:1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "improved answer"}}]}]}}`
		r := startRun(t, runOpts{script: script})
		first, err := r.run(t, api.RunParams{Prompt: "first"})
		if err != nil || first.State != api.TaskDone {
			t.Fatalf("first = %+v, %v", first, err)
		}
		second, err := r.run(t, api.RunParams{Prompt: "make it better", SessionID: first.SessionID})
		if err != nil || second.State != api.TaskDone || second.SessionID != first.SessionID || second.Summary != "improved answer" {
			t.Fatalf("second = %+v, %v", second, err)
		}
		var sess api.SessionResult
		if err := r.ed.Call(testkit.Context(t), api.MethodSession, api.SessionParams{SessionID: first.SessionID}, &sess); err != nil {
			t.Fatal(err)
		}
		if len(sess.Tasks) != 2 || sess.Tasks[0].State != api.TaskDone || sess.Tasks[1].State != api.TaskDone {
			t.Errorf("tasks = %+v", sess.Tasks)
		}
		var texts []string
		for _, m := range sess.Messages {
			texts = append(texts, m.Role+": "+m.Text)
		}
		all := strings.Join(texts, "\n")
		for _, want := range []string{"user: first", "first answer", "user: make it better", "improved answer"} {
			if !strings.Contains(all, want) {
				t.Errorf("history lacks %q:\n%s", want, all)
			}
		}
	})

	t.Run("refuses an unknown session with -32011", func(t *testing.T) {
		r := startRun(t, fixture(t, "demo"))
		if _, err := r.run(t, api.RunParams{Prompt: "x", SessionID: "nope"}); code(err) != api.CodeUnknownTask {
			t.Fatalf("err = %v", err)
		}
	})
}
