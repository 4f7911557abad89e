package workforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// planArgs are the arguments of the plan tool (docs/WORKFORCE.md, tools).
type planArgs struct {
	Subtasks []struct {
		ID        string   `json:"id"`
		Content   string   `json:"content"`
		DependsOn []string `json:"dependsOn"`
		Role      string   `json:"role"`
	} `json:"subtasks"`
}

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

// validatePlan checks a plan: at least one and at most MaxSubtasks
// subtasks, unique non-empty ids, content, known dependencies, no cycle.
func (t *task) validatePlan(raw json.RawMessage) ([]*subtask, error) {
	var args planArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("arguments are not {subtasks: [{id, content, dependsOn?, role?}]}: %v", err)
	}
	if len(args.Subtasks) == 0 {
		return nil, errors.New("subtasks is empty")
	}
	if max := t.e.cfg.MaxSubtasks; len(args.Subtasks) > max {
		return nil, fmt.Errorf("%d subtasks; at most %d are allowed, merge some", len(args.Subtasks), max)
	}
	subs := make([]*subtask, 0, len(args.Subtasks))
	ids := map[string]bool{}
	for i, a := range args.Subtasks {
		id := strings.TrimSpace(a.ID)
		switch {
		case id == "":
			return nil, fmt.Errorf("subtask %d has no id", i+1)
		case ids[id]:
			return nil, fmt.Errorf("id %q is used twice", id)
		case strings.TrimSpace(a.Content) == "":
			return nil, fmt.Errorf("subtask %q has no content", id)
		}
		ids[id] = true
		deps := []string{}
		for _, d := range a.DependsOn {
			d = strings.TrimSpace(d)
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		subs = append(subs, &subtask{Subtask: api.Subtask{ID: id, Content: a.Content, State: api.SubtaskPending, DependsOn: deps, Role: a.Role}})
	}
	for _, s := range subs {
		for _, d := range s.DependsOn {
			switch {
			case d == s.ID:
				return nil, fmt.Errorf("subtask %q depends on itself", s.ID)
			case !ids[d]:
				return nil, fmt.Errorf("subtask %q depends on %q, which is not in the plan", s.ID, d)
			}
		}
	}
	if cycle := findCycle(subs); cycle != nil {
		return nil, fmt.Errorf("the dependencies form a cycle: %s", strings.Join(cycle, " → "))
	}
	return subs, nil
}

// findCycle returns the ids of a dependency cycle, or nil.
func findCycle(subs []*subtask) []string {
	deps := map[string][]string{}
	for _, s := range subs {
		deps[s.ID] = s.DependsOn
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range deps[id] {
			switch color[d] {
			case grey:
				i := slices.Index(stack, d)
				return append(append([]string{}, stack[i:]...), d)
			case white:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, s := range subs {
		if color[s.ID] == white {
			if c := visit(s.ID); c != nil {
				return c
			}
		}
	}
	return nil
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
