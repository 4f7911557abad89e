package clients

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentls/agentls/api"
)

func TestProvidersStreamTextAndToolCalls(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name+" assembles text, split tool arguments and usage from the stream", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.tools)(w) })
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
			var c collect
			resp, err := m.Complete(context.Background(), conversation(), c.on)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "Reading main.go first." || c.text != resp.Text {
				t.Errorf("text = %q, streamed %q", resp.Text, c.text)
			}
			if len(resp.ToolCalls) == 0 || resp.ToolCalls[0].Name != "read_file" {
				t.Fatalf("tool calls = %+v", resp.ToolCalls)
			}
			var args map[string]string
			if err := json.Unmarshal(resp.ToolCalls[0].Arguments, &args); err != nil || args["path"] != "main.go" {
				t.Errorf("arguments = %s (%v)", resp.ToolCalls[0].Arguments, err)
			}
			if c.args[0] != string(resp.ToolCalls[0].Arguments) || c.names[0] != "read_file" {
				t.Errorf("streamed call 0 = %q %q", c.names[0], c.args[0])
			}
			if resp.ToolCalls[0].ID == "" {
				t.Error("tool call has no id")
			}
			if resp.StopReason != StopToolUse {
				t.Errorf("stop = %q", resp.StopReason)
			}
			if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
				t.Errorf("usage = %+v", resp.Usage)
			}
			got := fp.request(0)
			if got.Path != pc.path {
				t.Errorf("path = %q, want %q", got.Path, pc.path)
			}
			if got.Body["stream"] != true {
				t.Errorf("stream = %v", got.Body["stream"])
			}
			auth := got.Header.Get("Authorization") + got.Header.Get("X-Api-Key")
			if !strings.Contains(auth, testKey) {
				t.Errorf("the key was not sent: %q", auth)
			}
		})
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	pc := providers[0]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	resp, err := m.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello there." || resp.StopReason != StopEndTurn || resp.Usage.InputTokens != 9 || resp.Usage.OutputTokens != 3 {
		t.Errorf("response = %+v", resp)
	}
	body := fp.request(0).Body
	js, _ := json.Marshal(body)
	for _, want := range []string{
		`"model":"gpt-4.1-mini"`, `"include_usage":true`, `"max_completion_tokens":1000`,
		`"role":"system"`, `"content":"You are a careful coding agent."`,
		`"tool_calls":[{"function":{"arguments":"{\"pattern\":\"*.go\"}","name":"list_files"},"id":"call_1","type":"function"}]`,
		`"role":"tool"`, `"tool_call_id":"call_1"`,
		`"name":"read_file"`, `"required":["path"]`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("request lacks %s:\n%s", want, js)
		}
	}
}

func TestAnthropicRequestShape(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, pc.text)(w) })
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	resp, err := m.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello there." || resp.StopReason != StopEndTurn || resp.Usage.InputTokens != 25 || resp.Usage.OutputTokens != 15 {
		t.Errorf("response = %+v", resp)
	}
	js, _ := json.Marshal(fp.request(0).Body)
	for _, want := range []string{
		`"model":"claude-sonnet-4-5"`, `"max_tokens":1000`,
		`"system":[{"cache_control":{"type":"ephemeral"},"text":"You are a careful coding agent.","type":"text"}]`,
		`{"id":"call_1","input":{"pattern":"*.go"},"name":"list_files","type":"tool_use"}`,
		`{"cache_control":{"type":"ephemeral"},"content":[{"text":"main.go","type":"text"}],"is_error":false,"tool_use_id":"call_1","type":"tool_result"}`,
		`"input_schema":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("request lacks %s:\n%s", want, js)
		}
	}
}

func TestOllamaSpeaksTheOpenAICompatibleEndpoint(t *testing.T) {
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "ollama_stream_tools.sse")(w) })
	host := strings.TrimPrefix(fp.srv.URL, "http://") // OLLAMA_HOST is often written without a scheme
	m, err := Resolve("ollama:qwen2.5-coder:7b", envOf(map[string]string{"OLLAMA_HOST": host}), testOptions(&sleeps{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "qwen2.5-coder:7b" {
		t.Errorf("model name = %q", m.Name)
	}
	resp, err := m.Complete(context.Background(), conversation(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_x7pvhuri" || string(resp.ToolCalls[0].Arguments) != `{"path":"main.go"}` {
		t.Errorf("tool calls = %+v", resp.ToolCalls)
	}
	if resp.StopReason != StopToolUse {
		t.Errorf("a finish_reason of stop with tool calls must still read as tool_use, got %q", resp.StopReason)
	}
	if resp.Usage.InputTokens != 180 || resp.Usage.OutputTokens != 22 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	got := fp.request(0)
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", got.Path)
	}
	if got.Body["max_tokens"] != float64(1000) || got.Body["model"] != "qwen2.5-coder:7b" {
		t.Errorf("body = %v", got.Body)
	}
}

func TestErrorClasses(t *testing.T) {
	type errCase struct {
		name     string
		status   int
		fixture  string
		header   map[string]string
		kind     error
		requests int // how many requests the call makes
		wantMsg  string
	}
	for _, pc := range providers {
		cases := []errCase{
			{name: "a 401 is an auth error naming the variable, never retried", status: 401, fixture: pc.prefix + "_401.json", kind: ErrAuth, requests: 1, wantMsg: pc.keyVar},
			{name: "a 404 is model not found, never retried", status: 404, fixture: pc.prefix + "_404_model.json", kind: ErrModelNotFound, requests: 1, wantMsg: "not found"},
			{name: "a 400 on context length is context too long, never retried", status: 400, fixture: pc.prefix + "_400_context.json", kind: ErrContextTooLong, requests: 1, wantMsg: "context window"},
			{name: "a 500 every time is a server error after every attempt", status: 500, fixture: pc.prefix + "_500.json", kind: ErrServer, requests: 4, wantMsg: "after 4 attempts"},
		}
		for _, tc := range cases {
			t.Run(pc.name+": "+tc.name, func(t *testing.T) {
				fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
					errorAnswer(t, tc.status, tc.fixture, tc.header)(w)
				})
				core, logs := observer.New(zap.DebugLevel)
				opts := testOptions(&sleeps{}, nil)
				opts.Logger = zap.New(core)
				m := resolveFake(t, pc, fp.srv.URL, opts)
				_, err := m.Complete(context.Background(), conversation(), nil)
				t.Logf("error: %v", err)
				if !errors.Is(err, tc.kind) {
					t.Fatalf("err = %v, want kind %v", err, tc.kind)
				}
				var me *Error
				if !errors.As(err, &me) || me.Status != tc.status {
					t.Errorf("status = %+v", me)
				}
				if fp.count() != tc.requests {
					t.Errorf("requests = %d, want %d", fp.count(), tc.requests)
				}
				if !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("message %q lacks %q", err.Error(), tc.wantMsg)
				}
				assertNoKey(t, err, logs)
			})
		}
	}
}

// assertNoKey fails if the key, or the pieces of it providers echo, is in
// the error (its whole chain) or any log line.
func assertNoKey(t *testing.T, err error, logs *observer.ObservedLogs) {
	t.Helper()
	texts := []string{}
	for e := err; e != nil; e = errors.Unwrap(e) {
		texts = append(texts, e.Error())
	}
	for _, entry := range logs.All() {
		js, _ := json.Marshal(entry.ContextMap())
		texts = append(texts, entry.Message, string(js))
	}
	for _, s := range texts {
		for _, piece := range []string{testKey, testKey[:8], testKey[len(testKey)-4:]} {
			if strings.Contains(s, piece) {
				t.Errorf("%q leaks the key (%q)", s, piece)
			}
		}
	}
}

func TestRetries(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name+": a 429 waits what Retry-After asks, reports the retry, then succeeds", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					errorAnswer(t, 429, pc.prefix+"_429.json", map[string]string{"Retry-After": "7"})(w)
					return
				}
				sse(t, pc.text)(w)
			})
			var s sleeps
			var events []RetryEvent
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&s, func(e RetryEvent) { events = append(events, e) }))
			resp, err := m.Complete(context.Background(), conversation(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "Hello there." {
				t.Errorf("text = %q", resp.Text)
			}
			if got := s.all(); len(got) != 1 || got[0] != 7*time.Second {
				t.Errorf("waits = %v, want [7s]", got)
			}
			if len(events) != 1 || !errors.Is(events[0].Err, ErrRateLimited) || events[0].Attempt != 1 || events[0].Delay != 7*time.Second {
				t.Fatalf("retry events = %+v", events)
			}
			if msg := events[0].Message(); !strings.Contains(msg, "retrying in 7s (attempt 2 of 4)") {
				t.Errorf("retry message = %q", msg)
			}
		})
		t.Run(pc.name+": a 500 then success is retried after the backoff", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					errorAnswer(t, 500, pc.prefix+"_500.json", nil)(w)
					return
				}
				sse(t, pc.text)(w)
			})
			var s sleeps
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&s, nil))
			if _, err := m.Complete(context.Background(), conversation(), nil); err != nil {
				t.Fatal(err)
			}
			// Base 1s with jitter in [0.5s, 1s); Rand is 0.5.
			if got := s.all(); len(got) != 1 || got[0] != 750*time.Millisecond {
				t.Errorf("waits = %v, want [750ms]", got)
			}
			if fp.count() != 2 {
				t.Errorf("requests = %d", fp.count())
			}
		})
		t.Run(pc.name+": a Retry-After longer than the longest wait gives up at once", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				errorAnswer(t, 429, pc.prefix+"_429.json", map[string]string{"Retry-After": "3600"})(w)
			})
			var s sleeps
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&s, nil))
			_, err := m.Complete(context.Background(), conversation(), nil)
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, ErrRateLimited) || me.RetryAfter != time.Hour {
				t.Fatalf("err = %v", err)
			}
			if fp.count() != 1 || len(s.all()) != 0 {
				t.Errorf("requests = %d, waits = %v", fp.count(), s.all())
			}
		})
	}
}

func TestAnthropicErrorEventMidStreamIsRetriedWithARestart(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			sse(t, "anthropic_stream_overloaded.sse")(w)
			return
		}
		sse(t, pc.text)(w)
	})
	var events []RetryEvent
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, func(e RetryEvent) { events = append(events, e) }))
	var c collect
	resp, err := m.Complete(context.Background(), conversation(), c.on)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || !errors.Is(events[0].Err, ErrServer) || !strings.Contains(events[0].Err.Error(), "Overloaded") {
		t.Fatalf("events = %+v", events)
	}
	if c.restarts != 1 || c.text != "Hello there." || resp.Text != "Hello there." {
		t.Errorf("restarts = %d, streamed %q, text %q", c.restarts, c.text, resp.Text)
	}
}

func TestAnthropicErrorEventWithoutRetriesIsClassified(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "anthropic_stream_overloaded.sse")(w) })
	opts := testOptions(&sleeps{}, nil)
	opts.Retry.MaxAttempts = 1
	m := resolveFake(t, pc, fp.srv.URL, opts)
	_, err := m.Complete(context.Background(), conversation(), nil)
	if !errors.Is(err, ErrServer) || !Retryable(err) {
		t.Fatalf("err = %v", err)
	}
}

func TestProvidersReportCachedInput(t *testing.T) {
	streams := map[string]string{
		"openai": `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi."},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4.1-mini","choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":3,"total_tokens":2009,"prompt_tokens_details":{"cached_tokens":1920}}}

data: [DONE]

`,
		"anthropic": `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":21,"cache_creation_input_tokens":188,"cache_read_input_tokens":1800,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}

event: message_stop
data: {"type":"message_stop"}

`,
	}
	want := map[string]api.Usage{
		"openai":    {InputTokens: 2006, CacheReadTokens: 1920, OutputTokens: 3},
		"anthropic": {InputTokens: 2009, CacheReadTokens: 1800, CacheWriteTokens: 188, OutputTokens: 3},
	}
	for _, pc := range providers {
		t.Run(pc.name+" counts the cached part of the input", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, streams[pc.name])
			})
			resp, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), conversation(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != want[pc.name] {
				t.Errorf("usage = %+v, want %+v", resp.Usage, want[pc.name])
			}
		})
	}
}
