package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// streamOf answers with a body of events, as written.
func streamOf(body string) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}
}

// chunks is a chat completions stream of the given chunks, each one a data
// event.
func chunks(cs ...string) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

// events is a Responses API stream: each event named by its type.
func events(t *testing.T, evs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range evs {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(e), &head); err != nil {
			t.Fatalf("event %s: %v", e, err)
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", head.Type, e)
	}
	return b.String()
}

// once is a call with one attempt.
func once() Options {
	o := testOptions(&sleeps{}, nil)
	o.Retry.MaxAttempts = 1
	return o
}

func TestOpenAIStreamReading(t *testing.T) {
	pc := providers[0]
	stop := `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	cases := []struct {
		name   string
		stream string
		text   string
		check  func(t *testing.T, resp *Response, c *collect)
	}{
		{
			name: "comments, keep-alives, named events and data split over lines read as one answer",
			stream: ": OPENROUTER PROCESSING\n\n: keep-alive\nevent: chunk\ndata: {\"choices\":[{\"index\":0,\n" +
				"data: \"delta\":{\"content\":\"Hel\"}}]}\n\n:ping\r\n\r\n" + chunks(`{"choices":[{"index":0,"delta":{"content":"lo."}}]}`, stop),
			text: "Hello.",
		},
		{
			name:   "nothing after data: [DONE] is read",
			stream: chunks(`{"choices":[{"index":0,"delta":{"content":"Done."}}]}`, stop, "[DONE]", `{"choices":[`, `{"error":{"message":"late"}}`),
			text:   "Done.",
		},
		{
			name:   "an error member that is null is no error",
			stream: chunks(`{"error":null,"choices":[{"index":0,"delta":{"content":"Fine."},"finish_reason":"stop"}]}`),
			text:   "Fine.",
		},
		{
			name:   "only the first choice is the answer",
			stream: chunks(`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"content":"first"},"finish_reason":"stop"}]}`),
			text:   "first",
		},
		{
			name: "usage comes in the last chunk, with the cached part of the prompt",
			stream: chunks(`{"choices":[{"index":0,"delta":{"content":"Hi."},"finish_reason":"stop"}],"usage":null}`,
				`{"choices":[],"usage":{"prompt_tokens":2006,"completion_tokens":3,"total_tokens":2009,"prompt_tokens_details":{"cached_tokens":1920}}}`, "[DONE]"),
			text: "Hi.",
			check: func(t *testing.T, resp *Response, c *collect) {
				if u := resp.Usage; u.InputTokens != 2006 || u.OutputTokens != 3 || u.CacheReadTokens != 1920 {
					t.Errorf("usage = %+v", u)
				}
			},
		},
		{
			name: "members of another type than the API's are read as the SDKs read them",
			stream: chunks(`{"choices":[{"index":0,"delta":{"content":5}}]}`,
				`{"choices":{"not":"a list"}}`,
				`{"choices":[{"index":"0","delta":"not an object"}]}`,
				`{"choices":[{"index":0.0,"delta":{"content":"!"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5.0,"completion_tokens":"3","prompt_tokens_details":null}}`),
			text: "5!",
			check: func(t *testing.T, resp *Response, c *collect) {
				if u := resp.Usage; u.InputTokens != 5 || u.OutputTokens != 3 {
					t.Errorf("usage = %+v", u)
				}
			},
		},
		{
			name: "tool calls split across chunks, interleaved, are put together by their index",
			stream: chunks(
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"pa"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"name":"finish","arguments":{"summary":"ok"}}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a.go\"}"}}]},"finish_reason":"tool_calls"}]}`),
			check: func(t *testing.T, resp *Response, c *collect) {
				want := []ToolCall{
					{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
					// No id (some servers give none), and arguments as
					// an object rather than the text of one.
					{ID: "call_1", Name: "finish", Arguments: json.RawMessage(`{"summary":"ok"}`)},
				}
				if len(resp.ToolCalls) != len(want) {
					t.Fatalf("tool calls = %+v", resp.ToolCalls)
				}
				for i, w := range want {
					if g := resp.ToolCalls[i]; g.ID != w.ID || g.Name != w.Name || string(g.Arguments) != string(w.Arguments) {
						t.Errorf("call %d = %s %s %s, want %s %s %s", i, g.ID, g.Name, g.Arguments, w.ID, w.Name, w.Arguments)
					}
					if c.args[i] != string(w.Arguments) || c.names[i] != w.Name {
						t.Errorf("streamed call %d = %q %q", i, c.names[i], c.args[i])
					}
				}
				if resp.StopReason != StopToolUse {
					t.Errorf("stop = %q", resp.StopReason)
				}
			},
		},
		{
			name:   "the finish reason length is the token limit",
			stream: chunks(`{"choices":[{"index":0,"delta":{"content":"cut"},"finish_reason":"length"}]}`),
			text:   "cut",
			check: func(t *testing.T, resp *Response, c *collect) {
				if resp.StopReason != StopMaxTokens {
					t.Errorf("stop = %q", resp.StopReason)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, streamOf(tc.stream))
			var c collect
			resp, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), conversation(), c.on)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != tc.text || c.text != tc.text {
				t.Errorf("text = %q, streamed %q, want %q", resp.Text, c.text, tc.text)
			}
			if tc.check != nil {
				tc.check(t, resp, &c)
			}
		})
	}
}

func TestOpenAICompatibleReasoningFields(t *testing.T) {
	pc := providers[0]
	stream := chunks(
		`{"choices":[{"index":0,"delta":{"reasoning_content":"First, "}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning":"then","content":null}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":null,"reasoning":" last."}}]}`,
		`{"choices":[{"index":0,"delta":{"reasoning_content":7}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"Answer."},"finish_reason":"stop"}]}`)
	for _, think := range []bool{true, false} {
		t.Run(fmt.Sprintf("reasoning_content or reasoning, strings only, are the thinking when asked (%v)", think), func(t *testing.T) {
			fp := newFakeProvider(t, streamOf(stream))
			req := conversation()
			if think {
				req.Thinking = &Thinking{BudgetTokens: 2048}
			}
			var th thinkingOf
			resp, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), req, th.onDelta)
			if err != nil {
				t.Fatal(err)
			}
			want := "First, |then| last."
			if !think {
				want = ""
			}
			if got := strings.Join(th.pieces, "|"); got != want {
				t.Errorf("thinking streamed = %q, want %q", got, want)
			}
			if got := ThinkingText(resp.Thinking); got != strings.ReplaceAll(want, "|", "") || resp.Text != "Answer." {
				t.Errorf("thinking = %q, text = %q", got, resp.Text)
			}
		})
	}
}

func TestOpenAIErrorsInTheStream(t *testing.T) {
	pc := providers[0]
	cases := []struct {
		name      string
		event     string
		kind      error
		status    int
		retryable bool
		detail    string
	}{
		{"an error object with a numeric code is that status", `{"error":{"message":"Upstream overloaded","type":"server_error","code":502}}`, ErrServer, 502, true, "Upstream overloaded"},
		{"a rate limit is a rate limit", `{"error":{"message":"slow down","type":"tokens","code":"rate_limit_exceeded"}}`, ErrRateLimited, 0, true, "slow down"},
		{"a context overflow is not retried", `{"error":{"message":"This model's maximum context length is 8192 tokens","code":"context_length_exceeded"}}`, ErrContextTooLong, 0, false, "maximum context length"},
		{"an error string is the provider's failure", `{"error":"model crashed"}`, ErrServer, 0, true, "model crashed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, streamOf(chunks(`{"choices":[{"index":0,"delta":{"content":"partial"}}]}`, tc.event)))
			_, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), conversation(), nil)
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, tc.kind) || me.Status != tc.status || me.Retryable() != tc.retryable {
				t.Fatalf("err = %v (%+v)", err, me)
			}
			if !strings.Contains(me.detail, tc.detail) {
				t.Errorf("detail = %q, want %q in it", me.detail, tc.detail)
			}
		})
	}
	t.Run("a chunk that is not a JSON object is a malformed answer, not retried", func(t *testing.T) {
		for _, bad := range []string{`{"choices":[`, `[1,2]`, `"text"`} {
			fp := newFakeProvider(t, streamOf(chunks(bad)))
			_, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), conversation(), nil)
			if !errors.Is(err, ErrBadResponse) || fp.count() != 1 {
				t.Errorf("%s: err = %v after %d requests", bad, err, fp.count())
			}
		}
	})
}

func TestOpenAIHTTPErrorBodies(t *testing.T) {
	pc := providers[0]
	cases := []struct {
		name   string
		status int
		ctype  string
		body   string
		kind   error
		detail string
	}{
		{"an error object gives its message, type and code", 400, "application/json",
			`{"error":{"message":"Invalid 'messages[1].content'","type":"invalid_request_error","param":"messages","code":null}}`, ErrBadRequest, "Invalid 'messages[1].content'"},
		{"an error string (Ollama, some proxies) is read as words", 400, "application/json", `{"error":"context length exceeded"}`, ErrContextTooLong, "context length exceeded"},
		{"a top-level message is the detail", 400, "application/json", `{"message":"bad thing","code":400}`, ErrBadRequest, "bad thing"},
		{"an error object without a message gives its type and code", 400, "application/json", `{"error":{"type":"invalid_request_error","code":"bad_tool"}}`, ErrBadRequest, "invalid_request_error bad_tool"},
		{"a body that is not JSON leaves the status to speak", 502, "text/html", `<html><body>Bad gateway</body></html>`, ErrServer, "Bad Gateway"},
		{"an empty body too", 503, "", ``, ErrServer, "Service Unavailable"},
		{"a numeric code in an error object is its text", 404, "application/json", `{"error":{"message":"no such model","code":404}}`, ErrModelNotFound, "no such model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.ctype != "" {
					w.Header().Set("Content-Type", tc.ctype)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			})
			_, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), conversation(), nil)
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, tc.kind) || me.Status != tc.status {
				t.Fatalf("err = %v (%+v)", err, me)
			}
			if me.detail != tc.detail {
				t.Errorf("detail = %q, want %q", me.detail, tc.detail)
			}
		})
	}
	t.Run("Retry-After-Ms is the wait asked for", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				w.Header().Set("Retry-After-Ms", "1500")
				w.WriteHeader(429)
				_, _ = io.WriteString(w, `{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}`)
				return
			}
			sse(t, pc.text)(w)
		})
		var s sleeps
		if _, err := resolveFake(t, pc, fp.srv.URL, testOptions(&s, nil)).Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		if got := s.all(); len(got) != 1 || got[0].Milliseconds() != 1500 {
			t.Errorf("waits = %v", got)
		}
	})
}

// keyEcho is a 401 answer that quotes the key back, as OpenAI does (in part).
const keyEcho = `{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`

func TestOpenAIKeyNeverLeaks(t *testing.T) {
	unauthorized := func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		_, _ = io.WriteString(w, keyEcho)
	}
	for _, api := range []string{"chat", "responses"} {
		t.Run("a 401 of "+api+" that quotes the key: not in the error, the logs or the recording", func(t *testing.T) {
			fp := newFakeProvider(t, unauthorized)
			core, logs := observer.New(zap.DebugLevel)
			opts := once()
			opts.Logger = zap.New(core)
			env := map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1", "AGENTLS_OPENAI_API": api}
			m, err := Resolve("openai:o4-mini", envOf(env), opts)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "recording.json")
			rec := NewRecorder(m, path, zap.New(core), nil) // no redactor of its own: the client's scrubbing alone
			_, err = rec.Complete(context.Background(), thinkingConversation(), nil)
			if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
				t.Fatalf("err = %v", err)
			}
			if fp.count() != 1 || !strings.Contains(fp.request(0).Header.Get("Authorization"), testKey) {
				t.Fatalf("the key was not sent once: %d requests", fp.count())
			}
			assertNoKey(t, err, logs)
			data, rerr := os.ReadFile(path)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if !strings.Contains(string(data), "Incorrect API key") || strings.Contains(string(data), testKey[:8]) {
				t.Errorf("recording = %s", data)
			}
		})
	}
	t.Run("nor in the error of the model list", func(t *testing.T) {
		fp := newFakeProvider(t, unauthorized)
		c, err := connect("openai", "gpt-4.1", "openai", envOf(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1"}), &Options{Logger: zap.NewNop()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.lister.list(context.Background())
		if !errors.Is(err, ErrAuth) {
			t.Fatalf("err = %v", err)
		}
		core, logs := observer.New(zap.DebugLevel)
		zap.New(core).Warn("listing failed", zap.Error(err))
		assertNoKey(t, err, logs)
	})
}

func TestOpenAICustomHeadersNeverLeak(t *testing.T) {
	const token = "gw-token-5f8a2c9d1e7b"
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(403)
		_, _ = io.WriteString(w, `{"error":{"message":"gateway token `+r.Header.Get("X-Gateway-Token")+` is not allowed here","type":"forbidden"}}`)
	})
	core, logs := observer.New(zap.DebugLevel)
	opts := once()
	opts.Logger = zap.New(core)
	env := map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1", CustomHeadersVar: "X-Gateway-Token: " + token}
	m, err := Resolve("openai:o4-mini", envOf(env), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(context.Background(), thinkingConversation(), nil)
	if err == nil || fp.count() == 0 || fp.request(0).Header.Get("X-Gateway-Token") != token {
		t.Fatalf("err = %v; the header was not sent", err)
	}
	zap.New(core).Warn("the model failed", zap.Error(err))
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), token) {
			t.Errorf("the error quotes the gateway's token: %q", e.Error())
		}
	}
	for _, entry := range logs.All() {
		js, _ := json.Marshal(entry.ContextMap())
		if strings.Contains(entry.Message+string(js), token) {
			t.Errorf("a log line quotes the gateway's token: %s %s", entry.Message, js)
		}
	}
}

func TestOpenAIRequestHeaders(t *testing.T) {
	t.Run("the key as a bearer token, JSON, and the organization, project and custom headers of the environment", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_stream_text.sse")(w) })
		env := map[string]string{
			"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1",
			"OPENAI_ORG_ID": "org-1", "OPENAI_PROJECT_ID": "proj_1",
			"OPENAI_CUSTOM_HEADERS": "X-Gateway-Team: editors\nmalformed line\n Authorization : Bearer not-this-one",
		}
		m, err := Resolve("openai:gpt-4.1-mini", envOf(env), once())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		h := fp.request(0).Header
		for k, want := range map[string]string{
			"Authorization": "Bearer " + testKey, "Content-Type": "application/json", "Accept": "application/json",
			"OpenAI-Organization": "org-1", "OpenAI-Project": "proj_1", "X-Gateway-Team": "editors",
		} {
			if got := h.Get(k); got != want {
				t.Errorf("%s = %q, want %q", k, got, want)
			}
		}
	})
	t.Run("Ollama is sent none of OpenAI's", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "ollama_stream_tools.sse")(w) })
		env := map[string]string{"OLLAMA_HOST": fp.srv.URL, "OPENAI_API_KEY": testKey, "OPENAI_ORG_ID": "org-1"}
		m, err := Resolve("ollama:qwen2.5-coder:7b", envOf(env), once())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		if h := fp.request(0).Header; strings.Contains(h.Get("Authorization"), testKey) || h.Get("OpenAI-Organization") != "" {
			t.Errorf("headers = %v", h)
		}
	})
	t.Run("a server that needs no key is sent no Authorization", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_stream_text.sse")(w) })
		m, err := Resolve("openai:local", envOf(map[string]string{"OPENAI_BASE_URL": fp.srv.URL + "/v1"}), once())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		if _, ok := fp.request(0).Header["Authorization"]; ok {
			t.Errorf("Authorization = %q", fp.request(0).Header.Get("Authorization"))
		}
	})
	t.Run("a base URL without a path is the root of the calls", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_stream_text.sse")(w) })
		m, err := Resolve("openai:local", envOf(map[string]string{"OPENAI_BASE_URL": fp.srv.URL}), once())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Complete(context.Background(), conversation(), nil); err != nil {
			t.Fatal(err)
		}
		if p := fp.request(0).Path; p != "/chat/completions" {
			t.Errorf("path = %q", p)
		}
	})
	t.Run("a base URL that is no URL is a refused request that names the variable", func(t *testing.T) {
		m, err := Resolve("openai:local", envOf(map[string]string{"OPENAI_BASE_URL": "localhost:8000/v1"}), once())
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Complete(context.Background(), conversation(), nil)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestOpenAIRedirectsStayOnTheServer(t *testing.T) {
	pc := providers[0]
	t.Run("a redirect on the same server is followed, the key with it", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.URL.Path == pc.path {
				http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
				return
			}
			sse(t, pc.text)(w)
		})
		resp, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), conversation(), nil)
		if err != nil || resp.Text != "Hello there." {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
		if got := fp.request(1); got.Path != "/v2/chat/completions" || got.Header.Get("Authorization") != "Bearer "+testKey || got.Body["model"] != "gpt-4.1-mini" {
			t.Errorf("redirected request = %+v", got)
		}
	})
	t.Run("a redirect to another server is not followed: the key never reaches it", func(t *testing.T) {
		var other []string
		elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			other = append(other, r.Header.Get("Authorization"))
		}))
		defer elsewhere.Close()
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			http.Redirect(w, r, elsewhere.URL+"/v1/chat/completions", http.StatusTemporaryRedirect)
		})
		_, err := resolveFake(t, pc, fp.srv.URL, once()).Complete(context.Background(), conversation(), nil)
		if !errors.Is(err, errOtherOrigin) || !strings.Contains(err.Error(), "not followed") {
			t.Errorf("err = %v", err)
		}
		if len(other) != 0 {
			t.Errorf("the other server was asked %d times", len(other))
		}
	})
}

func TestOpenAIModelList(t *testing.T) {
	cases := []struct {
		name  string
		ctype string
		body  string
		want  string // the names, or the kind of error
	}{
		{"the ids of its data, empty ones left out", "application/json", `{"object":"list","data":[{"id":"gpt-4.1","object":"model"},{"id":""},{"id":"o3"}]}`, "gpt-4.1 o3"},
		{"served as text/plain, as some servers do", "text/plain", `{"data":[{"id":"local"}]}`, "local"},
		{"no data is an empty list", "application/json", `{"data":null}`, ""},
		{"a body that is not JSON is a malformed answer", "application/json", `{"data":[`, "malformed answer"},
		{"nor is a list at the top", "application/json", `[]`, "malformed answer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", tc.ctype)
				_, _ = io.WriteString(w, tc.body)
			})
			c, err := connect("openai", "gpt-4.1", "openai", envOf(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1"}), &Options{Logger: zap.NewNop()})
			if err != nil {
				t.Fatal(err)
			}
			ms, err := c.lister.list(context.Background())
			var got []string
			for _, m := range ms {
				got = append(got, m.name)
			}
			var me *Error
			if errors.As(err, &me) {
				got = []string{me.Kind.Error()}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("list = %q (err %v), want %q", got, err, tc.want)
			}
			if r := fp.request(0); r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer "+testKey {
				t.Errorf("request = %s %q", r.Path, r.Header.Get("Authorization"))
			}
		})
	}
}

func TestResponsesEventTypes(t *testing.T) {
	completed := `{"type":"response.completed","response":{"id":"resp_1","status":"completed","usage":{"input_tokens":10,"output_tokens":4,"input_tokens_details":{"cached_tokens":3}}}}`
	cases := []struct {
		name  string
		evs   []string
		check func(t *testing.T, resp *Response, th *thinkingOf, c *collect)
	}{
		{
			name: "summary parts stream as thinking, a blank line between them; the done item gives its id and encrypted content",
			evs: []string{
				`{"type":"response.created","response":{"id":"resp_1"}}`,
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_9","summary":[]}}`,
				`{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0,"part":{"type":"summary_text","text":""}}`,
				`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"One"}`,
				`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Two"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"reasoning","id":"rs_9","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"One"},{"type":"summary_text","text":"Two"}]}}`,
				`{"type":"response.output_item.added","output_index":1,"item":{"type":"reasoning","id":"rs_10"}}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"type":"reasoning","id":"rs_10","encrypted_content":"E2","summary":[{"type":"summary_text","text":"Whole"}]}}`,
				completed,
			},
			check: func(t *testing.T, resp *Response, th *thinkingOf, c *collect) {
				if got := strings.Join(th.pieces, "|"); got != "One|\n\n|Two|Whole" {
					t.Errorf("thinking streamed = %q", got)
				}
				if len(resp.Thinking) != 2 || resp.Thinking[0].ID != "rs_9" || resp.Thinking[0].Encrypted != "ENC" || resp.Thinking[0].Text != "One\n\nTwo" ||
					resp.Thinking[1].ID != "rs_10" || resp.Thinking[1].Text != "Whole" {
					t.Errorf("thinking = %+v", resp.Thinking)
				}
				if u := resp.Usage; u.InputTokens != 10 || u.OutputTokens != 4 || u.CacheReadTokens != 3 || resp.StopReason != StopEndTurn {
					t.Errorf("usage = %+v, stop = %q", u, resp.StopReason)
				}
			},
		},
		{
			name: "a refusal is text that stops for another reason",
			evs: []string{
				`{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"I "}`,
				`{"type":"response.refusal.delta","output_index":0,"content_index":1,"delta":"cannot."}`,
				completed,
			},
			check: func(t *testing.T, resp *Response, th *thinkingOf, c *collect) {
				if resp.Text != "I cannot." || c.text != resp.Text || resp.StopReason != StopOther {
					t.Errorf("text = %q, streamed %q, stop %q", resp.Text, c.text, resp.StopReason)
				}
			},
		},
		{
			name: "function calls: streamed arguments, or whole at the item's end",
			evs: []string{
				`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":""}}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"path\":"}`,
				`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"\"a.go\"}"}`,
				`{"type":"response.function_call_arguments.done","output_index":0,"arguments":"{\"path\":\"a.go\"}"}`,
				`{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"read_file","arguments":"{\"path\":\"a.go\"}"}}`,
				`{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_2","call_id":"call_2","name":"finish","arguments":"{\"summary\":\"ok\"}"}}`,
				completed,
			},
			check: func(t *testing.T, resp *Response, th *thinkingOf, c *collect) {
				if len(resp.ToolCalls) != 2 || resp.ToolCalls[0].ID != "call_1" || string(resp.ToolCalls[0].Arguments) != `{"path":"a.go"}` ||
					resp.ToolCalls[1].ID != "call_2" || string(resp.ToolCalls[1].Arguments) != `{"summary":"ok"}` || resp.StopReason != StopToolUse {
					t.Errorf("calls = %+v, stop %q", resp.ToolCalls, resp.StopReason)
				}
				if c.args[0] != `{"path":"a.go"}` || c.args[1] != `{"summary":"ok"}` || c.names[1] != "finish" {
					t.Errorf("streamed = %v %v", c.names, c.args)
				}
			},
		},
		{
			name: "an incomplete response at max_output_tokens is the token limit; events of unknown types are passed over",
			evs: []string{
				`{"type":"response.in_progress","response":{}}`,
				`{"type":"response.output_text.delta","output_index":0,"delta":"cut"}`,
				`{"type":"response.output_text.annotation.added","annotation":{"type":"url_citation"}}`,
				`{"type":"response.incomplete","response":{"incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":"10","output_tokens":4.0}}}`,
			},
			check: func(t *testing.T, resp *Response, th *thinkingOf, c *collect) {
				if resp.Text != "cut" || resp.StopReason != StopMaxTokens || resp.Usage.InputTokens != 10 || resp.Usage.OutputTokens != 4 {
					t.Errorf("response = %+v", resp)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, streamOf(": keep-alive\n\n"+events(t, tc.evs...)))
			var th thinkingOf
			var c collect
			resp, err := resolveResponses(t, fp, once()).Complete(context.Background(), thinkingConversation(), func(d Delta) { th.onDelta(d); c.on(d) })
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, resp, &th, &c)
		})
	}
}

func TestResponsesFailures(t *testing.T) {
	cases := []struct {
		name      string
		stream    string
		kind      error
		retryable bool
		detail    string
	}{
		{"response.failed with server_error is retried", `{"type":"response.failed","response":{"error":{"code":"server_error","message":"oops"}}}`, ErrServer, true, "oops"},
		{"response.failed with invalid_prompt is the request's", `{"type":"response.failed","response":{"error":{"code":"invalid_prompt","message":"bad prompt"}}}`, ErrBadRequest, false, "bad prompt"},
		{"an error event with a rate limit code", `{"type":"error","code":"rate_limit_exceeded","message":"slow","param":null}`, ErrRateLimited, true, "slow"},
		{"an error event that nests its error", `{"type":"error","error":{"type":"server_error","code":"server_error","message":"nested"}}`, ErrServer, true, "nested"},
		{"a summary part out of bounds is a malformed answer, not a crash", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":-1,"delta":"x"}`, ErrBadResponse, false, ""},
		{"nor a huge allocation", `{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1000000000,"delta":"x"}`, ErrBadResponse, false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fp := newFakeProvider(t, streamOf(events(t, tc.stream)))
			_, err := resolveResponses(t, fp, once()).Complete(context.Background(), thinkingConversation(), nil)
			var me *Error
			if !errors.As(err, &me) || !errors.Is(err, tc.kind) || me.Retryable() != tc.retryable || me.detail != tc.detail {
				t.Fatalf("err = %v (%+v)", err, me)
			}
		})
	}
}
