package workforce

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// plan asks the coordinator for a plan. An invalid plan goes back to the
// model once with the reason; a second invalid plan, or an answer without
// the plan tool, becomes one subtask holding the whole prompt (docs/WORKFORCE.md, tools).
// It fails only when the model call itself fails.
func (t *task) plan(ctx context.Context) ([]*subtask, error) {
	ws := t.e.cfg.Tracking
	meter := ws.Usage.Meter(t.sessionID, t.id, "", nil)
	req := &clients.Request{
		Agent:    clients.AgentCoordinator,
		Run:      t.runN,
		System:   t.coordinatorPrompt(),
		Tools:    []clients.Tool{planTool},
		Messages: []clients.Message{{Role: clients.RoleUser, Text: t.prompt}},
	}
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := t.complete(ctx, req, clients.AgentCoordinator)
		if err != nil {
			if attempt > 1 && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
				// The model could not repair its plan: do the whole prompt at once.
				t.log.Warn("coordinator failed to repair its plan", zap.Error(err))
				return single(t.prompt), nil
			}
			return nil, err
		}
		meter.ModelCall(resp.Usage)
		t.emitUsage("", resp.Usage)
		if resp.Text != "" {
			t.emit(api.TaskEvent{Kind: api.EventMessage, Text: resp.Text})
		}
		var call *clients.ToolCall
		for i := range resp.ToolCalls {
			if resp.ToolCalls[i].Name == "plan" {
				call = &resp.ToolCalls[i]
				break
			}
		}
		if call == nil {
			return single(t.prompt), nil
		}
		subs, verr := t.validatePlan(call.Arguments)
		if verr == nil {
			return subs, nil
		}
		t.log.Info("invalid plan", zap.Int("attempt", attempt), zap.Error(verr))
		t.emit(api.TaskEvent{Kind: api.EventMessage, Text: "The plan was not valid: " + verr.Error()})
		if attempt == 2 {
			break
		}
		results := make([]clients.ToolResult, 0, len(resp.ToolCalls))
		for _, c := range resp.ToolCalls {
			msg := "Not run: only plan is available to the coordinator."
			if c.ID == call.ID {
				msg = "The plan is not valid: " + verr.Error() + ". Call plan again with a corrected plan."
			}
			results = append(results, clients.ToolResult{CallID: c.ID, Content: msg, IsError: true})
		}
		req.Messages = append(req.Messages,
			clients.Message{Role: clients.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls},
			clients.Message{Role: clients.RoleTool, ToolResults: results})
	}
	return single(t.prompt), nil
}

func single(prompt string) []*subtask {
	return []*subtask{{Subtask: api.Subtask{ID: "1", Content: prompt, State: api.SubtaskPending, DependsOn: []string{}}}}
}

// complete makes one model call, bounded by timeouts.modelMs, streaming its
// text as messageDelta events.
func (t *task) complete(ctx context.Context, req *clients.Request, agent string) (*clients.Response, error) {
	if d := t.settings.Timeouts.Model(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	sub := ""
	if agent != clients.AgentCoordinator {
		sub = agent
	}
	// A secret the model repeats may be split across deltas: the stream
	// redacts it whole.
	stream := t.e.cfg.Redactor.Stream()
	emit := func(text string) {
		if text != "" {
			t.emit(api.TaskEvent{Kind: api.EventMessageDelta, SubtaskID: sub, Text: text})
		}
	}
	onDelta := func(d clients.Delta) {
		if d.Restart {
			stream.Reset()
		}
		emit(stream.Write(d.Text))
	}
	resp, err := t.model.Complete(ctx, req, onDelta)
	emit(stream.Flush())
	return resp, err
}

func (t *task) emitUsage(sub string, u api.Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	total := t.e.cfg.Tracking.Usage.Task(t.id)
	t.emit(api.TaskEvent{Kind: api.EventUsage, SubtaskID: sub, InputTokens: total.InputTokens, OutputTokens: total.OutputTokens})
}
