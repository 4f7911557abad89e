package clients

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

func assertModelUnavailable(t *testing.T, err error, wants ...string) {
	t.Helper()
	var re *api.Error
	if !errors.As(err, &re) || re.Code != api.CodeModelUnavailable {
		t.Fatalf("err = %v, want an *api.Error with code -32010", err)
	}
	for _, w := range wants {
		if !strings.Contains(re.Message, w) {
			t.Errorf("message %q does not name %q", re.Message, w)
		}
	}
	if strings.Contains(re.Message, testKey) {
		t.Errorf("message %q leaks the key", re.Message)
	}
}

func TestResolve(t *testing.T) {
	script := filepath.Join(t.TempDir(), "demo.json")
	if err := os.WriteFile(script, []byte(`{"agents": {"coordinator": [{"text": "hi"}]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ok := []struct {
		name, spec   string
		env          map[string]string
		wantSpec     string
		wantSource   string
		wantProvider string
	}{
		{"the editor's setting wins over everything", "openai:gpt-4o", map[string]string{"AGENTLS_MODEL": "anthropic:x", "ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey}, "openai:gpt-4o", "initializationOptions.model", "openai"},
		{"AGENTLS_MODEL comes next", "", map[string]string{"AGENTLS_MODEL": "anthropic:claude-opus-4-1", "ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey}, "anthropic:claude-opus-4-1", "AGENTLS_MODEL", "anthropic"},
		{"an Anthropic key alone picks the default Anthropic model", "", map[string]string{"ANTHROPIC_API_KEY": testKey, "OPENAI_API_KEY": testKey}, "anthropic:" + DefaultAnthropicModel, "ANTHROPIC_API_KEY", "anthropic"},
		{"an OpenAI key alone picks the default OpenAI model", "", map[string]string{"OPENAI_API_KEY": testKey}, "openai:" + DefaultOpenAIModel, "OPENAI_API_KEY", "openai"},
		{"ollama needs no key, and its model name keeps its colon", "ollama:qwen2.5-coder:7b", nil, "ollama:qwen2.5-coder:7b", "initializationOptions.model", "ollama"},
		{"an OpenAI-compatible server without a key is allowed", "openai:local", map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}, "openai:local", "initializationOptions.model", "openai"},
		{"the provider is case-insensitive", "OpenAI:gpt-4o", map[string]string{"OPENAI_API_KEY": testKey}, "openai:gpt-4o", "initializationOptions.model", "openai"},
		{"a script is loaded from its path", "script:" + script, nil, "script:" + script, "initializationOptions.model", "script"},
	}
	for _, tc := range ok {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Resolve(tc.spec, envOf(tc.env), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Spec != tc.wantSpec || r.Source != tc.wantSource || r.Provider != tc.wantProvider || r.Model == nil {
				t.Errorf("got %+v", r)
			}
		})
	}
	bad := []struct {
		name, spec string
		env        map[string]string
		wants      []string
	}{
		{"nothing configured names every way to configure a model and the demo", "", nil,
			[]string{"initializationOptions.model", "AGENTLS_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "script:"}},
		{"an unknown provider names the known ones", "gemini:pro", nil, []string{`"gemini"`, "openai:", "anthropic:", "ollama:", "script:"}},
		{"a spec without a provider shows the form", "gpt-4o", nil, []string{"provider:model"}},
		{"an empty model name shows the form", "openai:", nil, []string{"provider:model"}},
		{"openai without a key names OPENAI_API_KEY", "openai:gpt-4o", nil, []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"}},
		{"anthropic without a key names ANTHROPIC_API_KEY", "anthropic:claude-sonnet-4-5", map[string]string{"OPENAI_API_KEY": testKey}, []string{"ANTHROPIC_API_KEY"}},
		{"a bad AGENTLS_MODEL says where it came from", "", map[string]string{"AGENTLS_MODEL": "nope:x"}, []string{"AGENTLS_MODEL", `"nope"`}},
		{"a missing script names the file", "script:/does/not/exist.json", nil, []string{"/does/not/exist.json"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.spec, envOf(tc.env), Options{})
			assertModelUnavailable(t, err, tc.wants...)
		})
	}
	t.Run("a relative script path is read from the workspace", func(t *testing.T) {
		r, err := Resolve("script:demo.json", nil, Options{Dir: filepath.Dir(script)})
		if err != nil || r.Provider != "script" {
			t.Fatalf("r = %+v, err = %v", r, err)
		}
	})
	t.Run("a malformed script names the agent and turn", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.json")
		_ = os.WriteFile(bad, []byte(`{"agents": {"1": [{"text": "ok"}, {"toolCalls": [{"arguments": {}}]}]}}`), 0o600)
		_, err := Resolve("script:"+bad, nil, Options{})
		assertModelUnavailable(t, err, `agent "1" turn 2`, "name is empty")
	})
}

func TestOllamaRootURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                           "http://127.0.0.1:11434",
		"0.0.0.0":                    "http://0.0.0.0:11434",
		"gpu-box:8080":               "http://gpu-box:8080",
		"https://ollama.example.com": "https://ollama.example.com",
		"http://10.0.0.2:11434/":     "http://10.0.0.2:11434",
	} {
		host := in
		if host == "" {
			host = DefaultOllamaHost
		}
		got, err := ollamaRootURL(host)
		if err != nil || got != want {
			t.Errorf("ollamaRootURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
