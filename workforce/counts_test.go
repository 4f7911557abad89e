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
	n := &fakeNotifier{}
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
	n := &fakeNotifier{}
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
