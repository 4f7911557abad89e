package handlers

import (
	"context"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
)

// sourceCheckModel names agent/checkModel's model in the words of its
// verdict.
const sourceCheckModel = "agent/checkModel model"

// modelOptions are the clients' options for the calls that ask providers
// about their models (no retries are reported: those calls make none).
func (s *Server) modelOptions(source string) clients.Options {
	return clients.Options{Logger: s.log, Dir: s.Root(), Source: source}
}

// models answers agent/models: what the configured providers offer, the
// current model marked, each provider that failed with its problem.
func (s *Server) models(ctx context.Context, _ struct{}) (*api.ModelsResult, error) {
	env := s.opts.Getenv
	res := clients.ListModels(ctx, s.Settings().Model, env, s.modelOptions(""))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return redact.Value(s.opts.Redactor, res), nil
}

// checkModel answers agent/checkModel: a model that cannot be used is a
// result saying why, never an error.
func (s *Server) checkModel(ctx context.Context, p api.CheckModelParams) (*api.CheckModelResult, error) {
	env := s.opts.Getenv
	spec, source := s.Settings().Model, ""
	if p.Model != "" {
		spec, source = p.Model, sourceCheckModel
	}
	res, err := clients.CheckModel(ctx, spec, env, s.modelOptions(source))
	if err != nil {
		return nil, err
	}
	return redact.Value(s.opts.Redactor, res), nil
}
