package engines

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

// hold is how an engine's agent is held to the commands setting when it
// runs commands itself (docs/ENGINES.md, "Commands under the user's
// policy"): the arguments it starts with, the _meta of session/new, the
// session mode it is put in, a policy file it reads. Under allow nothing
// is held: its own configuration decides.
type hold struct {
	// agent is the built-in engine the hold was made for ("" : none).
	agent string
	// args follow its command (codex's -c, gemini's --admin-policy).
	args []string
	// meta is session/new's _meta (claude-agent-acp's SDK options).
	meta acp.Meta
	// modes: a session mode that lets it run commands unasked is changed
	// to "default" (session/set_mode) right after session/new.
	modes bool
	// file is written before it starts (gemini's admin policy), removed
	// when it ends.
	file, content string
}

// unasked are the session modes of the agents that run tools without
// asking: claude-agent-acp's bypassPermissions, acceptEdits and dontAsk
// (which takes its settings' allowances as given), gemini-cli's yolo.
var unasked = map[string]bool{"bypassPermissions": true, "acceptEdits": true, "dontAsk": true, "yolo": true}

// argsHeld: the agents that are held by their arguments, which must be
// known before they start.
func argsHeld(agent string) bool { return agent == api.EngineCodex || agent == api.EngineGemini }

// holdFor is the hold of a built-in engine's agent under the commands
// setting; dir is where a policy file may be written.
func holdFor(agent, commands, dir string) (hold, error) {
	h := hold{agent: agent}
	if commands == api.CommandsAllow || commands == "" {
		return h, nil
	}
	deny := commands == api.CommandsDeny
	switch agent {
	case api.EngineClaude:
		// Claude Code's settings given on its command line (--settings,
		// through the SDK's extraArgs) outrank every settings file: its
		// ask and deny rules win over any allow rule of the user's or the
		// repository's. Only the user's own settings are read: a
		// repository's .claude/settings.json may hold hooks, an
		// apiKeyHelper or a permission mode, each a command run without
		// asking.
		perms := map[string]any{"allow": []string{"mcp__agentls"}}
		// (0.17 and older run Bash as mcp__acp__Bash, through ACP's
		// terminal.)
		if deny {
			perms["deny"] = []string{"Bash", "BashOutput", "KillShell", "KillBash", "mcp__acp__Bash", "mcp__acp__BashOutput", "mcp__acp__KillShell", "WebFetch", "WebSearch"}
		} else {
			perms["ask"] = []string{"Bash", "mcp__acp__Bash", "WebFetch", "WebSearch"}
		}
		settings, _ := json.Marshal(map[string]any{"permissions": perms})
		opts, _ := json.Marshal(map[string]any{"claudeCode": map[string]any{"options": map[string]any{
			"settingSources": []string{"user"},
			"extraArgs":      map[string]string{"settings": string(settings)},
		}}})
		if err := json.Unmarshal(opts, &h.meta); err != nil {
			return h, err
		}
		h.modes = true
	case api.EngineCodex:
		// untrusted: every command but those Codex knows to be read-only
		// (cat, ls, grep, …) asks first. Without its shell tools it runs
		// no command at all; its edits still come back as changes.
		h.args = []string{"-c", `approval_policy="untrusted"`}
		if deny {
			h.args = append(h.args, "-c", "features.shell_tool=false", "-c", "features.unified_exec=false")
		}
	case api.EngineGemini:
		// An admin policy outranks the user's and the workspace's
		// policies and settings.
		decision := "ask_user"
		if deny {
			decision = "deny"
		}
		f, err := os.CreateTemp(dir, "gemini-policy-*.toml")
		if err != nil {
			return h, fmt.Errorf("gemini's policy file: %w", err)
		}
		h.file = f.Name()
		h.content = fmt.Sprintf(`# agentls: the commands setting is %s.
[[rule]]
toolName = "run_shell_command"
decision = %q
priority = 999
deny_message = "agentls: the commands setting is %s"
`, commands, decision, commands)
		_, werr := f.WriteString(h.content)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			_ = os.Remove(h.file)
			return h, fmt.Errorf("gemini's policy file: %w", werr)
		}
		h.args = []string{"--admin-policy", h.file}
		h.modes = true
	}
	return h, nil
}

// release removes what the hold wrote.
func (h hold) release() {
	if h.file != "" {
		_ = os.Remove(h.file)
	}
}

// cannotHold says why an agent that told its name only at initialize
// cannot be held to the commands setting: what holds it goes on its
// command line.
func cannotHold(engine, agent, info, commands string) error {
	pkgs := builtins[agent].packages
	return fmt.Errorf("engine %q is %s (as it says at initialize), which runs commands itself; agentls holds it to the commands setting (%s) with arguments of its command, and the command the engines setting gives it was not recognized as %s's: name the agent's package or program in it (e.g. npx -y %s), or set commands to allow",
		engine, info, commands, agent, pkgs[len(pkgs)-1])
}

// policyDir is where an engine's policy files go: the job's work
// directory, else the system's temporary one.
func policyDir(workDir string) (string, error) {
	if workDir == "" {
		return os.TempDir(), nil
	}
	dir := filepath.Join(workDir, "policies")
	return dir, os.MkdirAll(dir, 0o700)
}
