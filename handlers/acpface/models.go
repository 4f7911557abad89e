package acpface

import (
	"context"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
)

// catalog is what the providers offer (clients.ListModels), asked once
// per connection, in the background, when the first session opens: a
// provider may take seconds to answer, and session/new must not wait. Its
// models join the model option's values when they arrive, and every open
// session is sent the option again (config_option_update).
type catalog struct {
	mu      sync.Mutex
	models  []api.ModelInfo
	started bool
	cancel  context.CancelFunc
	done    sync.WaitGroup
}

// listModels starts asking the providers, once.
func (s *Server) listModels(root string) {
	c := &s.catalog
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return
	}
	c.started = true
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.done.Go(func() {
		res := clients.ListModels(ctx, s.Settings().Model, s.opts.Getenv, clients.Options{Logger: s.log, Dir: root})
		if ctx.Err() != nil {
			return
		}
		res = redact.Value(s.opts.Redactor, res)
		before, _ := s.modelChoices("")
		c.mu.Lock()
		c.models = res.Models
		c.mu.Unlock()
		after, _ := s.modelChoices("")
		s.log.Debug("models listed", zap.Int("models", len(res.Models)))
		if len(after) == len(before) {
			return // nothing new to offer
		}
		for _, se := range s.allSessions() {
			se.book.push(acp.ConfigOptionUpdate{ConfigOptions: se.configOptions()})
		}
	})
}

// closeCatalog stops the asking and waits for it.
func (s *Server) closeCatalog() {
	c := &s.catalog
	c.mu.Lock()
	cancel := c.cancel
	c.started = true // none starts afterwards
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	c.done.Wait()
}

// modelChoices are the values of the model option: the model in use, the
// model setting, the environment's AGENTLS_MODEL, the default model of
// each provider whose key (or base URL) the environment has, and the
// models the providers listed, once they have. current is the session's
// model ("" for the default, resolved the way docs/MODELS.md says). It
// returns the choices and the current one, which is always among them.
func (s *Server) modelChoices(current string) ([]acp.SessionConfigSelect, string) {
	env := s.opts.Getenv
	var out []acp.SessionConfigSelect
	add := func(spec, name, from string) {
		spec = strings.TrimSpace(spec)
		if spec == "" || slices.ContainsFunc(out, func(c acp.SessionConfigSelect) bool { return c.Value == spec }) {
			return
		}
		if name == "" {
			name = spec
		}
		out = append(out, acp.SessionConfigSelect{Value: spec, Name: name, Description: from})
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
	add(current, "", "in use")
	add(setting, "", "agentls's model setting")
	add(envModel, "", "AGENTLS_MODEL")
	if anthropic {
		add("anthropic:"+clients.DefaultAnthropicModel, "", "Anthropic (ANTHROPIC_API_KEY)")
	}
	if openai {
		add("openai:"+clients.DefaultOpenAIModel, "", "OpenAI or a compatible server (OPENAI_API_KEY, OPENAI_BASE_URL)")
	}
	s.catalog.mu.Lock()
	listed := s.catalog.models
	s.catalog.mu.Unlock()
	for _, m := range listed {
		add(m.ID, m.DisplayName, "listed by "+m.Provider)
	}
	return out, current
}
