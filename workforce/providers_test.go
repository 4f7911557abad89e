package workforce

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/clients"
)

// Short answers in each provider's streaming format: the request is what
// the test looks at.
const (
	openaiAnswer = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}

data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: [DONE]

`
	anthropicAnswer = `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1},"content":[],"stop_reason":null}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}

event: message_stop
data: {"type":"message_stop"}

`
)

// TestToolSchemasReachEveryProvider sends the generated tools (the
// workers' and plan) through each provider's client to an httptest server
// that speaks its wire format, and holds the request to what the API
// takes: every tool by name, its description, and its schema as generated,
// in the place the API reads it (OpenAI and Ollama: function.parameters;
// Anthropic: input_schema).
func TestToolSchemasReachEveryProvider(t *testing.T) {
	tools := append(slices.Clip(toolkit()), planTool())
	for _, p := range []struct {
		name   string
		spec   string
		env    func(url string) map[string]string
		answer string
		// schema finds a tool's name, description and schema in the
		// request body.
		schema func(tool map[string]any) (name, description string, schema any)
	}{
		{
			name: "openai", spec: "openai:gpt-4.1-mini", answer: openaiAnswer,
			env: func(u string) map[string]string {
				return map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": u + "/v1"}
			},
			schema: openaiTool,
		},
		{
			name: "anthropic", spec: "anthropic:claude-sonnet-4-5", answer: anthropicAnswer,
			env: func(u string) map[string]string {
				return map[string]string{"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": u}
			},
			schema: func(tl map[string]any) (string, string, any) {
				name, _ := tl["name"].(string)
				desc, _ := tl["description"].(string)
				return name, desc, tl["input_schema"]
			},
		},
		{
			name: "ollama", spec: "ollama:qwen2.5-coder:7b", answer: openaiAnswer,
			env: func(u string) map[string]string {
				return map[string]string{"OLLAMA_HOST": strings.TrimPrefix(u, "http://")}
			},
			schema: openaiTool,
		},
	} {
		t.Run(p.name+" is sent every tool's schema as generated", func(t *testing.T) {
			var (
				mu     sync.Mutex
				bodies []map[string]any
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				raw, _ := io.ReadAll(r.Body)
				var body map[string]any
				if err := json.Unmarshal(raw, &body); err != nil {
					t.Errorf("the request body is not JSON: %v", err)
				}
				mu.Lock()
				bodies = append(bodies, body)
				mu.Unlock()
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, p.answer)
			}))
			t.Cleanup(srv.Close)
			env := p.env(srv.URL)
			m, err := clients.Resolve(p.spec, func(k string) string { return env[k] }, clients.Options{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := m.Complete(context.Background(), &clients.Request{
				Agent: "1", System: "s", Tools: tools, MaxTokens: 100,
				Messages: []clients.Message{{Role: clients.RoleUser, Text: "go"}},
			}, nil)
			if err != nil {
				t.Fatalf("the client refused the tools: %v", err)
			}
			if resp.Text != "ok" {
				t.Errorf("answer = %+v", resp)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 1 {
				t.Fatalf("%d requests", len(bodies))
			}
			sent, _ := bodies[0]["tools"].([]any)
			if len(sent) != len(tools) {
				t.Fatalf("%d tools sent, want %d: %v", len(sent), len(tools), bodies[0]["tools"])
			}
			for i, tl := range tools {
				name, desc, schema := p.schema(sent[i].(map[string]any))
				var want any
				if err := json.Unmarshal(tl.Parameters, &want); err != nil {
					t.Fatal(err)
				}
				if name != tl.Name || desc != tl.Description {
					t.Errorf("tool %d is sent as %q: %q, want %q: %q", i, name, desc, tl.Name, tl.Description)
				}
				if !reflect.DeepEqual(schema, want) {
					got, _ := json.Marshal(schema)
					t.Errorf("%s's schema is sent as\n%s\nwant\n%s", tl.Name, got, tl.Parameters)
				}
			}
		})
	}
}

// openaiTool reads a tool of the Chat Completions API.
func openaiTool(tl map[string]any) (string, string, any) {
	if tl["type"] != "function" {
		return "", "", nil
	}
	fn, _ := tl["function"].(map[string]any)
	name, _ := fn["name"].(string)
	desc, _ := fn["description"].(string)
	return name, desc, fn["parameters"]
}
