package acpface

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// modelAuthMethod is agentls's one way to "authenticate": to have a model.
// authenticate with it checks that the session's model can be used now.
var modelAuthMethod = acp.AuthMethod{
	ID:   "agentls-model",
	Name: "A model for agentls",
	Description: "agentls thinks with the model named by AGENTLS_MODEL (e.g. anthropic:claude-sonnet-4-5, ollama:qwen2.5-coder:7b, " +
		"script:/abs/path.json), or with ANTHROPIC_API_KEY or OPENAI_API_KEY: set one in the environment the client starts agentls with " +
		"(Zed: agent_servers.agentls.env) and start it again.",
}

// noModel is the message of a connection with no model at all.
const noModel = "agentls has no model: set AGENTLS_MODEL (e.g. \"anthropic:" + clients.DefaultAnthropicModel + "\", \"ollama:qwen2.5-coder:7b\" " +
	"or, offline, \"script:/abs/path/to/script.json\"), or ANTHROPIC_API_KEY or OPENAI_API_KEY, in the environment the client starts " +
	"agentls with (Zed: agent_servers.agentls.env; JetBrains: the agent's env in acp.json), or pass _meta.agentls.model in initialize"

// Authenticate answers authenticate: agentls-model succeeds when the
// connection's model can be used, and otherwise answers auth_required
// saying which variable to set.
func (s *Server) Authenticate(_ context.Context, p *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	if p.MethodID != modelAuthMethod.ID {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: methodId %q is not %q, agentls's one method", p.MethodID, modelAuthMethod.ID)
	}
	if err := s.checkModel(s.Settings().Model); err != nil {
		return nil, err
	}
	return &acp.AuthenticateResponse{}, nil
}

// checkModel says, without resolving it, whether spec (or the
// environment's model when spec is "") can be used: -32000 naming what to
// set when it cannot. It is cheap enough for session/new; the full check
// (a script that loads, a provider's client) is the prompt's.
func (s *Server) checkModel(spec string) error {
	env := s.opts.Getenv
	spec = strings.TrimSpace(spec)
	source := "the model setting"
	if spec == "" {
		spec, source = strings.TrimSpace(env("AGENTLS_MODEL")), "AGENTLS_MODEL"
	}
	if spec == "" {
		if env("ANTHROPIC_API_KEY") != "" || env("OPENAI_API_KEY") != "" {
			return nil
		}
		return api.Errorf(acp.CodeAuthRequired, "%s", noModel)
	}
	provider, _, _ := strings.Cut(spec, ":")
	switch strings.ToLower(strings.TrimSpace(provider)) {
	case "anthropic":
		if env("ANTHROPIC_API_KEY") == "" {
			return api.Errorf(acp.CodeAuthRequired, "model %q (from %s) needs ANTHROPIC_API_KEY: set it in the environment the client starts agentls with", spec, source)
		}
	case "openai":
		if env("OPENAI_API_KEY") == "" && env("OPENAI_BASE_URL") == "" {
			return api.Errorf(acp.CodeAuthRequired, "model %q (from %s) needs OPENAI_API_KEY (or OPENAI_BASE_URL for a server that needs no key): set it in the environment the client starts agentls with", spec, source)
		}
	}
	return nil
}

// modelError turns the error of a model that could not be resolved (an
// *api.Error with api.CodeModelUnavailable) into auth_required, the code
// ACP clients answer by showing how to authenticate.
func modelError(err error) error {
	var we *api.Error
	if errors.As(err, &we) && we.Code == api.CodeModelUnavailable {
		return &api.Error{Code: acp.CodeAuthRequired, Message: fmt.Sprintf("%s (agentls's settings: the model option, or AGENTLS_MODEL in its environment)", we.Message)}
	}
	return err
}
