package clients

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

// responsesEnv reaches the fake server through the Responses API, as a
// server other than api.openai.com that speaks it is reached.
func responsesEnv(srv string) map[string]string {
	return map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": srv + "/v1", "AGENTLS_OPENAI_API": "responses"}
}

// resolveResponses is o4-mini on the fake server, through the Responses API.
func resolveResponses(t *testing.T, fp *fakeProvider, opts Options) *Resolved {
	t.Helper()
	m, err := Resolve("openai:o4-mini", envOf(responsesEnv(fp.srv.URL)), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// thinkingConversation is conversation() asking for thinking.
func thinkingConversation() *Request {
	req := conversation()
	req.Thinking = &Thinking{BudgetTokens: 4096}
	return req
}

// inputOf is the input items of a Responses request body, as JSON texts.
func inputOf(t *testing.T, body map[string]any) []string {
	t.Helper()
	items, ok := body["input"].([]any)
	if !ok {
		t.Fatalf("input is not a list of items: %s", jsonOf(body["input"]))
	}
	var out []string
	for _, it := range items {
		out = append(out, jsonOf(it))
	}
	return out
}

const encrypted = "gAAAAABor4dQ7vKx1xD3i9q2Ylk0cW1Z3Jf8hQmYt0pR5sLx9VwzK2nB4eC6aF1gH7jM8oN0qP3rS5tU9vW2xY4zA6bC8dE0fG"

func TestResponsesStreamsReasoningTextAndToolCalls(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		sse(t, []string{"openai_responses_tools.sse", "openai_responses_text.sse"}[min(n, 2)-1])(w)
	})
	m := resolveResponses(t, fp, testOptions(&sleeps{}, nil))
	req := thinkingConversation()
	var th thinkingOf
	var c collect
	resp, err := m.Complete(context.Background(), req, func(d Delta) { th.onDelta(d); c.on(d) })
	if err != nil {
		t.Fatal(err)
	}
	t.Run("posts to /responses, streamed", func(t *testing.T) {
		got := fp.request(0)
		if got.Path != "/v1/responses" || got.Body["stream"] != true || !strings.Contains(got.Header.Get("Authorization"), testKey) {
			t.Errorf("path %q, stream %v, authorization sent: %v", got.Path, got.Body["stream"], strings.Contains(got.Header.Get("Authorization"), testKey))
		}
	})
	t.Run("streams the summary deltas as thinking, a blank line between its parts", func(t *testing.T) {
		want := "**Finding greet**\n\n|The user wants greet; |\n\n|main.go holds main."
		if got := strings.Join(th.pieces, "|"); got != want {
			t.Errorf("pieces = %q\nwant     %q", got, want)
		}
	})
	t.Run("gives back the reasoning item: its id, its encrypted content, its summary", func(t *testing.T) {
		if len(resp.Thinking) != 1 {
			t.Fatalf("thinking = %+v", resp.Thinking)
		}
		b := resp.Thinking[0]
		if b.ID != "rs_68af8c2f5d8c8190b1c3d5e7f9a1b3c5" || b.Encrypted != encrypted ||
			len(b.Summary) != 2 || b.Text != "**Finding greet**\n\nThe user wants greet; \n\nmain.go holds main." ||
			b.Text != strings.Join(th.pieces, "") {
			t.Errorf("thinking = %+v", b)
		}
	})
	t.Run("streams the text and the call, and assembles them", func(t *testing.T) {
		if resp.Text != "Reading main.go first." || c.text != resp.Text {
			t.Errorf("text = %q, streamed %q", resp.Text, c.text)
		}
		want := ToolCall{ID: "call_Kx7pQ2mZ9vR4tY1w", Name: "read_file", Arguments: json.RawMessage(`{"path":"main.go"}`)}
		if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != want.ID || resp.ToolCalls[0].Name != want.Name ||
			string(resp.ToolCalls[0].Arguments) != string(want.Arguments) {
			t.Errorf("tool calls = %+v", resp.ToolCalls)
		}
		if c.names[0] != "read_file" || c.args[0] != `{"path":"main.go"}` || resp.StopReason != StopToolUse {
			t.Errorf("streamed call %q %q, stop %q", c.names[0], c.args[0], resp.StopReason)
		}
	})
	t.Run("counts the cached input and the reasoning in the output", func(t *testing.T) {
		if resp.Usage != (api.Usage{InputTokens: 1862, OutputTokens: 412, CacheReadTokens: 1536}) {
			t.Errorf("usage = %+v", resp.Usage)
		}
	})
	t.Run("sends the reasoning item back, encrypted, before the call it led to", func(t *testing.T) {
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Thinking: resp.Thinking},
			Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: resp.ToolCalls[0].ID, Content: "package main"}}})
		next, err := m.Complete(context.Background(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		in := inputOf(t, fp.request(1).Body)
		want := []string{
			`{"content":"Add a greet function","role":"user"}`,
			`{"content":"Looking first.","role":"assistant"}`,
			`{"arguments":"{\"pattern\":\"*.go\"}","call_id":"call_1","name":"list_files","type":"function_call"}`,
			`{"call_id":"call_1","output":"main.go","type":"function_call_output"}`,
			`{"encrypted_content":"` + encrypted + `","id":"rs_68af8c2f5d8c8190b1c3d5e7f9a1b3c5",` +
				`"summary":[{"text":"**Finding greet**\n\nThe user wants greet; ","type":"summary_text"},{"text":"main.go holds main.","type":"summary_text"}],"type":"reasoning"}`,
			`{"content":"Reading main.go first.","role":"assistant"}`,
			`{"arguments":"{\"path\":\"main.go\"}","call_id":"call_Kx7pQ2mZ9vR4tY1w","name":"read_file","type":"function_call"}`,
			`{"call_id":"call_Kx7pQ2mZ9vR4tY1w","output":"package main","type":"function_call_output"}`,
		}
		if strings.Join(in, "\n") != strings.Join(want, "\n") {
			t.Errorf("input =\n%s\nwant\n%s", strings.Join(in, "\n"), strings.Join(want, "\n"))
		}
		if next.Text != "Done." || next.StopReason != StopEndTurn || ThinkingText(next.Thinking) != "Greet goes after main." ||
			next.Usage != (api.Usage{InputTokens: 2210, OutputTokens: 96}) {
			t.Errorf("answer = %+v", next)
		}
	})
}

func TestResponsesRequestShape(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_text.sse")(w) })
	m := resolveResponses(t, fp, testOptions(&sleeps{}, nil))
	req := thinkingConversation()
	req.Messages[2].ToolResults = append(req.Messages[2].ToolResults, ToolResult{CallID: "call_2", Content: "no such file", IsError: true})
	if _, err := m.Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := fp.request(0).Body
	for _, c := range []struct{ name, key, want string }{
		{"names the model", "model", `"o4-mini"`},
		{"gives the system prompt as instructions", "instructions", `"You are a careful coding agent."`},
		{"stores nothing on OpenAI's side", "store", `false`},
		{"asks for the reasoning summary at the effort of the budget", "reasoning", `{"effort":"medium","summary":"auto"}`},
		{"asks for the encrypted reasoning, to send it back", "include", `["reasoning.encrypted_content"]`},
		{"bounds the output by the answer's tokens and the budget", "max_output_tokens", `5096`},
		{"gives the tools as function tools, not strict", "tools", `[{"description":"Read a file","name":"read_file","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"},"strict":false,"type":"function"},` +
			`{"description":"End the subtask","name":"finish","parameters":{"properties":{},"type":"object"},"strict":false,"type":"function"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := jsonOf(body[c.key]); got != c.want {
				t.Errorf("%s = %s, want %s", c.key, got, c.want)
			}
		})
	}
	t.Run("says a failed tool result failed, in words", func(t *testing.T) {
		in := inputOf(t, body)
		if got := in[len(in)-1]; got != `{"call_id":"call_2","output":"Error: no such file","type":"function_call_output"}` {
			t.Errorf("last item = %s", got)
		}
	})
	t.Run("sends nothing of chat completions", func(t *testing.T) {
		for _, k := range []string{"messages", "max_completion_tokens", "stream_options", "previous_response_id"} {
			if _, ok := body[k]; ok {
				t.Errorf("the request has %q", k)
			}
		}
	})
}

func TestResponsesSendsBackOnlyItsOwnReasoningItems(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_text.sse")(w) })
	req := thinkingConversation()
	req.Messages[1].Thinking = []ThinkingBlock{
		{ID: "rs_1", Encrypted: "enc"},                // a reasoning item without a summary
		{Text: "thought elsewhere", Signature: "sig"}, // another provider's block
		{Text: "a compatible server's reasoning"},     // one that cannot go back
	}
	if _, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	in := inputOf(t, fp.request(0).Body)
	if in[1] != `{"encrypted_content":"enc","id":"rs_1","summary":[],"type":"reasoning"}` || !strings.Contains(in[2], `"role":"assistant"`) {
		t.Errorf("input =\n%s", strings.Join(in, "\n"))
	}
}

func TestResponsesWithoutThinkingAsksNoReasoning(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_text.sse")(w) })
	var th thinkingOf
	resp, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), conversation(), th.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	body := fp.request(0).Body
	for _, k := range []string{"reasoning", "include"} {
		if _, ok := body[k]; ok {
			t.Errorf("the request asks for %s: %s", k, jsonOf(body[k]))
		}
	}
	if body["max_output_tokens"] != float64(1000) || resp.Text != "Done." {
		t.Errorf("max_output_tokens %v, text %q", body["max_output_tokens"], resp.Text)
	}
}

func TestReasoningEffortOfTheBudget(t *testing.T) {
	for _, c := range []struct {
		budget int
		want   string
	}{{1024, "low"}, {4095, "low"}, {4096, "medium"}, {16383, "medium"}, {16384, "high"}, {128000, "high"}} {
		if got := string(reasoningEffort(c.budget)); got != c.want {
			t.Errorf("a budget of %d tokens is effort %q, want %q", c.budget, got, c.want)
		}
	}
}

func TestResponsesSendsImages(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_text.sse")(w) })
	if _, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), withImages(), nil); err != nil {
		t.Fatal(err)
	}
	in := inputOf(t, fp.request(0).Body)
	url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pixel)
	t.Run("the user message is its input_text, then an input_image with a data URL", func(t *testing.T) {
		want := `{"content":[{"text":"Add a greet function","type":"input_text"},{"detail":"auto","image_url":"` + url + `","type":"input_image"}],"role":"user"}`
		if in[0] != want {
			t.Errorf("item = %s\nwant   %s", in[0], want)
		}
	})
	t.Run("a tool result's images go in its output, after its text", func(t *testing.T) {
		want := `{"call_id":"call_1","output":[{"text":"main.go","type":"input_text"},{"image_url":"` + url + `","type":"input_image"}],"type":"function_call_output"}`
		if in[3] != want {
			t.Errorf("item = %s\nwant   %s", in[3], want)
		}
	})
}

// toServer sends every request to srv, whatever host it was for: the
// client believes it speaks to api.openai.com.
type toServer struct{ srv *url.URL }

func (ts toServer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = ts.srv.Scheme, ts.srv.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestOpenAIPicksTheResponsesAPIForThinkingOnItsOwnReasoningModels(t *testing.T) {
	for _, c := range []struct {
		name, model string
		think       bool
		env         map[string]string
		path        string
	}{
		{"o4-mini thinking on api.openai.com speaks Responses", "o4-mini", true, nil, "/v1/responses"},
		{"gpt-5 thinking on api.openai.com speaks Responses", "gpt-5", true, nil, "/v1/responses"},
		{"o4-mini not thinking speaks chat completions", "o4-mini", false, nil, "/v1/chat/completions"},
		{"gpt-4.1-mini, which does not reason, speaks chat completions even thinking", "gpt-4.1-mini", true, nil, "/v1/chat/completions"},
		{"gpt-5-chat-latest, which takes no reasoning settings, speaks chat completions", "gpt-5-chat-latest", true, nil, "/v1/chat/completions"},
		{"AGENTLS_OPENAI_API=chat keeps o4-mini thinking on chat completions", "o4-mini", true, map[string]string{"AGENTLS_OPENAI_API": "chat"}, "/v1/chat/completions"},
		{"an explicit OPENAI_BASE_URL of api.openai.com is OpenAI's own", "o3", true, map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1"}, "/v1/responses"},
		{"another server is spoken to in chat completions", "o3", true, map[string]string{"OPENAI_BASE_URL": "https://llm.example.com/v1"}, "/v1/chat/completions"},
		{"another server with AGENTLS_OPENAI_API=responses speaks Responses", "o3", false, map[string]string{"OPENAI_BASE_URL": "https://llm.example.com/v1", "AGENTLS_OPENAI_API": "Responses"}, "/v1/responses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if r.URL.Path == "/v1/responses" {
					sse(t, "openai_responses_text.sse")(w)
				} else {
					sse(t, "openai_stream_text.sse")(w)
				}
			})
			u, _ := url.Parse(fp.srv.URL)
			opts := testOptions(&sleeps{}, nil)
			opts.HTTPClient = &http.Client{Transport: toServer{u}}
			env := map[string]string{"OPENAI_API_KEY": testKey}
			for k, v := range c.env {
				env[k] = v
			}
			m, err := Resolve("openai:"+c.model, envOf(env), opts)
			if err != nil {
				t.Fatal(err)
			}
			req := conversation()
			if c.think {
				req.Thinking = &Thinking{BudgetTokens: 4096}
			}
			if _, err := m.Complete(context.Background(), req, nil); err != nil {
				t.Fatal(err)
			}
			if got := fp.request(0).Path; got != c.path {
				t.Errorf("path = %q, want %q", got, c.path)
			}
		})
	}
}

func TestResolveRefusesAnUnknownOpenAIAPI(t *testing.T) {
	_, err := Resolve("openai:o3", envOf(map[string]string{"OPENAI_API_KEY": testKey, "AGENTLS_OPENAI_API": "assistants"}), Options{})
	var ae *api.Error
	if !errors.As(err, &ae) || ae.Code != api.CodeModelUnavailable || !strings.Contains(err.Error(), `AGENTLS_OPENAI_API="assistants" is not chat or responses`) {
		t.Errorf("err = %v", err)
	}
}

func TestResponsesErrors(t *testing.T) {
	t.Run("a 429 is retried after its Retry-After, the second attempt answering", func(t *testing.T) {
		s := &sleeps{}
		var retries []RetryEvent
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				errorAnswer(t, 429, "openai_429.json", map[string]string{"Retry-After": "7"})(w)
				return
			}
			sse(t, "openai_responses_text.sse")(w)
		})
		resp, err := resolveResponses(t, fp, testOptions(s, func(e RetryEvent) { retries = append(retries, e) })).Complete(context.Background(), thinkingConversation(), nil)
		if err != nil || resp.Text != "Done." {
			t.Fatalf("resp %+v, err %v", resp, err)
		}
		if len(retries) != 1 || !errors.Is(retries[0].Err, ErrRateLimited) || s.all()[0].Seconds() != 7 || fp.count() != 2 {
			t.Errorf("retries %+v, sleeps %v, requests %d", retries, s.all(), fp.count())
		}
	})
	t.Run("a 401 is an auth error naming the variable, never retried", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { errorAnswer(t, 401, "openai_401.json", nil)(w) })
		_, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), thinkingConversation(), nil)
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "OPENAI_API_KEY") || strings.Contains(err.Error(), testKey) || fp.count() != 1 {
			t.Errorf("err %v after %d requests", err, fp.count())
		}
	})
	t.Run("a response that fails mid-stream is retried, its thinking restarted", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			sse(t, []string{"openai_responses_failed.sse", "openai_responses_text.sse"}[min(n, 2)-1])(w)
		})
		var restarts int
		var th thinkingOf
		resp, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), thinkingConversation(), func(d Delta) {
			if d.Restart {
				restarts++
				th.pieces = nil
			}
			th.onDelta(d)
		})
		if err != nil || restarts != 1 || strings.Join(th.pieces, "") != "Greet goes after main." || resp.Text != "Done." {
			t.Errorf("resp %+v, err %v, restarts %d, thinking %q", resp, err, restarts, th.pieces)
		}
	})
	t.Run("a failure every time is a server error with the provider's words", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_failed.sse")(w) })
		_, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), thinkingConversation(), nil)
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "The model produced invalid content") || fp.count() != 4 {
			t.Errorf("err %v after %d requests", err, fp.count())
		}
	})
	t.Run("an error event refusing the prompt is the request's fault, never retried", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_responses_error_event.sse")(w) })
		_, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), thinkingConversation(), nil)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "flagged as potentially violating") || fp.count() != 1 {
			t.Errorf("err %v after %d requests", err, fp.count())
		}
	})
	t.Run("a stream cut before response.completed is a dropped connection, retried", func(t *testing.T) {
		full := string(fixture(t, "openai_responses_text.sse"))
		cut := full[:strings.Index(full, "event: response.completed")]
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(cut))
		})
		_, err := resolveResponses(t, fp, testOptions(&sleeps{}, nil)).Complete(context.Background(), thinkingConversation(), nil)
		if !errors.Is(err, ErrNetwork) || fp.count() != 4 {
			t.Errorf("err %v after %d requests", err, fp.count())
		}
	})
}
