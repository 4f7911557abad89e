package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentls/agentls/api"
)

// queryTimeout bounds a question to the server: agent/models and
// agent/checkModel bound their own calls to the providers well within it.
const queryTimeout = time.Minute

// ask starts the server with o's settings, asks it method with params into
// result and shuts it down. On failure it says why on stderr (cmd names the
// command) and returns the exit code.
func ask(ctx context.Context, cmd string, o Options, method string, params, result any) (int, bool) {
	ed, code := start(ctx, cmd, o)
	if ed == nil {
		return code, false
	}
	defer ed.Close()
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	err := ed.Call(qctx, method, params, result)
	sctx, cancelShutdown := context.WithTimeout(context.Background(), 10*time.Second)
	_, _ = ed.Shutdown(sctx)
	cancelShutdown()
	if err != nil {
		fmt.Fprintf(o.Stderr, "%s: %s\n", cmd, forTerminal(err))
		return ExitFailed, false
	}
	return 0, true
}

// printJSON prints v as one line of JSON.
func printJSON(w io.Writer, v any) {
	line, _ := json.Marshal(v)
	fmt.Fprintf(w, "%s\n", line)
}

// Models is `agentls models`: what each provider the environment sets up
// offers (agent/models), the current model marked with *, and for each
// provider that is not set up or failed, what to do. It exits 0 once the
// server answered, whatever the providers said.
func Models(ctx context.Context, o Options) int {
	var res api.ModelsResult
	if code, ok := ask(ctx, "agentls models", o, api.MethodModels, struct{}{}, &res); !ok {
		return code
	}
	if o.JSON {
		printJSON(o.Stdout, res)
		return ExitDone
	}
	w := o.Stdout
	if res.Current != "" {
		fmt.Fprintf(w, "Current model: %s (from %s)\n", res.Current, terminalText(res.Source))
	} else {
		fmt.Fprintln(w, "Current model: none")
	}
	if res.CurrentError != "" {
		fmt.Fprintf(w, "  it cannot work: %s\n", terminalText(res.CurrentError))
	}
	for _, p := range res.Providers {
		fmt.Fprintln(w)
		where := ""
		if p.URL != "" {
			where = " (" + p.URL + ")"
		}
		switch {
		case !p.Configured:
			fmt.Fprintf(w, "%s: not set up: %s\n", p.Provider, terminalText(p.Hint))
		case p.Error != "":
			fmt.Fprintf(w, "%s%s: %s\n", p.Provider, where, terminalText(p.Error))
		default:
			fmt.Fprintf(w, "%s%s: %s\n", p.Provider, where, plural(p.Models, "model", "models"))
		}
		for _, m := range res.Models {
			if m.Provider != p.Provider {
				continue
			}
			mark := " "
			if m.Current {
				mark = "*"
			}
			line := fmt.Sprintf("%s %s", mark, m.ID)
			if m.DisplayName != "" {
				line += "  (" + m.DisplayName + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
	return ExitDone
}

// CheckModel is `agentls check-model`: whether the model agentls run would
// use (--model, else the environment) works (agent/checkModel). It exits 0
// when it does; 2 when no model is configured or the configuration cannot
// work (a missing key, an unknown provider, a bad script); 1 for every other
// problem (a refused key, an unreachable server, an unknown model, …).
func CheckModel(ctx context.Context, o Options) int {
	var res api.CheckModelResult
	if code, ok := ask(ctx, "agentls check-model", o, api.MethodCheckModel, api.CheckModelParams{}, &res); !ok {
		return code
	}
	if o.JSON {
		printJSON(o.Stdout, res)
	}
	msg := terminalText(res.Message)
	switch {
	case res.OK:
		if !o.JSON {
			fmt.Fprintln(o.Stdout, msg)
		}
		return ExitDone
	case res.Problem == api.ProblemNoModel || res.Problem == api.ProblemConfig:
		fmt.Fprintf(o.Stderr, "agentls check-model: %s\n", msg)
		return ExitUsage
	}
	fmt.Fprintf(o.Stderr, "agentls check-model: %s does not work: %s\n", res.Model, msg)
	return ExitFailed
}

// Intents is `agentls intents`: the intents of the workspace
// (agent/intents), those agentls run --intent takes. A broken intents file
// is said on stderr, with exit 1.
func Intents(ctx context.Context, o Options) int {
	var res api.IntentsResult
	if code, ok := ask(ctx, "agentls intents", o, api.MethodIntents, struct{}{}, &res); !ok {
		return code
	}
	if o.JSON {
		printJSON(o.Stdout, res)
	}
	if res.Error != "" {
		fmt.Fprintf(o.Stderr, "agentls intents: %s\n", res.Error)
		return ExitFailed
	}
	if o.JSON {
		return ExitDone
	}
	if len(res.Intents) == 0 {
		fmt.Fprintln(o.Stdout, "No intents: .orchestration/active_intents.yaml lists none, so agentls run needs no --intent.")
		return ExitDone
	}
	for _, in := range res.Intents {
		line := fmt.Sprintf("%s  [%s]  %s", in.ID, in.Status, in.Name)
		if len(in.OwnedScope) > 0 {
			line += "  (" + strings.Join(in.OwnedScope, ", ") + ")"
		}
		if !in.Selectable {
			line += "  (completed: cannot be selected)"
		}
		fmt.Fprintln(o.Stdout, line)
	}
	return ExitDone
}

// Engines is `agentls engines`: the external agents subtasks may run on
// (agent/engines, docs/ENGINES.md), each with its version, where its command
// was found and whether it runs isolated, or why it cannot be used. With
// Probe each usable one is started and asked its version. It exits 0 once
// the server answered, whatever the engines are.
func Engines(ctx context.Context, o Options) int {
	var res api.EnginesResult
	if code, ok := ask(ctx, "agentls engines", o, api.MethodEngines, api.EnginesParams{Probe: o.Probe}, &res); !ok {
		return code
	}
	if o.JSON {
		printJSON(o.Stdout, res)
		return ExitDone
	}
	w := o.Stdout
	fmt.Fprintf(w, "%s (agentls run --engine NAME; agentls: the built-in worker)\n", plural(len(res.Engines), "engine", "engines"))
	for _, e := range res.Engines {
		fmt.Fprintln(w, engineLine(e))
	}
	return ExitDone
}

// engineLine is one engine of `agentls engines`: "claude 0.23.1: usable,
// isolated: /usr/bin/claude-agent-acp (from PATH)", or why it cannot be
// used.
func engineLine(e api.EngineInfo) string {
	head := e.Name
	if e.Version != "" {
		head += " " + e.Version
	}
	if !e.Usable {
		return fmt.Sprintf("%s: cannot be used: %s", head, terminalText(e.Reason))
	}
	how := "usable"
	if e.Isolated {
		how += ", isolated"
	}
	line := fmt.Sprintf("%s: %s", head, how)
	if len(e.Command) > 0 {
		line += ": " + terminalText(strings.Join(e.Command, " "))
	}
	if from := map[string]string{"settings": "the engines setting", "path": "PATH", "npm-cache": "npm's cache"}[e.Source]; from != "" {
		line += " (from " + from + ")"
	}
	if e.Note != "" {
		line += "; " + terminalText(e.Note)
	}
	return line
}
