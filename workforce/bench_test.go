package workforce

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// BenchmarkToolCall measures the sidecar's own work per tool call: one
// worker calls read_file b.N times on a small file, with a model and an
// editor that answer at once. Each op is one model turn and one tool call:
// events built and sent, heat, usage, the session journal, editing's path
// checks and read.
func BenchmarkToolCall(b *testing.B) {
	m := &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			return &clients.Response{}, nil
		}
		return nil, nil // replaced below
	}}
	n := &fakeEvents{discard: true}
	e, _ := newEngine(b, m, n, map[string]string{"a.go": "package a\n\nfunc A() int { return 1 }\n"})
	turns := 0
	read := &clients.Response{ToolCalls: []clients.ToolCall{call("read_file", map[string]any{"path": "a.go"})}, Usage: api.Usage{InputTokens: 100, OutputTokens: 10}}
	m.fn = func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			return &clients.Response{}, nil
		}
		// Keep the conversation short: the model's side is not measured.
		req.Messages = req.Messages[:1]
		turns++
		if turns > b.N {
			return finish("done"), nil
		}
		return read, nil
	}
	m.reqs = nil
	e.cfg.MaxTurns = b.N + 2
	b.ReportAllocs()
	b.ResetTimer()
	res, err := e.Run(context.Background(), api.RunParams{Prompt: "read"}, settings())
	b.StopTimer()
	if err != nil || res.State != api.TaskDone {
		b.Fatalf("run = %+v, %v", res, err)
	}
}

// BenchmarkParallelSubtasks runs eight independent subtasks whose model
// takes 200 ms per call, with maxWorkers 8, and reports the wall time of
// the whole task (plan, eight workers, result).
func BenchmarkParallelSubtasks(b *testing.B) {
	const latency = 200 * time.Millisecond
	m := &funcModel{fn: func(ctx context.Context, req *clients.Request) (*clients.Response, error) {
		if req.Agent == clients.AgentCoordinator {
			var subs []map[string]any
			for i := 1; i <= 8; i++ {
				subs = append(subs, map[string]any{"id": fmt.Sprint(i), "content": "work"})
			}
			return planOf(subs...), nil
		}
		select {
		case <-time.After(latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return finish("done"), nil
	}}
	e, _ := newEngine(b, m, &fakeEvents{discard: true}, nil)
	s := settings()
	s.MaxWorkers = 8
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := e.Run(context.Background(), api.RunParams{Prompt: "eight things"}, s)
		if err != nil || res.State != api.TaskDone {
			b.Fatalf("run = %+v, %v", res, err)
		}
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "wall-ms")
	}
}
