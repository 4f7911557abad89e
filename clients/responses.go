package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"go.uber.org/zap"
)

// openaiAPI is the API an OpenAI model speaks (AGENTLS_OPENAI_API).
type openaiAPI string

const (
	// apiAuto: chat completions, but OpenAI's own reasoning models are
	// asked for their thinking through the Responses API (useResponses).
	apiAuto openaiAPI = ""
	// apiChat: chat completions for every call.
	apiChat openaiAPI = "chat"
	// apiResponses: the Responses API for every call, for servers other
	// than api.openai.com that speak it.
	apiResponses openaiAPI = "responses"
)

// openaiAPIVar names the environment variable that picks the API.
const openaiAPIVar = "AGENTLS_OPENAI_API"

// parseOpenAIAPI reads AGENTLS_OPENAI_API.
func parseOpenAIAPI(v string) (openaiAPI, error) {
	switch a := openaiAPI(strings.ToLower(strings.TrimSpace(v))); a {
	case apiAuto, apiChat, apiResponses:
		return a, nil
	}
	return "", fmt.Errorf("%s=%q is not chat or responses", openaiAPIVar, v)
}

// officialOpenAI reports whether base is OpenAI's own API.
func officialOpenAI(base string) bool {
	u, err := url.Parse(base)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}

// useResponses says whether req goes through the Responses API: always
// when AGENTLS_OPENAI_API says responses, never when it says chat, and
// otherwise when thinking is asked of a reasoning model on api.openai.com,
// whose reasoning summaries come from the Responses API alone.
func (m *openaiModel) useResponses(req *Request) bool {
	switch m.api {
	case apiResponses:
		return true
	case apiChat:
		return false
	}
	return !m.compat && req.Thinking != nil && officialOpenAI(m.ep.baseURL) && reasoningModel(m.ep.model)
}

// reasoningModel reports whether an OpenAI model takes reasoning settings:
// every model but the families known to refuse them (GPT-4 and earlier,
// and the chat snapshots of GPT-5), so that the reasoning models to come
// are asked too.
func reasoningModel(name string) bool {
	n := strings.ToLower(name)
	for _, p := range []string{"gpt-4", "gpt-3", "chatgpt-", "davinci", "babbage"} {
		if strings.HasPrefix(n, p) {
			return false
		}
	}
	return !strings.Contains(n, "-chat")
}

// reasoningEffort maps the thinking budget onto OpenAI's effort levels:
// under 4096 tokens low, under 16384 medium (4096, the setting's default,
// is OpenAI's default effort), high above.
func reasoningEffort(budget int) string {
	switch {
	case budget < 4096:
		return "low"
	case budget < 16384:
		return "medium"
	default:
		return "high"
	}
}

func (m *openaiModel) completeResponses(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	params, err := m.responsesParams(req)
	if err != nil {
		return nil, err
	}
	body, err := m.conn.marshalBody(params)
	if err != nil {
		return nil, err
	}
	em := &emitter{fn: onDelta}
	return m.retry.do(ctx, em, func(ctx context.Context) (*Response, error) {
		m.log.Debug("model call", zap.String("agent", req.Agent), zap.Int("messages", len(req.Messages)), zap.String("api", "responses"))
		return m.streamResponses(ctx, body, em)
	})
}

// responsesRequest is the body of POST {base}/responses.
type responsesRequest struct {
	Model           string             `json:"model"`
	Instructions    string             `json:"instructions,omitempty"`
	Input           []any              `json:"input"`
	MaxOutputTokens int64              `json:"max_output_tokens"`
	Store           bool               `json:"store"`
	Stream          bool               `json:"stream"`
	Reasoning       *reasoningSettings `json:"reasoning,omitempty"`
	Include         []string           `json:"include,omitempty"`
	PromptCacheKey  string             `json:"prompt_cache_key,omitempty"`
	Tools           []responsesTool    `json:"tools,omitempty"`
}

type reasoningSettings struct {
	Effort  string `json:"effort"`  // "low", "medium", "high"
	Summary string `json:"summary"` // "auto"
}

// The input items: a message, a reasoning item given back, a function
// call, and a function call's output.
type (
	// inputMessage is a message whose Content is a string or a list of
	// inputPart.
	inputMessage struct {
		Role    string `json:"role"` // "user", "assistant"
		Content any    `json:"content"`
	}
	inputReasoning struct {
		Type             string        `json:"type"` // "reasoning"
		ID               string        `json:"id"`
		EncryptedContent string        `json:"encrypted_content"`
		Summary          []summaryText `json:"summary"`
	}
	summaryText struct {
		Type string `json:"type"` // "summary_text"
		Text string `json:"text"`
	}
	inputFunctionCall struct {
		Type      string `json:"type"` // "function_call"
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	// inputFunctionOutput's Output is a string or a list of inputPart.
	inputFunctionOutput struct {
		Type   string `json:"type"` // "function_call_output"
		CallID string `json:"call_id"`
		Output any    `json:"output"`
	}
	// inputPart is input_text or input_image (Detail is only sent in a
	// message).
	inputPart struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
		Detail   string `json:"detail,omitempty"`
	}
)

type responsesTool struct {
	Type        string         `json:"type"` // "function"
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters"`
	Strict      bool           `json:"strict"`
}

// responsesParams is req for the Responses API: nothing stored on
// OpenAI's side (store false), so the whole conversation goes each time,
// the reasoning items of earlier turns with their encrypted content.
func (m *openaiModel) responsesParams(req *Request) (*responsesRequest, error) {
	p := &responsesRequest{
		Model:           m.ep.model,
		Store:           false,
		Stream:          true,
		MaxOutputTokens: maxTokens(req),
		Input:           []any{},
	}
	if req.Thinking != nil && reasoningModel(m.ep.model) {
		// The reasoning counts in max_output_tokens: the answer keeps its
		// own bound on top of the budget, as with Anthropic.
		p.MaxOutputTokens = maxTokens(req) + int64(req.Thinking.BudgetTokens)
		p.Reasoning = &reasoningSettings{Effort: reasoningEffort(req.Thinking.BudgetTokens), Summary: "auto"}
		p.Include = []string{"reasoning.encrypted_content"}
	}
	p.PromptCacheKey = m.cacheKey(req)
	p.Instructions = req.System
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleUser:
			p.Input = append(p.Input, responsesUser(msg.Text, msg.Images))
		case RoleAssistant:
			// Its reasoning first, as the model gave it: a reasoning item
			// goes before the call it led to.
			for _, th := range msg.Thinking {
				if th.ID == "" || th.Encrypted == "" {
					continue // not a reasoning item of this API: nothing to take back
				}
				r := inputReasoning{Type: "reasoning", ID: th.ID, EncryptedContent: th.Encrypted, Summary: []summaryText{}}
				for _, s := range th.Summary {
					r.Summary = append(r.Summary, summaryText{Type: "summary_text", Text: s})
				}
				p.Input = append(p.Input, r)
			}
			if msg.Text != "" {
				p.Input = append(p.Input, inputMessage{Role: "assistant", Content: msg.Text})
			}
			for _, c := range msg.ToolCalls {
				p.Input = append(p.Input, inputFunctionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: string(arguments(c.Arguments))})
			}
		case RoleTool:
			for _, r := range msg.ToolResults {
				p.Input = append(p.Input, responsesToolResult(r))
			}
			if msg.Text != "" {
				p.Input = append(p.Input, responsesUser(msg.Text, nil))
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
		// Not strict: the API's default for function tools, strict,
		// wants every property required, which tools' schemas are not.
		p.Tools = append(p.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema, Strict: false})
	}
	return p, nil
}

// responsesUser is a user message: its text, then each image as an
// input_image with a data URL.
func responsesUser(text string, images []Image) inputMessage {
	if len(images) == 0 {
		return inputMessage{Role: "user", Content: text}
	}
	parts := []inputPart{{Type: "input_text", Text: text}}
	for _, img := range images {
		parts = append(parts, inputPart{Type: "input_image", ImageURL: dataURL(img), Detail: "auto"})
	}
	return inputMessage{Role: "user", Content: parts}
}

// responsesToolResult is a function_call_output: its text, and, when the
// result has images, the text then the images as input_image parts (the
// Responses API takes images in tool results, chat completions does not).
func responsesToolResult(r ToolResult) inputFunctionOutput {
	out := inputFunctionOutput{Type: "function_call_output", CallID: r.CallID, Output: toolResultText(r)}
	if len(r.Images) > 0 {
		parts := []inputPart{{Type: "input_text", Text: toolResultText(r)}}
		for _, img := range r.Images {
			parts = append(parts, inputPart{Type: "input_image", ImageURL: dataURL(img)})
		}
		out.Output = parts
	}
	return out
}

// responsesEvent is an event of a streamed response: the members of the
// event types read (streamResponses), leniently (decodeLenient).
type responsesEvent struct {
	Type         wireString `json:"type"`
	OutputIndex  wireInt    `json:"output_index"`
	SummaryIndex wireInt    `json:"summary_index"`
	Delta        wireString `json:"delta"`
	// Code and Message are those of an "error" event.
	Code    wireString `json:"code"`
	Message wireString `json:"message"`
	// Item is the output item of output_item.added and output_item.done.
	Item struct {
		Type   wireString `json:"type"`
		ID     wireString `json:"id"`
		CallID wireString `json:"call_id"`
		Name   wireString `json:"name"`
		// Arguments are a call's, a string: anything else is none.
		Arguments        json.RawMessage `json:"arguments"`
		EncryptedContent wireString      `json:"encrypted_content"`
		Summary          []struct {
			Text wireString `json:"text"`
		} `json:"summary"`
	} `json:"item"`
	// Response is the response of completed, incomplete and failed.
	Response struct {
		Usage struct {
			InputTokens        wireInt `json:"input_tokens"`
			OutputTokens       wireInt `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens wireInt `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
		IncompleteDetails struct {
			Reason wireString `json:"reason"`
		} `json:"incomplete_details"`
		Error struct {
			Code    wireString `json:"code"`
			Message wireString `json:"message"`
		} `json:"error"`
	} `json:"response"`
	// Error, when there, makes the event a failure whatever its type.
	Error json.RawMessage `json:"error"`
}

// maxSummaryParts bounds the parts of one reasoning summary: a
// summary_index beyond it is a malformed answer, not a reason to allocate.
const maxSummaryParts = 1024

// reasoningItem is a reasoning item as it streams: its summary's parts.
type reasoningItem struct {
	id        string
	parts     []strings.Builder
	encrypted string
	done      []string // the summary of output_item.done, when it came
}

// responsesItem is one output item of a streamed response.
// Only reasoning items and function calls keep a state; text goes straight
// to the answer.
type responsesItem struct {
	reasoning *reasoningItem
	call      *partialCall
	callIndex int
	streamed  bool // deltas of the call's arguments came
}

// streamResponses runs one streamed call of the Responses API. Reasoning
// summaries stream as thinking (a blank line between parts), output text
// as text, function calls as tool calls.
func (m *openaiModel) streamResponses(ctx context.Context, body []byte, em *emitter) (*Response, error) {
	var (
		resp     Response
		text     strings.Builder
		items    = map[int64]*responsesItem{}
		order    []*responsesItem
		calls    []*partialCall
		refused  bool
		finished bool
	)
	item := func(i int64, kind string) *responsesItem {
		it := items[i]
		if it == nil {
			it = &responsesItem{}
			switch kind {
			case "reasoning":
				it.reasoning = &reasoningItem{}
			case "function_call":
				it.call, it.callIndex = &partialCall{}, len(calls)
				calls = append(calls, it.call)
			}
			items[i] = it
			order = append(order, it)
		}
		return it
	}
	err := m.conn.events(ctx, "responses", body, func(data []byte) error {
		var ev responsesEvent
		if err := decodeLenient(data, &ev); err != nil {
			return fmt.Errorf("an event of the stream is not a JSON object: %w", err)
		}
		if hasError(ev.Error) {
			return &streamError{data: data}
		}
		switch ev.Type {
		case "response.output_item.added":
			it := item(int64(ev.OutputIndex), string(ev.Item.Type))
			switch {
			case it.reasoning != nil:
				it.reasoning.id = string(ev.Item.ID)
			case it.call != nil && it.call.id == "":
				it.call.id, it.call.name = string(ev.Item.CallID), string(ev.Item.Name)
				em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, ID: it.call.id, Name: it.call.name}})
			}
		case "response.reasoning_summary_text.delta":
			it := item(int64(ev.OutputIndex), "reasoning")
			if it.reasoning == nil || ev.Delta == "" {
				break
			}
			i := int(ev.SummaryIndex)
			if i < 0 || i >= maxSummaryParts {
				return m.ep.errorf(ErrBadResponse, 0, false, nil, "a reasoning summary's part %d is not between 0 and %d", ev.SummaryIndex, maxSummaryParts-1)
			}
			r := it.reasoning
			for len(r.parts) <= i {
				r.parts = append(r.parts, strings.Builder{})
			}
			if i > 0 && r.parts[i].Len() == 0 {
				em.emit(Delta{Thinking: "\n\n"}) // a new part of the summary
			}
			r.parts[i].WriteString(string(ev.Delta))
			em.emit(Delta{Thinking: string(ev.Delta)})
		case "response.output_text.delta":
			text.WriteString(string(ev.Delta))
			em.emit(Delta{Text: string(ev.Delta)})
		case "response.refusal.delta":
			refused = true
			text.WriteString(string(ev.Delta))
			em.emit(Delta{Text: string(ev.Delta)})
		case "response.function_call_arguments.delta":
			it := item(int64(ev.OutputIndex), "function_call")
			if it.call == nil {
				break
			}
			it.streamed = true
			it.call.args.WriteString(string(ev.Delta))
			em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, Arguments: string(ev.Delta)}})
		case "response.output_item.done":
			it := item(int64(ev.OutputIndex), string(ev.Item.Type))
			switch {
			case it.reasoning != nil:
				r := it.reasoning
				r.id, r.encrypted = string(ev.Item.ID), string(ev.Item.EncryptedContent)
				r.done = []string{}
				for _, s := range ev.Item.Summary {
					r.done = append(r.done, string(s.Text))
				}
				if len(r.parts) == 0 && len(r.done) > 0 {
					// A server that gave the summary whole.
					em.emit(Delta{Thinking: strings.Join(r.done, "\n\n")})
				}
			case it.call != nil:
				if it.call.id == "" {
					it.call.id, it.call.name = string(ev.Item.CallID), string(ev.Item.Name)
					em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, ID: it.call.id, Name: it.call.name}})
				}
				var args string
				if json.Unmarshal(ev.Item.Arguments, &args) == nil && args != "" && args != it.call.args.String() {
					if !it.streamed {
						// A server that gave the arguments whole.
						em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, Arguments: args}})
					}
					it.call.args.Reset()
					it.call.args.WriteString(args)
				}
			}
		case "response.completed", "response.incomplete":
			finished = true
			u := ev.Response.Usage
			resp.Usage.InputTokens = int64(u.InputTokens)
			resp.Usage.OutputTokens = int64(u.OutputTokens) // reasoning tokens included
			resp.Usage.CacheReadTokens = int64(u.InputTokensDetails.CachedTokens)
			resp.StopReason = StopEndTurn
			if ev.Type == "response.incomplete" {
				resp.StopReason = StopOther
				if ev.Response.IncompleteDetails.Reason == "max_output_tokens" {
					resp.StopReason = StopMaxTokens
				}
			}
		case "response.failed":
			e := ev.Response.Error
			return m.ep.classifyAPI(responsesFailure(string(e.Code), string(e.Message), "the response failed"))
		case "error":
			return m.ep.classifyAPI(responsesFailure(string(ev.Code), string(ev.Message), "error event in the stream"))
		}
		return nil
	})
	if err := m.ended(ctx, err, finished); err != nil {
		return nil, err
	}
	if refused && resp.StopReason == StopEndTurn {
		resp.StopReason = StopOther
	}
	resp.Text = text.String()
	for _, it := range order {
		if r := it.reasoning; r != nil {
			b := ThinkingBlock{ID: r.id, Encrypted: r.encrypted, Summary: r.done}
			if r.done == nil {
				for i := range r.parts {
					b.Summary = append(b.Summary, r.parts[i].String())
				}
			}
			b.Text = strings.Join(b.Summary, "\n\n")
			if b.Text != "" || b.Encrypted != "" {
				resp.Thinking = append(resp.Thinking, b)
			}
		}
	}
	if resp.ToolCalls, err = m.finishCalls(calls, resp.StopReason); err != nil {
		return nil, err
	}
	if len(resp.ToolCalls) > 0 && resp.StopReason == StopEndTurn {
		resp.StopReason = StopToolUse
	}
	return &resp, nil
}

// responsesFailure is a failure the Responses API reports in its stream
// (response.failed, or an error event): its code says whose fault it is.
// server_error and rate_limit_exceeded are retried; a code that names the
// request (invalid_prompt, an image the API cannot read, a policy) is
// refused as the request's, and never retried.
func responsesFailure(code, message, cause string) apiFailure {
	f := apiFailure{code: code, message: message, cause: errors.New(cause)}
	switch {
	case code == "server_error":
		f.errType = "server_error"
	case code == "rate_limit_exceeded":
	case strings.HasPrefix(code, "invalid_"), strings.Contains(code, "image"), strings.Contains(code, "policy"),
		code == "data_residency_mismatch":
		f.errType = "invalid_request_error"
	}
	return f
}
