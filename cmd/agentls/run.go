package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/cmd/agentls/internal/runner"
)

const runUsage = `Usage: agentls run [flags] PROMPT

Runs one prompt in a workspace with agentls as its own editor: the task tree is
drawn on stderr, approvals and questions are asked on the terminal, the summary
(how many changes were applied and rejected) and the diff of every change are
printed on stdout. Without a terminal, changes and commands are approved only
with --yes.

While the task runs, a line typed at the terminal steers it:
  s ID                    skip subtask ID (a running one is stopped)
  r ID                    remove pending subtask ID
  a TEXT                  add a subtask; a after 1,2: TEXT waits for 1 and 2
  q                       stop the task (as Ctrl-C)
The end prints the session id: --session ID follows up on it.

Exit codes:
  0    done
  1    failed
  2    usage or configuration error (a bad flag, no model)
  3    done, but changes or commands were refused or not applied (without a
       terminal and without --yes, no one could approve them)
  130  stopped (Ctrl-C)

Flags:
`

// runCmd is `agentls run` (docs/WORKFORCE.md, agentls run).
func runCmd(args []string, stdin *os.File, stdout, stderr io.Writer) int {
	var o runner.Options
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	usage := func(w io.Writer) {
		fmt.Fprint(w, runUsage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Workspace, "workspace", ".", "the workspace root")
	fs.StringVar(&o.Model, "model", "", "provider:model, e.g. anthropic:claude-sonnet-4-5 or script:/abs/path.json (default: AGENTLS_MODEL, then the API keys)")
	fs.StringVar(&o.Mode, "mode", "propose", "edit mode: apply, propose (approve each change), branch, or review (approve all of the task's changes at its end)")
	fs.BoolVar(&o.Yes, "yes", false, "approve every change and command without asking")
	fs.IntVar(&o.MaxWorkers, "max-workers", 0, "subtasks run at once (default 3)")
	fs.StringVar(&o.Engine, "engine", "", "run every subtask on this engine: claude, codex, gemini, one --engines names, or agentls (the built-in worker; docs/ENGINES.md)")
	var enginesFile string
	fs.StringVar(&enginesFile, "engines", "", "the engines setting, from a JSON file: other agents and commands, {\"goose\": {\"command\": [\"goose\", \"acp\"]}} (docs/ENGINES.md)")
	fs.StringVar(&o.Record, "record", "", "record the model's answers into this file as a replayable script")
	fs.BoolVar(&o.JSON, "json", false, "print every notification as one JSON line on stdout, then the result")
	fs.StringVar(&o.Intent, "intent", "", "the intent the task works under (agentls intents lists them)")
	fs.StringVar(&o.Session, "session", "", "follow up on the session of an earlier run (its id is printed at the end)")
	fs.Var((*stringList)(&o.Attach), "attach", "attach a file (PATH, or PATH:L1-L2 for its lines L1 to L2) or an image (png, jpeg, gif, webp) to the prompt (repeatable)")
	fs.BoolVar(&o.Thinking, "thinking", false, "ask the model for its thinking, shown folded to one line (docs/MODELS.md)")
	fs.Var((*diagnosticsFlag)(&o.Diagnostics), "diagnostics", "check each change of a file of LANG with COMMAND, given as LANG=COMMAND (repeatable), e.g. go='go vet ./...'; its output's path:line:col: message lines are the diagnostics the worker is told (docs/WORKFORCE.md). LANG: "+strings.Join(api.DiagnosticsLanguages, ", "))
	fs.Var((*stringList)(&o.PassEnv), "pass-env", "let commands inherit this secret variable, e.g. GITHUB_TOKEN (repeatable; docs/MODELS.md)")
	if code, ok := parseFlags(fs, args, usage, stdout, stderr); !ok {
		return code
	}
	var err error
	if o.Engines, err = enginesFlag(enginesFile); err != nil {
		fmt.Fprintf(stderr, "agentls run: --engines: %v\n", err)
		return runner.ExitUsage
	}
	o.Prompt = strings.TrimSpace(strings.Join(fs.Args(), " "))
	if o.Prompt == "" {
		fmt.Fprintln(stderr, "agentls run: a prompt is required")
		usage(stderr)
		return runner.ExitUsage
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		fmt.Fprintf(stderr, "agentls run: --workspace: %v\n", err)
		return runner.ExitUsage
	}
	o.Workspace = ws
	if o.Record != "" {
		if o.Record, err = filepath.Abs(o.Record); err != nil {
			fmt.Fprintf(stderr, "agentls run: --record: %v\n", err)
			return runner.ExitUsage
		}
	}
	o.Model = absScript(o.Model)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "agentls run: cannot find the agentls binary: %v\n", err)
		return runner.ExitFailed
	}
	o.Server = []string{self}
	// The sidecar needs the keys; the commands it asks for are run here,
	// by the headless editor, without them (agent/runCommand unsetEnv).
	o.Env = os.Environ()
	o.Stdin, o.Stdout, o.Stderr = stdin, stdout, stderr
	errTerm := isTerminal(stderr)
	o.Live = errTerm && !o.JSON
	o.Interactive = errTerm && isTerminal(stdin)
	return runner.Run(context.Background(), o)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && fileIsTerminal(f)
}

// absScript makes a script: model's relative path absolute: it is taken
// from where the command was typed.
func absScript(model string) string {
	if rest, ok := strings.CutPrefix(model, "script:"); ok && rest != "" && !filepath.IsAbs(rest) {
		if abs, err := filepath.Abs(rest); err == nil {
			return "script:" + abs
		}
	}
	return model
}
