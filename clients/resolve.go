package clients

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

// Default models when only a key is set (docs/MODELS.md).
const (
	DefaultAnthropicModel = "claude-sonnet-4-5"
	DefaultOpenAIModel    = "gpt-4.1-mini"
	DefaultOllamaHost     = "http://127.0.0.1:11434"
	defaultOpenAIBaseURL  = "https://api.openai.com/v1"
	defaultAnthropicURL   = "https://api.anthropic.com"
)

// Options tune the models Resolve builds. The zero value is ready to use.
type Options struct {
	// Logger receives debug lines about calls and retries; never a key or
	// a prompt. nil: zap.NewNop().
	Logger *zap.Logger
	// HTTPClient, when set, replaces the one NewHTTPClient builds from the
	// environment.
	HTTPClient *http.Client
	// Retry bounds retries; zero: DefaultRetryPolicy.
	Retry RetryPolicy
	// OnRetry is told of each retry before its wait (it must not block).
	OnRetry func(RetryEvent)
	// Dir is the directory a relative script: path is read from (the
	// workspace root); "" leaves it relative to the working directory.
	Dir string
	// Sleep, Rand and Now replace the clock and randomness of retries in
	// tests. Sleep must return early with ctx's error when ctx ends.
	Sleep func(ctx context.Context, d time.Duration) error
	Rand  func() float64
	Now   func() time.Time
}

// Resolved is the model a spec names, with where the spec came from.
type Resolved struct {
	Model
	// Spec is the effective "provider:model", e.g. "anthropic:claude-sonnet-4-5".
	Spec string
	// Provider and Name split Spec.
	Provider string
	Name     string
	// Source says where Spec came from: "initializationOptions.model",
	// "AGENTLS_MODEL", "ANTHROPIC_API_KEY" or "OPENAI_API_KEY".
	Source string
}

// Resolve finds the model of docs/MODELS.md: spec (initializationOptions.model),
// else AGENTLS_MODEL, else anthropic:DefaultAnthropicModel when
// ANTHROPIC_API_KEY is set, else openai:DefaultOpenAIModel when
// OPENAI_API_KEY is set. env reads the environment (os.Getenv in the
// sidecar). Nothing configured, an unknown provider, a missing key or a bad
// script give an *api.Error with code api.CodeModelUnavailable whose message
// says how to fix it. Resolve makes no network call.
func Resolve(spec string, env func(string) string, opts Options) (*Resolved, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	source := "initializationOptions.model"
	spec = strings.TrimSpace(spec)
	switch {
	case spec != "":
	case strings.TrimSpace(env("AGENTLS_MODEL")) != "":
		spec, source = strings.TrimSpace(env("AGENTLS_MODEL")), "AGENTLS_MODEL"
	case env("ANTHROPIC_API_KEY") != "":
		spec, source = "anthropic:"+DefaultAnthropicModel, "ANTHROPIC_API_KEY"
	case env("OPENAI_API_KEY") != "":
		spec, source = "openai:"+DefaultOpenAIModel, "OPENAI_API_KEY"
	default:
		return nil, api.Errorf(api.CodeModelUnavailable,
			"no model configured: set initializationOptions.model (editor setting \"model\", e.g. \"anthropic:%s\"), "+
				"or AGENTLS_MODEL, or put ANTHROPIC_API_KEY or OPENAI_API_KEY in the editor's environment; "+
				"to try agentls offline, use the scripted model: \"script:/abs/path/to/script.json\"",
			DefaultAnthropicModel)
	}
	provider, name, ok := strings.Cut(spec, ":")
	provider = strings.ToLower(strings.TrimSpace(provider))
	name = strings.TrimSpace(name)
	if !ok || provider == "" || name == "" {
		return nil, api.Errorf(api.CodeModelUnavailable,
			"model %q (from %s) is not provider:model, e.g. openai:%s, anthropic:%s, ollama:qwen2.5-coder:7b or script:/abs/path.json",
			spec, source, DefaultOpenAIModel, DefaultAnthropicModel)
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	res := &Resolved{Spec: provider + ":" + name, Provider: provider, Name: name, Source: source}
	if provider == "script" {
		path := name
		if !filepath.IsAbs(path) && opts.Dir != "" {
			path = filepath.Join(opts.Dir, path)
		}
		s, err := LoadScript(path)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "model %q (from %s): %v", spec, source, err)
		}
		res.Model = s
		return res, nil
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		c, err := NewHTTPClient(env)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "model %q: %v", spec, err)
		}
		httpClient = c
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	switch provider {
	case "openai":
		key := env("OPENAI_API_KEY")
		base := strings.TrimSpace(env("OPENAI_BASE_URL"))
		if base == "" {
			if key == "" {
				return nil, api.Errorf(api.CodeModelUnavailable,
					"model %q (from %s) needs OPENAI_API_KEY: set it in the editor's environment, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key",
					spec, source)
			}
			base = defaultOpenAIBaseURL
		}
		ep := &endpoint{provider: provider, model: name, keyVar: "OPENAI_API_KEY", urlVar: "OPENAI_BASE_URL", baseURL: base, red: keyRedactor("OPENAI_API_KEY", key), now: now}
		res.Model = newOpenAI(ep, key, httpClient, &opts, false)
	case "ollama":
		host := strings.TrimSpace(env("OLLAMA_HOST"))
		if host == "" {
			host = DefaultOllamaHost
		}
		base, err := ollamaBaseURL(host)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "model %q: OLLAMA_HOST %q: %v", spec, host, err)
		}
		ep := &endpoint{provider: provider, model: name, urlVar: "OLLAMA_HOST", baseURL: base, red: redact.New(), now: now}
		res.Model = newOpenAI(ep, "ollama", httpClient, &opts, true)
	case "anthropic":
		key := env("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, api.Errorf(api.CodeModelUnavailable,
				"model %q (from %s) needs ANTHROPIC_API_KEY: set it in the editor's environment", spec, source)
		}
		base := strings.TrimSpace(env("ANTHROPIC_BASE_URL"))
		if base == "" {
			base = defaultAnthropicURL
		}
		ep := &endpoint{provider: provider, model: name, keyVar: "ANTHROPIC_API_KEY", urlVar: "ANTHROPIC_BASE_URL", baseURL: base, red: keyRedactor("ANTHROPIC_API_KEY", key), now: now}
		res.Model = newAnthropic(ep, key, httpClient, &opts)
	default:
		return nil, api.Errorf(api.CodeModelUnavailable,
			"unknown model provider %q in %q (from %s): use openai:, anthropic:, ollama: or script:", provider, spec, source)
	}
	return res, nil
}

// KeyVars are the environment variables Resolve reads API keys from: the
// sidecar keeps their values out of everything it writes and out of the
// environment of commands (package redact).
var KeyVars = []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}

// keyRedactor knows one key.
func keyRedactor(name, key string) *redact.Redactor {
	r := redact.New()
	r.Add(name, key)
	return r
}

// ollamaBaseURL turns OLLAMA_HOST (which Ollama allows without a scheme or
// port, e.g. "0.0.0.0" or "gpu-box:11434") into its OpenAI-compatible base.
func ollamaBaseURL(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := parseURL(host)
	if err != nil {
		return "", err
	}
	if u.Port() == "" && u.Scheme == "http" {
		u.Host += ":11434"
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1"
	return u.String(), nil
}
