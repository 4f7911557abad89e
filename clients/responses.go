package clients

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
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
func reasoningEffort(budget int) shared.ReasoningEffort {
	switch {
	case budget < 4096:
		return shared.ReasoningEffortLow
	case budget < 16384:
		return shared.ReasoningEffortMedium
	default:
		return shared.ReasoningEffortHigh
	}
}

func (m *openaiModel) completeResponses(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	params, err := m.responsesParams(req)
	if err != nil {
		return nil, err
	}
	em := &emitter{fn: onDelta}
	return m.retry.do(ctx, em, func(ctx context.Context) (*Response, error) {
		m.log.Debug("model call", zap.String("agent", req.Agent), zap.Int("messages", len(req.Messages)), zap.String("api", "responses"))
		return m.streamResponses(ctx, params, em)
	})
}

// responsesParams is req for the Responses API: nothing stored on
// OpenAI's side (store false), so the whole conversation goes each time,
// the reasoning items of earlier turns with their encrypted content.
func (m *openaiModel) responsesParams(req *Request) (responses.ResponseNewParams, error) {
	p := responses.ResponseNewParams{
		Model:           shared.ResponsesModel(m.ep.model),
		Store:           openai.Bool(false),
		MaxOutputTokens: openai.Int(maxTokens(req)),
	}
	if req.Thinking != nil && reasoningModel(m.ep.model) {
		// The reasoning counts in max_output_tokens: the answer keeps its
		// own bound on top of the budget, as with Anthropic.
		p.MaxOutputTokens = openai.Int(maxTokens(req) + int64(req.Thinking.BudgetTokens))
		p.Reasoning = shared.ReasoningParam{Effort: reasoningEffort(req.Thinking.BudgetTokens), Summary: shared.ReasoningSummaryAuto}
		p.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
	}
	if k := m.cacheKey(req); k != "" {
		p.PromptCacheKey = openai.String(k)
	}
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	in := responses.ResponseInputParam{}
	for _, msg := range req.Messages {
		switch msg.Role {
		case RoleUser:
			in = append(in, responsesUser(msg.Text, msg.Images))
		case RoleAssistant:
			// Its reasoning first, as the model gave it: a reasoning item
			// goes before the call it led to.
			for _, th := range msg.Thinking {
				if th.ID == "" || th.Encrypted == "" {
					continue // not a reasoning item of this API: nothing to take back
				}
				r := &responses.ResponseReasoningItemParam{ID: th.ID, EncryptedContent: openai.String(th.Encrypted),
					Summary: []responses.ResponseReasoningItemSummaryParam{}}
				for _, s := range th.Summary {
					r.Summary = append(r.Summary, responses.ResponseReasoningItemSummaryParam{Text: s})
				}
				in = append(in, responses.ResponseInputItemUnionParam{OfReasoning: r})
			}
			if msg.Text != "" {
				in = append(in, responses.ResponseInputItemParamOfMessage(msg.Text, responses.EasyInputMessageRoleAssistant))
			}
			for _, c := range msg.ToolCalls {
				in = append(in, responses.ResponseInputItemParamOfFunctionCall(string(arguments(c.Arguments)), c.ID, c.Name))
			}
		case RoleTool:
			for _, r := range msg.ToolResults {
				in = append(in, responsesToolResult(r))
			}
			if msg.Text != "" {
				in = append(in, responsesUser(msg.Text, nil))
			}
		default:
			return p, m.ep.errorf(ErrBadRequest, 0, false, nil, "message role %q is not user, assistant or tool", msg.Role)
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: in}
	for _, t := range req.Tools {
		schema, err := m.schema(t)
		if err != nil {
			return p, err
		}
		// Not strict: the API's default for function tools, strict,
		// wants every property required, which tools' schemas are not.
		ft := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: openai.Bool(false)}
		if t.Description != "" {
			ft.Description = openai.String(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	return p, nil
}

// responsesUser is a user message: its text, then each image as an
// input_image with a data URL.
func responsesUser(text string, images []Image) responses.ResponseInputItemUnionParam {
	if len(images) == 0 {
		return responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser)
	}
	parts := responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: text}},
	}
	for _, img := range images {
		parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
			ImageURL: openai.String(dataURL(img)), Detail: responses.ResponseInputImageDetailAuto,
		}})
	}
	return responses.ResponseInputItemParamOfMessage(parts, responses.EasyInputMessageRoleUser)
}

// responsesToolResult is a function_call_output: its text, and, when the
// result has images, the text then the images as input_image parts (the
// Responses API takes images in tool results, chat completions does not).
func responsesToolResult(r ToolResult) responses.ResponseInputItemUnionParam {
	var item responses.ResponseInputItemUnionParam
	if len(r.Images) == 0 {
		item = responses.ResponseInputItemParamOfFunctionCallOutput(toolResultText(r))
	} else {
		parts := responses.ResponseFunctionCallOutputItemListParam{
			{OfInputText: &responses.ResponseInputTextContentParam{Text: toolResultText(r)}},
		}
		for _, img := range r.Images {
			parts = append(parts, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: openai.String(dataURL(img)),
			}})
		}
		item = responses.ResponseInputItemParamOfFunctionCallOutput(parts)
	}
	item.OfFunctionCallOutput.CallID = openai.String(r.CallID)
	return item
}

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
func (m *openaiModel) streamResponses(ctx context.Context, params responses.ResponseNewParams, em *emitter) (*Response, error) {
	st := m.client.Responses.NewStreaming(ctx, params)
	defer st.Close()
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
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_item.added":
			it := item(ev.OutputIndex, ev.Item.Type)
			switch {
			case it.reasoning != nil:
				it.reasoning.id = ev.Item.ID
			case it.call != nil && it.call.id == "":
				it.call.id, it.call.name = ev.Item.CallID, ev.Item.Name
				em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, ID: it.call.id, Name: it.call.name}})
			}
		case "response.reasoning_summary_text.delta":
			it := item(ev.OutputIndex, "reasoning")
			if it.reasoning == nil || ev.Delta == "" {
				break
			}
			r := it.reasoning
			for int64(len(r.parts)) <= ev.SummaryIndex {
				r.parts = append(r.parts, strings.Builder{})
			}
			if ev.SummaryIndex > 0 && r.parts[ev.SummaryIndex].Len() == 0 {
				em.emit(Delta{Thinking: "\n\n"}) // a new part of the summary
			}
			r.parts[ev.SummaryIndex].WriteString(ev.Delta)
			em.emit(Delta{Thinking: ev.Delta})
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
			em.emit(Delta{Text: ev.Delta})
		case "response.refusal.delta":
			refused = true
			text.WriteString(ev.Delta)
			em.emit(Delta{Text: ev.Delta})
		case "response.function_call_arguments.delta":
			it := item(ev.OutputIndex, "function_call")
			if it.call == nil {
				break
			}
			it.streamed = true
			it.call.args.WriteString(ev.Delta)
			em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, Arguments: ev.Delta}})
		case "response.output_item.done":
			it := item(ev.OutputIndex, ev.Item.Type)
			switch {
			case it.reasoning != nil:
				r := it.reasoning
				r.id, r.encrypted = ev.Item.ID, ev.Item.EncryptedContent
				r.done = []string{}
				for _, s := range ev.Item.Summary {
					r.done = append(r.done, s.Text)
				}
				if len(r.parts) == 0 && len(r.done) > 0 {
					// A server that gave the summary whole.
					em.emit(Delta{Thinking: strings.Join(r.done, "\n\n")})
				}
			case it.call != nil:
				if it.call.id == "" {
					it.call.id, it.call.name = ev.Item.CallID, ev.Item.Name
					em.emit(Delta{ToolCall: &ToolCallDelta{Index: it.callIndex, ID: it.call.id, Name: it.call.name}})
				}
				if args := ev.Item.Arguments.OfString; args != "" && args != it.call.args.String() {
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
			resp.Usage.InputTokens = u.InputTokens
			resp.Usage.OutputTokens = u.OutputTokens // reasoning tokens included
			resp.Usage.CacheReadTokens = u.InputTokensDetails.CachedTokens
			resp.StopReason = StopEndTurn
			if ev.Type == "response.incomplete" {
				resp.StopReason = StopOther
				if ev.Response.IncompleteDetails.Reason == "max_output_tokens" {
					resp.StopReason = StopMaxTokens
				}
			}
		case "response.failed":
			e := ev.Response.Error
			return nil, m.ep.classifyAPI(responsesFailure(string(e.Code), e.Message, "the response failed"))
		case "error":
			return nil, m.ep.classifyAPI(responsesFailure(ev.Code, ev.Message, "error event in the stream"))
		}
	}
	if err := m.ended(ctx, st.Err(), finished); err != nil {
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
	var err error
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
