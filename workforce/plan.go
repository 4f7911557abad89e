package workforce

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tracking/usage"
)

// plan asks the coordinator for a plan. An invalid plan goes back to the
// model once with the reason; a second invalid plan, or an answer without
// the plan tool, becomes one subtask holding the whole prompt (docs/WORKFORCE.md, tools).
// It fails only when the model call itself fails.
func (t *task) plan(ctx context.Context) ([]*subtask, error) {
	ws := t.e.cfg.Tracking
	// The coordinator's context holds what the user gave and named.
	tr := ws.Heat.Tracker(t.id, clients.AgentCoordinator)
	defer tr.Close()
	t.userFiles(tr)
	meter := ws.Usage.Meter(t.sessionID, t.id, "", tr).Priced(t.price)
	req := &clients.Request{
		Agent:    clients.AgentCoordinator,
		Run:      t.runN,
		System:   t.coordinatorPrompt(t.instr.current(ctx, "").text),
		Tools:    []clients.Tool{planTool()},
		Messages: []clients.Message{t.userMessage(t.coordinatorRequest())},
		CacheKey: t.sessionID,
	}
	conv := t.conversation("", meter)
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := conv.call(ctx, req)
		if err != nil {
			if attempt > 1 && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
				// The model could not repair its plan: do the whole prompt at once.
				t.log.Warn("coordinator failed to repair its plan", zap.Error(err))
				return single(t.prompt), nil
			}
			return nil, err
		}
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
			clients.Message{Role: clients.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Thinking: resp.Thinking},
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
	if th := t.settings.Thinking; th.Enabled {
		req.Thinking = &clients.Thinking{BudgetTokens: th.BudgetTokens}
	}
	// A secret the model repeats may be split across deltas: the streams
	// (one for its text, one for its thinking) redact it whole.
	stream, thinking := t.e.cfg.Redactor.Stream(), t.e.cfg.Redactor.Stream()
	emit := func(kind, text string) {
		if text != "" {
			t.emit(api.TaskEvent{Kind: kind, SubtaskID: sub, Text: text})
		}
	}
	onDelta := func(d clients.Delta) {
		if d.Restart {
			stream.Reset()
			thinking.Reset()
		}
		emit(api.EventThinking, thinking.Write(d.Thinking))
		if d.Text != "" {
			// The thinking before the text ends with it.
			emit(api.EventThinking, thinking.Flush())
		}
		emit(api.EventMessageDelta, stream.Write(d.Text))
	}
	resp, err := t.model.Complete(ctx, req, onDelta)
	emit(api.EventThinking, thinking.Flush())
	emit(api.EventMessageDelta, stream.Flush())
	if n := imagesIn(req); n > 0 && errors.Is(err, clients.ErrBadRequest) {
		// A model without vision refuses the request; its provider's
		// words say so, or not clearly.
		err = fmt.Errorf("%w (the request carried %d image(s): the model may not take images)", err, n)
	}
	return resp, err
}

// imagesIn counts the images of a request.
func imagesIn(req *clients.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Images)
		for _, r := range m.ToolResults {
			n += len(r.Images)
		}
	}
	return n
}

// emitUsage reports a model call of agent sub ("" is the coordinator) as
// the meter counted it: the subtask's usage is updated, and a usage event
// carries the task's totals (and cost, when known) with the context the
// call used.
func (t *task) emitUsage(sub string, call api.Usage) {
	if call.Empty() {
		return
	}
	counter := t.e.cfg.Tracking.Usage
	total := counter.Task(t.id)
	var su api.Usage
	if sub != "" {
		su = counter.Subtask(t.id, sub)
	}
	t.mutate(func() []api.TaskEvent {
		if s := t.findLocked(sub); s != nil && sub != "" {
			s.Usage = &su
		}
		return []api.TaskEvent{{Kind: api.EventUsage, SubtaskID: sub, InputTokens: total.InputTokens, OutputTokens: total.OutputTokens,
			CacheReadTokens: total.CacheReadTokens, CacheWriteTokens: total.CacheWriteTokens,
			Cost: total.Cost, ContextTokens: call.ContextTokens, ContextWindow: call.ContextWindow}}
	})
}

// priceOf is the price of the model spec under the settings' prices
// (tracking/usage).
func priceOf(spec string, s api.Settings) api.Price {
	p, _ := usage.PriceOf(spec, s.Prices)
	return p
}
