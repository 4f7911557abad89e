package clients

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"go.uber.org/zap"
)

// anthropicModel speaks Anthropic's messages API.
type anthropicModel struct {
	ep     *endpoint
	client anthropic.Client
	retry  *retrier
	log    *zap.Logger
	// win keeps the context window its provider's list says (ContextWindow).
	win windowCache
}

func newAnthropic(ep *endpoint, key string, hc *http.Client, o *Options) *anthropicModel {
	return &anthropicModel{
		ep: ep,
		client: anthropic.NewClient(
			// The spec was resolved from the environment we were given;
			// the SDK must not read credentials or profiles of its own.
			option.WithoutEnvironmentDefaults(),
			option.WithBaseURL(ep.baseURL),
			option.WithAPIKey(key),
			option.WithHTTPClient(hc),
			option.WithMaxRetries(0), // retries are ours: classified, bounded, reported
			option.WithoutOpenTelemetry(),
		),
		retry: newRetrier(o),
		log:   o.Logger.With(zap.String("provider", ep.provider), zap.String("model", ep.model)),
	}
}

func (m *anthropicModel) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	em := &emitter{fn: onDelta}
	return m.retry.do(ctx, em, func(ctx context.Context) (*Response, error) {
		m.log.Debug("model call", zap.String("agent", req.Agent), zap.Int("messages", len(req.Messages)))
		return m.stream(ctx, params, em)
	})
}

func (m *anthropicModel) params(req *Request) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: anthropic.Model(m.ep.model), MaxTokens: maxTokens(req)}
	if req.Thinking != nil {
		// The budget is part of max_tokens, which must exceed it: the
		// answer keeps its own bound on top of it.
		budget := int64(req.Thinking.BudgetTokens)
		p.Thinking = anthropic.ThinkingConfigParamOfEnabled(budget)
		p.MaxTokens += budget
	}
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System}}
	}
	// The index in p.Messages of each message of the user's side (the
	// user's words and tool results): the breakpoints go on their ends.
	var userTurns []int
	for _, msg := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		switch msg.Role {
		case RoleUser:
			blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			for _, img := range msg.Images {
				blocks = append(blocks, anthropic.NewImageBlockBase64(img.MimeType, base64.StdEncoding.EncodeToString(img.Data)))
			}
			userTurns = append(userTurns, len(p.Messages))
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		case RoleAssistant:
			// Its thinking first, as the model gave it: the API checks the
			// signatures, and wants them on a turn that called a tool.
			for _, th := range msg.Thinking {
				if th.Redacted != "" {
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(th.Redacted))
				} else if th.Signature != "" {
					blocks = append(blocks, anthropic.NewThinkingBlock(th.Signature, th.Text))
				}
			}
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			for _, c := range msg.ToolCalls {
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, arguments(c.Arguments), c.Name))
			}
			if len(blocks) == 0 {
				// The API refuses an empty assistant turn; an empty answer
				// said nothing.
				blocks = append(blocks, anthropic.NewTextBlock("(no answer)"))
			}
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		case RoleTool:
			for _, r := range msg.ToolResults {
				blocks = append(blocks, anthropicToolResult(r))
			}
			if msg.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(msg.Text))
			}
			userTurns = append(userTurns, len(p.Messages))
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		default:
			return p, m.ep.errorf(ErrBadRequest, 0, false, nil, "message role %q is not user, assistant or tool", msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := schemaMap(t)
		if err != nil {
			return p, m.ep.errorf(ErrBadRequest, 0, false, err, "%v", err)
		}
		in := anthropic.ToolInputSchemaParam{Properties: schema["properties"], ExtraFields: map[string]any{}}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					in.Required = append(in.Required, s)
				}
			}
		}
		for k, v := range schema {
			if k != "properties" && k != "required" && k != "type" {
				in.ExtraFields[k] = v
			}
		}
		tp := &anthropic.ToolParam{Name: t.Name, InputSchema: in}
		if t.Description != "" {
			tp.Description = anthropic.String(t.Description)
		}
		p.Tools = append(p.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	cacheBreakpoints(&p, userTurns)
	return p, nil
}

// cacheBreakpoints marks where Anthropic's prompt cache may end
// (docs/MODELS.md, Prompt caching), within the API's four: the tools (the
// cache's first part), the system prompt (tools and system, the prefix
// every turn, every worker of a task and every task of a session share),
// the newest turn (written now, for the next request to read), and the
// turn before it (written by the previous request, read now). The cache
// reads the longest marked prefix it holds; a prefix shorter than the
// model's least cacheable one is not cached, and costs nothing more.
func cacheBreakpoints(p *anthropic.MessageNewParams, userTurns []int) {
	mark := func(cc *anthropic.CacheControlEphemeralParam) {
		if cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if n := len(p.Tools); n > 0 && p.Tools[n-1].OfTool != nil {
		mark(&p.Tools[n-1].OfTool.CacheControl)
	}
	if n := len(p.System); n > 0 {
		mark(&p.System[n-1].CacheControl)
	}
	// The newest turn and the one before it: the ends of the last two
	// messages of the user's side (an empty text block takes no mark).
	for i := len(userTurns) - 1; i >= 0 && i >= len(userTurns)-2; i-- {
		u := p.Messages[userTurns[i]].OfUser
		if u == nil || len(u.Content) == 0 {
			continue
		}
		if last := u.Content[len(u.Content)-1]; last.OfText == nil || last.OfText.Text != "" {
			mark(last.GetCacheControl())
		}
	}
}

// anthropicToolResult is a tool result with its text and, after it, its
// images: Anthropic's tool results take image blocks.
func anthropicToolResult(r ToolResult) anthropic.ContentBlockParamUnion {
	b := anthropic.NewToolResultBlock(r.CallID, r.Content, r.IsError)
	for _, img := range r.Images {
		b.OfToolResult.Content = append(b.OfToolResult.Content, anthropic.ToolResultBlockParamContentUnion{
			OfImage: &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
				OfBase64: &anthropic.Base64ImageSourceParam{MediaType: anthropic.Base64ImageSourceMediaType(img.MimeType), Data: base64.StdEncoding.EncodeToString(img.Data)},
			}},
		})
	}
	return b
}

type anthropicBlock struct {
	kind     string // "text", "tool_use", "thinking", "redacted_thinking", or another kind we pass over
	id, name string
	text     strings.Builder
	call     int // index among tool calls
	// signature seals a thinking block; data is a redacted one's.
	signature, data string
}

func (m *anthropicModel) stream(ctx context.Context, params anthropic.MessageNewParams, em *emitter) (*Response, error) {
	st := m.client.Messages.NewStreaming(ctx, params)
	defer st.Close()
	var (
		resp     Response
		text     strings.Builder
		blocks   = map[int64]*anthropicBlock{}
		order    []*anthropicBlock
		calls    int
		finished bool
	)
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			resp.Usage.InputTokens = u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
			resp.Usage.CacheReadTokens, resp.Usage.CacheWriteTokens = u.CacheReadInputTokens, u.CacheCreationInputTokens
			resp.Usage.OutputTokens = u.OutputTokens
		case "content_block_start":
			b := &anthropicBlock{kind: ev.ContentBlock.Type}
			blocks[ev.Index] = b
			order = append(order, b)
			switch b.kind {
			case "text":
				if ev.ContentBlock.Text != "" {
					b.text.WriteString(ev.ContentBlock.Text)
					em.emit(Delta{Text: ev.ContentBlock.Text})
				}
			case "tool_use":
				b.id, b.name, b.call = ev.ContentBlock.ID, ev.ContentBlock.Name, calls
				calls++
				em.emit(Delta{ToolCall: &ToolCallDelta{Index: b.call, ID: b.id, Name: b.name}})
			case "thinking":
				if ev.ContentBlock.Thinking != "" {
					b.text.WriteString(ev.ContentBlock.Thinking)
					em.emit(Delta{Thinking: ev.ContentBlock.Thinking})
				}
				b.signature = ev.ContentBlock.Signature
			case "redacted_thinking":
				b.data = ev.ContentBlock.Data
			}
		case "content_block_delta":
			b := blocks[ev.Index]
			if b == nil {
				return nil, m.ep.errorf(ErrBadResponse, 0, false, nil, "content_block_delta for block %d that never started", ev.Index)
			}
			switch {
			case ev.Delta.Type == "text_delta" && b.kind == "text":
				b.text.WriteString(ev.Delta.Text)
				em.emit(Delta{Text: ev.Delta.Text})
			case ev.Delta.Type == "input_json_delta" && b.kind == "tool_use":
				b.text.WriteString(ev.Delta.PartialJSON)
				em.emit(Delta{ToolCall: &ToolCallDelta{Index: b.call, Arguments: ev.Delta.PartialJSON}})
			case ev.Delta.Type == "thinking_delta" && b.kind == "thinking":
				b.text.WriteString(ev.Delta.Thinking)
				em.emit(Delta{Thinking: ev.Delta.Thinking})
			case ev.Delta.Type == "signature_delta" && b.kind == "thinking":
				b.signature += ev.Delta.Signature
			}
		case "message_delta":
			if ev.Delta.StopReason != "" {
				resp.StopReason = anthropicStop(ev.Delta.StopReason)
			}
			if ev.Usage.JSON.InputTokens.Valid() && ev.Usage.InputTokens > 0 {
				resp.Usage.InputTokens = ev.Usage.InputTokens + ev.Usage.CacheCreationInputTokens + ev.Usage.CacheReadInputTokens
				resp.Usage.CacheReadTokens, resp.Usage.CacheWriteTokens = ev.Usage.CacheReadInputTokens, ev.Usage.CacheCreationInputTokens
			}
			if ev.Usage.OutputTokens > 0 {
				resp.Usage.OutputTokens = ev.Usage.OutputTokens // cumulative
			}
		case "message_stop":
			finished = true
		}
	}
	if err := st.Err(); err != nil {
		return nil, m.classify(ctx, err)
	}
	if ctx.Err() != nil {
		return nil, cancelled(ctx, m.ep.provider, m.ep.model, ctx.Err())
	}
	if !finished {
		return nil, m.ep.incomplete()
	}
	for _, b := range order {
		switch b.kind {
		case "thinking":
			resp.Thinking = append(resp.Thinking, ThinkingBlock{Text: b.text.String(), Signature: b.signature})
		case "redacted_thinking":
			resp.Thinking = append(resp.Thinking, ThinkingBlock{Redacted: b.data})
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			args := json.RawMessage(b.text.String())
			if strings.TrimSpace(string(args)) == "" {
				args = json.RawMessage("{}")
			}
			if !json.Valid(args) {
				if resp.StopReason == StopMaxTokens {
					return nil, m.ep.errorf(ErrBadResponse, 0, false, nil,
						"the answer hit the token limit in the middle of the arguments of tool %q", b.name)
				}
				return nil, m.ep.errorf(ErrBadResponse, 0, false, nil, "the arguments of tool %q are not valid JSON", b.name)
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.id, Name: b.name, Arguments: args})
		}
	}
	resp.Text = text.String()
	if resp.StopReason == "" {
		resp.StopReason = StopEndTurn
	}
	return &resp, nil
}

func anthropicStop(r anthropic.StopReason) StopReason {
	switch r {
	case anthropic.StopReasonEndTurn, anthropic.StopReasonStopSequence:
		return StopEndTurn
	case anthropic.StopReasonToolUse:
		return StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return StopMaxTokens
	default:
		return StopOther
	}
}

func (m *anthropicModel) classify(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return cancelled(ctx, m.ep.provider, m.ep.model, ctx.Err())
	}
	var ae *anthropic.Error
	if errors.As(err, &ae) {
		f := apiFailure{errType: string(ae.Type()), message: ae.Message, cause: ae}
		if ae.StatusCode >= 400 {
			f.status = ae.StatusCode // a 200 here is an error event in the stream
		}
		if ae.Response != nil && f.status != 0 {
			f.header = ae.Response.Header
		}
		if f.message == "" {
			f.message = errorMessageOf([]byte(ae.RawJSON()))
		}
		return m.ep.classifyAPI(f)
	}
	// An error event the SDK could not decode into an *Error.
	if msg := err.Error(); strings.HasPrefix(msg, "received error while streaming") {
		var body struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		raw := strings.TrimSpace(strings.TrimPrefix(msg, "received error while streaming:"))
		_ = json.Unmarshal([]byte(raw), &body)
		return m.ep.classifyAPI(apiFailure{errType: body.Error.Type, message: body.Error.Message, cause: fmt.Errorf("error event in the stream")})
	}
	return m.ep.classifyTransport(ctx, err)
}
