package workforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/tracking/usage"
)

// Compaction (docs/WORKFORCE.md, Compaction): an agent whose conversation
// nears the model's context window, or whose provider says it is too long,
// goes on from a shorter one. The old tool outputs go first (a note says
// which call gave each, so the model can call it again); when that is not
// enough, the model summarises the older turns, and the conversation goes
// on from its task, the summary and the last turns. The session's messages
// and the trace never lose anything: they are written as the task goes.

// Bounds of compaction.
const (
	// keptRounds are the newest rounds (an answer of the model and the
	// results of its calls) a compaction keeps whole.
	keptRounds = 2
	// droppedOutput is the size of a tool output past which an old one
	// is dropped.
	droppedOutput = 256
	// imageTokens is what an image is counted as in an estimate.
	imageTokens = 1600
	// summaryChars bounds the summary kept.
	summaryChars = 16000
)

// summaryOpen begins the summary in an agent's first message.
const summaryOpen = "<summary of your earlier turns, which were dropped to fit your context window>"

// summaryRequest asks the model for the summary of its older turns.
const summaryRequest = `The conversation is about to be shortened to fit your context window: the turns above, after your task, will be replaced by your summary of them. Write that summary now, as plain text, without calling a tool: what you read and found (files, names, facts you still need), what you changed, what you decided and why, and what is still to do. Be specific and brief.`

// contextWindow is the model's context window in tokens: the prices
// setting's contextWindow for the model, else what the provider's model
// list says, else the price table's; 0 when none says.
func (t *task) contextWindow(ctx context.Context) int64 {
	if p, ok := usage.UsersPrice(t.spec, t.settings.Prices); ok && p.ContextWindow > 0 {
		return p.ContextWindow
	}
	if n := clients.ContextWindow(ctx, t.model); n > 0 {
		return n
	}
	p, _ := usage.PriceOf(t.spec, nil)
	return p.ContextWindow
}

// conversation is what compaction knows of one agent's requests.
type conversation struct {
	t     *task
	agent string // "" the coordinator, else the subtask id
	meter *usage.Meter
	// tokens and chars are the input tokens of the last call and the
	// characters of its request: their ratio turns characters into
	// tokens (0 tokens: four characters a token).
	tokens, chars int64
	// task is the agent's first message as it was before its first
	// summary, which each summary is added to (a summary replaces the
	// one before it).
	task *clients.Message
}

func (t *task) conversation(agent string, meter *usage.Meter) *conversation {
	return &conversation{t: t, agent: agent, meter: meter}
}

// called records what a call of req used.
func (c *conversation) called(req *clients.Request, u api.Usage) {
	if u.InputTokens > 0 {
		c.tokens, c.chars = u.InputTokens, requestChars(req)
	}
}

// estimate is the tokens req would use: its characters at the ratio the
// last call measured, or at four characters a token.
func (c *conversation) estimate(req *clients.Request) int64 {
	n := requestChars(req)
	if c.tokens > 0 && c.chars > 0 {
		return n * c.tokens / c.chars
	}
	return (n + 3) / 4
}

// requestChars counts the characters of a request that the model reads.
func requestChars(req *clients.Request) int64 {
	n := int64(len(req.System))
	for _, tl := range req.Tools {
		n += int64(len(tl.Name) + len(tl.Description) + len(tl.Parameters))
	}
	for _, m := range req.Messages {
		n += int64(len(m.Text)) + int64(len(m.Images))*imageTokens*4
		for _, tc := range m.ToolCalls {
			n += int64(len(tc.Name) + len(tc.Arguments))
		}
		for _, r := range m.ToolResults {
			n += int64(len(r.Content)) + int64(len(r.Images))*imageTokens*4
		}
		for _, th := range m.Thinking {
			n += int64(len(th.Text) + len(th.Encrypted) + len(th.Redacted))
		}
	}
	return n
}

// call makes the agent's model call of req (task.complete), compacting
// req first when it reaches the threshold, and again, then retrying,
// while the provider says it is too long and something can be compacted.
// The call's usage is counted and told.
func (c *conversation) call(ctx context.Context, req *clients.Request) (*clients.Response, error) {
	t := c.t
	agent := c.agent
	if agent == "" {
		agent = clients.AgentCoordinator
	}
	c.fit(ctx, req)
	resp, err := t.complete(ctx, req, agent)
	for tries := 0; err != nil && errors.Is(err, clients.ErrContextTooLong) && ctx.Err() == nil && tries < 3; tries++ {
		if !c.tooLong(ctx, req) {
			break
		}
		resp, err = t.complete(ctx, req, agent)
	}
	if err != nil {
		return nil, err
	}
	c.called(req, resp.Usage)
	t.emitUsage(c.agent, c.meter.ModelCall(resp.Usage))
	return resp, nil
}

// fit compacts req when it reaches the compaction threshold of the
// model's window.
func (c *conversation) fit(ctx context.Context, req *clients.Request) {
	t := c.t
	th := t.settings.Compaction.Threshold
	if t.window <= 0 || th <= 0 {
		return
	}
	limit := int64(float64(t.window) * th)
	if c.estimate(req) < limit {
		return
	}
	// Compacted to three quarters of the threshold, so the next turns
	// have room before the next compaction.
	c.compact(ctx, req, limit*3/4, "it reached "+percent(th)+" of the model's context window")
}

// tooLong compacts req after the provider said it was too long; it
// reports whether anything could be compacted.
func (c *conversation) tooLong(ctx context.Context, req *clients.Request) bool {
	target := int64(0) // unknown: summarise
	if c.t.window > 0 {
		target = c.t.window / 2
	}
	c.tokens, c.chars = 0, 0 // the provider's count is not known
	return c.compact(ctx, req, target, "the provider said it is longer than the model's context window")
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }

// compact shortens req.Messages towards target tokens (0: as far as a
// summary goes): first the old tool outputs, then, when that is not
// enough, a summary of the older turns. The newest rounds and the
// agent's task (its first message) stay whole. It reports whether the
// conversation was shortened, and says so in a compacted event.
func (c *conversation) compact(ctx context.Context, req *clients.Request, target int64, why string) bool {
	t := c.t
	msgs := req.Messages
	cut := keptFrom(msgs, keptRounds)
	if cut <= 1 {
		cut = keptFrom(msgs, 1) // too few rounds for two: the last alone stays whole
	}
	if cut <= 1 {
		return false // nothing between the task and the last round
	}
	before := c.estimate(req)
	older := append([]clients.Message(nil), msgs[1:cut]...)
	dropped := dropOutputs(older)
	var did []string
	if dropped > 0 {
		did = append(did, fmt.Sprintf("dropped %d old tool outputs", dropped))
	}
	next := append(append([]clients.Message{msgs[0]}, older...), msgs[cut:]...)
	if dropped == 0 || target == 0 || c.estimate(&clients.Request{System: req.System, Tools: req.Tools, Messages: next}) > target {
		// The summary is made of the turns as they are, which the
		// provider's cache holds, when they fit the window; else of
		// them without their old outputs.
		told := append([]clients.Message{msgs[0]}, older...)
		if whole := (&clients.Request{System: req.System, Tools: req.Tools, Messages: msgs[:cut]}); t.window > 0 && c.estimate(whole) < t.window*9/10 {
			told = msgs[:cut]
		}
		summary, made := c.summarise(ctx, req, told)
		// The summary replaces an earlier one: it was made from it.
		if c.task == nil {
			task := msgs[0]
			c.task = &task
		}
		first := *c.task
		first.Text = strings.TrimRight(first.Text, "\n") + "\n\n" + summaryOpen + "\n" + summary + "\n</summary>"
		next = append([]clients.Message{first}, msgs[cut:]...)
		if made {
			did = append(did, fmt.Sprintf("summarised %d earlier messages", cut-1))
		} else {
			did = append(did, fmt.Sprintf("replaced %d earlier messages with the calls made in them (the model gave no summary)", cut-1))
		}
	}
	req.Messages = next
	after := c.estimate(req)
	text := fmt.Sprintf("Compacted the context (%s): %s.", why, strings.Join(did, " and "))
	t.log.Info("context compacted", zap.String("agent", c.agent), zap.Int64("before", before), zap.Int64("after", after), zap.Strings("did", did))
	t.emit(api.TaskEvent{Kind: api.EventCompacted, SubtaskID: c.agent, TokensBefore: before, TokensAfter: after, Text: text})
	return true
}

// keptFrom is the index of the first message of the newest rounds
// rounds: the rounds begin at the model's answers. 0 when there are not
// that many after the first message.
func keptFrom(msgs []clients.Message, rounds int) int {
	n := 0
	for i := len(msgs) - 1; i >= 1; i-- {
		if msgs[i].Role == clients.RoleAssistant {
			n++
			if n == rounds {
				return i
			}
		}
	}
	return 0
}

// dropOutputs replaces the long tool outputs (and images) of msgs, a copy,
// with a note naming the call that gave each; it returns how many.
func dropOutputs(msgs []clients.Message) int {
	calls := map[string]clients.ToolCall{}
	n := 0
	for i := range msgs {
		m := &msgs[i]
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
		}
		if m.Role != clients.RoleTool {
			continue
		}
		results := append([]clients.ToolResult(nil), m.ToolResults...)
		for j := range results {
			r := &results[j]
			if len(r.Content) <= droppedOutput && len(r.Images) == 0 {
				continue
			}
			tc := calls[r.CallID]
			r.Content = fmt.Sprintf("[The output of %s(%s) was dropped to fit the context window: %d characters. Call it again if you need it.]",
				tc.Name, oneLine(string(tc.Arguments), 200), len(r.Content))
			r.Images = nil
			n++
		}
		m.ToolResults = results
	}
	return n
}

// summarise asks the model for a summary of msgs (the task and the
// turns to drop), with req's system prompt and tools: the prefix the
// provider's cache holds. A model that fails or answers nothing gets a
// summary made of the calls it made (made is false).
func (c *conversation) summarise(ctx context.Context, req *clients.Request, msgs []clients.Message) (summary string, made bool) {
	t := c.t
	ask := append([]clients.Message(nil), msgs...)
	last := ask[len(ask)-1]
	if last.Role == clients.RoleAssistant {
		ask = append(ask, clients.Message{Role: clients.RoleUser, Text: summaryRequest})
	} else {
		last.Text = strings.TrimSpace(last.Text + "\n\n" + summaryRequest)
		ask[len(ask)-1] = last
	}
	sreq := &clients.Request{Agent: req.Agent + "/compact", Run: req.Run, System: req.System, Tools: req.Tools,
		Messages: ask, CacheKey: req.CacheKey, MaxTokens: 4096}
	if th := t.settings.Thinking; th.Enabled {
		// The turns may hold thinking, which the provider wants back as
		// it was asked for.
		sreq.Thinking = &clients.Thinking{BudgetTokens: th.BudgetTokens}
	}
	cctx := ctx
	if d := t.settings.Timeouts.Model(); d > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	resp, err := t.model.Complete(cctx, sreq, nil)
	if err == nil {
		t.emitUsage(c.agent, c.meter.ModelCall(resp.Usage))
		if s := strings.TrimSpace(resp.Text); s != "" {
			return clip(t.e.cfg.Redactor.String(s), summaryChars), true
		}
	} else if ctx.Err() == nil && !errors.Is(err, clients.ErrScriptExhausted) {
		t.log.Warn("the model gave no summary; the calls it made stand for one", zap.String("agent", c.agent), zap.Error(err))
	}
	return callsSummary(msgs[1:]), false
}

// callsSummary is the summary of turns the model could not summarise: the
// calls it made, one a line, and what it said.
func callsSummary(msgs []clients.Message) string {
	var b strings.Builder
	b.WriteString("(No summary could be made; the calls you made, oldest first:)\n")
	for _, m := range msgs {
		if m.Role != clients.RoleAssistant {
			continue
		}
		if s := strings.TrimSpace(m.Text); s != "" {
			fmt.Fprintf(&b, "- you said: %s\n", oneLine(s, 300))
		}
		for _, tc := range m.ToolCalls {
			args := string(tc.Arguments)
			var v any
			if json.Unmarshal(tc.Arguments, &v) == nil {
				if b, err := json.Marshal(v); err == nil {
					args = string(b)
				}
			}
			fmt.Fprintf(&b, "- %s(%s)\n", tc.Name, oneLine(args, 200))
		}
	}
	return clip(strings.TrimSuffix(b.String(), "\n"), summaryChars)
}
