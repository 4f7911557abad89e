package acpface

import (
	"slices"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

// The engine option: which engine the session's prompts run every subtask
// on.
const (
	engineOption = "engine"
	// planDecides is the engine option's value that leaves each subtask's
	// engine to the plan; it cannot name an engine (names start with a
	// letter).
	planDecides = "*"
	// categoryEngine is the engine option's category: the schema names
	// none for it, and leaves those that begin with "_" to agents; a
	// client that knows none lists it with the options of no category.
	categoryEngine = "_engine"
)

// engineChoices are the engine option's values: the plan's choice,
// agentls's own workers, each engine that can take a subtask now, and
// current when it is none of these (an engine that stopped being usable).
func (se *session) engineChoices(current string) []acp.SessionConfigSelect {
	out := []acp.SessionConfigSelect{
		{Value: planDecides, Name: "Plan decides", Description: "Each subtask runs where the plan puts it: agentls's own workers unless it names an engine"},
		{Value: api.EngineBuiltin, Name: "agentls", Description: "Every subtask on agentls's own workers"},
	}
	for _, name := range se.engines.Available() {
		out = append(out, se.engineChoice(name))
	}
	if current != planDecides && !slices.ContainsFunc(out, func(c acp.SessionConfigSelect) bool { return c.Value == current }) {
		c := se.engineChoice(current)
		if err := se.engines.Usable(current); err != nil {
			c.Description = err.Error()
		}
		out = append(out, c)
	}
	return out
}

// engineChoice is one engine as a value of the engine option, described
// by what it runs.
func (se *session) engineChoice(name string) acp.SessionConfigSelect {
	c := acp.SessionConfigSelect{Value: name, Name: name, Description: "Every subtask on " + name}
	if r, err := se.engines.Resolve(name); err == nil {
		if info := r.Info(); info.Version != "" {
			c.Description += " " + info.Version
		}
	}
	return c
}

// engineConfigOption is the engine option as it is now.
func (se *session) engineConfigOption() acp.SessionConfigOption {
	se.mu.Lock()
	current := se.forced
	se.mu.Unlock()
	if current == "" {
		current = planDecides
	}
	return acp.SessionConfigOption{
		ID: engineOption, Name: "Engine", Category: categoryEngine, Type: acp.ConfigSelect,
		Description:  "Where the session's prompts run their subtasks: as the plan decides, on agentls's own workers, or all on one external agent (Claude Code, Codex, Gemini CLI, …)",
		CurrentValue: current, Options: se.engineChoices(current),
	}
}

// setEngine sets the engine option: value must be one of its values and,
// for an engine, one that can take a subtask now.
func (se *session) setEngine(value any) error {
	v, ok := value.(string)
	if !ok {
		return api.Errorf(api.CodeInvalidParams, `invalid params: "value" of %q must be a string`, engineOption)
	}
	se.mu.Lock()
	current := se.forced
	se.mu.Unlock()
	if !slices.ContainsFunc(se.engineChoices(current), func(c acp.SessionConfigSelect) bool { return c.Value == v }) {
		return api.Errorf(api.CodeInvalidParams, "invalid params: %q is not one of the engines offered (%s, %s or a usable engine: %v)", v, planDecides, api.EngineBuiltin, se.engines.Available())
	}
	if v != planDecides && v != api.EngineBuiltin {
		if err := se.engines.Usable(v); err != nil {
			return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	if v == planDecides {
		v = ""
	}
	se.mu.Lock()
	se.forced = v
	se.mu.Unlock()
	se.log.Info("session/set_config_option", zap.String("engine", v))
	return nil
}
