package workforce

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/shell"
)

// Bounds of command output.
const (
	// modelOutputHead and modelOutputTail are what the model reads of a
	// longer output: its start and its end, where errors and summaries are.
	modelOutputHead = 8 << 10
	modelOutputTail = 16 << 10
)

// Actions of the command approval (docs/PROTOCOL.md §4).
const (
	actionRun         = "Run"
	actionAlwaysAllow = "Always allow"
	actionDeny        = "Deny"
)

// runCommand is run_command: the approval rules, then the editor's
// agent/runCommand, else the sidecar's own shell.
func (w *worker) runCommand(ctx context.Context, command string, timeoutMs int64) result {
	t := w.t
	if err := w.approve(ctx, command); err != nil {
		return fail(err)
	}
	timeout := t.settings.Timeouts.Command()
	if timeoutMs > 0 && (timeout == 0 || time.Duration(timeoutMs)*time.Millisecond < timeout) {
		timeout = time.Duration(timeoutMs) * time.Millisecond
	}
	t.emit(api.TaskEvent{Kind: api.EventCommandStarted, SubtaskID: w.sub.ID, Text: command})
	p := api.RunCommandParams{Command: command, Cwd: t.e.cfg.Root, TimeoutMs: timeout.Milliseconds(), UnsetEnv: t.unsetEnv()}
	res, err := t.e.cfg.Editor.RunCommand(ctx, p)
	if errors.Is(err, api.ErrUnsupported) {
		res, err = t.e.cfg.Shell(ctx, p), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail(context.Cause(ctx))
		}
		return fail(fmt.Errorf("the editor could not run the command: %w", err))
	}
	ok := res.ExitCode == 0 && !res.TimedOut
	t.emit(api.TaskEvent{Kind: api.EventCommandFinished, SubtaskID: w.sub.ID, Text: command, OK: &ok, Summary: fmt.Sprintf("exit code %d", res.ExitCode)})
	var b strings.Builder
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "The command timed out after %s and was killed.\n", timeout)
	default:
		fmt.Fprintf(&b, "Exit code %d.\n", res.ExitCode)
	}
	out := capOutput(res.Output)
	if strings.TrimSpace(out) == "" {
		b.WriteString("(no output)")
	} else {
		b.WriteString(out)
	}
	return result{content: b.String(), isErr: !ok}
}

// approve applies the commands setting: deny refuses, allow runs, ask runs
// a command that allowCommands or an earlier "Always allow" covers, and asks
// the person otherwise. In a workspace the person does not trust, allow
// and allowCommands count for nothing: only the person's own yes does
// (commandPolicy).
func (w *worker) approve(ctx context.Context, command string) error {
	t := w.t
	switch t.commandPolicy() {
	case api.CommandsDeny:
		return errors.New("run_command is turned off in this workspace (the commands setting is deny); do without running commands")
	case api.CommandsAllow:
		return nil
	}
	if !t.settings.Untrusted() && preapproved(command, t.settings.AllowCommands) || t.e.allowedBefore("command:"+command) {
		return nil
	}
	return w.askApproval(ctx, approval{
		question: "Run `" + command + "`?",
		message:  t.untrustedPrefix() + fmt.Sprintf("agentls wants to run `%s` in %s", command, t.e.cfg.Root),
		key:      "command:" + command,
		run:      "run the command",
		again:    "run it",
		subject:  "the command",
		notDone:  "it was not run",
		notDoneP: "was not run",
	})
}

// commandPolicy is the commands setting in force: allow is ask in a
// workspace the person does not trust (docs/SECURITY.md, "Workspace
// trust"); deny stays deny.
func (t *task) commandPolicy() api.CommandPolicy {
	if t.settings.Untrusted() && t.settings.Commands == api.CommandsAllow {
		return api.CommandsAsk
	}
	return t.settings.Commands
}

// untrustedPrefix begins every question asked because the workspace is not
// trusted: the person sees why they are asked.
func (t *task) untrustedPrefix() string {
	if t.settings.Untrusted() {
		return "This workspace is not trusted. "
	}
	return ""
}

// approval is one question of the approval path that run_command and the
// MCP tools share (docs/PROTOCOL.md §4): Run / Always allow / Deny.
type approval struct {
	question string // for the ask event
	message  string // for window/showMessageRequest
	key      string // what "Always allow" remembers for the process
	run      string // "run the command"
	again    string // "run it"
	subject  string // "the command"
	notDone  string // "it was not run"
	notDoneP string // "was not run"
}

// askApproval asks the person with window/showMessageRequest, the task
// waiting meanwhile, and turns the answer into nil (go on) or the error the
// model is told.
func (w *worker) askApproval(ctx context.Context, a approval) error {
	t := w.t
	t.beginWait(api.TaskEvent{Kind: api.EventAsk, SubtaskID: w.sub.ID, Question: a.question, Options: []string{actionRun, actionAlwaysAllow, actionDeny}})
	t.out.flush(ctx)
	item, err := t.e.cfg.Editor.ShowMessageRequest(ctx, api.ShowMessageRequestParams{
		Type:    api.MessageTypeInfo,
		Message: a.message,
		Actions: []api.MessageActionItem{{Title: actionRun}, {Title: actionAlwaysAllow}, {Title: actionDeny}},
	})
	var answer *string
	if item != nil {
		answer = &item.Title
	}
	t.endWait(api.TaskEvent{Kind: api.EventAnswered, SubtaskID: w.sub.ID, Answer: answer})
	switch {
	case err != nil && ctx.Err() != nil:
		return context.Cause(ctx)
	case errors.Is(err, api.ErrTimeout):
		return fmt.Errorf("the user did not answer whether to %s in time (%w); %s", a.run, err, a.notDone)
	case err != nil:
		return fmt.Errorf("could not ask the user to approve %s (%w); %s", a.subject, err, a.notDone)
	case item == nil:
		return fmt.Errorf("the user dismissed the approval; %s %s", a.subject, a.notDoneP)
	case item.Title == actionAlwaysAllow:
		t.e.allow(a.key)
		return nil
	case item.Title == actionRun:
		return nil
	}
	return fmt.Errorf("the user refused to %s (%s); do not %s again, do without it or ask the user", a.run, item.Title, a.again)
}

// preapproved reports whether an allowCommands prefix covers command. A
// prefix covers only a simple command: one with shell operators that could
// chain another command (; & | ` $( > < newline) is always asked for, so
// "go test" never lets "go test; rm -rf ~" through.
func preapproved(command string, prefixes []string) bool {
	c := strings.TrimSpace(command)
	if strings.ContainsAny(c, ";&|`><\n\r") || strings.Contains(c, "$(") {
		return false
	}
	for _, p := range prefixes {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if c == p || strings.HasPrefix(c, p+" ") {
			return true
		}
	}
	return false
}

// capOutput keeps the head and the tail of a long output and says how many
// bytes were cut, never inside a UTF-8 character (shell.Cut).
func capOutput(s string) string {
	return shell.Cut(s, modelOutputHead, modelOutputTail)
}

// RunShell is the sidecar's own way to run a command when the editor cannot
// (see internal/shell): p.Command in p.Cwd, bounded by p.TimeoutMs, without
// the variables of p.UnsetEnv.
func RunShell(ctx context.Context, p api.RunCommandParams) api.RunCommandResult {
	return shell.Run(ctx, p.Cwd, p.Command, time.Duration(p.TimeoutMs)*time.Millisecond, p.UnsetEnv)
}

// unsetEnv names the variables the task's commands and git must not
// inherit: every secret agentls knows of, but those commandEnv.pass names.
func (t *task) unsetEnv() []string {
	return t.e.cfg.Redactor.Unset(t.settings.CommandEnv.Pass)
}
