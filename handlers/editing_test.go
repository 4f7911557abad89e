package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// editScript plans one subtask that reads main.txt and edits it.
const editScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "edit"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "main.txt"}}]},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.txt", "old_string": "hello", "new_string": "goodbye"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "edited"}}]}]}}`

// toolResult returns what the model was told of its first call of tool.
func toolResult(t *testing.T, r *runEnv, tool string) api.TaskEvent {
	t.Helper()
	for _, u := range r.updates(t, "") {
		if u.Event.Kind == api.EventToolResult && u.Event.Tool == tool {
			return u.Event
		}
	}
	t.Fatalf("no result of %s", tool)
	return api.TaskEvent{}
}

// TestRunEditModes drives each edit mode end to end: the real server
// in-process, the headless editor on a real directory.
func TestRunEditModes(t *testing.T) {
	files := map[string]string{"main.txt": "hello world\n"}

	for _, approve := range []bool{true, false} {
		name := "applies an annotated edit the person confirms in propose mode"
		if !approve {
			name = "applies nothing when the person refuses an annotated edit, and tells the model"
		}
		t.Run(name, func(t *testing.T) {
			r := startRun(t, runOpts{files: files, script: editScript, options: map[string]any{"editMode": "propose"}})
			var sawAnnotation bool
			r.ed.ConfirmEdits(func(_ context.Context, p api.ApplyWorkspaceEditParams) (bool, error) {
				for _, a := range p.Edit.ChangeAnnotations {
					sawAnnotation = sawAnnotation || a.NeedsConfirmation
				}
				return approve, nil
			})
			res, err := r.run(t, api.RunParams{Prompt: "edit"})
			if err != nil || !sawAnnotation || len(res.Changes) != 1 {
				t.Fatalf("run = %+v, %v (annotation needing confirmation: %v)", res, err, sawAnnotation)
			}
			want := "hello world\n"
			if approve {
				want = "goodbye world\n"
			}
			if got := r.file(t, "main.txt"); got != want || res.Changes[0].Applied != approve {
				t.Fatalf("main.txt = %q, applied = %v", got, res.Changes[0].Applied)
			}
			if ev := toolResult(t, r, "edit_file"); *ev.OK != approve {
				t.Fatalf("the model was told %+v", ev)
			}
		})
	}

	t.Run("writes the file itself, atomically, when the editor cannot apply edits", func(t *testing.T) {
		caps := headless.FullCapabilities()
		caps.ApplyEdit = false
		r := startRun(t, runOpts{files: files, script: editScript, caps: &caps})
		if err := os.Chmod(filepath.Join(r.root, "main.txt"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, err := r.run(t, api.RunParams{Prompt: "edit"})
		if err != nil || len(res.Changes) != 1 || !res.Changes[0].Applied {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if got := r.file(t, "main.txt"); got != "goodbye world\n" {
			t.Fatalf("main.txt = %q", got)
		}
		if fi, _ := os.Stat(filepath.Join(r.root, "main.txt")); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode %v, want 0600 kept", fi.Mode().Perm())
		}
		for _, c := range r.ed.ReverseCalls() {
			if c.Method == api.MethodApplyEdit {
				t.Fatal("workspace/applyEdit sent to an editor without it")
			}
		}
	})

	t.Run("refuses a change as a conflict when the buffer changed since the agent read it", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: editScript})
		r.ed.OpenBuffer("main.txt", "hello world\n")
		reads := 0
		r.ed.Handle(api.MethodReadFile, func(_ context.Context, _ json.RawMessage) (any, error) {
			reads++
			if reads == 1 {
				return api.ReadFileResult{Content: "hello world\n"}, nil
			}
			// The person typed in the buffer after the agent read it.
			return api.ReadFileResult{Content: "hello world, typed by the person\n"}, nil
		})
		res, err := r.run(t, api.RunParams{Prompt: "edit"})
		if err != nil {
			t.Fatal(err)
		}
		ev := toolResult(t, r, "edit_file")
		if *ev.OK || !strings.Contains(ev.Summary, "changed since you last read it") {
			t.Fatalf("the model was told %+v", ev)
		}
		for _, c := range res.Changes {
			if c.Applied {
				t.Fatalf("a conflicting change was applied: %+v", c)
			}
		}
		if text, _, _ := r.ed.Buffer("main.txt"); text != "hello world\n" || r.file(t, "main.txt") != "hello world\n" {
			t.Fatalf("buffer %q, disk %q", text, r.file(t, "main.txt"))
		}
	})

	t.Run("works on a fresh agent/ branch in branch mode", func(t *testing.T) {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("git is not installed")
		}
		// The user's git configuration (~/.gitconfig, /etc/gitconfig:
		// commit.gpgsign, hooks) stays out of the test.
		t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
		t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
		r := startRun(t, runOpts{files: files, script: editScript, options: map[string]any{"editMode": "branch"}})
		git := func(args ...string) string {
			cmd := exec.Command("git", append([]string{"-C", r.root, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			return strings.TrimSpace(string(out))
		}
		git("init", "-q", "-b", "main")
		git("add", ".")
		git("commit", "-qm", "start")
		res, err := r.run(t, api.RunParams{Prompt: "Edit the greeting"})
		if err != nil || len(res.Changes) != 1 || !res.Changes[0].Applied {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if b := git("branch", "--show-current"); !strings.HasPrefix(b, "agent/") {
			t.Fatalf("on branch %q, want agent/…", b)
		}
		if r.file(t, "main.txt") != "goodbye world\n" {
			t.Fatalf("main.txt = %q", r.file(t, "main.txt"))
		}
	})

	t.Run("falls back to propose in branch mode outside a git repository", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: editScript, options: map[string]any{"editMode": "branch"}})
		r.ed.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return false, nil })
		res, err := r.run(t, api.RunParams{Prompt: "edit"})
		if err != nil || len(res.Changes) != 1 || res.Changes[0].Applied || r.file(t, "main.txt") != "hello world\n" {
			t.Fatalf("run = %+v, %v; main.txt %q", res, err, r.file(t, "main.txt"))
		}
		told := false
		for _, n := range r.ed.Notifications() {
			told = told || (n.Method == api.MethodLogMessage && strings.Contains(string(n.Params), "propose"))
		}
		if !told {
			t.Error("the person was not told of the fallback to propose")
		}
	})
}

// resourceScript plans one subtask that creates a file in a new directory
// and deletes another.
const resourceScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "move"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "pkg/sub/new.txt", "content": "fresh\n"}}]},
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "old.txt"}}]},
    {"toolCalls": [{"name": "delete_file", "arguments": {"path": "old.txt"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "moved"}}]}]}}`

// TestRunResourceOperations creates a file in a new directory and deletes
// one, end to end, in apply and propose mode, for an editor that declares
// create and delete and for one that declares neither and would only
// pretend to do them (as eglot 1.9).
func TestRunResourceOperations(t *testing.T) {
	files := map[string]string{"old.txt": "bye\n"}
	for _, mode := range []string{"apply", "propose"} {
		for _, declared := range []bool{true, false} {
			name := mode + " mode, with create and delete declared"
			if !declared {
				name = mode + " mode, with no resource operations declared"
			}
			t.Run(name, func(t *testing.T) {
				caps := headless.FullCapabilities()
				if !declared {
					caps.ResourceOperations = nil
				}
				r := startRun(t, runOpts{files: files, script: resourceScript, caps: &caps,
					skipUndeclared: !declared, options: map[string]any{"editMode": mode}})
				r.ed.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return true, nil })
				r.ed.Handle(api.MethodShowMessageRequest, headless.ChooseAction("Apply"))
				res, err := r.run(t, api.RunParams{Prompt: "move"})
				if err != nil || len(res.Changes) != 2 {
					t.Fatalf("run = %+v, %v", res, err)
				}
				for _, c := range res.Changes {
					if !c.Applied {
						t.Errorf("%s %s not applied", c.Operation, c.Path)
					}
				}
				if got := r.file(t, "pkg/sub/new.txt"); got != "fresh\n" {
					t.Errorf("pkg/sub/new.txt = %q", got)
				}
				if _, err := os.Stat(filepath.Join(r.root, "old.txt")); !os.IsNotExist(err) {
					t.Errorf("old.txt is still on disk (%v)", err)
				}
				var sent []string
				for _, c := range r.ed.ReverseCalls() {
					if c.Method != api.MethodApplyEdit {
						continue
					}
					var p api.ApplyWorkspaceEditParams
					if err := json.Unmarshal(c.Params, &p); err != nil {
						t.Fatal(err)
					}
					for _, dc := range p.Edit.DocumentChanges {
						switch {
						case dc.CreateFile != nil:
							sent = append(sent, "create")
						case dc.DeleteFile != nil:
							sent = append(sent, "delete")
						default:
							sent = append(sent, "text")
						}
					}
				}
				want := "create text delete"
				if !declared {
					want = "text" // the filling edit; the sidecar created and deleted
				}
				if got := strings.Join(sent, " "); got != want {
					t.Errorf("documentChanges sent: %q, want %q", got, want)
				}
			})
		}
	}

	t.Run("reports as not applied a create and a delete the editor claims but did not do", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: resourceScript})
		r.ed.Handle(api.MethodApplyEdit, headless.Answer(api.ApplyWorkspaceEditResult{Applied: true}))
		res, err := r.run(t, api.RunParams{Prompt: "move"})
		if err != nil || len(res.Changes) != 2 {
			t.Fatalf("run = %+v, %v", res, err)
		}
		for _, c := range res.Changes {
			if c.Applied {
				t.Errorf("%s %s reported applied", c.Operation, c.Path)
			}
		}
		if ev := toolResult(t, r, "write_file"); *ev.OK || !strings.Contains(ev.Summary, "no such file on disk") {
			t.Errorf("the model was told %+v", ev)
		}
		if r.file(t, "old.txt") != "bye\n" {
			t.Error("old.txt changed")
		}
	})
}

// partialScript reads n.txt and rewrites its first and last lines: two
// hunks, one text edit each.
const partialScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "edit"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "n.txt"}}]},
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "n.txt", "content": "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nNINE\n"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "edited"}}]}]}}`

// TestRunPartialAcceptance plays an editor whose person accepts only some
// hunks of a proposed edit and still answers applied: true, as Neovim's
// per-hunk review and VS Code's refactor preview do: the server records
// what landed.
func TestRunPartialAcceptance(t *testing.T) {
	const before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	files := map[string]string{"n.txt": before}
	run := func(t *testing.T, keep func(uri string, i int) bool) (*runEnv, *api.RunResult) {
		r := startRun(t, runOpts{files: files, script: partialScript,
			options: map[string]any{"editMode": "propose", "trace": true}})
		r.ed.ReviewEdits(headless.AcceptTextEdits(keep))
		res, err := r.run(t, api.RunParams{Prompt: "edit", TaskID: "t"})
		if err != nil || len(res.Changes) != 1 {
			t.Fatalf("run = %+v, %v", res, err)
		}
		return r, res
	}
	changeEvent := func(t *testing.T, r *runEnv) api.TaskEvent {
		t.Helper()
		for _, u := range r.updates(t, "t") {
			if u.Event.Kind == api.EventChangeApplied || u.Event.Kind == api.EventChangeRejected {
				return u.Event
			}
		}
		t.Fatal("no change event")
		return api.TaskEvent{}
	}
	// heatWrite waits for the heat map to show the write of n.txt.
	heatWrite := func(t *testing.T, r *runEnv) {
		t.Helper()
		_, err := r.ed.Await(testkit.Context(t), func(n headless.Notification) bool {
			var u api.HeatUpdateParams
			if n.Method != api.MethodHeatUpdate || n.Decode(&u) != nil {
				return false
			}
			for _, h := range u.Updates {
				if h.Path == "n.txt" && h.LastAction == api.ActionWrite {
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatalf("no heat update with the write of n.txt: %v", err)
		}
	}
	trace := func(t *testing.T, r *runEnv) []api.TraceEntry {
		t.Helper()
		var tr api.TraceResult
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "n.txt"}, &tr); err != nil {
			t.Fatal(err)
		}
		return tr.Entries
	}

	t.Run("records only the hunk the person accepted: changes, event, trace, heat and the model", func(t *testing.T) {
		r, res := run(t, func(_ string, i int) bool { return i == 0 })
		const landed = "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
		if got := r.file(t, "n.txt"); got != landed {
			t.Fatalf("n.txt = %q", got)
		}
		c := res.Changes[0]
		if !c.Applied || !strings.Contains(c.Diff, "+ONE\n") || strings.Contains(c.Diff, "NINE") {
			t.Errorf("change = %+v", c)
		}
		if ev := changeEvent(t, r); ev.Kind != api.EventChangeApplied || !strings.Contains(ev.Reason, "applied in part") {
			t.Errorf("change event = %+v", ev)
		}
		if ev := toolResult(t, r, "write_file"); !*ev.OK || !strings.Contains(ev.Summary, "applied in part") {
			t.Errorf("the model was told %+v", ev)
		}
		entries := trace(t, r)
		if len(entries) != 1 || len(entries[0].Ranges) != 1 || entries[0].Ranges[0].StartLine != 1 || entries[0].Ranges[0].EndLine != 1 {
			t.Errorf("trace = %+v, want one entry for line 1 only", entries)
		}
		heatWrite(t, r)
	})

	t.Run("counts a change of which nothing landed as rejected, and does not trace it", func(t *testing.T) {
		r, res := run(t, func(string, int) bool { return false })
		if got := r.file(t, "n.txt"); got != before {
			t.Fatalf("n.txt = %q", got)
		}
		if res.Changes[0].Applied {
			t.Errorf("change = %+v", res.Changes[0])
		}
		if ev := changeEvent(t, r); ev.Kind != api.EventChangeRejected || !strings.Contains(ev.Reason, "accepted none") {
			t.Errorf("change event = %+v", ev)
		}
		if ev := toolResult(t, r, "write_file"); *ev.OK {
			t.Errorf("the model was told %+v", ev)
		}
		if entries := trace(t, r); len(entries) != 0 {
			t.Errorf("trace = %+v, want none", entries)
		}
	})
}

// reviewScript plans two subtasks: the first edits a.txt and reads it back,
// the second creates b.txt and, when asked to wait, asks a question (so the
// test can stop the task there).
const reviewScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "edit"}, {"id": "2", "content": "add", "dependsOn": ["1"]}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "hello", "new_string": "goodbye"}}]},
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "edited"}}]}],
  "2": [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "new\n"}}]},
    {"toolCalls": [{"name": "ask_human", "arguments": {"question": "Done?", "options": ["yes"]}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "added"}}]}]}}`

// TestRunReviewMode drives review mode end to end: the real server
// in-process, the headless editor on a real directory.
func TestRunReviewMode(t *testing.T) {
	files := map[string]string{"a.txt": "hello world\nand more\n"}
	reviews := func(r *runEnv) []api.ApplyWorkspaceEditParams {
		var out []api.ApplyWorkspaceEditParams
		for _, c := range r.ed.ReverseCalls() {
			var p api.ApplyWorkspaceEditParams
			if c.Method == api.MethodApplyEdit && json.Unmarshal(c.Params, &p) == nil {
				out = append(out, p)
			}
		}
		return out
	}

	t.Run("holds every change, which the workers read, and proposes them as one edit at the end", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: reviewScript, options: map[string]any{"editMode": "review", "trace": true}})
		var atReview string
		r.ed.ReviewEdits(func(_ context.Context, p api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error) {
			atReview = r.file(t, "a.txt") // the disk while the person reviews
			return &p.Edit, nil
		})
		res, err := r.run(t, api.RunParams{Prompt: "edit and add", TaskID: "t"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if atReview != files["a.txt"] {
			t.Fatalf("a.txt was changed on disk before the review: %q", atReview)
		}
		got := reviews(r)
		if len(got) != 1 || !strings.Contains(got[0].Label, "(task done)") || len(got[0].Edit.ChangeAnnotations) != 2 {
			t.Fatalf("applyEdit calls %+v, want one review of two files", got)
		}
		// The worker's second read saw its own held change.
		var reads []api.TaskEvent
		for _, u := range r.updates(t, "t") {
			if u.Event.Kind == api.EventToolResult && u.Event.Tool == "read_file" {
				reads = append(reads, u.Event)
			}
		}
		if len(reads) != 2 || !strings.Contains(reads[1].Summary, "goodbye world") {
			t.Fatalf("reads = %+v", reads)
		}
		if r.file(t, "a.txt") != "goodbye world\nand more\n" || r.file(t, "b.txt") != "new\n" {
			t.Fatalf("a.txt %q, b.txt %q", r.file(t, "a.txt"), r.file(t, "b.txt"))
		}
		if len(res.Changes) != 2 || !res.Changes[0].Applied || !res.Changes[1].Applied || res.Changes[0].Path != "a.txt" {
			t.Fatalf("changes = %+v", res.Changes)
		}
		held, applied := 0, 0
		for _, u := range r.updates(t, "t") {
			switch u.Event.Kind {
			case api.EventChangeHeld:
				held++
			case api.EventChangeApplied:
				applied++
			}
		}
		if held != 2 || applied != 2 {
			t.Errorf("%d changeHeld and %d changeApplied events, want 2 and 2", held, applied)
		}
		var tr api.TraceResult
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "a.txt"}, &tr); err != nil || len(tr.Entries) != 1 || tr.Entries[0].SubtaskID != "1" {
			t.Errorf("trace of a.txt = %+v, %v", tr, err)
		}
	})

	t.Run("records as rejected what the person left out of the review", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: reviewScript, options: map[string]any{"editMode": "review"}})
		r.ed.ReviewEdits(headless.AcceptTextEdits(func(uri string, _ int) bool { return strings.HasSuffix(uri, "/b.txt") }))
		res, err := r.run(t, api.RunParams{Prompt: "edit and add", TaskID: "t"})
		if err != nil || len(res.Changes) != 2 {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if res.Changes[0].Applied || !res.Changes[1].Applied || r.file(t, "a.txt") != files["a.txt"] {
			t.Fatalf("changes = %+v; a.txt %q", res.Changes, r.file(t, "a.txt"))
		}
	})

	t.Run("offers a stopped task's held changes, saying it was stopped", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: reviewScript, options: map[string]any{"editMode": "review"}})
		r.ed.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return true, nil })
		asked := make(chan struct{})
		r.ed.Handle(api.MethodAsk, func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(asked)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		done := r.runAsync(t, api.RunParams{Prompt: "edit and add", TaskID: "t"})
		<-asked
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		out := <-done
		if out.err != nil || out.res.State != api.TaskStopped || len(out.res.Changes) != 2 {
			t.Fatalf("run = %+v, %v", out.res, out.err)
		}
		got := reviews(r)
		if len(got) != 1 || !strings.Contains(got[0].Label, "task stopped") {
			t.Fatalf("reviews = %+v", got)
		}
		if r.file(t, "b.txt") != "new\n" {
			t.Fatal("the stopped task's accepted change is not on disk")
		}
	})

	t.Run("a stop during the review ends it, and nothing is applied", func(t *testing.T) {
		r := startRun(t, runOpts{files: files, script: reviewScript, options: map[string]any{"editMode": "review"}})
		inReview := make(chan struct{})
		r.ed.ReviewEdits(func(ctx context.Context, _ api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error) {
			close(inReview)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		done := r.runAsync(t, api.RunParams{Prompt: "edit and add", TaskID: "t"})
		<-inReview
		var ctl struct{}
		err := r.ed.Call(testkit.Context(t), api.MethodAddSubtask, api.AddSubtaskParams{TaskID: "t", Content: "more"}, &ctl)
		if !strings.Contains(fmt.Sprint(err), "reviewing its changes") {
			t.Errorf("addSubtask during the review = %v", err)
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		out := <-done
		if out.err != nil || out.res.State != api.TaskDone || len(out.res.Changes) != 2 {
			t.Fatalf("run = %+v, %v", out.res, out.err)
		}
		for _, c := range out.res.Changes {
			if c.Applied {
				t.Errorf("%s applied after the review was stopped", c.Path)
			}
		}
		if r.file(t, "a.txt") != files["a.txt"] {
			t.Fatal("a.txt changed")
		}
		if _, err := os.Stat(filepath.Join(r.root, "b.txt")); !os.IsNotExist(err) {
			t.Fatal("b.txt was created")
		}
	})
}

// TestRunPartialAcceptanceOfWords plays a person who ticks one of the two
// words an edit changes on one line, as VS Code's refactor preview lets
// them: each changed word is its own text edit, and what landed is
// recorded.
func TestRunPartialAcceptanceOfWords(t *testing.T) {
	const script = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "edit"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "n.txt"}}]},
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "n.txt", "content": "total := price(10) * count(20)\n"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "edited"}}]}]}}`
	r := startRun(t, runOpts{files: map[string]string{"n.txt": "total := price(1) * count(2)\n"}, script: script,
		options: map[string]any{"editMode": "propose"}})
	var proposed []api.AnnotatedTextEdit
	keepFirst := headless.AcceptTextEdits(func(_ string, i int) bool { return i == 0 })
	r.ed.ReviewEdits(func(ctx context.Context, p api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error) {
		proposed = p.Edit.DocumentChanges[0].TextDocumentEdit.Edits
		return keepFirst(ctx, p)
	})
	res, err := r.run(t, api.RunParams{Prompt: "edit", TaskID: "t"})
	if err != nil || len(res.Changes) != 1 {
		t.Fatalf("run = %+v, %v", res, err)
	}
	if len(proposed) != 2 || proposed[0].NewText != "10" || proposed[1].NewText != "20" ||
		proposed[0].Range.Start != (api.Position{Line: 0, Character: 15}) {
		t.Fatalf("proposed edits %+v, want one per changed word", proposed)
	}
	if got := r.file(t, "n.txt"); got != "total := price(10) * count(2)\n" {
		t.Fatalf("n.txt = %q", got)
	}
	c := res.Changes[0]
	if !c.Applied || !strings.Contains(c.Diff, "+total := price(10) * count(2)\n") {
		t.Errorf("change = %+v", c)
	}
	var reason string
	for _, u := range r.updates(t, "t") {
		if u.Event.Kind == api.EventChangeApplied {
			reason = u.Event.Reason
		}
	}
	if !strings.Contains(reason, "applied in part") || !strings.Contains(reason, "(1 of 2 edits)") {
		t.Errorf("reason %q", reason)
	}
}
