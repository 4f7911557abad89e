package runner

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

func TestTreeShowsTodosThinkingAndUsage(t *testing.T) {
	cost := 0.0123
	subs := []api.Subtask{{ID: "1", Content: "add greet", State: api.SubtaskRunning,
		Todos: []api.Todo{{Content: "Add greet", Status: api.TodoDone}, {Content: "Test greet", Status: api.TodoInProgress}, {Content: "Document", Status: api.TodoPending}},
		Usage: &api.Usage{InputTokens: 1200, OutputTokens: 34, Cost: &cost, ContextTokens: 1200, ContextWindow: 200000}}}
	update := func(ev api.TaskEvent) *api.TaskUpdateParams {
		return &api.TaskUpdateParams{State: api.TaskRunning, Subtasks: subs, Event: ev}
	}
	tr := newTree()
	t.Run("tells a todos event in one line", func(t *testing.T) {
		line := tr.apply(update(api.TaskEvent{Kind: api.EventTodos, SubtaskID: "1", Todos: subs[0].Todos}))
		if line != "[1] todos: [x] Add greet · [>] Test greet · [ ] Document" {
			t.Errorf("line = %q", line)
		}
	})
	t.Run("says nothing while thinking streams, and shows its end under the subtask", func(t *testing.T) {
		for _, piece := range []string{"The user wants ", "a greet function;\n", "main.go has main."} {
			if line := tr.apply(update(api.TaskEvent{Kind: api.EventThinking, SubtaskID: "1", Text: piece})); line != "" {
				t.Errorf("line = %q", line)
			}
		}
		got := strings.Join(tr.render(false), "\n")
		for _, want := range []string{
			"◐ 1 add greet · 1.2k tokens, $0.0123, 0% context",
			"      [x] Add greet\n      [>] Test greet\n      [ ] Document",
			"      thinking… The user wants a greet function; main.go has main.",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("tree lacks %q:\n%s", want, got)
			}
		}
	})
	t.Run("folds the thinking into one line when the agent goes on", func(t *testing.T) {
		line := tr.apply(update(api.TaskEvent{Kind: api.EventToolCall, SubtaskID: "1", Tool: "read_file", Arguments: []byte(`{"path":"main.go"}`)}))
		if line != "[1] thought: The user wants a greet function; main.go has main. (50 characters)\n[1] read_file main.go" {
			t.Errorf("line = %q", line)
		}
		if got := strings.Join(tr.render(false), "\n"); strings.Contains(got, "thinking…") {
			t.Errorf("the tree still shows thinking:\n%s", got)
		}
	})
	t.Run("folds what thinking is left when the task ends", func(t *testing.T) {
		tr.apply(update(api.TaskEvent{Kind: api.EventThinking, Text: "Nothing more."}))
		line := tr.apply(&api.TaskUpdateParams{State: api.TaskDone, Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskDone}})
		if line != "[task] thought: Nothing more. (13 characters)\n[task] done" {
			t.Errorf("line = %q", line)
		}
	})
}

func TestAttachments(t *testing.T) {
	wd, _ := os.Getwd()
	at := func(p string) string { return filepath.Join(wd, p) }
	rng := func(from, to uint32) *api.Range {
		return &api.Range{Start: api.Position{Line: from}, End: api.Position{Line: to}}
	}
	for _, c := range []struct {
		name, value string
		want        api.Attachment
		err         string
	}{
		{"attaches a whole file by its absolute path", "main.go", api.Attachment{Type: api.AttachFile, Path: at("main.go")}, ""},
		{"attaches lines 5 to 7 as the range that covers them", "src/main.go:5-7", api.Attachment{Type: api.AttachFile, Path: at("src/main.go"), Range: rng(4, 7)}, ""},
		{"attaches one line", "main.go:12", api.Attachment{Type: api.AttachFile, Path: at("main.go"), Range: rng(11, 12)}, ""},
		{"attaches an image by its extension", "shots/Screen.PNG", api.Attachment{Type: api.AttachImage, Path: at("shots/Screen.PNG"), Name: "Screen.PNG"}, ""},
		{"refuses lines that end before they start", "main.go:7-5", api.Attachment{}, "L2 not before L1"},
		{"refuses line 0", "main.go:0", api.Attachment{}, "from 1"},
		{"refuses lines of an image", "a.png:1-2", api.Attachment{}, "an image has no lines"},
		{"refuses lines without a path", ":1-2", api.Attachment{}, "a path is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Attachments([]string{c.value})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], c.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestRunSendsAttachmentsAndShowsTodos(t *testing.T) {
	var sent []api.Attachment
	f := &fakeServer{run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
		sent = p.Attachments
		subs := []api.Subtask{{ID: "1", Content: "add greet", State: api.SubtaskDone, Todos: []api.Todo{{Content: "Add greet", Status: api.TodoDone}}}}
		_ = conn.Notify(ctx, api.MethodTaskUpdate, api.TaskUpdateParams{TaskID: p.TaskID, State: api.TaskDone, Subtasks: subs,
			Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskDone}})
		return api.RunResult{TaskID: p.TaskID, State: api.TaskDone, Summary: "done", Subtasks: subs}, nil
	}}
	code, out, errs := runFake(t, f, Options{Attach: []string{"main.go:1-2", "shot.png"}})
	if code != ExitDone || len(sent) != 2 || sent[0].Range == nil || sent[1].Type != api.AttachImage {
		t.Fatalf("exit %d, sent %+v, stderr:\n%s", code, sent, errs)
	}
	if !strings.Contains(out, "Todos of 1 add greet:\n  [x] Add greet\n") {
		t.Errorf("stdout:\n%s", out)
	}
	t.Run("refuses a bad --attach before it starts a server", func(t *testing.T) {
		code, _, errs := runFake(t, f, Options{Attach: []string{"main.go:9-1"}})
		if code != ExitUsage || !strings.Contains(errs, "--attach") {
			t.Errorf("exit %d, stderr:\n%s", code, errs)
		}
	})
}
