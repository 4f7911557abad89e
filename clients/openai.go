package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"go.uber.org/zap"
)

// openaiModel speaks the chat completions API of OpenAI and of every
// OpenAI-compatible server (vLLM, llama.cpp, LM Studio, OpenRouter, Ollama).
type openaiModel struct {
	ep    *endpoint
	conn  *openaiConn
	retry *retrier
	log   *zap.Logger
	// compat sends max_tokens (which every compatible server reads) rather
	// than max_completion_tokens (which OpenAI's reasoning models require).
	compat bool
	// api picks chat completions or the Responses API (useResponses).
	api openaiAPI
	// win keeps the context window its provider's list says (ContextWindow).
	win windowCache
}

// newOpenAI reaches ep with key (sent as a bearer token when not "")
// through hc.
func newOpenAI(ep *endpoint, key string, hc *http.Client, o *Options, compat bool, api openaiAPI) *openaiModel {
	return &openaiModel{
		ep:     ep,
		conn:   newOpenAIConn(ep, key, hc),
		retry:  newRetrier(o),
		log:    o.Logger.With(zap.String("provider", ep.provider), zap.String("model", ep.model)),
		compat: compat,
		api:    api,
	}
}

// chatRequest is the body of POST {base}/chat/completions.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	MaxTokens           *int64         `json:"max_tokens,omitempty"`
	MaxCompletionTokens *int64         `json:"max_completion_tokens,omitempty"`
	PromptCacheKey      string         `json:"prompt_cache_key,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	Tools               []chatTool     `json:"tools,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is a message of any role. Content is a string, a list of
// chatPart, or nil (left out: an assistant message with calls alone).
type chatMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// chatPart is a part of a user message: text, or an image by URL.
type chatPart struct {
	Type     string        `json:"type"` // "text", "image_url"
	Text     string        `json:"text,omitempty"`
	ImageURL *chatImageURL `json:"image_url,omitempty"`
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"` // "function"
	Function chatFunctionCall `json:"function"`
}

type chatFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"` // "function"
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
}

// chatChunk is an event of a streamed chat completion: the fields read,
// leniently (decodeLenient), as the SDKs read them.
type chatChunk struct {
	Choices []struct {
		Index wireInt `json:"index"`
		Delta struct {
			Content wireString `json:"content"`
			// The reasoning of compatible servers, kept raw: only a
			// string is reasoning (reasoningOf).
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        []struct {
				Index    wireInt    `json:"index"`
				ID       wireString `json:"id"`
				Function struct {
					Name      wireString `json:"name"`
					Arguments wireString `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason wireString `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        wireInt `json:"prompt_tokens"`
		CompletionTokens    wireInt `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens wireInt `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

func (m *openaiModel) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	if m.useResponses(req) {
		return m.completeResponses(ctx, req, onDelta)
	}
	params, err := m.params(req)
	if err != nil {
		return nil, err
	}
	body, err := m.conn.marshalBody(params)
	if err != nil {
		return nil, err
	}
	em := &emitter{fn: onDelta}
	return m.retry.do(ctx, em, func(ctx context.Context) (*Response, error) {
		m.log.Debug("model call", zap.String("agent", req.Agent), zap.Int("messages", len(req.Messages)))
		return m.stream(ctx, body, em, req.Thinking != nil)
	})
}

func (m *openaiModel) params(req *Request) (*chatRequest, error) {
	p := &chatRequest{
		Model:         m.ep.model,
		Messages:      []chatMessage{},
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	n := maxTokens(req)
	if m.compat {
		p.MaxTokens = &n
	} else {
		p.MaxCompletionTokens = &n
	}
	p.PromptCacheKey = m.cacheKey(req)
	if req.System != "" {
		p.Messages = append(p.Messages, chatMessage{Role: "system", Content: req.System})
	}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleUser:
			if len(msg.Images) == 0 {
				p.Messages = append(p.Messages, chatMessage{Role: "user", Content: msg.Text})
				break
			}
			// Content parts: the text, then each image as a data URL
			// (Ollama turns these into the message's images).
			parts := []chatPart{{Type: "text", Text: msg.Text}}
			for _, img := range msg.Images {
				parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(img)}})
			}
			p.Messages = append(p.Messages, chatMessage{Role: "user", Content: parts})
		case RoleAssistant:
			a := chatMessage{Role: "assistant"}
			if msg.Text != "" {
				a.Content = msg.Text
			}
			for _, c := range msg.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: c.ID, Type: "function",
					Function: chatFunctionCall{Name: c.Name, Arguments: string(arguments(c.Arguments))}})
			}
			p.Messages = append(p.Messages, a)
		case RoleTool:
			for _, r := range msg.ToolResults {
				content := toolResultText(r)
				if len(r.Images) > 0 {
					// Nor images: the model is told they are not shown.
					content += "\n\n" + imagesNotShown(len(r.Images))
				}
				p.Messages = append(p.Messages, chatMessage{Role: "tool", Content: content, ToolCallID: r.CallID})
			}
			if msg.Text != "" {
				p.Messages = append(p.Messages, chatMessage{Role: "user", Content: msg.Text})
			}
		default:
			return nil, m.ep.errorf(ErrBadRequest, 0, false, nil, "message role %q is not user, assistant or tool", msg.Role)
		}
	}
	for _, t := range req.Tools {
		schema, err := m.schema(t)
		if err != nil {
			return nil, err
		}
		p.Tools = append(p.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: schema}})
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
func (m *openaiModel) stream(ctx context.Context, body []byte, em *emitter, think bool) (*Response, error) {
	var (
		resp     Response
		text     strings.Builder
		thinking strings.Builder
		calls    []*partialCall
		byIndex  = map[int64]int{}
		finished bool
	)
	err := m.conn.events(ctx, "chat/completions", body, func(data []byte) error {
		var chunk chatChunk
		if err := decodeLenient(data, &chunk); err != nil {
			return fmt.Errorf("a chunk of the stream is not a JSON object: %w", err)
		}
		if hasError(chunk.Error) {
			return &streamError{data: data}
		}
		if u := chunk.Usage; u != nil {
			resp.Usage.InputTokens = int64(u.PromptTokens)
			resp.Usage.OutputTokens = int64(u.CompletionTokens)
			resp.Usage.CacheReadTokens = int64(u.PromptTokensDetails.CachedTokens)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if think {
				if r := reasoningOf(ch.Delta.ReasoningContent, ch.Delta.Reasoning); r != "" {
					thinking.WriteString(r)
					em.emit(Delta{Thinking: r})
				}
			}
			if c := string(ch.Delta.Content); c != "" {
				text.WriteString(c)
				em.emit(Delta{Text: c})
			}
			for _, tc := range ch.Delta.ToolCalls {
				i, ok := byIndex[int64(tc.Index)]
				if !ok {
					i = len(calls)
					byIndex[int64(tc.Index)] = i
					calls = append(calls, &partialCall{})
				}
				c := calls[i]
				args := string(tc.Function.Arguments)
				d := &ToolCallDelta{Index: i, Arguments: args}
				if id := string(tc.ID); id != "" && c.id == "" {
					c.id, d.ID = id, id
				}
				if name := string(tc.Function.Name); name != "" && c.name == "" {
					c.name, d.Name = name, name
				}
				c.args.WriteString(args)
				em.emit(Delta{ToolCall: d})
			}
			if ch.FinishReason != "" {
				finished = true
				resp.StopReason = openaiStop(string(ch.FinishReason))
			}
		}
		return nil
	})
	if err := m.ended(ctx, err, finished); err != nil {
		return nil, err
	}
	resp.Text = text.String()
	if thinking.Len() > 0 {
		resp.Thinking = []ThinkingBlock{{Text: thinking.String()}}
	}
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
	return m.conn.classify(ctx, err)
}

// reasoningOf is the piece of reasoning of a compatible server's delta:
// reasoning_content (DeepSeek, vLLM, llama.cpp) or reasoning (OpenRouter,
// Ollama), a string; "" when it has none.
func reasoningOf(fields ...json.RawMessage) string {
	for _, f := range fields {
		var r string
		if json.Unmarshal(f, &r) == nil && r != "" {
			return r
		}
	}
	return ""
}
