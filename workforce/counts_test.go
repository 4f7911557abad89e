package workforce

import (
	"context"
	"slices"
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
