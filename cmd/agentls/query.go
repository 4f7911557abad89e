package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/cmd/agentls/internal/runner"
)

const modelsUsage = `Usage: agentls models [flags]

Lists the models each provider the environment sets up offers (OpenAI and
OpenAI-compatible servers, Anthropic, Ollama), the current model marked with *,
and for each provider that is not set up or failed, what to do. The current
model is --model, else AGENTLS_MODEL, else the one of the API key that is set
(docs/MODELS.md). Any id listed is a value of --model.

Flags:
`

const checkModelUsage = `Usage: agentls check-model [flags]

Checks that the model agentls run would use works: it asks the provider for its
models, or sends a one-token request when the list does not name the model, and
says what is wrong in words you can act on (a variable to set, a key refused, a
server that does not answer, the closest names of an unknown model).

Exit codes:
  0    the model works
  1    it does not (a refused key, an unreachable server, an unknown model, …)
  2    usage or configuration error (a bad flag, no model, a missing key)

Flags:
`

const intentsUsage = `Usage: agentls intents [flags]

Lists the intents of the workspace (.orchestration/active_intents.yaml): the ids
agentls run --intent takes, with their status, name and owned scope. A COMPLETED
intent cannot be selected. Exits 1 when the file cannot be used, saying why.

Flags:
`

const enginesUsage = `Usage: agentls engines [flags]

Lists the engines: the external coding agents (Claude Code, Codex, Gemini CLI)
a subtask may run on instead of agentls's own worker, found on PATH or in npm's
cache (docs/ENGINES.md). Each is shown with its version, the command agentls
would start and where it was found, whether it runs isolated (in a worktree of
its own), or why it cannot be used. Any usable name is a value of agentls run
--engine. Exits 0 once the list is printed.

Flags:
`

// queryCmd is `agentls models`, `agentls check-model`, `agentls intents`
// and `agentls engines`: one question to a server started here, as agentls
// run starts it.
func queryCmd(name string, args []string, stdout, stderr io.Writer) int {
	var o runner.Options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	text := map[string]string{"models": modelsUsage, "check-model": checkModelUsage, "intents": intentsUsage, "engines": enginesUsage}[name]
	usage := func(w io.Writer) {
		fmt.Fprint(w, text)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Workspace, "workspace", ".", "the workspace root")
	var enginesFile string
	if name == "engines" {
		fs.BoolVar(&o.Probe, "probe", false, "start each usable engine and ask it its version (at most 30 s each)")
		fs.StringVar(&enginesFile, "engines", "", "the engines setting, from a JSON file, as agentls run --engines takes it")
	}
	if name != "intents" && name != "engines" {
		fs.StringVar(&o.Model, "model", "", "provider:model, e.g. anthropic:claude-sonnet-4-5 or script:/abs/path.json (default: AGENTLS_MODEL, then the API keys)")
	}
	fs.BoolVar(&o.JSON, "json", false, "print the server's answer as one line of JSON")
	if code, ok := parseFlags(fs, args, usage, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "agentls %s: unexpected argument %q\n", name, fs.Arg(0))
		usage(stderr)
		return runner.ExitUsage
	}
	ws, err := filepath.Abs(o.Workspace)
	if err != nil {
		fmt.Fprintf(stderr, "agentls %s: --workspace: %v\n", name, err)
		return runner.ExitUsage
	}
	if o.Engines, err = enginesFlag(enginesFile); err != nil {
		fmt.Fprintf(stderr, "agentls %s: --engines: %v\n", name, err)
		return runner.ExitUsage
	}
	o.Workspace = ws
	o.Model = absScript(o.Model)
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "agentls %s: cannot find the agentls binary: %v\n", name, err)
		return runner.ExitFailed
	}
	o.Server, o.Env = []string{self}, os.Environ()
	o.Stdout, o.Stderr = stdout, stderr
	switch name {
	case "models":
		return runner.Models(context.Background(), o)
	case "check-model":
		return runner.CheckModel(context.Background(), o)
	case "engines":
		return runner.Engines(context.Background(), o)
	}
	return runner.Intents(context.Background(), o)
}
