package acpface

import (
	"slices"
	"strings"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/clients"
)

// modelChoices are the values of the model option: the model setting, the
// environment's AGENTLS_MODEL, and the default model of each provider whose
// key (or base URL) the environment has; with current (the session's
// model, "" for the default) first resolved the way docs/MODELS.md says.
// It returns the choices and the current one, which is always among them.
func (s *Server) modelChoices(current string) ([]acp.SessionConfigSelect, string) {
	env := s.opts.Getenv
	var out []acp.SessionConfigSelect
	add := func(spec, from string) {
		spec = strings.TrimSpace(spec)
		if spec == "" || slices.ContainsFunc(out, func(c acp.SessionConfigSelect) bool { return c.Value == spec }) {
			return
		}
		out = append(out, acp.SessionConfigSelect{Value: spec, Name: spec, Description: from})
	}
	setting := s.Settings().Model
	envModel := strings.TrimSpace(env("AGENTLS_MODEL"))
	anthropic := env("ANTHROPIC_API_KEY") != ""
	openai := env("OPENAI_API_KEY") != "" || env("OPENAI_BASE_URL") != ""
	if current == "" {
		switch {
		case setting != "":
			current = setting
		case envModel != "":
			current = envModel
		case anthropic:
			current = "anthropic:" + clients.DefaultAnthropicModel
		case openai:
			current = "openai:" + clients.DefaultOpenAIModel
		}
	}
	add(current, "in use")
	add(setting, "agentls's model setting")
	add(envModel, "AGENTLS_MODEL")
	if anthropic {
		add("anthropic:"+clients.DefaultAnthropicModel, "Anthropic (ANTHROPIC_API_KEY)")
	}
	if openai {
		add("openai:"+clients.DefaultOpenAIModel, "OpenAI or a compatible server (OPENAI_API_KEY, OPENAI_BASE_URL)")
	}
	return out, current
}
