package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// longConversation is a worker's conversation three turns in: its task,
// then two rounds of tool calls and results.
func longConversation() *Request {
	req := conversation()
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{
			{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)},
			{ID: "call_3", Name: "read_file", Arguments: json.RawMessage(`{"path":"go.mod"}`)},
		}},
		Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: "call_2", Content: "package main"}, {CallID: "call_3", Content: "module m"}}},
	)
	return req
}

// marked lists where a request body carries cache_control: "tools[i]",
// "system[i]", "messages[i].content[j]".
func marked(body map[string]any) []string {
	var out []string
	has := func(v any) bool {
		m, _ := v.(map[string]any)
		_, ok := m["cache_control"]
		return ok
	}
	list := func(v any) []any { l, _ := v.([]any); return l }
	for i, tl := range list(body["tools"]) {
		if has(tl) {
			out = append(out, fmt.Sprintf("tools[%d]", i))
		}
	}
	for i, b := range list(body["system"]) {
		if has(b) {
			out = append(out, fmt.Sprintf("system[%d]", i))
		}
	}
	for i, m := range list(body["messages"]) {
		msg, _ := m.(map[string]any)
		for j, b := range list(msg["content"]) {
			if has(b) {
				out = append(out, fmt.Sprintf("messages[%d].content[%d]", i, j))
			}
		}
	}
	return out
}

func TestAnthropicCacheBreakpoints(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	cases := []struct {
		name string
		req  *Request
		want []string
	}{
		{"a first request marks the tools, the system prompt and its one message", func() *Request {
			r := conversation()
			r.Messages = r.Messages[:1]
			return r
		}(), []string{"tools[1]", "system[0]", "messages[0].content[0]"}},
		{"a later request marks the newest turn and the one before it, four at most", longConversation(),
			[]string{"tools[1]", "system[0]", "messages[2].content[0]", "messages[4].content[1]"}},
		{"a request without tools or system marks its turns alone", &Request{Messages: []Message{{Role: RoleUser, Text: "Reply with the word OK."}}, MaxTokens: 1},
			[]string{"messages[0].content[0]"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := m.Complete(context.Background(), c.req, nil); err != nil {
				t.Fatal(err)
			}
			if got := marked(fp.request(i).Body); strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("breakpoints at %q, want %q", got, c.want)
			}
		})
	}
	t.Run("an empty text block takes no mark (the API refuses one)", func(t *testing.T) {
		req := conversation()
		req.Messages = []Message{{Role: RoleUser, Text: ""}}
		p, err := m.Model.(*anthropicModel).params(req)
		if err != nil {
			t.Fatal(err)
		}
		if cc := p.Messages[0].OfUser.Content[0].OfText.CacheControl; cc.Type != "" {
			t.Errorf("an empty text block is marked: %+v", cc)
		}
	})
}

func TestOpenAIPromptCacheKey(t *testing.T) {
	req := conversation()
	req.CacheKey = "agentls-session-1"
	official := newOpenAI(&endpoint{provider: "openai", model: "gpt-4.1-mini", baseURL: "https://api.openai.com/v1"}, testKey, http.DefaultClient,
		&Options{Logger: zap.NewNop()}, false, apiAuto)
	t.Run("OpenAI's own API is given the session's key, in chat completions and the Responses API", func(t *testing.T) {
		p, err := official.params(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.PromptCacheKey; got != "agentls-session-1" {
			t.Errorf("chat completions' prompt_cache_key = %q", got)
		}
		rp, err := official.responsesParams(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := rp.PromptCacheKey; got != "agentls-session-1" {
			t.Errorf("the Responses API's prompt_cache_key = %q", got)
		}
	})
	t.Run("a compatible server is not sent a field it may not know", func(t *testing.T) {
		pc := providers[0]
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
		if _, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := fp.request(0).Body["prompt_cache_key"]; ok {
			t.Errorf("prompt_cache_key sent to %s", fp.srv.URL)
		}
	})
	t.Run("a request without a key sends none", func(t *testing.T) {
		p, err := official.params(conversation())
		if err != nil {
			t.Fatal(err)
		}
		if p.PromptCacheKey != "" {
			t.Errorf("prompt_cache_key = %q", p.PromptCacheKey)
		}
	})
}

func TestContextWindowFromTheProviderList(t *testing.T) {
	cases := []struct {
		name string
		pc   providerCase
		list string // the answer to the model list (or the model)
		want int64
	}{
		{"Anthropic's model says its max_input_tokens", providers[1],
			`{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z","max_input_tokens":1000000,"max_tokens":64000}`, 1000000},
		{"an OpenAI-compatible server says the model's context_length (OpenRouter)", providers[0],
			`{"object":"list","data":[{"id":"other","object":"model","context_length":4096},{"id":"gpt-4.1-mini","object":"model","context_length":32768}]}`, 32768},
		{"vLLM says max_model_len", providers[0],
			`{"object":"list","data":[{"id":"gpt-4.1-mini","object":"model","owned_by":"vllm","max_model_len":16384}]}`, 16384},
		{"OpenAI's list does not say", providers[0],
			`{"object":"list","data":[{"id":"gpt-4.1-mini","object":"model","created":1,"owned_by":"openai"}]}`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(c.list))
			})
			m := resolveFake(t, c.pc, fp.srv.URL, testOptions(&sleeps{}, nil))
			rec := NewRecorder(m.Model, t.TempDir()+"/rec.json", nil, nil)
			for _, asked := range []Model{m, rec.For(m.Model), m.Model} {
				if got := ContextWindow(context.Background(), asked); got != c.want {
					t.Errorf("ContextWindow(%T) = %d, want %d", asked, got, c.want)
				}
			}
			if fp.count() != 1 {
				t.Errorf("the provider was asked %d times, want once", fp.count())
			}
		})
	}
	t.Run("a provider that fails gives 0, once", func(t *testing.T) {
		pc := providers[1]
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { errorAnswer(t, 500, "anthropic_500.json", nil)(w) })
		m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
		if got := ContextWindow(context.Background(), m); got != 0 {
			t.Errorf("ContextWindow = %d", got)
		}
		ContextWindow(context.Background(), m)
		if fp.count() != 1 {
			t.Errorf("the provider was asked %d times, want once", fp.count())
		}
	})
	t.Run("a caller that gives up leaves the question to the next", func(t *testing.T) {
		pc := providers[1]
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"type":"model","id":"claude-sonnet-4-5","max_input_tokens":200000}`))
		})
		m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if got := ContextWindow(ctx, m); got != 0 {
			t.Errorf("ContextWindow of a cancelled call = %d", got)
		}
		if got := ContextWindow(context.Background(), m); got != 200000 {
			t.Errorf("ContextWindow = %d, want 200000", got)
		}
	})
	t.Run("the scripted model has none", func(t *testing.T) {
		if got := ContextWindow(context.Background(), &funcless{}); got != 0 {
			t.Errorf("ContextWindow = %d", got)
		}
	})
}

// funcless is a Model that knows nothing of windows.
type funcless struct{}

func (funcless) Complete(context.Context, *Request, func(Delta)) (*Response, error) {
	return &Response{}, nil
}
