package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
	"go.uber.org/zap"
)

// openaiModel speaks the chat completions API of OpenAI and of every
// OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama).
type openaiModel struct {
	ep     *endpoint
	client openai.Client
	retry  *retrier
	log    *zap.Logger
	// compat sends max_tokens (which every compatible server reads) rather
	// than max_completion_tokens (which OpenAI's reasoning models require).
	compat bool
	// api picks chat completions or the Responses API (useResponses).
	api openaiAPI
	// win keeps the context window its provider's list says (ContextWindow).
	win windowCache
}

func newOpenAI(ep *endpoint, key string, hc *http.Client, o *Options, compat bool, api openaiAPI) *openaiModel {
	return &openaiModel{
		ep: ep,
		client: openai.NewClient(
			option.WithBaseURL(ep.baseURL),
			option.WithAPIKey(key),
			option.WithHTTPClient(hc),
			option.WithMaxRetries(0), // retries are ours: classified, bounded, reported
		),
		retry:  newRetrier(o),
		log:    o.Logger.With(zap.String("provider", ep.provider), zap.String("model", ep.model)),
		compat: compat,
		api:    api,
	}
}

func (m *openaiModel) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	if m.useResponses(req) {
		return m.completeResponses(ctx, req, onDelta)
	}
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	em := &emitter{fn: onDelta}
	return m.retry.do(ctx, em, func(ctx context.Context) (*Response, error) {
		m.log.Debug("model call", zap.String("agent", req.Agent), zap.Int("messages", len(req.Messages)))
		return m.stream(ctx, params, em, req.Thinking != nil)
	})
}

func (m *openaiModel) params(req *Request) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(m.ep.model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if m.compat {
		p.MaxTokens = openai.Int(maxTokens(req))
	} else {
		p.MaxCompletionTokens = openai.Int(maxTokens(req))
	}
	if k := m.cacheKey(req); k != "" {
		p.PromptCacheKey = openai.String(k)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleUser:
			if len(msg.Images) == 0 {
				p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
				break
			}
			// Content parts: the text, then each image as a data URL
			// (Ollama turns these into the message's images).
			parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(msg.Text)}
			for _, img := range msg.Images {
				parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(img)}))
			}
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		case RoleAssistant:
			a := &openai.ChatCompletionAssistantMessageParam{}
			if msg.Text != "" {
				a.Content.OfString = openai.String(msg.Text)
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(arguments(c.Arguments))},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: a})
		case RoleTool:
			for _, r := range msg.ToolResults {
				content := toolResultText(r)
				if len(r.Images) > 0 {
					// Nor images: the model is told they are not shown.
					content += "\n\n" + imagesNotShown(len(r.Images))
				}
				p.Messages = append(p.Messages, openai.ToolMessage(content, r.CallID))
			}
			if msg.Text != "" {
				p.Messages = append(p.Messages, openai.UserMessage(msg.Text))
			}
		default:
			return p, m.ep.errorf(ErrBadRequest, 0, false, nil, "message role %q is not user, assistant or tool", msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := m.schema(t)
		if err != nil {
			return p, err
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	return p, nil
}

// cacheKey is the prompt_cache_key of req: its CacheKey, sent to OpenAI's
// own API alone (a compatible server may refuse a field it does not know).
// OpenAI caches the longest prefix it has seen of at least 1024 tokens by
// itself; the key keeps a session's requests on one cache.
func (m *openaiModel) cacheKey(req *Request) string {
	if req.CacheKey == "" || m.compat || !officialOpenAI(m.ep.baseURL) {
		return ""
	}
	return req.CacheKey
}

// schema is a tool's JSON Schema, or the request's error when it is not one.
func (m *openaiModel) schema(t Tool) (map[string]any, error) {
	schema, err := schemaMap(t)
	if err != nil {
		return nil, m.ep.errorf(ErrBadRequest, 0, false, err, "%v", err)
	}
	return schema, nil
}

// toolResultText is a tool result as text: OpenAI's APIs have no error
// flag on tool results, so a failure says so in words, once: a result that
// already begins with "Error" is given as it is.
func toolResultText(r ToolResult) string {
	if r.IsError && !saysError(r.Content) {
		return "Error: " + r.Content
	}
	return r.Content
}

// saysError reports whether a tool's text already begins by saying it
// failed.
func saysError(s string) bool {
	s = strings.TrimSpace(s)
	return len(s) >= 5 && strings.EqualFold(s[:5], "error")
}

// schemaMap decodes a tool's JSON Schema; an empty one is an object schema
// without properties.
func schemaMap(t Tool) (map[string]any, error) {
	if len(t.Parameters) == 0 {
		return map[string]any{"type": "object", "properties": map[string]any{}}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(t.Parameters, &m); err != nil {
		return nil, fmt.Errorf("tool %q: parameters are not a JSON Schema object: %w", t.Name, err)
	}
	return m, nil
}

type partialCall struct {
	id, name string
	args     strings.Builder
}

// stream runs one streamed call; with think, the reasoning a compatible
// server streams (reasoning_content, or reasoning) is the thinking.
func (m *openaiModel) stream(ctx context.Context, params openai.ChatCompletionNewParams, em *emitter, think bool) (*Response, error) {
	st := m.client.Chat.Completions.NewStreaming(ctx, params)
	defer st.Close()
	var (
		resp     Response
		text     strings.Builder
		thinking strings.Builder
		calls    []*partialCall
		byIndex  = map[int64]int{}
		finished bool
	)
	for st.Next() {
		chunk := st.Current()
		if chunk.JSON.Usage.Valid() {
			resp.Usage.InputTokens = chunk.Usage.PromptTokens
			resp.Usage.OutputTokens = chunk.Usage.CompletionTokens
			resp.Usage.CacheReadTokens = chunk.Usage.PromptTokensDetails.CachedTokens
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if think {
				if r := reasoningOf(ch.Delta.JSON.ExtraFields); r != "" {
					thinking.WriteString(r)
					em.emit(Delta{Thinking: r})
				}
			}
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				em.emit(Delta{Text: ch.Delta.Content})
			}
			for _, tc := range ch.Delta.ToolCalls {
				i, ok := byIndex[tc.Index]
				if !ok {
					i = len(calls)
					byIndex[tc.Index] = i
					calls = append(calls, &partialCall{})
				}
				c := calls[i]
				d := &ToolCallDelta{Index: i, Arguments: tc.Function.Arguments}
				if tc.ID != "" && c.id == "" {
					c.id, d.ID = tc.ID, tc.ID
				}
				if tc.Function.Name != "" && c.name == "" {
					c.name, d.Name = tc.Function.Name, tc.Function.Name
				}
				c.args.WriteString(tc.Function.Arguments)
				em.emit(Delta{ToolCall: d})
			}
			if ch.FinishReason != "" {
				finished = true
				resp.StopReason = openaiStop(ch.FinishReason)
			}
		}
	}
	if err := m.ended(ctx, st.Err(), finished); err != nil {
		return nil, err
	}
	resp.Text = text.String()
	if thinking.Len() > 0 {
		resp.Thinking = []ThinkingBlock{{Text: thinking.String()}}
	}
	var err error
	if resp.ToolCalls, err = m.finishCalls(calls, resp.StopReason); err != nil {
		return nil, err
	}
	if len(resp.ToolCalls) > 0 && resp.StopReason == StopEndTurn {
		resp.StopReason = StopToolUse
	}
	return &resp, nil
}

// ended says how a stream ended: nil when its last event came, else the
// classified error of the stream, of ctx, or of an answer cut short.
func (m *openaiModel) ended(ctx context.Context, err error, finished bool) error {
	if err != nil {
		return m.classify(ctx, err)
	}
	if ctx.Err() != nil {
		return cancelled(ctx, m.ep.provider, m.ep.model, ctx.Err())
	}
	if !finished {
		return m.ep.incomplete()
	}
	return nil
}

// finishCalls turns the calls a stream assembled into tool calls, their
// arguments checked as JSON (an answer cut by the token limit says so).
func (m *openaiModel) finishCalls(calls []*partialCall, stop StopReason) ([]ToolCall, error) {
	var out []ToolCall
	for i, c := range calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i) // some compatible servers leave ids out
		}
		args := json.RawMessage(c.args.String())
		if strings.TrimSpace(string(args)) == "" {
			args = json.RawMessage("{}")
		}
		if !json.Valid(args) {
			if stop == StopMaxTokens {
				return nil, m.ep.errorf(ErrBadResponse, 0, false, nil,
					"the answer hit the token limit in the middle of the arguments of tool %q", c.name)
			}
			return nil, m.ep.errorf(ErrBadResponse, 0, false, nil, "the arguments of tool %q are not valid JSON", c.name)
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: args})
	}
	return out, nil
}

func openaiStop(reason string) StopReason {
	switch reason {
	case "stop":
		return StopEndTurn
	case "tool_calls", "function_call":
		return StopToolUse
	case "length":
		return StopMaxTokens
	default:
		return StopOther
	}
}

func (m *openaiModel) classify(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return cancelled(ctx, m.ep.provider, m.ep.model, ctx.Err())
	}
	var ae *openai.Error
	if errors.As(err, &ae) {
		f := apiFailure{status: ae.StatusCode, errType: ae.Type, code: ae.Code, message: ae.Message, cause: ae}
		if ae.Response != nil {
			f.header = ae.Response.Header
		}
		if f.message == "" {
			f.message = errorMessageOf([]byte(ae.RawJSON()))
		}
		return m.ep.classifyAPI(f)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		var body struct {
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(se.Event.Data, &body)
		var e struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(body.Error, &e) != nil {
			// Some servers send "error": "text".
			_ = json.Unmarshal(body.Error, &e.Message)
		}
		f := apiFailure{errType: e.Type, message: e.Message, cause: errors.New("error event in the stream")}
		if e.Code != nil {
			f.code = fmt.Sprint(e.Code)
			if n, ok := e.Code.(float64); ok && n >= 400 {
				f.status = int(n)
			}
		}
		return m.ep.classifyAPI(f)
	}
	return m.ep.classifyTransport(ctx, err)
}

// errorMessageOf finds error.message (or a string "error") in a body.
func errorMessageOf(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return strings.TrimSpace(string(raw))
	}
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body.Error, &e) == nil && e.Message != "" {
		return e.Message
	}
	var s string
	if json.Unmarshal(body.Error, &s) == nil && s != "" {
		return s
	}
	return body.Message
}

// reasoningOf is the piece of reasoning of a compatible server's delta:
// reasoning_content (DeepSeek, vLLM, llama.cpp) or reasoning (OpenRouter,
// Ollama), a string; "" when it has none.
func reasoningOf(extra map[string]respjson.Field) string {
	for _, k := range []string{"reasoning_content", "reasoning"} {
		// The SDK marks the fields it has no type for as not valid: the
		// raw JSON is the value.
		f, ok := extra[k]
		if !ok {
			continue
		}
		var r string
		if json.Unmarshal([]byte(f.Raw()), &r) == nil && r != "" {
			return r
		}
	}
	return ""
}
