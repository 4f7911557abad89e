package api

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
)

// Built-in engines (docs/ENGINES.md): external agents agentls runs as
// workers over the Agent Client Protocol, found on PATH or in npm's cache.
const (
	EngineClaude = "claude"
	EngineCodex  = "codex"
	EngineGemini = "gemini"
)

// BuiltinEngines are the names of the built-in engines, sorted.
var BuiltinEngines = []string{EngineClaude, EngineCodex, EngineGemini}

// EngineConfig is one entry of the engines setting: how to start an ACP
// agent. A built-in engine's entry replaces its default command; an entry
// of another name adds an engine.
type EngineConfig struct {
	// Command is the program and its arguments; it speaks ACP on stdio.
	Command []string `json:"command,omitempty"`
	// Env is added to the agent's environment (after agentls's own, less
	// the secrets agentls knows of; a value here may name one again).
	Env map[string]string `json:"env,omitempty"`
	// Isolate runs the agent in a git worktree (or a copy) of its own and
	// brings its changes back through the editing pipeline when it ends:
	// for agents that write the disk or run commands themselves. nil: the
	// engine's default (docs/ENGINES.md).
	Isolate *bool `json:"isolate,omitempty"`
	// Disabled leaves the engine out.
	Disabled bool `json:"disabled,omitempty"`
	// MCPServers: false keeps the user's MCP servers (the mcpServers
	// setting) from the engine; nil or true hands them over through the
	// bridge (docs/ENGINES.md).
	MCPServers *bool `json:"mcpServers,omitempty"`
}

// engineNameRE is what an engine's name may be: it is written in plans,
// on the command line and in events.
var engineNameRE = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,31}$`)

// ValidEngineName reports whether name can name an engine.
func ValidEngineName(name string) bool { return engineNameRE.MatchString(name) }

// EngineBuiltin is the name of the built-in worker, which "engine" may name
// to force it.
const EngineBuiltin = "agentls"

// DecodeEngines decodes the engines setting: an object of engine name →
// {command, env, isolate, disabled, mcpServers}. null for an entry means its default.
// Unknown keys of an entry are returned for the caller to log.
func DecodeEngines(key string, raw json.RawMessage) (map[string]EngineConfig, []string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, nil, &SettingsError{Key: key, Reason: `must be an object {"name": {"command": [...], "env": {...}}}, got ` + jsonKind(raw)}
	}
	out := make(map[string]EngineConfig, len(fields))
	var unknown []string
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := fields[name]
		k := key + "." + name
		if !ValidEngineName(name) || name == EngineBuiltin {
			return nil, nil, &SettingsError{Key: k, Reason: fmt.Sprintf("%q cannot name an engine: use lower-case letters, digits, '-', '_' and '.', starting with a letter (and not %q, the built-in worker)", name, EngineBuiltin)}
		}
		if isNull(v) {
			continue
		}
		var entry map[string]json.RawMessage
		if err := json.Unmarshal(v, &entry); err != nil {
			return nil, nil, &SettingsError{Key: k, Reason: `must be an object {"command": [...], "env": {...}}, got ` + jsonKind(v)}
		}
		var c EngineConfig
		for ek, ev := range entry {
			if isNull(ev) {
				continue
			}
			var err error
			switch ek {
			case "command":
				err = decodeStrings(k+".command", ev, &c.Command)
				if err == nil && (len(c.Command) == 0 || c.Command[0] == "") {
					err = &SettingsError{Key: k + ".command", Reason: "must name a program: a non-empty array whose first item is the program"}
				}
			case "env":
				c.Env, err = decodeStringMap(k+".env", ev, validEnvName)
			case "isolate":
				var b bool
				if err = decodeBool(k+".isolate", ev, &b); err == nil {
					c.Isolate = &b
				}
			case "disabled":
				err = decodeBool(k+".disabled", ev, &c.Disabled)
			case "mcpServers":
				var b bool
				if err = decodeBool(k+".mcpServers", ev, &b); err == nil {
					c.MCPServers = &b
				}
			default:
				unknown = append(unknown, k+"."+ek)
			}
			if err != nil {
				return nil, nil, err
			}
		}
		if len(c.Command) == 0 && !c.Disabled && !isBuiltinEngine(name) {
			return nil, nil, &SettingsError{Key: k, Reason: fmt.Sprintf("needs \"command\": %q is not a built-in engine (%v), so agentls cannot know how to start it", name, BuiltinEngines)}
		}
		out[name] = c
	}
	sort.Strings(unknown)
	return out, unknown, nil
}

func isBuiltinEngine(name string) bool {
	for _, b := range BuiltinEngines {
		if b == name {
			return true
		}
	}
	return false
}

// PlanStep is one entry of an engine's own plan for its subtask.
type PlanStep struct {
	Content string `json:"content"`
	// Status is pending, in_progress or completed.
	Status string `json:"status"`
	// Priority is high, medium or low ("" when the agent gave none).
	Priority string `json:"priority,omitempty"`
}

// ---- agent/engines (docs/PROTOCOL.md §3) ----

// EnginesParams are the params of agent/engines.
type EnginesParams struct {
	// Probe starts each usable engine and initializes it, to report the
	// version it gives and whether it really answers (bounded: 30 s each).
	Probe bool `json:"probe,omitempty"`
}

// EngineInfo is one engine as agent/engines lists it.
type EngineInfo struct {
	Name string `json:"name"`
	// Builtin: one of BuiltinEngines (possibly with a configured command).
	Builtin bool `json:"builtin"`
	// Command is what is started ([] when none was found).
	Command []string `json:"command"`
	// Source says where the command came from: "settings", "path" (found
	// on PATH), "npm-cache" (an npx install in npm's cache).
	Source string `json:"source,omitempty"`
	// Version is the agent's version, from its package or its initialize
	// answer ("" when unknown).
	Version string `json:"version,omitempty"`
	// Isolated: it runs in a worktree of its own.
	Isolated bool `json:"isolated"`
	// Usable: it can be assigned; Reason says why not.
	Usable bool   `json:"usable"`
	Reason string `json:"reason,omitempty"`
	// Note says what is not known of a usable engine until it starts (its
	// version, when the command does not tell it).
	Note string `json:"note,omitempty"`
}

// EnginesResult is the reply to agent/engines: the built-in worker's
// alternatives, sorted by name.
type EnginesResult struct {
	Engines []EngineInfo `json:"engines"`
}
