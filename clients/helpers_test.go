package clients

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

const testKey = "sk-test-0123456789abcdef"

// recorded is one request the fake provider received.
type recorded struct {
	Path   string
	Query  url.Values
	Header http.Header
	Body   map[string]any
}

// fakeProvider is an httptest server that speaks a provider's wire format
// from fixtures; answer decides the n-th (1-based) answer.
type fakeProvider struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	requests []recorded
	answer   func(w http.ResponseWriter, r *http.Request, n int)
}

func newFakeProvider(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, n int)) *fakeProvider {
	t.Helper()
	f := &fakeProvider{t: t, answer: answer}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: body})
		n := len(f.requests)
		f.mu.Unlock()
		f.answer(w, r, n)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func (f *fakeProvider) request(i int) recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.requests) {
		f.t.Fatalf("request %d was never made (%d made)", i, len(f.requests))
	}
	return f.requests[i]
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sse answers with a fixture as an event stream.
func sse(t testing.TB, name string) func(http.ResponseWriter) {
	body := fixture(t, name)
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

// errorAnswer answers with a status and a fixture body.
func errorAnswer(t testing.TB, status int, name string, header map[string]string) func(http.ResponseWriter) {
	body := fixture(t, name)
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// sleeps records the waits of retries without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// testOptions has steady retries: no real waits, jitter at its midpoint.
func testOptions(s *sleeps, onRetry func(RetryEvent)) Options {
	return Options{
		Retry:   RetryPolicy{MaxAttempts: 4, BaseDelay: time.Second, MaxDelay: 30 * time.Second, MaxElapsed: 2 * time.Minute},
		OnRetry: onRetry,
		Sleep:   s.sleep,
		Rand:    func() float64 { return 0.5 },
	}
}

// provider describes how to reach a fake server for each provider.
type providerCase struct {
	name    string
	spec    string
	env     func(url string) map[string]string
	path    string
	tools   string // fixture with text + a read_file call
	text    string // fixture with text only
	prefix  string // error fixtures prefix
	keyVar  string
	errBody string // JSON of a mid-stream error event fixture, "" if none
}

var providers = []providerCase{
	{
		name: "openai", spec: "openai:gpt-4.1-mini",
		env: func(u string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": u + "/v1"}
		},
		path: "/v1/chat/completions", tools: "openai_stream_tools.sse", text: "openai_stream_text.sse", prefix: "openai", keyVar: "OPENAI_API_KEY",
	},
	{
		name: "anthropic", spec: "anthropic:claude-sonnet-4-5",
		env: func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": u}
		},
		path: "/v1/messages", tools: "anthropic_stream_tools.sse", text: "anthropic_stream_text.sse", prefix: "anthropic", keyVar: "ANTHROPIC_API_KEY",
	},
}

func resolveFake(t *testing.T, pc providerCase, url string, opts Options) *Resolved {
	t.Helper()
	r, err := Resolve(pc.spec, envOf(pc.env(url)), opts)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", pc.spec, err)
	}
	return r
}

// conversation is a request that uses every kind of message.
func conversation() *Request {
	return &Request{
		Agent:  "1",
		System: "You are a careful coding agent.",
		Messages: []Message{
			{Role: RoleUser, Text: "Add a greet function"},
			{Role: RoleAssistant, Text: "Looking first.", ToolCalls: []ToolCall{{ID: "call_1", Name: "list_files", Arguments: json.RawMessage(`{"pattern":"*.go"}`)}}},
			{Role: RoleTool, ToolResults: []ToolResult{{CallID: "call_1", Content: "main.go"}}},
		},
		Tools: []Tool{
			{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "finish", Description: "End the subtask"},
		},
		MaxTokens: 1000,
	}
}

// collect gathers deltas.
type collect struct {
	text     string
	args     map[int]string
	names    map[int]string
	restarts int
}

func (c *collect) on(d Delta) {
	if c.args == nil {
		c.args, c.names = map[int]string{}, map[int]string{}
	}
	if d.Restart {
		c.restarts++
		c.text, c.args, c.names = "", map[int]string{}, map[int]string{}
		return
	}
	c.text += d.Text
	if d.ToolCall != nil {
		c.args[d.ToolCall.Index] += d.ToolCall.Arguments
		if d.ToolCall.Name != "" {
			c.names[d.ToolCall.Index] = d.ToolCall.Name
		}
	}
}
