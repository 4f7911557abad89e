package handlers_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// twoScript plans two subtasks: 1 edits a.txt, 2 creates b.txt and deletes
// c.txt.
const twoScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "edit"}, {"id": "2", "content": "move", "dependsOn": ["1"]}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old_string": "two", "new_string": "TWO"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "edited"}}]}],
  "2": [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "b.txt", "content": "new\n"}}]},
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "c.txt"}}]},
    {"toolCalls": [{"name": "delete_file", "arguments": {"path": "c.txt"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "moved"}}]}]}}`

var twoFiles = map[string]string{"a.txt": "one\ntwo\nthree\n", "c.txt": "old\n"}

func (r *runEnv) undo(t *testing.T, p api.UndoParams) (*api.UndoResult, error) {
	t.Helper()
	var res api.UndoResult
	err := r.ed.Call(testkit.Context(t), api.MethodUndo, p, &res)
	return &res, err
}

func (r *runEnv) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(r.root, rel))
	return err == nil
}

// TestUndo drives agent/undo end to end: the real server in-process, the
// headless editor on a real directory.
func TestUndo(t *testing.T) {
	ran := func(t *testing.T, mode string) *runEnv {
		t.Helper()
		r := startRun(t, runOpts{files: twoFiles, script: twoScript, options: map[string]any{"editMode": mode}})
		r.ed.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return true, nil })
		res, err := r.run(t, api.RunParams{Prompt: "edit and move", TaskID: "t1"})
		if err != nil || res.State != api.TaskDone || r.file(t, "a.txt") != "one\nTWO\nthree\n" || !r.exists("b.txt") || r.exists("c.txt") {
			t.Fatalf("run = %+v, %v", res, err)
		}
		return r
	}

	for _, mode := range []string{"apply", "review"} {
		t.Run("takes a whole task back through the editor, "+mode+" mode", func(t *testing.T) {
			r := ran(t, mode)
			edits := 0
			for _, c := range r.ed.ReverseCalls() {
				if c.Method == api.MethodApplyEdit {
					edits++
				}
			}
			res, err := r.undo(t, api.UndoParams{TaskID: "t1"})
			if err != nil || !res.Undone || len(res.Files) != 3 {
				t.Fatalf("undo = %+v, %v", res, err)
			}
			ops := []string{}
			for _, f := range res.Files {
				ops = append(ops, f.Path+" "+f.Operation)
			}
			if got := strings.Join(ops, ", "); got != "a.txt update, b.txt delete, c.txt create" {
				t.Errorf("files %s", got)
			}
			if r.file(t, "a.txt") != twoFiles["a.txt"] || r.exists("b.txt") || r.file(t, "c.txt") != "old\n" {
				t.Fatal("the workspace is not as it was")
			}
			after := 0
			for _, c := range r.ed.ReverseCalls() {
				if c.Method == api.MethodApplyEdit {
					after++
				}
			}
			if after == edits {
				t.Error("the undo did not go through the editor")
			}
			// The session says so.
			var se api.SessionResult
			if err := r.ed.Call(testkit.Context(t), api.MethodSession, api.SessionParams{SessionID: res.SessionID}, &se); err != nil {
				t.Fatal(err)
			}
			if last := se.Messages[len(se.Messages)-1]; !strings.HasPrefix(last.Text, "Undid task t1: restored a.txt, b.txt, c.txt.") {
				t.Errorf("last message %+v", last)
			}
		})
	}

	t.Run("takes one subtask back", func(t *testing.T) {
		r := ran(t, "apply")
		res, err := r.undo(t, api.UndoParams{TaskID: "t1", SubtaskID: "2"})
		if err != nil || !res.Undone || len(res.Files) != 2 {
			t.Fatalf("undo = %+v, %v", res, err)
		}
		if r.file(t, "a.txt") != "one\nTWO\nthree\n" || r.exists("b.txt") || !r.exists("c.txt") {
			t.Fatal("not only subtask 2 was taken back")
		}
	})

	t.Run("refuses a file whose lines the person changed since, naming them, and undoes the rest only when asked", func(t *testing.T) {
		r := ran(t, "apply")
		r.ed.OpenBuffer("a.txt", "one\nTWO, typed by the person\nthree\n")
		res, err := r.undo(t, api.UndoParams{TaskID: "t1"})
		if err != nil || res.Undone {
			t.Fatalf("undo = %+v, %v", res, err)
		}
		a := res.Files[0]
		if a.Undone || len(a.Lines) != 1 || a.Lines[0] != (api.LineSpan{StartLine: 2, EndLine: 2}) || !strings.Contains(a.Reason, "a.txt: line 2 changed since the task wrote it") {
			t.Errorf("a.txt = %+v", a)
		}
		if !r.exists("b.txt") || r.exists("c.txt") {
			t.Fatal("files were undone although one was refused")
		}
		res, err = r.undo(t, api.UndoParams{TaskID: "t1", Partial: true})
		if err != nil || res.Undone || res.Files[0].Undone || !res.Files[1].Undone || !res.Files[2].Undone {
			t.Fatalf("partial undo = %+v, %v", res, err)
		}
		if text, _, _ := r.ed.Buffer("a.txt"); text != "one\nTWO, typed by the person\nthree\n" || r.exists("b.txt") || !r.exists("c.txt") {
			t.Fatal("the partial undo did the wrong thing")
		}
	})

	t.Run("answers an unknown task, a running task and a missing id with their codes", func(t *testing.T) {
		r := startRun(t, runOpts{files: twoFiles, script: reviewScript})
		if _, err := r.undo(t, api.UndoParams{TaskID: "nope"}); code(err) != api.CodeUnknownTask {
			t.Errorf("unknown task: %v", err)
		}
		if _, err := r.undo(t, api.UndoParams{}); code(err) != api.CodeInvalidParams {
			t.Errorf("no taskId: %v", err)
		}
		asked := make(chan struct{})
		r.ed.Handle(api.MethodAsk, func(ctx context.Context, _ json.RawMessage) (any, error) {
			close(asked)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		done := r.runAsync(t, api.RunParams{Prompt: "x", TaskID: "t"})
		<-asked
		if _, err := r.undo(t, api.UndoParams{TaskID: "t"}); code(err) != api.CodeWrongState {
			t.Errorf("running task: %v", err)
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t"}, nil); err != nil {
			t.Fatal(err)
		}
		<-done
		if _, err := r.undo(t, api.UndoParams{TaskID: "t", SubtaskID: "9"}); code(err) != api.CodeUnknownTask {
			t.Errorf("unknown subtask: %v", err)
		}
	})
}
