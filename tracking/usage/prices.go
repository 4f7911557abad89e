package usage

import (
	"regexp"
	"strings"

	"github.com/agentls/agentls/api"
)

func usd(v float64) *float64 { return &v }

// builtin are the prices agentls knows of itself, in US dollars per
// million tokens, each as its provider publishes it; a model not listed
// shows tokens only unless the prices setting names it. The windows are
// the providers' published context windows.
var builtin = map[string]api.Price{
	// https://docs.anthropic.com/en/docs/about-claude/pricing ("Model
	// pricing": base input, 5m cache writes, cache hits, output) and
	// https://docs.anthropic.com/en/docs/about-claude/models/overview
	// (context window: 200K tokens).
	"anthropic:claude-sonnet-4-5": {Input: usd(3), CacheWrite: usd(3.75), CacheRead: usd(0.30), Output: usd(15), ContextWindow: 200_000},
	"anthropic:claude-sonnet-4":   {Input: usd(3), CacheWrite: usd(3.75), CacheRead: usd(0.30), Output: usd(15), ContextWindow: 200_000},
	"anthropic:claude-haiku-4-5":  {Input: usd(1), CacheWrite: usd(1.25), CacheRead: usd(0.10), Output: usd(5), ContextWindow: 200_000},
	"anthropic:claude-opus-4-1":   {Input: usd(15), CacheWrite: usd(18.75), CacheRead: usd(1.50), Output: usd(75), ContextWindow: 200_000},
	// https://platform.openai.com/docs/pricing (input, cached input,
	// output) and https://platform.openai.com/docs/models/gpt-4.1,
	// https://platform.openai.com/docs/models/gpt-4.1-mini (context
	// window: 1,047,576 tokens).
	"openai:gpt-4.1":      {Input: usd(2.00), CacheRead: usd(0.50), Output: usd(8.00), ContextWindow: 1_047_576},
	"openai:gpt-4.1-mini": {Input: usd(0.40), CacheRead: usd(0.10), Output: usd(1.60), ContextWindow: 1_047_576},
}

// dated is the date a provider appends to a model's name for one of its
// snapshots: Anthropic's -20250929, OpenAI's -2025-04-14.
var dated = regexp.MustCompile(`-(\d{8}|\d{4}-\d{2}-\d{2})$`)

// PriceOf returns the price of the model spec ("provider:model") and
// whether one is known: the prices setting's (users), else the built-in
// one. A dated snapshot (claude-sonnet-4-5-20250929, gpt-4.1-2025-04-14)
// takes the price of its model when it has none of its own. The provider
// is matched without case.
func PriceOf(spec string, users map[string]api.Price) (api.Price, bool) {
	return lookup(spec, users, true)
}

// UsersPrice is the prices setting's entry for the model spec, matched as
// PriceOf matches it, without the built-in prices: what the person said.
func UsersPrice(spec string, users map[string]api.Price) (api.Price, bool) {
	return lookup(spec, users, false)
}

func lookup(spec string, users map[string]api.Price, builtins bool) (api.Price, bool) {
	provider, model, ok := strings.Cut(spec, ":")
	if !ok {
		return api.Price{}, false
	}
	provider = strings.ToLower(strings.TrimSpace(provider))
	model = strings.TrimSpace(model)
	for _, name := range []string{model, dated.ReplaceAllString(model, "")} {
		if p, ok := users[provider+":"+name]; ok {
			return p, true
		}
		for k, p := range users {
			kp, km, _ := strings.Cut(k, ":")
			if strings.EqualFold(strings.TrimSpace(kp), provider) && strings.TrimSpace(km) == name {
				return p, true
			}
		}
		if p, ok := builtin[provider+":"+name]; ok && builtins {
			return p, true
		}
	}
	return api.Price{}, false
}
