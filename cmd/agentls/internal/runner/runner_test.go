package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
)

func approval(t *testing.T) json.RawMessage {
	t.Helper()
	b, _ := json.Marshal(api.ShowMessageRequestParams{Message: "agentls wants to run `go test` in /w",
		Actions: []api.MessageActionItem{{Title: "Run"}, {Title: "Always allow"}, {Title: "Deny"}}})
	return b
}

func TestApprovals(t *testing.T) {
	for _, c := range []struct {
		name  string
		o     Options
		input string
		want  string // "" means dismissed
	}{
		{"approves with --yes", Options{Yes: true}, "", "Run"},
		{"takes the person's choice by number on a terminal", Options{Interactive: true}, "2\n", "Always allow"},
		{"takes the person's choice by name on a terminal", Options{Interactive: true}, "deny\n", "Deny"},
		{"dismisses on an empty line", Options{Interactive: true}, "\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var errb bytes.Buffer
			c.o.Stderr, c.o.Stdin = &errb, strings.NewReader(c.input)
			got, err := newUI(c.o).approve(context.Background(), approval(t))
			if err != nil {
				t.Fatal(err)
			}
			title := ""
			if item, ok := got.(api.MessageActionItem); ok {
				title = item.Title
			}
			if title != c.want {
				t.Errorf("chose %q, want %q (stderr: %s)", title, c.want, errb.String())
			}
		})
	}

	t.Run("without a terminal answers that no one could be asked and how to approve", func(t *testing.T) {
		var errb bytes.Buffer
		u := newUI(Options{Stderr: &errb})
		got, err := u.approve(context.Background(), approval(t))
		var we *api.Error
		if got != nil || !errors.As(err, &we) || we.Code != api.CodeRequestFailed {
			t.Fatalf("answered %v, %v; want a -32803 error", got, err)
		}
		for _, text := range []string{err.Error(), errb.String()} {
			if missing := contains(text, "no one could be asked", "--yes"); missing != nil {
				t.Errorf("%q lacks %q", text, missing)
			}
		}
		if strings.Contains(err.Error()+errb.String(), "chose") {
			t.Errorf("a refusal no one made is told as a choice: %q / %q", err, errb.String())
		}
	})
}

// fifoInput is a terminal's input whose reads are served in the order they
// began, as a terminal serves them: a line goes to the oldest read.
type fifoInput chan []byte

func (f fifoInput) Read(p []byte) (int, error) {
	b, ok := <-f
	if !ok {
		return 0, io.EOF
	}
	return copy(p, b), nil
}

func TestQuestions(t *testing.T) {
	t.Run("after a withdrawn question the next question gets the next line", func(t *testing.T) {
		in := make(fifoInput)
		defer close(in)
		var errb syncBuffer
		u := newUI(Options{Interactive: true, Stdin: in, Stderr: &errb})

		withdrawn, withdraw := context.WithCancel(context.Background())
		first := make(chan bool, 1)
		go func() {
			_, ok := u.prompt(withdrawn, "first?", []string{"a", "b"})
			first <- ok
		}()
		// The first question is on the screen; the server withdraws it.
		awaitText(t, &errb, "first?")
		withdraw()
		if ok := <-first; ok {
			t.Fatal("a withdrawn question was answered")
		}

		second := make(chan string, 1)
		go func() {
			answer, _ := u.prompt(context.Background(), "second?", []string{"yes", "no"})
			second <- answer
		}()
		awaitText(t, &errb, "second?")
		in <- []byte("2\n")
		select {
		case answer := <-second:
			if answer != "no" {
				t.Errorf("the second question got %q, want %q", answer, "no")
			}
		case <-time.After(time.Minute):
			t.Fatal("the line went to the withdrawn question: the second one never got it")
		}
	})
}

// awaitText waits until b holds s.
func awaitText(t *testing.T, b *syncBuffer, s string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("%q never shown; shown:\n%s", s, b.String())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRun(t *testing.T) {
	t.Run("fails at once when the server refuses the run, waiting for no notification", func(t *testing.T) {
		f := &fakeServer{run: func(context.Context, *rpc.Conn, api.RunParams) (any, error) {
			return nil, api.Errorf(api.CodeWrongState, "agent/run: refused")
		}}
		// No notification comes: a run that waited for one would wait the
		// hour.
		code, _, errs := runFake(t, f, Options{drain: time.Hour})
		if code != ExitFailed || !strings.Contains(errs, "agent/run: refused") {
			t.Errorf("exit %d, stderr:\n%s", code, errs)
		}
	})

	t.Run("tells a person at a terminal how to configure a model", func(t *testing.T) {
		_, noModel := clients.Resolve("", func(string) string { return "" }, clients.Options{})
		f := &fakeServer{run: func(context.Context, *rpc.Conn, api.RunParams) (any, error) { return nil, noModel }}
		code, _, errs := runFake(t, f, Options{drain: time.Hour})
		if code != ExitUsage {
			t.Errorf("exit %d", code)
		}
		if missing := contains(errs, "--model", "AGENTLS_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"); missing != nil {
			t.Errorf("stderr lacks %q:\n%s", missing, errs)
		}
		if strings.Contains(errs, "initializationOptions") || strings.Contains(errs, "editor") {
			t.Errorf("stderr speaks of the editor:\n%s", errs)
		}
	})

	// refusing asks to apply a change and to run a command, and tells
	// the answers it got.
	var answers []string
	refusing := &fakeServer{run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
		answers = nil
		ask := func(msg string, actions ...string) string {
			p := api.ShowMessageRequestParams{Message: msg}
			for _, a := range actions {
				p.Actions = append(p.Actions, api.MessageActionItem{Title: a})
			}
			var item *api.MessageActionItem
			answer := "(dismissed)"
			if err := conn.Call(ctx, api.MethodShowMessageRequest, p, &item); err != nil {
				answer = "(error)"
			} else if item != nil {
				answer = item.Title
			}
			answers = append(answers, answer)
			return answer
		}
		res := api.RunResult{TaskID: p.TaskID, State: api.TaskDone, Summary: "done"}
		applied := ask("agentls wants to change a.go", "Apply", "Reject") == "Apply"
		res.Changes = []api.Change{{Path: "a.go", Operation: api.OpUpdate, Applied: applied}}
		if applied {
			res.Applied = 1
		} else {
			res.Rejected = 1
		}
		ask("agentls wants to run `go test`", "Run", "Always allow", "Deny")
		_ = conn.Notify(ctx, api.MethodTaskUpdate, api.TaskUpdateParams{TaskID: p.TaskID, State: api.TaskDone,
			Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskDone}})
		return res, nil
	}}

	t.Run("exits 3 and says how to approve when no one could be asked", func(t *testing.T) {
		code, _, errs := runFake(t, refusing, Options{})
		if code != ExitRefused {
			t.Errorf("exit %d, want %d", code, ExitRefused)
		}
		if missing := contains(errs, "1 change was not applied", "1 command was not run", "no one could be asked", "--yes"); missing != nil {
			t.Errorf("stderr lacks %q:\n%s", missing, errs)
		}
	})

	t.Run("exits 0 when everything was approved", func(t *testing.T) {
		code, _, errs := runFake(t, refusing, Options{Yes: true})
		if code != ExitDone || strings.Contains(errs, "not applied") {
			t.Errorf("exit %d, stderr:\n%s", code, errs)
		}
	})

	t.Run("exits 3 when the person refused", func(t *testing.T) {
		in := make(fifoInput)
		var errb syncBuffer
		go func() {
			defer close(in)
			awaitText(t, &errb, "wants to change")
			in <- []byte("reject\n")
			awaitText(t, &errb, "wants to run")
			in <- []byte("deny\n")
		}()
		code, _, errs := runFake(t, refusing, Options{Interactive: true, Stdin: in, Stderr: &errb})
		if code != ExitRefused || strings.Contains(errs, "no one could be asked") || !strings.Contains(errs, "1 change was not applied and 1 command was not run") {
			t.Errorf("exit %d, stderr:\n%s", code, errs)
		}
		if got := strings.Join(answers, ", "); got != "Reject, Deny" {
			t.Errorf("answered %s", got)
		}
	})
}

func TestTerminalWords(t *testing.T) {
	none := func(string) string { return "" }
	resolve := func(spec string, env func(string) string) error {
		_, err := clients.Resolve(spec, env, clients.Options{})
		if err == nil {
			t.Fatalf("Resolve(%q) did not fail", spec)
		}
		return err
	}
	_, _, settingsErr := api.ApplySettings(api.DefaultSettings(), json.RawMessage(`{"maxWorkers": 1000}`))
	var se *api.SettingsError
	if !errors.As(settingsErr, &se) {
		t.Fatalf("ApplySettings: %v", settingsErr)
	}
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"names the flag, the variable and the keys when no model is configured", resolve("", none),
			[]string{"--model", "AGENTLS_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "script:"}},
		{"names the flag a model came from and the key it needs", resolve("anthropic:claude-sonnet-4-5", none),
			[]string{"(from --model)", "needs ANTHROPIC_API_KEY", "export it"}},
		{"names the key an OpenAI model needs", resolve("openai:gpt-4o", none),
			[]string{"(from --model)", "needs OPENAI_API_KEY", "OPENAI_BASE_URL"}},
		{"names the flag of a spec that is not provider:model", resolve("gpt-4o", none),
			[]string{"(from --model)"}},
		{"names the flag of a bad setting", api.Errorf(api.CodeInvalidParams, "invalid params: initializationOptions.%s", se.Error()),
			[]string{"--max-workers"}},
		{"names the flag of a language the diagnostics setting does not know", api.Errorf(api.CodeInvalidParams,
			"invalid params: initializationOptions.diagnostics.commands.golang: unknown language; the languages are go"),
			[]string{"--diagnostics golang: unknown language"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := forTerminal(c.err)
			if missing := contains(got, c.want...); missing != nil {
				t.Errorf("%q lacks %q", got, missing)
			}
			if strings.Contains(got, "initializationOptions") || strings.Contains(got, "editor") {
				t.Errorf("%q speaks of the editor", got)
			}
		})
	}
}

func TestTree(t *testing.T) {
	t.Run("tells each step in a plain line and draws each subtask with its activity", func(t *testing.T) {
		tr := newTree()
		subs := []api.Subtask{
			{ID: "1", Content: "edit", State: api.SubtaskRunning},
			{ID: "2", Content: "test", State: api.SubtaskPending, DependsOn: []string{"1"}},
		}
		line := tr.apply(&api.TaskUpdateParams{State: api.TaskRunning, Subtasks: subs,
			Event: api.TaskEvent{Kind: api.EventToolCall, SubtaskID: "1", Tool: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)}})
		if line != "[1] read_file a.go" {
			t.Errorf("line = %q", line)
		}
		got := strings.Join(tr.render(false), "\n")
		for _, want := range []string{"agentls: running", "◐ 1 edit · read_file a.go", "○ 2 test (after 1)"} {
			if !strings.Contains(got, want) {
				t.Errorf("tree lacks %q:\n%s", want, got)
			}
		}
	})
}

func TestCommands(t *testing.T) {
	run := func(t *testing.T, command string) (api.RunCommandResult, string) {
		t.Helper()
		var errb bytes.Buffer
		raw, _ := json.Marshal(api.RunCommandParams{Command: command, Cwd: t.TempDir(), TimeoutMs: 30000})
		got, err := newUI(Options{Stderr: &errb}).runCommand(context.Background(), raw)
		if err != nil {
			t.Fatal(err)
		}
		res, ok := got.(api.RunCommandResult)
		if !ok {
			t.Fatalf("answered %T, want api.RunCommandResult", got)
		}
		return res, errb.String()
	}

	t.Run("runs the command and shows its output and exit status", func(t *testing.T) {
		res, shown := run(t, "echo first; echo second >&2; exit 3")
		if res.ExitCode != 3 || res.Output != "first\nsecond\n" {
			t.Errorf("result = %+v", res)
		}
		want := "$ echo first; echo second >&2; exit 3\n│ first\n│ second\n└ exit status 3\n"
		if shown != want {
			t.Errorf("shown:\n%s\nwant:\n%s", shown, want)
		}
	})

	t.Run("shows the last lines of a long output and says how many it left out", func(t *testing.T) {
		_, shown := run(t, "seq 1 100")
		if !strings.Contains(shown, "│ … 60 lines above not shown\n│ 61\n") || !strings.HasSuffix(shown, "│ 100\n└ exit status 0\n") {
			t.Errorf("shown:\n%s", shown)
		}
	})
}

func TestRunSummary(t *testing.T) {
	var got api.RunParams
	counts := api.SubtaskCounts{Done: 1, Skipped: 1, Removed: 1}
	f := &fakeServer{run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
		got = p
		_ = conn.Notify(ctx, api.MethodTaskUpdate, api.TaskUpdateParams{TaskID: p.TaskID, State: api.TaskDone,
			Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskDone, Counts: &counts}})
		return api.RunResult{TaskID: p.TaskID, SessionID: "5e55", State: api.TaskDone, Summary: "1 of 3 subtasks done, 1 skipped, 1 removed.",
			Changes: []api.Change{
				{Path: "a.go", Operation: api.OpUpdate, Applied: true, Diff: "--- a/a.go\n"},
				{Path: "b.go", Operation: api.OpCreate, Applied: false, Diff: "--- /dev/null\n"},
				{Path: "c.go", Operation: api.OpUpdate, Applied: true, Diff: "--- a/c.go\n"},
			}, Applied: 2, Rejected: 1, Counts: counts}, nil
	}}
	_, out, errs := runFake(t, f, Options{Yes: true, Intent: "INT-001", Session: "5e55"})
	if got.IntentID != "INT-001" || got.SessionID != "5e55" {
		t.Errorf("agent/run got intentId %q, sessionId %q", got.IntentID, got.SessionID)
	}
	// The counts are the server's: the skipped and removed subtasks are
	// said, as the task's end says them.
	if !strings.Contains(errs, "[task] done: 1 of 3 subtasks done, 1 skipped, 1 removed\n") {
		t.Errorf("stderr lacks the counts at the task's end:\n%s", errs)
	}
	for _, want := range []string{
		"Subtasks: 1 of 3 subtasks done, 1 skipped, 1 removed\n",
		"Changes: 2 applied, 1 rejected\n",
		"Session: 5e55 (agentls run --session 5e55 PROMPT follows up on it)\n",
		"create b.go (NOT applied)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "3 change") {
		t.Errorf("stdout counts the rejected change as a change made:\n%s", out)
	}
}

func TestRunSummaryTellsTheUsage(t *testing.T) {
	cost := func(v float64) *float64 { return &v }
	f := &fakeServer{run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
		return api.RunResult{TaskID: p.TaskID, State: api.TaskDone, Summary: "done",
			Subtasks: []api.Subtask{
				{ID: "1", Content: "Add a greet function", State: api.SubtaskDone,
					Usage: &api.Usage{InputTokens: 1143, CacheReadTokens: 600, OutputTokens: 106, Cost: cost(0.005019), ContextTokens: 344, ContextWindow: 200000}},
				{ID: "2", Content: "Test it", State: api.SubtaskDone,
					Usage: &api.Usage{InputTokens: 912, OutputTokens: 90, ContextTokens: 350}},
				{ID: "3", Content: "Never ran", State: api.SubtaskSkipped},
			},
			Usage: api.Usage{InputTokens: 2467, OutputTokens: 244, Cost: cost(0.011061)}}, nil
	}}
	_, out, _ := runFake(t, f, Options{Yes: true})
	for _, c := range []struct{ name, want string }{
		{"says the task's tokens and cost", "Tokens: 2467 in, 244 out, $0.0111\n"},
		{"says each subtask's tokens, cached input, cost and context against the window", "  1 Add a greet function: 1143 in (600 cached), 106 out, $0.0050; context 344 of 200000 tokens (0%)\n"},
		{"leaves the cost and the window out where they are not known", "  2 Test it: 912 in, 90 out; context 350 tokens\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(out, c.want) {
				t.Errorf("stdout lacks %q:\n%s", c.want, out)
			}
		})
	}
	t.Run("says nothing of a subtask that used no token", func(t *testing.T) {
		if strings.Contains(out, "Never ran:") {
			t.Errorf("stdout:\n%s", out)
		}
	})
}
