package runner

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

func TestParseControl(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       control
		wantErr    string
	}{
		{"reads s ID as a skip", "s 2\n", control{method: api.MethodSkipSubtask, id: "2"}, ""},
		{"reads skip ID as a skip", "  skip 12 ", control{method: api.MethodSkipSubtask, id: "12"}, ""},
		{"reads r ID as a remove", "r 3", control{method: api.MethodRemoveSubtask, id: "3"}, ""},
		{"reads a TEXT as an add", "a update the README", control{method: api.MethodAddSubtask, text: "update the README"}, ""},
		{"reads the dependencies of an add after", "add after 1, 2: run the tests", control{method: api.MethodAddSubtask, text: "run the tests", after: []string{"1", "2"}}, ""},
		{"reads q as a stop", "q", control{method: api.MethodStop}, ""},
		{"reads ? as the help", "?", control{}, ""},
		{"refuses a skip without an id", "s", control{}, "skip takes one subtask id"},
		{"refuses a remove of two ids", "r 1 2", control{}, "remove takes one subtask id"},
		{"refuses an add without text", "a after 1:", control{}, "add takes what the new subtask is to do"},
		{"refuses an add after without a colon", "a after 1 run it", control{}, "a colon"},
		{"refuses a word it does not know", "frobnicate 2", control{}, `"frobnicate 2" is not a command`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseControl(c.line)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Errorf("parseControl(%q) = %+v, %v; want an error saying %q", c.line, got, err, c.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Errorf("parseControl(%q) = %+v, %v; want %+v", c.line, got, err, c.want)
			}
		})
	}
}

// controlLog records the controls a fake server received.
type controlLog struct {
	mu    sync.Mutex
	calls []string // "method params"
	seen  chan struct{}
}

func (l *controlLog) add(method string, params json.RawMessage) {
	l.mu.Lock()
	l.calls = append(l.calls, method+" "+string(params))
	l.mu.Unlock()
	select {
	case l.seen <- struct{}{}:
	default:
	}
}

func (l *controlLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

func TestRunControls(t *testing.T) {
	log := &controlLog{seen: make(chan struct{}, 16)}
	started := make(chan struct{})
	stopped := make(chan struct{})
	var once sync.Once
	f := &fakeServer{
		run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
			close(started)
			select {
			case <-stopped:
			case <-ctx.Done():
			}
			_ = conn.Notify(ctx, api.MethodTaskUpdate, api.TaskUpdateParams{TaskID: p.TaskID, State: api.TaskStopped,
				Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskStopped}})
			return api.RunResult{TaskID: p.TaskID, State: api.TaskStopped, Summary: "Stopped by the user."}, nil
		},
		control: func(method string, params json.RawMessage) (any, error) {
			log.add(method, params)
			switch method {
			case api.MethodSkipSubtask:
				return api.Empty{}, nil
			case api.MethodAddSubtask:
				return api.AddSubtaskResult{SubtaskID: "3"}, nil
			case api.MethodRemoveSubtask:
				return nil, api.Errorf(api.CodeWrongState, "agent/removeSubtask: subtask 2 is running; only a pending subtask can be removed")
			case api.MethodStop:
				once.Do(func() { close(stopped) })
				return api.StopResult{Stopped: true}, nil
			}
			return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", method)
		},
	}
	in := make(fifoInput)
	var errb syncBuffer
	go func() {
		defer close(in)
		<-started
		for _, step := range []struct{ line, shown string }{
			{"s 2\n", "skipping subtask 2"},
			{"a after 1: update the README\n", "added subtask 3: update the README (after 1)"},
			{"r 2\n", "subtask 2 not removed: agent/removeSubtask: subtask 2 is running; only a pending subtask can be removed"},
			{"x\n", `"x" is not a command; type s ID to skip`},
			{"q\n", "stopping…"},
		} {
			in <- []byte(step.line)
			awaitText(t, &errb, step.shown)
		}
	}()
	code, _, errs := runFake(t, f, Options{Interactive: true, Stdin: in, Stderr: &errb})
	if code != ExitStopped {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitStopped, errs)
	}
	if !strings.Contains(errs, "agentls: "+controlsHelp) {
		t.Errorf("a run without a live tree does not say how to steer it:\n%s", errs)
	}
	calls := log.all()
	want := []string{
		api.MethodSkipSubtask + ` {"taskId":"<id>","subtaskId":"2"}`,
		api.MethodAddSubtask + ` {"taskId":"<id>","content":"update the README","dependsOn":["1"]}`,
		api.MethodRemoveSubtask + ` {"taskId":"<id>","subtaskId":"2"}`,
		api.MethodStop + ` {"taskId":"<id>"}`,
	}
	if len(calls) != len(want) {
		t.Fatalf("the server got %q, want %q", calls, want)
	}
	for i := range want {
		var p struct {
			TaskID string `json:"taskId"`
		}
		_ = json.Unmarshal([]byte(calls[i][strings.Index(calls[i], " ")+1:]), &p)
		if got := strings.Replace(calls[i], p.TaskID, "<id>", 1); got != want[i] || !strings.HasPrefix(p.TaskID, "run-") {
			t.Errorf("control %d = %s, want %s", i+1, calls[i], want[i])
		}
	}
}

func TestControlsAreOffWithoutAPerson(t *testing.T) {
	f := &fakeServer{
		run: func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error) {
			_ = conn.Notify(ctx, api.MethodTaskUpdate, api.TaskUpdateParams{TaskID: p.TaskID, State: api.TaskDone,
				Event: api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskDone}})
			return api.RunResult{TaskID: p.TaskID, State: api.TaskDone, Summary: "done"}, nil
		},
		control: func(method string, _ json.RawMessage) (any, error) {
			t.Errorf("a run without a terminal sent %s", method)
			return nil, nil
		},
	}
	code, _, errs := runFake(t, f, Options{Stdin: strings.NewReader("s 1\nq\n")})
	if code != ExitDone || strings.Contains(errs, controlsHelp) {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
}

func TestLiveTreeWithControls(t *testing.T) {
	var errb syncBuffer
	u := newUI(Options{Live: true, Interactive: true, Stderr: &errb})
	u.tree.apply(&api.TaskUpdateParams{State: api.TaskRunning, Subtasks: []api.Subtask{{ID: "1", Content: "edit", State: api.SubtaskRunning}},
		Event: api.TaskEvent{Kind: api.EventSubtaskStarted, SubtaskID: "1"}})
	u.setControls(true)
	u.note("first")
	if got := errb.String(); !strings.Contains(got, "keys: s ID skip · r ID remove · a TEXT add · q stop") {
		t.Errorf("the live tree does not say how to steer it:\n%q", got)
	}
	// The tree is 3 lines (the task, a subtask, the keys); the person
	// typed a control and Enter below it: the redraw clears all 4.
	u.typed.Add(1)
	before := len(errb.String())
	u.note("second")
	if got := errb.String()[before:]; !strings.HasPrefix(got, "\x1b[4A\x1b[J") {
		t.Errorf("the redraw after a typed line starts %q, want it to clear 4 lines", got)
	}
	u.setControls(false)
	before = len(errb.String())
	u.finish()
	if got := errb.String()[before:]; strings.Contains(got, "keys:") {
		t.Errorf("the final tree still shows the keys:\n%q", got)
	}
}
