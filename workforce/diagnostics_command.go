package workforce

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/shell"
)

// diagRun is the output of a diagnostics command's last run in a task.
type diagRun struct {
	epoch uint64 // the task's changes counted when it ran
	files fileDiags
}

// commandDiagnostics runs the diagnostics command in the workspace root and
// reads its output. reuse takes the last run's output instead when no
// change of the task came since it. One diagnostics command of a task
// runs at a time.
func (w *worker) commandDiagnostics(ctx context.Context, command string, reuse bool) (fileDiags, error) {
	t := w.t
	t.diagMu.Lock()
	defer t.diagMu.Unlock()
	epoch := t.changeEpoch.Load()
	if r, ok := t.diagRuns[command]; reuse && ok && r.epoch == epoch {
		return r.files, nil
	}
	files, err := w.runDiagnostics(ctx, command)
	if err != nil {
		return nil, err
	}
	if t.diagRuns == nil {
		t.diagRuns = map[string]diagRun{}
	}
	t.diagRuns[command] = diagRun{epoch: epoch, files: files}
	return files, nil
}

// runDiagnostics runs a diagnostics command as run_command runs a command
// (the editor's agent/runCommand, else the sidecar's shell; the events
// commandStarted and commandFinished), without asking: the person named
// it in the diagnostics setting. But commands: deny runs none, and in a
// workspace the person does not trust it is asked for as any command.
func (w *worker) runDiagnostics(ctx context.Context, command string) (fileDiags, error) {
	t := w.t
	if t.commandPolicy() == api.CommandsDeny {
		return nil, fmt.Errorf("the diagnostics command `%s` is not run: the commands setting is deny", command)
	}
	if t.settings.Untrusted() {
		if err := w.approve(ctx, command); err != nil {
			return nil, fmt.Errorf("the diagnostics command `%s` was not run: %w", command, err)
		}
	}
	t.emit(api.TaskEvent{Kind: api.EventCommandStarted, SubtaskID: w.sub.ID, Text: command})
	timeout := t.settings.Timeouts.Command()
	p := api.RunCommandParams{Command: command, Cwd: t.e.cfg.Root, TimeoutMs: timeout.Milliseconds(), UnsetEnv: t.unsetEnv()}
	res, err := t.e.cfg.Editor.RunCommand(ctx, p)
	if errors.Is(err, api.ErrUnsupported) {
		res, err = t.e.cfg.Shell(ctx, p), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, fmt.Errorf("the editor could not run the diagnostics command `%s`: %w", command, err)
	}
	files := parseDiagnostics(res.Output, func(p string) (string, bool) {
		rp, err := t.edit.Resolve(p)
		if err != nil || rp.Rel == "." || t.edit.Closed(rp.Rel) != "" {
			return "", false
		}
		return rp.Rel, true
	})
	ok := !res.TimedOut && (res.ExitCode == 0 || len(files) > 0)
	t.emit(api.TaskEvent{Kind: api.EventCommandFinished, SubtaskID: w.sub.ID, Text: command, OK: &ok,
		Summary: fmt.Sprintf("exit code %d, %d diagnostics", res.ExitCode, files.count())})
	switch {
	case res.TimedOut:
		return nil, fmt.Errorf("the diagnostics command `%s` timed out after %s", command, timeout)
	case !ok:
		return nil, fmt.Errorf("the diagnostics command `%s` failed (exit code %d) without a file:line: diagnostic; its output ends: %s",
			command, res.ExitCode, strings.TrimSpace(shell.Cut(res.Output, 0, 600)))
	}
	return files, nil
}

// The lines of a checker's output that parseDiagnostics reads:
//
//	main.go:6:2: undefined: y                       (go build, go vet, gcc, clang, eslint's unix format)
//	vet: ./main.go:6:2: undefined: y                (a tool's name before the place)
//	app.py:3: error: Name "x" is not defined  [name-defined]   (mypy: no column)
//	src/a.ts(3,5): error TS2304: Cannot find name 'x'.         (tsc)
//	error[E0425]: cannot find value `x` in this scope          (rustc, cargo: the place follows)
//	 --> src/main.rs:2:5
var (
	placeLine  = regexp.MustCompile(`^(?:[A-Za-z][\w.-]*: )?([^\s:()][^:()]*?):(\d+)(?::(\d+))?:\s*(.*)$`)
	tscLine    = regexp.MustCompile(`^([^\s:()][^:()]*?)\((\d+),(\d+)\):\s*(.*)$`)
	rustHead   = regexp.MustCompile(`^(error|warning)(?:\[(\w+)\])?: (.+)$`)
	rustPlace  = regexp.MustCompile(`^\s*--> (.+?):(\d+):(\d+)\s*$`)
	severityAt = regexp.MustCompile(`(?i)^(fatal error|error|warning|warn|note|info|information|hint)(?:\s+([A-Za-z]+\d+))?\s*:\s*`)
	trailCode  = regexp.MustCompile(`\s+\[([\w-]+)\]$`)
)

// parseDiagnostics reads a checker's output into diagnostics by file:
// every line that names a place in a file the workspace has (resolve turns
// a path as the output writes it into a workspace-relative one, or says
// it is not one). Lines and columns are read 1-based, as checkers write
// them, into LSP's 0-based positions (the column as written). A severity
// written before the message (error:, warning:, note:) is read, and an
// error is what a line without one means.
func parseDiagnostics(output string, resolve func(string) (string, bool)) fileDiags {
	out, n := fileDiags{}, 0
	var rust *api.Diagnostic // a rustc head waiting for its place
	add := func(p, line, col string, d api.Diagnostic) {
		rel, ok := resolve(p)
		if !ok || n == maxDiagnostics {
			return
		}
		l, _ := strconv.Atoi(line)
		c, _ := strconv.Atoi(col)
		pos := api.Position{Line: uint32(max(l-1, 0)), Character: uint32(max(c-1, 0))}
		d.Range = api.Range{Start: pos, End: pos}
		out[rel] = append(out[rel], d)
		n++
	}
	for _, line := range strings.Split(strings.ReplaceAll(output, "\r\n", "\n"), "\n") {
		if m := rustPlace.FindStringSubmatch(line); m != nil {
			if rust != nil {
				add(m[1], m[2], m[3], *rust)
				rust = nil
			}
			continue
		}
		if m := rustHead.FindStringSubmatch(line); m != nil {
			d := api.Diagnostic{Severity: api.SeverityError, Code: api.DiagnosticCode(m[2]), Message: m[3]}
			if m[1] == "warning" {
				d.Severity = api.SeverityWarning
			}
			rust = &d
			continue
		}
		if m := tscLine.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], readMessage(m[4]))
			continue
		}
		if m := placeLine.FindStringSubmatch(line); m != nil {
			add(m[1], m[2], m[3], readMessage(m[4]))
		}
	}
	return out
}

// readMessage reads a message after its place: a severity and a code
// before it ("error TS2304:"), a code in brackets after it ("[name-defined]").
func readMessage(msg string) api.Diagnostic {
	d := api.Diagnostic{Severity: api.SeverityError}
	if m := severityAt.FindStringSubmatch(msg); m != nil {
		switch strings.ToLower(m[1]) {
		case "warning", "warn":
			d.Severity = api.SeverityWarning
		case "note", "info", "information":
			d.Severity = api.SeverityInformation
		case "hint":
			d.Severity = api.SeverityHint
		}
		d.Code = api.DiagnosticCode(m[2])
		msg = msg[len(m[0]):]
	}
	if m := trailCode.FindStringSubmatch(msg); m != nil && d.Code == "" {
		d.Code = api.DiagnosticCode(m[1])
		msg = msg[:len(msg)-len(m[0])]
	}
	d.Message = strings.TrimSpace(msg)
	return d
}
