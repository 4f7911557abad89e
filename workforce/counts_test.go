package workforce

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

func TestRunCountsAppliedAndRejectedChanges(t *testing.T) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		switch {
		case req.Agent == clients.AgentCoordinator:
			return planOf(map[string]any{"id": "1", "content": "write two files"}), nil
		case len(req.Messages) == 1:
			return &clients.Response{ToolCalls: []clients.ToolCall{call("write_file", map[string]any{"path": "a.txt", "content": "a\n"})}}, nil
		case len(req.Messages) == 3:
			return &clients.Response{ToolCalls: []clients.ToolCall{call("write_file", map[string]any{"path": "b.txt", "content": "b\n"})}}, nil
		}
		return finish("wrote what was accepted"), nil
	}}
	n := &fakeEvents{}
	e, root := newEngine(t, m, n, nil)
	ed := headlesstest.New(root, api.Caps{ApplyEdit: true, DocumentChanges: true, CreateFile: true})
	// The person accepts the first change and rejects the rest.
	ed.OnApply(func() { ed.Refuse("rejected by the user") })
	e.cfg.Editor = ed
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changes) != 2 || !res.Changes[0].Applied || res.Changes[1].Applied {
		t.Fatalf("changes = %+v, want a.txt applied and b.txt not", res.Changes)
	}
	if res.Applied != 1 || res.Rejected != 1 {
		t.Errorf("result counts %d applied, %d rejected; want 1 and 1", res.Applied, res.Rejected)
	}
	last := n.last()
	if ev := last.Event; ev.Kind != api.EventStateChanged || ev.Applied == nil || ev.Rejected == nil || *ev.Applied != 1 || *ev.Rejected != 1 {
		t.Errorf("the task's last event is %+v, want stateChanged with 1 applied and 1 rejected", ev)
	}
	// Only the event that ends the task carries counts.
	for _, ev := range n.kind(api.EventStateChanged)[:len(n.kind(api.EventStateChanged))-1] {
		if ev.Applied != nil || ev.Rejected != nil {
			t.Errorf("event %+v carries counts before the end", ev)
		}
	}
}

func TestUsageEventsCarryTheTasksTotals(t *testing.T) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		var resp *clients.Response
		switch {
		case req.Agent == clients.AgentCoordinator:
			resp = planOf(map[string]any{"id": "1", "content": "look"})
		case len(req.Messages) == 1:
			resp = &clients.Response{ToolCalls: []clients.ToolCall{call("list_files", map[string]any{})}}
		default:
			resp = finish("looked")
		}
		resp.Usage = api.Usage{InputTokens: 100, OutputTokens: 10}
		return resp, nil
	}}
	n := &fakeEvents{}
	e, _ := newEngine(t, m, n, map[string]string{"a.txt": "a"})
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, ev := range n.kind(api.EventUsage) {
		got = append(got, ev.InputTokens, ev.OutputTokens)
	}
	want := []int64{100, 10, 200, 20, 300, 30}
	if !slices.Equal(got, want) {
		t.Errorf("usage events carry %v, want the running totals %v", got, want)
	}
	if res.Usage != (api.Usage{InputTokens: 300, OutputTokens: 30}) {
		t.Errorf("result usage = %+v", res.Usage)
	}
}

func TestUsageIsPricedPerSubtaskAndKeptInTheSession(t *testing.T) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		var resp *clients.Response
		switch {
		case req.Agent == clients.AgentCoordinator:
			resp = planOf(map[string]any{"id": "1", "content": "look"}, map[string]any{"id": "2", "content": "look too"})
		case len(req.Messages) == 1:
			resp = &clients.Response{ToolCalls: []clients.ToolCall{call("list_files", map[string]any{})}}
		default:
			resp = finish("looked")
		}
		resp.Usage = api.Usage{InputTokens: int64(1000 * len(req.Messages)), CacheReadTokens: 500, OutputTokens: 100}
		return resp, nil
	}}
	n := &fakeEvents{}
	e, _ := newEngine(t, m, n, map[string]string{"a.txt": "a"})
	s := settings()
	in, out, read := 2.0, 10.0, 1.0
	s.Prices = map[string]api.Price{"test:model": {Input: &in, Output: &out, CacheRead: &read, ContextWindow: 10000}}
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, s)
	if err != nil {
		t.Fatal(err)
	}
	// Each worker: a call of 1000 input tokens (500 cached), then one of
	// 3000 (500 cached), 100 output each: (500×2 + 500×1 + 100×10 +
	// 2500×2 + 500×1 + 100×10) / 1e6 dollars.
	for _, sub := range res.Subtasks {
		t.Run("subtask "+sub.ID+" has its tokens, cost and the context of its last call", func(t *testing.T) {
			u := sub.Usage
			if u == nil || u.InputTokens != 4000 || u.OutputTokens != 200 || u.CacheReadTokens != 1000 ||
				u.Cost == nil || *u.Cost != 0.009 || u.ContextTokens != 3000 || u.ContextWindow != 10000 {
				t.Errorf("usage = %+v", u)
			}
		})
	}
	t.Run("the task's usage sums its coordinator and subtasks, without a context", func(t *testing.T) {
		// The coordinator: 1000 input tokens (500 cached), 100 output.
		if u := res.Usage; u.InputTokens != 9000 || u.Cost == nil || *u.Cost != 0.0205 || u.ContextTokens != 0 {
			t.Errorf("usage = %+v (cost %v)", u, u.Cost)
		}
	})
	t.Run("each usage event carries the cost so far and the context of its call", func(t *testing.T) {
		evs := n.kind(api.EventUsage)
		first, last := evs[0], evs[len(evs)-1]
		if first.SubtaskID != "" || first.Cost == nil || *first.Cost != 0.0025 || first.ContextTokens != 1000 || first.ContextWindow != 10000 {
			t.Errorf("first usage event = %+v", first)
		}
		if last.Cost == nil || *last.Cost != 0.0205 || last.ContextTokens != 3000 {
			t.Errorf("last usage event = %+v", last)
		}
		// The task's cache reads so far: 500 of each of its five calls.
		if first.CacheReadTokens != 500 || last.CacheReadTokens != 2500 {
			t.Errorf("cache reads: first %d, last %d; want 500 and 2500", first.CacheReadTokens, last.CacheReadTokens)
		}
	})
	t.Run("the session keeps the task's usage and its subtasks", func(t *testing.T) {
		got, err := e.cfg.Tracking.Sessions.Session(res.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		task := got.Tasks[0]
		if task.Usage.Cost == nil || *task.Usage.Cost != 0.0205 || len(task.Subtasks) != 2 || task.Subtasks[1].Usage == nil || *task.Subtasks[1].Usage.Cost != 0.009 {
			t.Errorf("session task = %+v", task)
		}
		list, err := e.cfg.Tracking.Sessions.Sessions()
		if err != nil {
			t.Fatal(err)
		}
		if u := list.Sessions[0].Usage; u.InputTokens != 9000 || u.Cost == nil || *u.Cost != 0.0205 || list.Sessions[0].Tasks[0].Subtasks != nil {
			t.Errorf("agent/sessions: %+v", list.Sessions[0])
		}
	})
}

func TestUsageOfAModelOfUnknownPriceHasNoCost(t *testing.T) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		resp := finish("done")
		if req.Agent == clients.AgentCoordinator {
			resp = planOf(map[string]any{"id": "1", "content": "finish"})
		}
		resp.Usage = api.Usage{InputTokens: 10, OutputTokens: 1}
		return resp, nil
	}}
	n := &fakeEvents{}
	e, _ := newEngine(t, m, n, nil)
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, settings())
	if err != nil {
		t.Fatal(err)
	}
	if res.Usage.Cost != nil || res.Subtasks[0].Usage.Cost != nil || res.Subtasks[0].Usage.ContextWindow != 0 {
		t.Errorf("a model without a price got a cost or a window: %+v, %+v", res.Usage, res.Subtasks[0].Usage)
	}
	for _, ev := range n.kind(api.EventUsage) {
		if ev.Cost != nil {
			t.Errorf("usage event with a cost: %+v", ev)
		}
	}
}

// TestCountsSaySkippedAndRemovedSubtasks steers a task as a person would:
// subtask 3 added, 2 removed, the running 1 skipped. The task is done, and
// its summary, its end event and the result all say that one subtask of
// three was done, one skipped and one removed, never "all done".
func TestCountsSaySkippedAndRemovedSubtasks(t *testing.T) {
	running := make(chan struct{})
	m := &funcModel{fn: func(ctx context.Context, req *clients.Request) (*clients.Response, error) {
		switch req.Agent {
		case clients.AgentCoordinator:
			return planOf(map[string]any{"id": "1", "content": "take a slow step"},
				map[string]any{"id": "2", "content": "take the second step", "dependsOn": []string{"1"}}), nil
		case "1":
			close(running)
			<-ctx.Done() // until skipped
			return nil, context.Cause(ctx)
		}
		return finish("log written"), nil
	}}
	n := &fakeEvents{}
	e, _ := newEngine(t, m, n, nil)
	ctx := testkit.Context(t)
	type outcome struct {
		res *api.RunResult
		err error
	}
	ran := make(chan outcome, 1)
	go func() {
		res, err := e.Run(ctx, api.RunParams{Prompt: "x", TaskID: "t1"}, settings())
		ran <- outcome{res, err}
	}()
	select {
	case <-running:
	case <-ctx.Done():
		t.Fatal("subtask 1 never ran")
	}
	if _, err := e.AddSubtask(api.AddSubtaskParams{TaskID: "t1", Content: "write the log"}); err != nil {
		t.Fatal(err)
	}
	if err := e.RemoveSubtask(api.SubtaskParams{TaskID: "t1", SubtaskID: "2"}); err != nil {
		t.Fatal(err)
	}
	if err := e.SkipSubtask(api.SubtaskParams{TaskID: "t1", SubtaskID: "1"}); err != nil {
		t.Fatal(err)
	}
	var out outcome
	select {
	case out = <-ran:
	case <-ctx.Done():
		t.Fatal("the task never ended")
	}
	if out.err != nil {
		t.Fatal(out.err)
	}
	res := out.res
	want := api.SubtaskCounts{Done: 1, Skipped: 1, Removed: 1}
	if res.State != api.TaskDone || res.Counts != want {
		t.Errorf("result: %s with counts %+v; want done with %+v", res.State, res.Counts, want)
	}
	if first, _, _ := strings.Cut(res.Summary, "\n"); first != "1 of 3 subtasks done, 1 skipped, 1 removed." {
		t.Errorf("summary begins %q", first)
	}
	if ev := n.last().Event; ev.Kind != api.EventStateChanged || ev.Counts == nil || *ev.Counts != want || ev.Summary != res.Summary {
		t.Errorf("the task's last event is %+v, want stateChanged with the result's counts and summary", ev)
	}
}

// TestStoppedBeforeThePlanSaysSo: a task stopped while it plans had no
// subtask; its summary says that, not "0 of 0 subtasks done".
func TestStoppedBeforeThePlanSaysSo(t *testing.T) {
	planning := make(chan struct{})
	m := &funcModel{fn: func(ctx context.Context, req *clients.Request) (*clients.Response, error) {
		close(planning)
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}}
	e, _ := newEngine(t, m, &fakeEvents{}, nil)
	ctx := testkit.Context(t)
	ran := make(chan *api.RunResult, 1)
	go func() {
		res, _ := e.Run(ctx, api.RunParams{Prompt: "x", TaskID: "t1"}, settings())
		ran <- res
	}()
	select {
	case <-planning:
	case <-ctx.Done():
		t.Fatal("the task never planned")
	}
	if _, err := e.Stop("t1"); err != nil {
		t.Fatal(err)
	}
	var res *api.RunResult
	select {
	case res = <-ran:
	case <-ctx.Done():
		t.Fatal("the task never ended")
	}
	if res == nil || res.State != api.TaskStopped || res.Summary != "Stopped by the user before the plan was made." || res.Counts.Total() != 0 {
		t.Errorf("result %+v; want stopped, no subtask counted, saying it stopped before the plan", res)
	}
}
