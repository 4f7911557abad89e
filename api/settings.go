package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// EditMode is how the agent's edits reach the files (docs/PROTOCOL.md §2):
// one of the Edit* values.
type EditMode = string

// The edit modes.
const (
	EditApply   EditMode = "apply"
	EditPropose EditMode = "propose"
	EditBranch  EditMode = "branch"
	// EditReview holds every change of a task, which its workers see, and
	// proposes them together as one edit when the task ends.
	EditReview EditMode = "review"
)

// EditModes lists the edit modes, in the order the docs give them.
var EditModes = []EditMode{EditApply, EditPropose, EditBranch, EditReview}

// ValidEditMode reports whether mode is one of EditModes.
func ValidEditMode(mode string) bool {
	for _, m := range EditModes {
		if m == mode {
			return true
		}
	}
	return false
}

// CommandPolicy is whether the agent may run commands (docs/PROTOCOL.md
// §2): one of the Commands* values.
type CommandPolicy = string

// The command policies.
const (
	CommandsAsk   CommandPolicy = "ask"
	CommandsAllow CommandPolicy = "allow"
	CommandsDeny  CommandPolicy = "deny"
)

// WorkspaceTrust is whether the person trusts the workspace, as their
// editor knows it (docs/SECURITY.md, "Workspace trust"): one of the Trust*
// values.
type WorkspaceTrust = string

// The trust a workspace may have. In an untrusted one agentls runs no
// command, starts no MCP server and runs no subtask on an engine without
// the person's explicit yes.
const (
	TrustTrusted   WorkspaceTrust = "trusted"
	TrustUntrusted WorkspaceTrust = "untrusted"
)

// Zones are the workspace-relative doublestar globs an agent may touch; deny
// wins over allow.
type Zones struct {
	Allow []string `json:"allow"`
	Deny  []string `json:"deny"`
}

// Timeouts bound the calls of docs/PROTOCOL.md §4, in milliseconds. HumanMs 0 means
// no bound: a person may take their time, and agent/stop ends the wait.
type Timeouts struct {
	ReverseCallMs int64 `json:"reverseCallMs"`
	CommandMs     int64 `json:"commandMs"`
	ModelMs       int64 `json:"modelMs"`
	HumanMs       int64 `json:"humanMs"`
	// MCPMs bounds an MCP tool call, and an MCP server's start (its
	// process, initialize and tools/list) but never below MCPStartMin.
	MCPMs int64 `json:"mcpMs"`
	// EngineMs bounds a subtask run on an engine (docs/ENGINES.md), its
	// agent's start included; 0: no bound but the task's.
	EngineMs int64 `json:"engineMs"`
}

// ReverseCall is ReverseCallMs as a duration.
func (t Timeouts) ReverseCall() time.Duration { return ms(t.ReverseCallMs) }

// Command is CommandMs as a duration.
func (t Timeouts) Command() time.Duration { return ms(t.CommandMs) }

// Model is ModelMs as a duration.
func (t Timeouts) Model() time.Duration { return ms(t.ModelMs) }

// Human is HumanMs as a duration; 0 means unbounded.
func (t Timeouts) Human() time.Duration { return ms(t.HumanMs) }

// MCP is MCPMs as a duration.
func (t Timeouts) MCP() time.Duration { return ms(t.MCPMs) }

// Engine is EngineMs as a duration; 0 means unbounded.
func (t Timeouts) Engine() time.Duration { return ms(t.EngineMs) }

// MCPStartMin is the least time an MCP server has to start: npx may
// download the package the first time.
const MCPStartMin = time.Minute

// MCPStart bounds an MCP server's start (its process, initialize and
// tools/list): MCPMs, but never less than MCPStartMin.
func (t Timeouts) MCPStart() time.Duration { return max(t.MCP(), MCPStartMin) }

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// Settings are the initializationOptions of docs/PROTOCOL.md §2 with every default
// filled in. The zero value is not useful: start from DefaultSettings.
type Settings struct {
	Model         string        `json:"model"`
	EditMode      EditMode      `json:"editMode"`
	MaxWorkers    int           `json:"maxWorkers"`
	Commands      CommandPolicy `json:"commands"`
	AllowCommands []string      `json:"allowCommands"`
	Zones         Zones         `json:"zones"`
	Timeouts      Timeouts      `json:"timeouts"`
	// Trace is nil when unset: then the trace is written when .orchestration/
	// exists in the workspace.
	Trace *bool `json:"trace"`
	// CommandEnv says which secret variables commands may inherit.
	CommandEnv CommandEnv `json:"commandEnv"`
	// RepoMapTokens bounds the repo map put into the planner's and
	// workers' prompts (0: no map).
	RepoMapTokens int `json:"repoMapTokens"`
	// MCPServers are the MCP servers whose tools workers are offered, by
	// name (docs/MCP.md).
	MCPServers map[string]MCPServer `json:"mcpServers"`
	// AllowMCPTools are the MCP tools that run without asking under the
	// ask policy: mcp__<server> (every tool of it) or mcp__<server>__<tool>.
	AllowMCPTools []string `json:"allowMcpTools"`
	// Attachments bounds what agent/run's attachments may weigh.
	Attachments AttachmentLimits `json:"attachments"`
	// Thinking asks the models for their thinking (docs/MODELS.md).
	Thinking Thinking `json:"thinking"`
	// Heat tunes the heat map (docs/TRACKING.md).
	Heat HeatSettings `json:"heat"`
	// Prices are the users' prices and context windows by model spec
	// ("provider:model"), over the built-in ones (docs/TRACKING.md).
	Prices map[string]Price `json:"prices"`
	// Engines configures the external agents subtasks may run on, by name
	// (docs/ENGINES.md): a built-in engine's entry replaces its default.
	Engines map[string]EngineConfig `json:"engines"`
	// WorkspaceTrust is whether the person trusts the workspace, as the
	// editor says (VS Code's workspace trust; the Neovim and Emacs plugins
	// say what their editor knows).
	WorkspaceTrust WorkspaceTrust `json:"workspaceTrust"`
	// Diagnostics: how long an edit waits for the editor's diagnostics,
	// and the commands that check each language where the editor gives
	// none (docs/PROTOCOL.md §2).
	Diagnostics DiagnosticsSettings `json:"diagnostics"`
	// Instructions says which of the project's instruction files the
	// prompts carry, and how much of them (docs/WORKFORCE.md).
	Instructions InstructionSettings `json:"instructions"`
	// Compaction says when an agent's conversation is compacted
	// (docs/WORKFORCE.md).
	Compaction CompactionSettings `json:"compaction"`
}

// InstructionSettings is the instructions setting: the project's
// instruction files (every AGENTS.md; a directory's CLAUDE.md where it
// has none; .github/copilot-instructions.md where the root has neither)
// with the files Add names and without those Remove names (both
// workspace-relative doublestar globs), within MaxTokens (0: none).
type InstructionSettings struct {
	Add       []string `json:"add"`
	Remove    []string `json:"remove"`
	MaxTokens int      `json:"maxTokens"`
}

// InstructionTokensLimit bounds instructions.maxTokens: instructions past
// it would crowd out the task's own context.
const InstructionTokensLimit = 65536

// CompactionSettings is the compaction setting: an agent's conversation
// is compacted when it reaches Threshold of the model's context window
// (0: never at a threshold; a provider's "too long" still compacts it).
type CompactionSettings struct {
	Threshold float64 `json:"threshold"`
}

// Untrusted reports whether the workspace is not trusted.
func (s Settings) Untrusted() bool { return s.WorkspaceTrust == TrustUntrusted }

// AttachmentLimits bound agent/run's attachments, in bytes: a file's text
// as the model is given it, an image's bytes, and everything one run
// attaches.
type AttachmentLimits struct {
	MaxFileBytes  int64 `json:"maxFileBytes"`
	MaxImageBytes int64 `json:"maxImageBytes"`
	MaxTotalBytes int64 `json:"maxTotalBytes"`
}

// Thinking is the thinking setting: when Enabled, models that can think
// are asked to, with BudgetTokens of thinking at most (docs/MODELS.md).
type Thinking struct {
	Enabled      bool `json:"enabled"`
	BudgetTokens int  `json:"budgetTokens"`
}

// Thinking budget bounds: Anthropic's least budget, and a bound well past
// what an answer of one turn needs.
const (
	MinThinkingBudget = 1024
	MaxThinkingBudget = 128000
)

// HeatSettings tune the heat map: Decay is the heat a file out of context
// keeps per 100 ms, ContextTurns the model turns without access before a
// file leaves context, CompactionThreshold the fraction of the previous
// turn's input tokens below which a turn's input means the model's context
// was compacted (0: never).
type HeatSettings struct {
	Decay               float64 `json:"decay"`
	ContextTurns        int     `json:"contextTurns"`
	CompactionThreshold float64 `json:"compactionThreshold"`
}

// RepoMapTokensLimit bounds repoMapTokens: a larger map crowds out the
// task's own context.
const RepoMapTokensLimit = 16384

// CommandEnv is the commandEnv setting of docs/PROTOCOL.md §2: commands and
// git run without the secret variables of agentls's environment, but those
// named in Pass.
type CommandEnv struct {
	Pass []string `json:"pass"`
}

// DefaultSettings returns the defaults of docs/PROTOCOL.md §2.
func DefaultSettings() Settings {
	return Settings{
		EditMode:       EditPropose,
		MaxWorkers:     3,
		Commands:       CommandsAsk,
		AllowCommands:  []string{},
		Zones:          Zones{Allow: []string{"**"}, Deny: []string{"**/.git/**"}},
		Timeouts:       Timeouts{ReverseCallMs: 120000, CommandMs: 600000, ModelMs: 300000, HumanMs: 0, MCPMs: 120000, EngineMs: 1800000},
		CommandEnv:     CommandEnv{Pass: []string{}},
		RepoMapTokens:  1024,
		MCPServers:     map[string]MCPServer{},
		AllowMCPTools:  []string{},
		Attachments:    AttachmentLimits{MaxFileBytes: 256 << 10, MaxImageBytes: 5 << 20, MaxTotalBytes: 20 << 20},
		Thinking:       Thinking{BudgetTokens: 4096},
		WorkspaceTrust: TrustTrusted,
		Heat:           HeatSettings{Decay: 0.95, ContextTurns: 3, CompactionThreshold: 0.5},
		Prices:         map[string]Price{},
		Engines:        map[string]EngineConfig{},
		Diagnostics:    DiagnosticsSettings{WaitMs: 2000, Commands: map[string]string{}},
		Instructions:   InstructionSettings{Add: []string{}, Remove: []string{}, MaxTokens: 8192},
		Compaction:     CompactionSettings{Threshold: 0.8},
	}
}

// MaxWorkersLimit bounds maxWorkers: more parallel model calls than this is
// a configuration mistake, not a wish.
const MaxWorkersLimit = 64

// SettingsError names the key of a bad setting and what was wrong with it.
type SettingsError struct {
	Key    string // dotted path, e.g. "timeouts.commandMs"
	Reason string
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("%s: %s", e.Key, e.Reason)
}

// ApplySettings decodes raw (a JSON object with any subset of the keys of
// docs/PROTOCOL.md §2) over base and validates the result. On error base is
// returned unchanged with a *SettingsError naming the key. Unknown keys are
// returned so the caller can log them; they are not an error, since newer
// editors may send keys this version does not know.
func ApplySettings(base Settings, raw json.RawMessage) (Settings, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return base, nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return base, nil, &SettingsError{Key: "initializationOptions", Reason: "must be an object, got " + jsonKind(raw)}
	}
	s := base
	s.AllowCommands = append([]string(nil), base.AllowCommands...)
	s.Zones = Zones{Allow: append([]string(nil), base.Zones.Allow...), Deny: append([]string(nil), base.Zones.Deny...)}
	s.CommandEnv = CommandEnv{Pass: append([]string(nil), base.CommandEnv.Pass...)}
	s.MCPServers = maps.Clone(base.MCPServers)
	s.AllowMCPTools = append([]string(nil), base.AllowMCPTools...)
	s.Prices = maps.Clone(base.Prices)
	s.Engines = maps.Clone(base.Engines)
	s.Diagnostics.Commands = maps.Clone(base.Diagnostics.Commands)
	s.Instructions.Add = slices.Clone(base.Instructions.Add)
	s.Instructions.Remove = slices.Clone(base.Instructions.Remove)
	var unknown []string
	for key, v := range fields {
		if isNull(v) {
			continue // null means "use the default / keep": editors send it for unset settings
		}
		var err error
		switch key {
		case "model":
			err = decodeString(key, v, &s.Model)
			if err == nil && s.Model != "" && !strings.Contains(s.Model, ":") {
				err = &SettingsError{Key: key, Reason: fmt.Sprintf("%q is not provider:model (e.g. openai:gpt-4.1-mini, script:/abs/path.json)", s.Model)}
			}
		case "editMode":
			err = decodeEnum(key, v, &s.EditMode, EditModes...)
		case "maxWorkers":
			err = decodeInt(key, v, &s.MaxWorkers, 1, MaxWorkersLimit)
		case "commands":
			err = decodeEnum(key, v, &s.Commands, CommandsAsk, CommandsAllow, CommandsDeny)
		case "allowCommands":
			err = decodeStrings(key, v, &s.AllowCommands)
		case "zones":
			err = decodeZones(v, &s.Zones)
		case "timeouts":
			err = decodeTimeouts(v, &s.Timeouts)
		case "commandEnv":
			err = decodeCommandEnv(v, &s.CommandEnv)
		case "repoMapTokens":
			err = decodeInt(key, v, &s.RepoMapTokens, 0, RepoMapTokensLimit)
		case "mcpServers":
			var unk []string
			s.MCPServers, unk, err = DecodeMCPServers(key, v)
			unknown = append(unknown, unk...)
		case "engines":
			var unk []string
			s.Engines, unk, err = DecodeEngines(key, v)
			unknown = append(unknown, unk...)
		case "allowMcpTools":
			err = decodeAllowMCPTools(v, &s.AllowMCPTools)
		case "attachments":
			err = decodeAttachmentLimits(v, &s.Attachments)
		case "thinking":
			err = decodeThinking(v, &s.Thinking)
		case "heat":
			err = decodeHeat(v, &s.Heat)
		case "prices":
			s.Prices, err = decodePrices(v)
		case "diagnostics":
			err = decodeDiagnostics(v, &s.Diagnostics)
		case "instructions":
			err = decodeInstructions(v, &s.Instructions)
		case "compaction":
			err = decodeCompaction(v, &s.Compaction)
		case "workspaceTrust":
			err = decodeEnum(key, v, &s.WorkspaceTrust, TrustTrusted, TrustUntrusted)
		case "trace":
			var b bool
			if err = decodeBool(key, v, &b); err == nil {
				s.Trace = &b
			}
		default:
			unknown = append(unknown, key)
		}
		if err != nil {
			return base, nil, err
		}
	}
	sort.Strings(unknown)
	return s, unknown, nil
}

func isNull(v json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(v), []byte("null")) }

func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func decodeString(key string, v json.RawMessage, dst *string) error {
	if err := json.Unmarshal(v, dst); err != nil {
		return &SettingsError{Key: key, Reason: "must be a string, got " + jsonKind(v)}
	}
	return nil
}

func decodeBool(key string, v json.RawMessage, dst *bool) error {
	if err := json.Unmarshal(v, dst); err != nil {
		return &SettingsError{Key: key, Reason: "must be true or false, got " + jsonKind(v)}
	}
	return nil
}

func decodeEnum(key string, v json.RawMessage, dst *string, allowed ...string) error {
	var s string
	if err := decodeString(key, v, &s); err != nil {
		return err
	}
	for _, a := range allowed {
		if s == a {
			*dst = s
			return nil
		}
	}
	return &SettingsError{Key: key, Reason: fmt.Sprintf("%q is not one of %s", s, strings.Join(allowed, ", "))}
}

func decodeInt(key string, v json.RawMessage, dst *int, lo, hi int) error {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return &SettingsError{Key: key, Reason: "must be a number, got " + jsonKind(v)}
	}
	if f != float64(int64(f)) || f < float64(lo) || f > float64(hi) {
		return &SettingsError{Key: key, Reason: fmt.Sprintf("must be a whole number from %d to %d, got %v", lo, hi, f)}
	}
	*dst = int(f)
	return nil
}

func decodeMillis(key string, v json.RawMessage, dst *int64) error {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return &SettingsError{Key: key, Reason: "must be a number of milliseconds, got " + jsonKind(v)}
	}
	if f != float64(int64(f)) || f < 0 || f > float64(24*time.Hour/time.Millisecond)*365 {
		return &SettingsError{Key: key, Reason: fmt.Sprintf("must be a whole, non-negative number of milliseconds, got %v", f)}
	}
	*dst = int64(f)
	return nil
}

func decodeStrings(key string, v json.RawMessage, dst *[]string) error {
	var ss []string
	if err := json.Unmarshal(v, &ss); err != nil {
		return &SettingsError{Key: key, Reason: "must be an array of strings, got " + jsonKind(v)}
	}
	if ss == nil {
		ss = []string{}
	}
	*dst = ss
	return nil
}

func decodeZones(v json.RawMessage, z *Zones) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(v, &fields); err != nil {
		return &SettingsError{Key: "zones", Reason: `must be an object {"allow": [globs], "deny": [globs]}, got ` + jsonKind(v)}
	}
	for key, fv := range fields {
		var dst *[]string
		switch key {
		case "allow":
			dst = &z.Allow
		case "deny":
			dst = &z.Deny
		default:
			return &SettingsError{Key: "zones." + key, Reason: "unknown key; zones has allow and deny"}
		}
		if isNull(fv) {
			continue
		}
		if err := decodeStrings("zones."+key, fv, dst); err != nil {
			return err
		}
		for i, p := range *dst {
			if err := ValidateGlob(p); err != nil {
				return &SettingsError{Key: fmt.Sprintf("zones.%s[%d]", key, i), Reason: err.Error()}
			}
		}
	}
	return nil
}

// ValidateGlob checks a workspace-relative doublestar pattern.
func ValidateGlob(p string) error {
	if p == "" {
		return fmt.Errorf("empty pattern")
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is absolute; patterns are workspace-relative", p)
	}
	if !doublestar.ValidatePattern(p) {
		return fmt.Errorf("%q is not a valid glob pattern", p)
	}
	return nil
}

func decodeCommandEnv(v json.RawMessage, c *CommandEnv) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(v, &fields); err != nil {
		return &SettingsError{Key: "commandEnv", Reason: `must be an object {"pass": [variable names]}, got ` + jsonKind(v)}
	}
	for key, fv := range fields {
		if key != "pass" {
			return &SettingsError{Key: "commandEnv." + key, Reason: "unknown key; commandEnv has pass"}
		}
		if isNull(fv) {
			continue
		}
		if err := decodeStrings("commandEnv.pass", fv, &c.Pass); err != nil {
			return err
		}
		for i, name := range c.Pass {
			if name == "" || strings.ContainsAny(name, "= \t\n\x00") {
				return &SettingsError{Key: fmt.Sprintf("commandEnv.pass[%d]", i), Reason: fmt.Sprintf("%q is not an environment variable name", name)}
			}
		}
	}
	return nil
}

func decodeTimeouts(v json.RawMessage, t *Timeouts) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(v, &fields); err != nil {
		return &SettingsError{Key: "timeouts", Reason: "must be an object, got " + jsonKind(v)}
	}
	for key, fv := range fields {
		var dst *int64
		switch key {
		case "reverseCallMs":
			dst = &t.ReverseCallMs
		case "commandMs":
			dst = &t.CommandMs
		case "modelMs":
			dst = &t.ModelMs
		case "humanMs":
			dst = &t.HumanMs
		case "mcpMs":
			dst = &t.MCPMs
		case "engineMs":
			dst = &t.EngineMs
		default:
			return &SettingsError{Key: "timeouts." + key, Reason: "unknown key; timeouts has reverseCallMs, commandMs, modelMs, humanMs, mcpMs, engineMs"}
		}
		if isNull(fv) {
			continue
		}
		if err := decodeMillis("timeouts."+key, fv, dst); err != nil {
			return err
		}
	}
	if t.ReverseCallMs == 0 {
		return &SettingsError{Key: "timeouts.reverseCallMs", Reason: "must be above 0: an editor that never answers must cost an error, not a hang"}
	}
	if t.MCPMs == 0 {
		return &SettingsError{Key: "timeouts.mcpMs", Reason: "must be above 0: an MCP server that never answers must cost an error, not a hang"}
	}
	return nil
}
