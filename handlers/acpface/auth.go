package acpface

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
// connection's model can be used, and otherwise fails as a prompt would,
// with the same auth_required and the same message.
func (s *Server) Authenticate(_ context.Context, p *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	if p.MethodID != modelAuthMethod.ID {
		return nil, api.Errorf(api.CodeInvalidParams, "methodId %q is not %q, agentls's one method", p.MethodID, modelAuthMethod.ID)
	}
	if err := s.checkModel(s.Settings().Model, ""); err != nil {
		return nil, err
	}
	return &acp.AuthenticateResponse{}, nil
}

// checkModel says whether spec (or the environment's model when spec is
// "") can be used, resolving it as a prompt does (clients.Resolve: the
// provider known, its key set, a script that loads), without a network
// call: nil, or the very error the prompt would answer (auth_required,
// the same message). authenticate, session/new, the model option and the
// prompt all check with it, so none of them says yes where a prompt would
// say no. root is the session's cwd, which a relative script: path is read
// from; authenticate has none, and takes such a path on trust until a
// session names its cwd.
func (s *Server) checkModel(spec, root string) error {
	env := s.opts.Getenv
	effective := strings.TrimSpace(spec)
	if effective == "" {
		effective = strings.TrimSpace(env("AGENTLS_MODEL"))
	}
	if effective == "" && env("ANTHROPIC_API_KEY") == "" && env("OPENAI_API_KEY") == "" {
		return api.Errorf(acp.CodeAuthRequired, "%s", noModel)
	}
	if root == "" {
		if provider, path, ok := strings.Cut(effective, ":"); ok && strings.EqualFold(strings.TrimSpace(provider), "script") && !filepath.IsAbs(strings.TrimSpace(path)) {
			return nil
		}
	}
	_, err := clients.Resolve(spec, env, clients.Options{Dir: root, Logger: s.log})
	return modelError(err)
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
