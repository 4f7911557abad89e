package workforce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

func sub(res *api.RunResult, id string) api.Subtask {
	for _, s := range res.Subtasks {
		if s.ID == id {
			return s
		}
	}
	return api.Subtask{}
}

// panickyEditor's agent/readFile panics, as a bug in an editor binding
// would make it.
type panickyEditor struct{ *headlesstest.Editor }

func (panickyEditor) ReadFile(context.Context, string, string) (string, error) {
	panic("editor bug")
}

func TestWorkers(t *testing.T) {
	t.Run("fails the subtask of a worker whose tool panics, and the task goes on", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			switch {
			case req.Agent == clients.AgentCoordinator:
				return planOf(map[string]any{"id": "1", "content": "read"}, map[string]any{"id": "2", "content": "other"}), nil
			case req.Agent == "1" && len(req.Messages) == 1:
				return &clients.Response{ToolCalls: []clients.ToolCall{call("read_file", map[string]any{"path": "a.txt"})}}, nil
			}
			return finish("fine"), nil
		}}
		e, root := newEngine(t, m, &fakeEvents{}, map[string]string{"a.txt": "a\n"})
		e.cfg.Editor = panickyEditor{headlesstest.New(root, api.Caps{ReadFile: true})}
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		if err != nil {
			t.Fatal(err)
		}
		if s := sub(res, "1"); s.State != api.SubtaskFailed || !strings.Contains(s.Error, "editor bug") {
			t.Errorf("subtask 1 = %+v", s)
		}
		if s := sub(res, "2"); s.State != api.SubtaskDone {
			t.Errorf("subtask 2 = %+v", s)
		}
		if res.State != api.TaskFailed {
			t.Errorf("state = %s", res.State)
		}
	})

	t.Run("returns a tool's error to the model and lets the worker go on", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			switch {
			case req.Agent == clients.AgentCoordinator:
				return &clients.Response{Text: "one step"}, nil
			case len(req.Messages) == 1:
				return &clients.Response{ToolCalls: []clients.ToolCall{call("edit_file", map[string]any{"path": "missing.txt", "old_string": "a", "new_string": "b"})}}, nil
			}
			last := req.Messages[len(req.Messages)-1]
			if len(last.ToolResults) != 1 || !last.ToolResults[0].IsError || !strings.Contains(last.ToolResults[0].Content, "no such file") {
				return nil, fmt.Errorf("unexpected tool result %+v", last)
			}
			return finish("gave up on missing.txt"), nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, nil)
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		if err != nil || res.State != api.TaskDone || res.Summary != "gave up on missing.txt" {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})

	t.Run("fails a worker that does not finish within maxTurns", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				return &clients.Response{}, nil
			}
			return &clients.Response{ToolCalls: []clients.ToolCall{call("list_files", map[string]any{})}}, nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, nil)
		e.cfg.MaxTurns = 3
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		if err != nil || res.State != api.TaskFailed || !strings.Contains(sub(res, "1").Error, "within 3 turns") {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if n := len(m.requests("1")); n != 3 {
			t.Errorf("%d model calls, want 3", n)
		}
	})

	t.Run("gives a worker the results of the subtasks it depends on", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				return planOf(map[string]any{"id": "1", "content": "find"}, map[string]any{"id": "2", "content": "use", "dependsOn": []string{"1"}}), nil
			}
			return finish("result of " + req.Agent), nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, nil)
		if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings()); err != nil {
			t.Fatal(err)
		}
		first := m.requests("2")[0].Messages[0].Text
		if !strings.Contains(first, "result of 1") || !strings.Contains(first, "use") {
			t.Errorf("worker 2's task:\n%s", first)
		}
	})
}

func TestCoordinator(t *testing.T) {
	t.Run("shows a continued session's history, the workspace files and the README to the coordinator", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				return &clients.Response{}, nil
			}
			return finish(fmt.Sprintf("answer of run %d", req.Run)), nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, map[string]string{"README.md": "# Widget\nMakes widgets.\n", "src/w.go": "package w\n"})
		first, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "first request"}, settings())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "improve it", SessionID: first.SessionID}, settings()); err != nil {
			t.Fatal(err)
		}
		reqs := m.requests(clients.AgentCoordinator)
		if len(reqs) != 2 || reqs[1].Run != 2 {
			t.Fatalf("coordinator requests = %d", len(reqs))
		}
		sys, msg := reqs[1].System, reqs[1].Messages[0].Text
		for _, want := range []string{"src/w.go", "Makes widgets.", "Workspace root: "} {
			if !strings.Contains(sys, want) {
				t.Errorf("the coordinator's prompt lacks %q:\n%s", want, sys)
			}
		}
		// The history is the task's own: it comes with the request, after
		// the prefix the tasks of the session share.
		for _, want := range []string{"Earlier in this conversation", "first request", "answer of run 1", "improve it"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the coordinator's first message lacks %q:\n%s", want, msg)
			}
		}
		if reqs[0].System != sys {
			t.Errorf("the tasks of a session have different system prompts:\n%s\n---\n%s", reqs[0].System, sys)
		}
		if strings.Contains(reqs[0].Messages[0].Text, "Earlier in this conversation") {
			t.Error("a new session shows history")
		}
	})

	for _, c := range []struct {
		name  string
		plan  []map[string]any
		error string
	}{
		{"refuses a plan with a cycle", []map[string]any{{"id": "1", "content": "a", "dependsOn": []string{"2"}}, {"id": "2", "content": "b", "dependsOn": []string{"1"}}}, "cycle"},
		{"refuses a plan with an unknown dependency", []map[string]any{{"id": "1", "content": "a", "dependsOn": []string{"9"}}}, "not in the plan"},
		{"refuses a plan with a repeated id", []map[string]any{{"id": "1", "content": "a"}, {"id": "1", "content": "b"}}, "used twice"},
		{"refuses a plan with an empty subtask", []map[string]any{{"id": "1", "content": " "}}, "no content"},
		{"refuses an empty plan", []map[string]any{}, "empty"},
	} {
		t.Run(c.name+", tells the model once, then does the whole prompt as one subtask", func(t *testing.T) {
			m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
				if req.Agent == clients.AgentCoordinator {
					return planOf(c.plan...), nil
				}
				return finish("did all"), nil
			}}
			e, _ := newEngine(t, m, &fakeEvents{}, nil)
			res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "the whole thing"}, settings())
			if err != nil || res.State != api.TaskDone || len(res.Subtasks) != 1 || res.Subtasks[0].Content != "the whole thing" {
				t.Fatalf("run = %+v, %v", res, err)
			}
			reqs := m.requests(clients.AgentCoordinator)
			if len(reqs) != 2 {
				t.Fatalf("%d coordinator calls, want 2", len(reqs))
			}
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			if len(last.ToolResults) != 1 || !strings.Contains(last.ToolResults[0].Content, c.error) {
				t.Errorf("the model was told %+v, want %q", last.ToolResults, c.error)
			}
		})
	}

	t.Run("fails the task when the coordinator's model fails", func(t *testing.T) {
		m := &funcModel{fn: func(context.Context, *clients.Request) (*clients.Response, error) {
			return nil, errors.New("401: bad key")
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, nil)
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
		if err != nil || res.State != api.TaskFailed || !strings.Contains(res.Summary, "bad key") {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})
}

func TestCommands(t *testing.T) {
	for _, c := range []struct {
		name, command string
		prefixes      []string
		want          bool
	}{
		{"allows a command with an allowed prefix", "go test ./...", []string{"go test"}, true},
		{"allows the prefix itself", "go test", []string{"go test"}, true},
		{"refuses a prefix that is only part of a word", "go testify", []string{"go test"}, false},
		{"refuses a chained command", "go test; rm -rf ~", []string{"go test"}, false},
		{"refuses a piped command", "go test | sh", []string{"go test"}, false},
		{"refuses a substitution", "go test $(rm -rf ~)", []string{"go test"}, false},
		{"refuses a redirection", "go test > /etc/passwd", []string{"go test"}, false},
		{"refuses without prefixes", "ls", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := preapproved(c.command, c.prefixes); got != c.want {
				t.Errorf("preapproved(%q, %q) = %v", c.command, c.prefixes, got)
			}
		})
	}

	t.Run("keeps the head and the tail of a long output and says how much was cut", func(t *testing.T) {
		out := "FIRST\n" + strings.Repeat("x\n", 100000) + "LAST\n"
		got := capOutput(out)
		if !strings.HasPrefix(got, "FIRST\n") || !strings.HasSuffix(got, "LAST\n") || !strings.Contains(got, "bytes of output cut here") || len(got) > modelOutputHead+modelOutputTail+100 {
			t.Errorf("capOutput gave %d bytes: %q…%q", len(got), got[:20], got[len(got)-20:])
		}
		if short := "a\nb\n"; capOutput(short) != short {
			t.Error("a short output was changed")
		}
	})

	t.Run("never cuts the output of a command inside a character", func(t *testing.T) {
		got := capOutput(strings.Repeat("€", 20000))
		if !utf8.ValidString(got) || !strings.Contains(got, "bytes of output cut here") {
			t.Errorf("capOutput gave %d bytes, valid UTF-8: %v", len(got), utf8.ValidString(got))
		}
	})

	t.Run("kills the whole process group when the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan api.RunCommandResult, 1)
		go func() { done <- RunShell(ctx, api.RunCommandParams{Cwd: t.TempDir(), Command: "sleep 60 & sleep 60"}) }()
		cancel()
		select {
		case res := <-done:
			if res.TimedOut {
				t.Error("a cancelled command is reported as timed out")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("RunShell did not return after cancel")
		}
	})

	t.Run("reports a timeout and the exit code", func(t *testing.T) {
		res := RunShell(context.Background(), api.RunCommandParams{Cwd: t.TempDir(), Command: "sleep 60", TimeoutMs: 50})
		if !res.TimedOut {
			t.Errorf("res = %+v", res)
		}
		res = RunShell(context.Background(), api.RunCommandParams{Cwd: t.TempDir(), Command: "echo hi; exit 3"})
		if res.ExitCode != 3 || res.Output != "hi\n" {
			t.Errorf("res = %+v", res)
		}
	})

	t.Run("refuses every command when commands is deny", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			switch {
			case req.Agent == clients.AgentCoordinator:
				return &clients.Response{}, nil
			case len(req.Messages) == 1:
				return &clients.Response{ToolCalls: []clients.ToolCall{call("run_command", map[string]any{"command": "ls"})}}, nil
			}
			r := req.Messages[len(req.Messages)-1].ToolResults[0]
			return finish(fmt.Sprintf("%v %s", r.IsError, r.Content)), nil
		}}
		e, _ := newEngine(t, m, &fakeEvents{}, nil)
		s := settings()
		s.Commands = api.CommandsDeny
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, s)
		if err != nil || !strings.HasPrefix(res.Summary, "true Error: run_command is turned off") {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})
}

func TestEvents(t *testing.T) {
	t.Run("numbers the events of a task from 1 without gaps, in order, under parallel workers", func(t *testing.T) {
		m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				var subs []map[string]any
				for i := 1; i <= 6; i++ {
					subs = append(subs, map[string]any{"id": fmt.Sprint(i), "content": "list"})
				}
				return planOf(subs...), nil
			}
			if len(req.Messages) < 6 {
				return &clients.Response{Text: "looking", ToolCalls: []clients.ToolCall{call("list_files", map[string]any{})}}, nil
			}
			return finish("listed"), nil
		}}
		n := &fakeEvents{}
		e, _ := newEngine(t, m, n, map[string]string{"a.txt": "a"})
		s := settings()
		s.MaxWorkers = 6
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x", TaskID: "t"}, s)
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		started := map[string]bool{}
		for i, u := range n.updates {
			if u.Seq != uint64(i+1) {
				t.Fatalf("update %d has seq %d", i, u.Seq)
			}
			if u.Event.Kind == api.EventSubtaskStarted {
				started[u.Event.SubtaskID] = true
			}
		}
		// Without events the loop above proves nothing: each worker must
		// have been heard, and the task's end last.
		if len(started) != 6 {
			t.Fatalf("%d updates start %d subtasks (%v), want all 6", len(n.updates), len(started), started)
		}
		if last := n.updates[len(n.updates)-1]; last.Event.Kind != api.EventStateChanged || last.State != api.TaskDone {
			t.Errorf("the last update is %+v, want the task done", last)
		}
	})
}
