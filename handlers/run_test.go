package handlers_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/rpc"
)

// workspace writes files into a new temporary directory.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runEnv is a server with a scripted model over a workspace.
type runEnv struct {
	ed   *headless.Editor
	root string
}

type runOpts struct {
	files   map[string]string
	script  string         // contract §8 script
	options map[string]any // initializationOptions over the defaults below
	caps    *headless.Capabilities
	noModel bool
	getenv  func(string) string
}

// startRun starts an in-process server whose model is the script; by default
// edits are applied and commands allowed.
func startRun(t *testing.T, o runOpts) *runEnv {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root := workspace(t, o.files)
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
			return handlers.Serve(ctx, in, out, handlers.Options{Version: "test", Cwd: root, Base: rpc.DefaultSettings(), Getenv: getenv})
		},
		Caps:                  caps,
		InitializationOptions: opts,
	})
	return &runEnv{ed: ed, root: ed.Root()}
}

// run calls agent/run and returns its result.
func (r *runEnv) run(t *testing.T, p rpc.RunParams) (*rpc.RunResult, error) {
	t.Helper()
	var res rpc.RunResult
	err := r.ed.Call(ctxT(t), rpc.MethodRun, p, &res)
	return &res, err
}

// runAsync starts agent/run and returns a channel with its outcome.
func (r *runEnv) runAsync(t *testing.T, p rpc.RunParams) <-chan runOutcome {
	ch := make(chan runOutcome, 1)
	go func() {
		var res rpc.RunResult
		err := r.ed.Call(context.Background(), rpc.MethodRun, p, &res)
		ch <- runOutcome{&res, err}
	}()
	return ch
}

type runOutcome struct {
	res *rpc.RunResult
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
func (r *runEnv) updates(t *testing.T, taskID string) []rpc.TaskUpdateParams {
	t.Helper()
	var out []rpc.TaskUpdateParams
	for _, n := range r.ed.Notifications() {
		if n.Method != rpc.MethodTaskUpdate {
			continue
		}
		var p rpc.TaskUpdateParams
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
func (r *runEnv) awaitEvent(t *testing.T, pred func(rpc.TaskUpdateParams) bool) rpc.TaskUpdateParams {
	t.Helper()
	var got rpc.TaskUpdateParams
	_, err := r.ed.Await(ctxT(t), func(n headless.Notification) bool {
		if n.Method != rpc.MethodTaskUpdate {
			return false
		}
		var p rpc.TaskUpdateParams
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

func kind(k, sub string) func(rpc.TaskUpdateParams) bool {
	return func(p rpc.TaskUpdateParams) bool {
		return p.Event.Kind == k && (sub == "" || p.Event.SubtaskID == sub)
	}
}

func subtaskState(res *rpc.RunResult, id string) rpc.Subtask {
	for _, s := range res.Subtasks {
		if s.ID == id {
			return s
		}
	}
	return rpc.Subtask{}
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

const demoScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
    {"id": "1", "content": "Rename the greeting"},
    {"id": "2", "content": "Add notes"},
    {"id": "3", "content": "Run the check", "dependsOn": ["1", "2"]}]}}]}],
  "1": [
    {"text": "Reading main.txt.", "toolCalls": [{"name": "read_file", "arguments": {"path": "main.txt"}}], "usage": {"inputTokens": 100, "outputTokens": 10}},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.txt", "old_string": "hello", "new_string": "goodbye"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "greeting renamed"}}]}],
  "2": [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "docs/NOTES.md", "content": "notes\n"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "notes added"}}]}],
  "3": [
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "cat main.txt docs/NOTES.md"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "checked"}}]}]
}}`

func TestRunEndToEnd(t *testing.T) {
	t.Run("plans, runs the workers, edits, creates, runs a command and answers done", func(t *testing.T) {
		r := startRun(t, runOpts{files: map[string]string{"main.txt": "say hello\n"}, script: demoScript})
		tok := "tok-1"
		res, err := r.run(t, rpc.RunParams{Prompt: "rename and document", TaskID: "t1", WorkDoneToken: protocolToken(tok)})
		if err != nil {
			t.Fatal(err)
		}
		if res.State != rpc.TaskDone || res.TaskID != "t1" || res.SessionID == "" {
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
		if s := subtaskState(res, "3"); s.State != rpc.SubtaskDone || s.Result != "checked" {
			t.Errorf("subtask 3 = %+v", s)
		}
		if res.Usage.InputTokens != 100 || res.Usage.OutputTokens != 10 {
			t.Errorf("usage = %+v", res.Usage)
		}
		// The command's output went back to the model.
		var sawOutput bool
		for _, u := range r.updates(t, "t1") {
			if u.Event.Kind == rpc.EventToolResult && u.Event.Tool == "run_command" && strings.Contains(u.Event.Summary, "goodbye") {
				sawOutput = true
			}
		}
		if !sawOutput {
			t.Error("no toolResult of run_command with the command's output")
		}
	})

	t.Run("sends taskUpdate with seq rising by one, $/progress begin and end, and heat updates", func(t *testing.T) {
		r := startRun(t, runOpts{files: map[string]string{"main.txt": "say hello\n"}, script: demoScript})
		if _, err := r.run(t, rpc.RunParams{Prompt: "rename and document", TaskID: "t1", WorkDoneToken: protocolToken("p1")}); err != nil {
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
		if last.Event.Kind != rpc.EventStateChanged || last.State != rpc.TaskDone {
			t.Errorf("last update = %+v", last)
		}
		var kinds []string
		for _, n := range r.ed.Notifications() {
			if n.Method != rpc.MethodProgress {
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
		if _, err := r.ed.Await(ctxT(t), headless.Method(rpc.MethodHeatUpdate)); err != nil {
			t.Error(err)
		}
	})
}

func protocolToken(s string) *protocol.ProgressToken { return protocol.NewProgressToken(s) }
