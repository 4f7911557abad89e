package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

// openaiModels answers GET /v1/models as OpenAI does.
func openaiModels(names ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		var data []string
		for _, n := range names {
			data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","created":1744316542,"owned_by":"system"}`, n))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(data, ","))
	}
}

// anthropicPages answers GET /v1/models as Anthropic does, in pages of
// size models: the page after after_id, with has_more and last_id.
func anthropicPages(t testing.TB, size int, models ...[3]string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		start := 0
		if after := r.URL.Query().Get("after_id"); after != "" {
			start = -1
			for i, m := range models {
				if m[0] == after {
					start = i + 1
				}
			}
			if start < 0 {
				t.Errorf("after_id %q names no model", after)
				start = len(models)
			}
		}
		end := min(start+size, len(models))
		var data []string
		for _, m := range models[start:end] {
			data = append(data, fmt.Sprintf(`{"type":"model","id":%q,"display_name":%q,"created_at":"2025-09-29T00:00:00Z","lifecycle":%q}`, m[0], m[1], m[2]))
		}
		first, last := "", ""
		if end > start {
			first, last = models[start][0], models[end-1][0]
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"data":[%s],"has_more":%t,"first_id":%q,"last_id":%q}`, strings.Join(data, ","), end < len(models), first, last)
	}
}

// ollamaTags answers GET /api/tags as Ollama does.
func ollamaTags(names ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		var data []string
		for _, n := range names {
			data = append(data, fmt.Sprintf(`{"name":%q,"model":%q,"modified_at":"2025-05-02T10:00:00Z","size":4683087332,"digest":"2b0496514337","details":{"format":"gguf","family":"qwen2","parameter_size":"7.6B","quantization_level":"Q4_K_M"}}`, n, n))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"models":[%s]}`, strings.Join(data, ","))
	}
}

// closedURL is the URL of a server that is no longer there.
func closedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

func TestListingEachProvider(t *testing.T) {
	t.Run("OpenAI lists GET /v1/models with the key as a bearer token", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { openaiModels("gpt-4.1", "gpt-4.1-mini", "o3")(w) })
		res := ListModels(context.Background(), "openai:gpt-4.1-mini", envOf(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": fp.srv.URL + "/v1", "OLLAMA_HOST": closedURL(t)}), Options{})
		got := fp.request(0)
		if got.Path != "/v1/models" || got.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("asked %s with Authorization %q", got.Path, got.Header.Get("Authorization"))
		}
		want := []api.ModelInfo{
			{ID: "openai:gpt-4.1", Provider: "openai", Name: "gpt-4.1"},
			{ID: "openai:gpt-4.1-mini", Provider: "openai", Name: "gpt-4.1-mini", Current: true},
			{ID: "openai:o3", Provider: "openai", Name: "o3"},
		}
		if !reflect.DeepEqual(res.Models, want) {
			t.Errorf("models = %+v\nwant %+v", res.Models, want)
		}
		if res.Current != "openai:gpt-4.1-mini" || res.Source != "initializationOptions.model" || res.CurrentError != "" {
			t.Errorf("current = %q from %q (%q)", res.Current, res.Source, res.CurrentError)
		}
		if p := res.Providers[0]; !p.Configured || p.Models != 3 || p.URL != fp.srv.URL+"/v1" || p.Error != "" {
			t.Errorf("openai = %+v", p)
		}
	})

	t.Run("Anthropic follows every page with the key and version headers, and leaves retired models out", func(t *testing.T) {
		models := [][3]string{
			{"claude-opus-4-1-20250805", "Claude Opus 4.1", "active"},
			{"claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "active"},
			{"claude-3-opus-20240229", "Claude Opus 3", "retired"},
			{"claude-haiku-4-5-20251001", "Claude Haiku 4.5", "active"},
			{"claude-3-7-sonnet-20250219", "Claude Sonnet 3.7", "deprecated"},
		}
		pages := anthropicPages(t, 2, models...)
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { pages(w, r) })
		env := map[string]string{"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": fp.srv.URL, "OLLAMA_HOST": closedURL(t)}
		res := ListModels(context.Background(), "", envOf(env), Options{})
		if fp.count() != 3 {
			t.Fatalf("%d pages asked for, want 3", fp.count())
		}
		for i, want := range []string{"", models[1][0], models[3][0]} {
			if got := fp.request(i).Query.Get("after_id"); got != want {
				t.Errorf("page %d asked after_id %q, want %q (the last id of the page before)", i+1, got, want)
			}
		}
		for i := 0; i < fp.count(); i++ {
			r := fp.request(i)
			auth := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key")
			if r.Path != "/v1/models" || !strings.Contains(auth, testKey) || r.Header.Get("Anthropic-Version") == "" || r.Query.Get("limit") != "1000" {
				t.Errorf("page %d asked %s?%s with the key in %q, anthropic-version %q", i+1, r.Path, r.Query.Encode(), auth, r.Header.Get("Anthropic-Version"))
			}
		}
		var ids []string
		for _, m := range res.Models {
			ids = append(ids, m.ID)
			if m.Provider == "anthropic" && !m.Current && m.DisplayName == "" {
				t.Errorf("%s has no display name", m.ID)
			}
		}
		want := []string{"anthropic:claude-opus-4-1-20250805", "anthropic:claude-sonnet-4-5-20250929", "anthropic:claude-haiku-4-5-20251001",
			"anthropic:claude-3-7-sonnet-20250219", "anthropic:" + DefaultAnthropicModel}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("models = %q\nwant %q", ids, want)
		}
		if last := res.Models[len(res.Models)-1]; !last.Current || res.Source != "ANTHROPIC_API_KEY" {
			t.Errorf("the default model, which Anthropic lists only dated, is %+v from %q", last, res.Source)
		}
	})

	t.Run("Ollama lists GET /api/tags at OLLAMA_HOST, and its implied :latest tag names the current model", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			ollamaTags("qwen2.5-coder:7b", "llama3:latest")(w)
		})
		res := ListModels(context.Background(), "ollama:llama3", envOf(map[string]string{"OLLAMA_HOST": strings.TrimPrefix(fp.srv.URL, "http://")}), Options{})
		if got := fp.request(0).Path; got != "/api/tags" {
			t.Errorf("asked %s", got)
		}
		want := []api.ModelInfo{
			{ID: "ollama:qwen2.5-coder:7b", Provider: "ollama", Name: "qwen2.5-coder:7b"},
			{ID: "ollama:llama3:latest", Provider: "ollama", Name: "llama3:latest", Current: true},
		}
		if !reflect.DeepEqual(res.Models, want) {
			t.Errorf("models = %+v", res.Models)
		}
		if p := res.Providers[2]; p.URL != fp.srv.URL || p.Models != 2 {
			t.Errorf("ollama = %+v", p)
		}
	})
}

func TestListingSaysWhatFailed(t *testing.T) {
	openai := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { openaiModels("gpt-4.1")(w) })
	anthropic := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		errorAnswer(t, http.StatusUnauthorized, "anthropic_401.json", nil)(w)
	})
	down := closedURL(t)
	env := envOf(map[string]string{
		"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": openai.srv.URL + "/v1",
		"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": anthropic.srv.URL,
		"OLLAMA_HOST": down,
	})
	res := ListModels(context.Background(), "anthropic:claude-sonnet-4-5", env, Options{})
	byName := map[string]api.ProviderInfo{}
	for _, p := range res.Providers {
		byName[p.Provider] = p
	}
	if p := byName["openai"]; p.Models != 1 || p.Error != "" {
		t.Errorf("openai = %+v", p)
	}
	if p := byName["anthropic"]; p.Problem != api.ProblemAuth || !strings.Contains(p.Error, "ANTHROPIC_API_KEY") || !strings.Contains(p.Error, "invalid x-api-key") {
		t.Errorf("anthropic = %+v", p)
	}
	if p := byName["ollama"]; p.Problem != api.ProblemUnreachable || !strings.Contains(p.Error, down) || !strings.Contains(p.Error, "OLLAMA_HOST") {
		t.Errorf("ollama = %+v", p)
	}
	want := []string{"openai:gpt-4.1", "anthropic:claude-sonnet-4-5"}
	var ids []string
	for _, m := range res.Models {
		ids = append(ids, m.ID)
	}
	if !reflect.DeepEqual(ids, want) || !res.Models[1].Current {
		t.Errorf("models = %+v: the current model is listed after openai's, though its provider failed", res.Models)
	}
	js, _ := json.Marshal(res)
	for _, piece := range []string{testKey, testKey[:8], testKey[len(testKey)-4:]} {
		if strings.Contains(string(js), piece) {
			t.Errorf("the listing leaks the key (%q): %s", piece, js)
		}
	}
}

// dialTo is an HTTP client whose every connection goes to addr, whatever
// the URL says, or fails when addr is "".
func dialTo(addr string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		if addr == "" {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.ErrNotExist}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

func TestListingUnconfiguredProviders(t *testing.T) {
	t.Run("says how to set up each provider the environment does not, and that no model is configured", func(t *testing.T) {
		res := ListModels(context.Background(), "", envOf(nil), Options{HTTPClient: dialTo("")})
		if res.Current != "" || !strings.Contains(res.CurrentError, "no model configured") {
			t.Errorf("current = %q, %q", res.Current, res.CurrentError)
		}
		if len(res.Models) != 0 || len(res.Providers) != 3 {
			t.Fatalf("models %+v, providers %+v", res.Models, res.Providers)
		}
		for _, c := range []struct{ provider, hint string }{
			{"openai", "OPENAI_API_KEY"}, {"anthropic", "ANTHROPIC_API_KEY"}, {"ollama", DefaultOllamaHost},
		} {
			var p api.ProviderInfo
			for _, q := range res.Providers {
				if q.Provider == c.provider {
					p = q
				}
			}
			if p.Configured || p.Error != "" || !strings.Contains(p.Hint, c.hint) {
				t.Errorf("%s = %+v, want unconfigured with a hint naming %s", c.provider, p, c.hint)
			}
		}
	})

	t.Run("finds Ollama at its default address when it answers there", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { ollamaTags("qwen2.5-coder:7b")(w) })
		res := ListModels(context.Background(), "", envOf(nil), Options{HTTPClient: dialTo(fp.srv.Listener.Addr().String())})
		p := res.Providers[2]
		if !p.Configured || p.Models != 1 || p.URL != DefaultOllamaHost || p.Hint != "" {
			t.Errorf("ollama = %+v", p)
		}
		if len(res.Models) != 1 || res.Models[0].ID != "ollama:qwen2.5-coder:7b" {
			t.Errorf("models = %+v", res.Models)
		}
	})

	t.Run("lists a scripted current model, and says why one that does not load cannot work", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "demo.json")
		if err := os.WriteFile(script, []byte(`{"agents": {"coordinator": [{"text": "hi"}]}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		env := envOf(map[string]string{"OLLAMA_HOST": closedURL(t)})
		res := ListModels(context.Background(), "script:"+script, env, Options{})
		if len(res.Models) != 1 || res.Models[0] != (api.ModelInfo{ID: "script:" + script, Provider: "script", Name: script, Current: true}) {
			t.Errorf("models = %+v", res.Models)
		}
		if p := res.Providers[len(res.Providers)-1]; p.Provider != "script" || !p.Configured || p.Models != 1 {
			t.Errorf("script = %+v", p)
		}
		res = ListModels(context.Background(), "script:"+script+".missing", env, Options{})
		if p := res.Providers[len(res.Providers)-1]; p.Problem != api.ProblemConfig || !strings.Contains(res.CurrentError, ".missing") {
			t.Errorf("script = %+v, current error %q", p, res.CurrentError)
		}
	})
}

func TestCheckModel(t *testing.T) {
	// fake is one server for every provider: GET /v1/models (OpenAI and
	// Anthropic), GET /api/tags (Ollama); a completion answers with text,
	// or 404 for a model in notFound.
	type fake struct {
		list     func(http.ResponseWriter, *http.Request)
		complete func(http.ResponseWriter, *http.Request)
	}
	serve := func(t *testing.T, f fake) *fakeProvider {
		return newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
			if r.Method == http.MethodGet {
				f.list(w, r)
				return
			}
			if f.complete == nil {
				t.Errorf("a one-token request was made: %s %s", r.Method, r.URL.Path)
				w.WriteHeader(http.StatusTeapot)
				return
			}
			f.complete(w, r)
		})
	}
	listing := func(ans func(http.ResponseWriter)) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) { ans(w) }
	}
	answering := func(name string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) { sse(t, name)(w) }
	}
	failing := func(status int, name string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) { errorAnswer(t, status, name, nil)(w) }
	}
	openaiEnv := func(u string) map[string]string {
		return map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": u + "/v1"}
	}
	anthropicEnv := func(u string) map[string]string {
		return map[string]string{"ANTHROPIC_API_KEY": testKey, "ANTHROPIC_BASE_URL": u}
	}
	ollamaEnv := func(u string) map[string]string { return map[string]string{"OLLAMA_HOST": u} }

	for _, c := range []struct {
		name     string
		spec     string
		fake     fake
		env      func(url string) map[string]string
		want     api.CheckModelResult // Message is checked by wantSays
		wantSays []string
		requests int // 0: not checked
	}{
		{
			name: "a model the provider lists is ready, without a one-token request",
			spec: "openai:gpt-4.1-mini", fake: fake{list: listing(openaiModels("gpt-4.1", "gpt-4.1-mini"))}, env: openaiEnv,
			want:     api.CheckModelResult{Model: "openai:gpt-4.1-mini", Source: "initializationOptions.model", OK: true, Checked: api.CheckedByList},
			wantSays: []string{"ready", "/v1 offers it"}, requests: 1,
		},
		{
			name:     "an alias Anthropic does not list is tried with a one-token request",
			spec:     "anthropic:claude-sonnet-4-5",
			fake:     fake{list: anthropicPages(t, 20, [3]string{"claude-sonnet-4-5-20250929", "Claude Sonnet 4.5", "active"}), complete: answering("anthropic_stream_text.sse")},
			env:      anthropicEnv,
			want:     api.CheckModelResult{Model: "anthropic:claude-sonnet-4-5", Source: "initializationOptions.model", OK: true, Checked: api.CheckedByCompletion},
			wantSays: []string{"answered a one-token request"}, requests: 2,
		},
		{
			name: "a model the provider does not know is named with the closest it offers",
			spec: "openai:gpt-4.1-mimi",
			fake: fake{list: listing(openaiModels("o3", "gpt-4.1", "gpt-4.1-mini", "text-embedding-3-large")), complete: failing(404, "openai_404_model.json")},
			env:  openaiEnv,
			want: api.CheckModelResult{Model: "openai:gpt-4.1-mimi", Source: "initializationOptions.model", Checked: api.CheckedByCompletion,
				Problem: api.ProblemUnknownModel, Closest: []string{"openai:gpt-4.1-mini", "openai:gpt-4.1"}},
			wantSays: []string{`offers no model "gpt-4.1-mimi"`, "the closest are openai:gpt-4.1-mini, openai:gpt-4.1"},
		},
		{
			name: "a server without a model list is tried with a one-token request",
			spec: "openai:local",
			fake: fake{list: func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }, complete: answering("openai_stream_text.sse")},
			env:  func(u string) map[string]string { return map[string]string{"OPENAI_BASE_URL": u + "/v1"} },
			want: api.CheckModelResult{Model: "openai:local", Source: "initializationOptions.model", OK: true, Checked: api.CheckedByCompletion},
		},
		{
			name:     "a refused key names its variable, and the key never appears",
			spec:     "openai:gpt-4.1-mini",
			fake:     fake{list: failing(401, "openai_401.json")},
			env:      openaiEnv,
			want:     api.CheckModelResult{Model: "openai:gpt-4.1-mini", Source: "initializationOptions.model", Problem: api.ProblemAuth},
			wantSays: []string{"refused the key in OPENAI_API_KEY", "HTTP 401", "Incorrect API key provided", "set OPENAI_API_KEY to a valid key"},
		},
		{
			name: "a server that wants a key the environment lacks says which variable to set",
			spec: "openai:local",
			fake: fake{list: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":{"message":"Missing bearer authentication in header","type":"invalid_request_error","code":null}}`)
			}},
			env:      func(u string) map[string]string { return map[string]string{"OPENAI_BASE_URL": u + "/v1"} },
			want:     api.CheckModelResult{Model: "openai:local", Source: "initializationOptions.model", Problem: api.ProblemAuth},
			wantSays: []string{"wants a key", "set OPENAI_API_KEY"},
		},
		{
			name: "a model Ollama has not pulled says how to pull it, without a one-token request",
			spec: "ollama:qwen2.5-coder:14b",
			fake: fake{list: listing(ollamaTags("qwen2.5-coder:7b", "llama3:latest"))},
			env:  ollamaEnv,
			want: api.CheckModelResult{Model: "ollama:qwen2.5-coder:14b", Source: "initializationOptions.model", Checked: api.CheckedByList,
				Problem: api.ProblemUnknownModel, Closest: []string{"ollama:qwen2.5-coder:7b"}},
			wantSays: []string{"pull it with: ollama pull qwen2.5-coder:14b"}, requests: 1,
		},
		{
			name: "a model Ollama has is ready",
			spec: "ollama:llama3",
			fake: fake{list: listing(ollamaTags("qwen2.5-coder:7b", "llama3:latest"))},
			env:  ollamaEnv,
			want: api.CheckModelResult{Model: "ollama:llama3", Source: "initializationOptions.model", OK: true, Checked: api.CheckedByList},
		},
		{
			name:     "a provider that is rate limiting says to try later",
			spec:     "openai:gpt-4.1-mini",
			fake:     fake{list: failing(429, "openai_429.json")},
			env:      openaiEnv,
			want:     api.CheckModelResult{Model: "openai:gpt-4.1-mini", Source: "initializationOptions.model", Problem: api.ProblemRateLimited},
			wantSays: []string{"rate limiting", "try again later"}, requests: 1,
		},
		{
			name: "a URL that answers something other than Ollama says so, with its variable",
			spec: "ollama:llama3",
			fake: fake{list: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = io.WriteString(w, "<html>a router's login page</html>")
			}},
			env:      ollamaEnv,
			want:     api.CheckModelResult{Model: "ollama:llama3", Source: "initializationOptions.model", Problem: api.ProblemBadAnswer},
			wantSays: []string{"answered something that is not Ollama's API", "OLLAMA_HOST is its address"},
		},
		{
			name:     "a provider that fails says so",
			spec:     "anthropic:claude-sonnet-4-5",
			fake:     fake{list: failing(500, "anthropic_500.json")},
			env:      anthropicEnv,
			want:     api.CheckModelResult{Model: "anthropic:claude-sonnet-4-5", Source: "initializationOptions.model", Problem: api.ProblemProvider},
			wantSays: []string{"HTTP 500", "try again later"}, requests: 1,
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := serve(t, c.fake)
			got, err := CheckModel(context.Background(), c.spec, envOf(c.env(fp.srv.URL)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			msg := got.Message
			got.Message = ""
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got %+v\nwant %+v", *got, c.want)
			}
			for _, w := range c.wantSays {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q does not say %q", msg, w)
				}
			}
			for _, piece := range []string{testKey, testKey[:8], testKey[len(testKey)-4:]} {
				if strings.Contains(msg, piece) {
					t.Errorf("message %q leaks the key (%q)", msg, piece)
				}
			}
			if c.requests > 0 && fp.count() != c.requests {
				t.Errorf("%d requests, want %d (no retries)", fp.count(), c.requests)
			}
		})
	}

	t.Run("an unreachable provider names its URL and the variable that sets it", func(t *testing.T) {
		down := closedURL(t)
		got, err := CheckModel(context.Background(), "openai:gpt-4.1-mini", envOf(map[string]string{"OPENAI_BASE_URL": down + "/v1"}), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got.OK || got.Problem != api.ProblemUnreachable {
			t.Fatalf("got %+v", got)
		}
		for _, w := range []string{"cannot reach " + down + "/v1", "OPENAI_BASE_URL"} {
			if !strings.Contains(got.Message, w) {
				t.Errorf("message %q does not say %q", got.Message, w)
			}
		}
	})

	t.Run("without a model, and without a key, says what to set", func(t *testing.T) {
		got, _ := CheckModel(context.Background(), "", envOf(nil), Options{})
		if got.OK || got.Problem != api.ProblemNoModel || got.Model != "" || !strings.Contains(got.Message, "no model configured") {
			t.Errorf("without a model: %+v", got)
		}
		got, _ = CheckModel(context.Background(), "anthropic:claude-sonnet-4-5", envOf(nil), Options{Source: "agent/checkModel model"})
		if got.OK || got.Problem != api.ProblemConfig || got.Source != "agent/checkModel model" ||
			!strings.Contains(got.Message, "needs ANTHROPIC_API_KEY") || !strings.Contains(got.Message, "(from agent/checkModel model)") {
			t.Errorf("without a key: %+v", got)
		}
	})

	t.Run("a cancelled check is an error, not a verdict", func(t *testing.T) {
		fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { openaiModels("gpt-4.1")(w) })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		got, err := CheckModel(ctx, "openai:gpt-4.1", envOf(openaiEnv(fp.srv.URL)), Options{})
		if err == nil {
			t.Errorf("got %+v, want an error", got)
		}
	})
}

func TestClosest(t *testing.T) {
	names := []string{"o3", "gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano", "gpt-4o", "text-embedding-3-large", "whisper-1"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"gpt-4.1-mimi", []string{"gpt-4.1-mini", "gpt-4.1-nano", "gpt-4.1"}},
		{"GPT-4o", []string{"gpt-4o", "gpt-4.1", "gpt-4.1-nano"}},
		{"gpt-4", []string{"gpt-4o", "gpt-4.1", "gpt-4.1-mini"}},
		{"claude-sonnet-4-5", nil},
	} {
		if got := closest(c.name, names, 3); !reflect.DeepEqual(got, c.want) {
			t.Errorf("closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}
