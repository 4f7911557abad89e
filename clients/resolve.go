package clients

import (
	"context"
	"fmt"
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
	// Source says where an explicit spec comes from, for the messages of
	// its errors: "" is "initializationOptions.model"; a run's own model
	// is "agent/run model".
	Source string
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
	spec, source, err := pickSpec(spec, opts.Source, env)
	if err != nil {
		return nil, err
	}
	provider, name, err := splitSpec(spec, source)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	res := &Resolved{Spec: provider + ":" + name, Provider: provider, Name: name, Source: source}
	c, err := connect(provider, name, fmt.Sprintf("model %q (from %s)", spec, source), env, &opts)
	if err != nil {
		return nil, err
	}
	res.Model = c.model
	return res, nil
}

// sourceSetting is where an explicit spec comes from when Options.Source
// does not say.
const sourceSetting = "initializationOptions.model"

// pickSpec is the choice of docs/MODELS.md: spec (from source), else
// AGENTLS_MODEL, else the default model of the key that is set. It returns
// the spec and where it came from, or the -32010 error that names the ways
// to configure one.
func pickSpec(spec, source string, env func(string) string) (string, string, error) {
	if source == "" {
		source = sourceSetting
	}
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
		return "", "", api.Errorf(api.CodeModelUnavailable,
			"no model configured: set initializationOptions.model (editor setting \"model\", e.g. \"anthropic:%s\"), "+
				"or AGENTLS_MODEL, or put ANTHROPIC_API_KEY or OPENAI_API_KEY in the editor's environment; "+
				"to try agentls offline, use the scripted model: \"script:/abs/path/to/script.json\"",
			DefaultAnthropicModel)
	}
	return spec, source, nil
}

// splitSpec splits "provider:name", the provider lower-cased.
func splitSpec(spec, source string) (provider, name string, err error) {
	provider, name, ok := strings.Cut(spec, ":")
	provider = strings.ToLower(strings.TrimSpace(provider))
	name = strings.TrimSpace(name)
	if !ok || provider == "" || name == "" {
		return "", "", api.Errorf(api.CodeModelUnavailable,
			"model %q (from %s) is not provider:model, e.g. openai:%s, anthropic:%s, ollama:qwen2.5-coder:7b or script:/abs/path.json",
			spec, source, DefaultOpenAIModel, DefaultAnthropicModel)
	}
	return provider, name, nil
}

// connection is one provider reached for one model name: the model, and
// the lister of what the provider offers (nil for the scripted model).
type connection struct {
	model  Model
	lister lister
	ep     *endpoint // the model's; nil for the scripted model
	listEP *endpoint // the lister's
}

// connect builds the connection to provider for the model name (which may
// be "" when only the listing is wanted). what names the spec in errors
// (`model "openai:gpt-4o" (from AGENTLS_MODEL)`, or the provider alone).
func connect(provider, name, what string, env func(string) string, opts *Options) (*connection, error) {
	if provider == "script" {
		path := name
		if !filepath.IsAbs(path) && opts.Dir != "" {
			path = filepath.Join(opts.Dir, path)
		}
		s, err := LoadScript(path)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "%s: %v", what, err)
		}
		return &connection{model: s}, nil
	}
	httpClient := opts.HTTPClient
	if httpClient == nil {
		c, err := NewHTTPClient(env)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "%s: %v", what, err)
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
					"%s needs OPENAI_API_KEY: set it in the editor's environment, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key",
					what)
			}
			base = defaultOpenAIBaseURL
		}
		wire, err := parseOpenAIAPI(env(openaiAPIVar))
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "%s: %v", what, err)
		}
		ep := &endpoint{provider: provider, model: name, keyVar: "OPENAI_API_KEY", urlVar: "OPENAI_BASE_URL", baseURL: base, red: keyRedactor("OPENAI_API_KEY", key), now: now}
		m := newOpenAI(ep, key, httpClient, opts, false, wire)
		m.conn.header = openaiHeaders(env)
		for _, v := range CustomHeaderValues(env) {
			ep.red.AddValue(CustomHeadersVar, v)
		}
		return &connection{model: m, lister: m, ep: ep, listEP: ep}, nil
	case "ollama":
		host := strings.TrimSpace(env("OLLAMA_HOST"))
		if host == "" {
			host = DefaultOllamaHost
		}
		root, err := ollamaRootURL(host)
		if err != nil {
			return nil, api.Errorf(api.CodeModelUnavailable, "%s: OLLAMA_HOST %q: %v", what, host, err)
		}
		ep := &endpoint{provider: provider, model: name, urlVar: "OLLAMA_HOST", baseURL: root + "/v1", red: redact.New(), now: now}
		m := newOpenAI(ep, "ollama", httpClient, opts, true, apiChat)
		tags := &endpoint{provider: provider, model: name, urlVar: "OLLAMA_HOST", baseURL: root, red: ep.red, now: now}
		return &connection{model: m, lister: &ollamaLister{ep: tags, hc: httpClient}, ep: ep, listEP: tags}, nil
	case "anthropic":
		key := env("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, api.Errorf(api.CodeModelUnavailable,
				"%s needs ANTHROPIC_API_KEY: set it in the editor's environment", what)
		}
		base := strings.TrimSpace(env("ANTHROPIC_BASE_URL"))
		if base == "" {
			base = defaultAnthropicURL
		}
		ep := &endpoint{provider: provider, model: name, keyVar: "ANTHROPIC_API_KEY", urlVar: "ANTHROPIC_BASE_URL", baseURL: base, red: keyRedactor("ANTHROPIC_API_KEY", key), now: now}
		m := newAnthropic(ep, key, httpClient, opts)
		return &connection{model: m, lister: m, ep: ep, listEP: ep}, nil
	}
	return nil, api.Errorf(api.CodeModelUnavailable,
		"unknown model provider %q in %s: use openai:, anthropic:, ollama: or script:", provider, what)
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

// ollamaRootURL turns OLLAMA_HOST (which Ollama allows without a scheme or
// port, e.g. "0.0.0.0" or "gpu-box:11434") into the server's root URL:
// its native API is under /api, its OpenAI-compatible one under /v1.
func ollamaRootURL(host string) (string, error) {
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
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String(), nil
}
