package workforce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/tracking/heat"
	"github.com/agentls/agentls/tracking/usage"
)

// worker is the model-and-tools loop of one subtask.
type worker struct {
	t       *task
	sub     *subtask
	agent   *editing.Agent
	tracker *heat.Tracker
	meter   *usage.Meter
	log     *zap.Logger
	intent  string // the selected intent id, "" when none
	// offered are the tools of the last turn (offer).
	offered []clients.Tool
	// extra are the MCP tools of the last list, by the name the model
	// calls (ToolSource).
	extra map[string]api.MCPTool
	// ctx is the subtask's: it ends when the subtask does.
	ctx context.Context
	// toolMu runs one tool call at a time: the worker's own and those an
	// external agent makes through the bridge (bridge.go).
	toolMu sync.Mutex
	// calls counts the tool calls made (under toolMu): the number of a
	// Call's ID.
	calls int
	// revokes end the bridge grants of the subtask when it ends.
	revokes []func()
	// shareMCP: the bridge serves its agent the worker's MCP tools too
	// (ShareMCP).
	shareMCP atomic.Bool
	// toldNoDiag are the languages the worker was told its changes come
	// without diagnostics for (under toolMu).
	toldNoDiag map[string]bool
}

// worker sets up the worker of subtask id: its editing agent, heat tracker
// and usage meter.
func (t *task) worker(ctx context.Context, id string) *worker {
	ws := t.e.cfg.Tracking
	t.mu.Lock()
	s := t.findLocked(id)
	tr := ws.Heat.Tracker(t.id, id)
	t.trackers[id] = tr
	t.mu.Unlock()
	t.userFiles(tr) // the worker's first message holds them too
	w := &worker{
		t: t, sub: s, ctx: ctx,
		agent:   t.editTask.Agent(id),
		tracker: tr,
		meter:   ws.Usage.Meter(t.sessionID, t.id, id, tr).Priced(t.price),
		log:     t.log.With(zap.String("subtask", id)),
	}
	if t.params.IntentID != "" {
		if in, err := ws.Intents.Get(t.params.IntentID); err == nil {
			w.intent = in.ID
			w.agent.SetScope(in.Scope)
		}
	}
	t.mu.Lock()
	t.workers[id] = w
	t.mu.Unlock()
	return w
}

// end releases what the worker held: its place among the running
// workers, its bridge grants, its heat tracker.
func (w *worker) end() {
	t := w.t
	t.mu.Lock()
	delete(t.trackers, w.sub.ID)
	delete(t.workers, w.sub.ID)
	revokes := w.revokes
	w.revokes = nil
	t.mu.Unlock()
	for _, revoke := range revokes {
		revoke()
	}
	w.tracker.Close()
}

// errNoFinish: the worker ran out of turns.
var errNoFinish = errors.New("the worker did not finish")

// run loops until finish, maxTurns, an error of the model, or ctx ends. It
// returns finish's summary.
func (w *worker) run(ctx context.Context) (string, error) {
	t := w.t
	defer w.end()
	instr := t.instr.current(ctx, w.sub.ID)
	conv := t.conversation(w.sub.ID, w.meter)
	req := &clients.Request{
		Agent:    w.sub.ID,
		Run:      t.runN,
		System:   t.workerPrompt(instr.text),
		Messages: []clients.Message{t.userMessage(t.workerTask(w.sub))},
		CacheKey: t.sessionID,
	}
	for turn := 1; turn <= t.e.cfg.MaxTurns; turn++ {
		if turn > 1 {
			// The instructions are read again at every turn: an edit
			// of one, saved or not, reaches the next turn.
			if now := t.instr.current(ctx, w.sub.ID); now.key != instr.key {
				instr = now
				req.System = t.workerPrompt(instr.text)
			}
		}
		// The MCP servers start on the first worker's first turn; their
		// tools may change between turns (tools/list_changed).
		req.Tools = w.offer(ctx)
		if ctx.Err() != nil {
			return "", context.Cause(ctx)
		}
		resp, err := conv.call(ctx, req)
		if err != nil {
			if ctx.Err() != nil {
				return "", context.Cause(ctx)
			}
			return "", fmt.Errorf("model: %w", err)
		}
		if resp.Text != "" {
			t.emit(api.TaskEvent{Kind: api.EventMessage, SubtaskID: w.sub.ID, Text: resp.Text})
			t.journal.add(api.SessionMessage{Role: "assistant", Text: resp.Text, TaskID: t.id, SubtaskID: w.sub.ID})
		}
		req.Messages = append(req.Messages, clients.Message{Role: clients.RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Thinking: resp.Thinking})
		if len(resp.ToolCalls) == 0 {
			if strings.TrimSpace(resp.Text) != "" {
				// A model that answers in prose without a tool is done: its
				// answer is the summary.
				return resp.Text, nil
			}
			req.Messages = append(req.Messages, clients.Message{Role: clients.RoleUser,
				Text: "Go on with the tools, or call finish with a summary when the subtask is done."})
			continue
		}
		results := make([]clients.ToolResult, 0, len(resp.ToolCalls))
		summary, finished := "", false
		for _, c := range resp.ToolCalls {
			if finished {
				results = append(results, clients.ToolResult{CallID: c.ID, Content: "Not run: finish was called before it.", IsError: true})
				continue
			}
			r := w.call(ctx, c)
			if ctx.Err() != nil {
				return "", context.Cause(ctx)
			}
			results = append(results, clients.ToolResult{CallID: c.ID, Content: r.content, IsError: r.isErr, Images: r.images})
			if r.finish {
				summary, finished = r.summary, true
			}
		}
		if finished {
			return summary, nil
		}
		req.Messages = append(req.Messages, clients.Message{Role: clients.RoleTool, ToolResults: results})
	}
	return "", fmt.Errorf("%w within %d turns (maxTurns)", errNoFinish, t.e.cfg.MaxTurns)
}
