package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
)

// FuzzParseScript checks that no input crashes the loader, and that every
// script it accepts can be replayed and recorded back into a script that
// loads again.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(demoScript))
	f.Add([]byte(`{"agents": {"1": [{"toolCalls": [{"name": "x", "arguments": null}]}]}}`))
	f.Add([]byte(`{"agents": {"2:1": [{"delayMs": 0, "usage": {"inputTokens": 1, "outputTokens": 2}}]}}`))
	f.Add([]byte(`{"agents": {"a:b:c": [{"error": "boom"}]}}`))
	f.Add([]byte(`{"agents": {"1": [{"usage": {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 8, "cacheWriteTokens": 1}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			return
		}
		rec := NewRecorder(s, t.TempDir()+"/r.json", nil, nil)
		for _, key := range s.Agents() {
			for _, turn := range s.Turns(key) {
				if turn.DelayMs > 0 {
					continue
				}
				_, _ = rec.Complete(context.Background(), &Request{Agent: key}, nil)
			}
		}
		out, err := rec.Marshal()
		if err != nil {
			t.Fatalf("recording an accepted script: %v", err)
		}
		if _, err := ParseScript(out); err != nil {
			t.Fatalf("the recording of an accepted script does not load: %v\n%s", err, out)
		}
	})
}

// FuzzOpenAIStream checks that no answer a server streams, in chat
// completions or the Responses API, crashes the client: Complete returns
// an answer whose tool calls carry JSON arguments, or a classified error.
func FuzzOpenAIStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\",\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n"), false)
	f.Add([]byte(": keep-alive\r\n\r\ndata: {\"error\":{\"message\":\"x\",\"code\":502}}\n\n"), false)
	f.Add([]byte("event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"summary_index\":3,\"delta\":\"a\"}\n\n"+
		"data: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"function_call\",\"call_id\":\"c\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}\n\n"+
		"data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1}}}\n\n"), true)
	f.Add([]byte("data: {\"type\":\"error\",\"code\":\"server_error\"}\n\n"), true)
	f.Fuzz(func(t *testing.T, body []byte, responses bool) {
		hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body: io.NopCloser(bytes.NewReader(body)), Request: r}, nil
		})}
		env := map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "http://model.test/v1", "AGENTLS_OPENAI_API": "chat"}
		if responses {
			env["AGENTLS_OPENAI_API"] = "responses"
		}
		opts := Options{HTTPClient: hc, Retry: RetryPolicy{MaxAttempts: 1}}
		m, err := Resolve("openai:o4-mini", envOf(env), opts)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(context.Background(), thinkingConversation(), func(Delta) {})
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("an unclassified error: %v", err)
			}
			return
		}
		for _, c := range resp.ToolCalls {
			if !json.Valid(c.Arguments) {
				t.Fatalf("tool call %q with arguments that are not JSON: %q", c.Name, c.Arguments)
			}
		}
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
