// Package runner is `agentls run` (docs/WORKFORCE.md, agentls run): it starts `agentls serve`
// as a child process and is its editor on the real disk, over real pipes,
// with editors/headless. It answers the reverse calls (file reads, commands,
// atomic edits that refuse stale versions), shows each command it runs
// with the end of its output and its exit status, puts approvals and questions to
// the person on the terminal (without a terminal and without --yes it answers
// that no one could be asked, and the run exits 3), draws the task tree live
// on stderr (plain lines when stderr is not a terminal), lets the person
// steer the task with a typed line (skip, add, remove a subtask, stop:
// controls.go), and prints the summary (changes applied and rejected, the
// session to follow up on) and the diffs on stdout. It exits ExitDone,
// ExitFailed, ExitRefused, ExitStopped (interrupted) or ExitUsage.
//
// Models, CheckModel, Intents and Engines (query.go) start the server the
// same way and ask it one question: `agentls models`, `agentls
// check-model`, `agentls intents`, `agentls engines`.
package runner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/rpc"
)

// Exit codes of `agentls run` (docs/WORKFORCE.md).
const (
	ExitDone   = 0
	ExitFailed = 1
	ExitUsage  = 2
	// ExitRefused: the task is done, but changes or commands were refused
	// (by the person, or because no one could be asked) or not applied.
	ExitRefused = 3
	ExitStopped = 130
)

// drainTimeout bounds the wait, after a task's result, for the final
// notification the server sent before it (it is normally there already).
const drainTimeout = 2 * time.Second

// Options are the flags and the surroundings of one `agentls run`.
type Options struct {
	Workspace  string // the workspace root
	Model      string // provider:model; "" leaves it to the environment (docs/MODELS.md)
	Mode       string // one of api.EditModes
	Yes        bool   // approve every change and command
	MaxWorkers int    // 0: the default
	Engine     string // run every subtask on this engine ("" : as planned)
	Record     string // record the model's answers as a script
	JSON       bool   // every notification as one JSON line on stdout
	Probe      bool   // agentls engines: start each usable engine to ask its version
	Prompt     string
	Intent     string // the intent the task works under (agent/run intentId)
	Session    string // the session the task continues (agent/run sessionId)

	// PassEnv names the secret variables commands may inherit (the
	// commandEnv setting, docs/PROTOCOL.md §2).
	PassEnv []string
	// Attach are the --attach values: PATH or PATH:L1-L2 (attach.go).
	Attach []string
	// Thinking asks the models for their thinking (the thinking setting).
	Thinking bool
	// Engines is the engines setting (docs/ENGINES.md), as JSON: the
	// external agents the task may run subtasks on, beside the built-in
	// ones (nil: those alone).
	Engines json.RawMessage
	// Diagnostics are the diagnostics setting's commands, by language
	// (docs/PROTOCOL.md §2): what checks each change of a file of the
	// language, since this editor has no language server.
	Diagnostics map[string]string

	// Server is the command that runs `agentls serve` (the binary itself).
	Server []string
	Env    []string
	// Serve, when set instead of Server, runs the server in-process.
	Serve headless.ServeFunc

	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Interactive: a person is at the terminal (stdin and stderr are
	// terminals): approvals and questions are asked there.
	Interactive bool
	// Live: stderr is a terminal; the task tree is redrawn in place.
	Live bool
	// Signals, when set, receives SIGINT: the first stops the task, the
	// second ends at once. nil: os/signal.
	Signals <-chan os.Signal

	drain time.Duration // drainTimeout when 0
}

// Run runs one prompt to its end and returns the exit code.
func Run(ctx context.Context, o Options) int {
	if strings.TrimSpace(o.Prompt) == "" {
		fmt.Fprintln(o.Stderr, "agentls run: a prompt is required")
		return ExitUsage
	}
	switch {
	case o.Mode == "":
		o.Mode = api.EditPropose
	case !api.ValidEditMode(o.Mode):
		fmt.Fprintf(o.Stderr, "agentls run: --mode %q is not one of %s\n", o.Mode, strings.Join(api.EditModes, ", "))
		return ExitUsage
	}
	atts, err := Attachments(o.Attach)
	if err != nil {
		fmt.Fprintf(o.Stderr, "agentls run: --attach %v\n", err)
		return ExitUsage
	}
	ui := newUI(o)
	ed, code := start(ctx, "agentls run", o)
	if ed == nil {
		return code
	}
	defer ed.Close()
	ed.Handle(api.MethodShowMessageRequest, ui.approve)
	ed.Handle(api.MethodAsk, ui.ask)
	ed.Handle(api.MethodRunCommand, ui.runCommand)

	taskID := newID()
	runCtx, cancelRun := context.WithCancel(ctx)
	defer cancelRun()
	type outcome struct {
		res api.RunResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		var res api.RunResult
		err := ed.Call(runCtx, api.MethodRun, api.RunParams{Prompt: o.Prompt, TaskID: taskID, IntentID: o.Intent, SessionID: o.Session, Attachments: atts, Engine: o.Engine}, &res)
		done <- outcome{res, err}
	}()
	stopTask := func() {
		go func() {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = ed.Call(sctx, api.MethodStop, api.StopParams{TaskID: taskID}, nil)
		}()
	}
	// A person at the terminal steers the task with a line while no
	// question waits (controls.go).
	endControls := ui.startControls(ed, taskID, stopTask)

	// Notifications, in order, until the run is answered.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		seen := 0
		for {
			n, err := ed.Await(watchCtx, func(n headless.Notification) bool { return n.Seq > seen })
			if err != nil {
				return
			}
			seen = n.Seq
			ui.notification(n)
		}
	}()

	sigs := o.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 2)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(ch)
		sigs = ch
	}
	var out outcome
	interrupts := 0
wait:
	for {
		select {
		case out = <-done:
			break wait
		case <-sigs:
			interrupts++
			if interrupts == 1 {
				ui.note("stopping… (press Ctrl-C again to quit at once)")
				stopTask()
				continue
			}
			cancelRun()
			out = <-done
			endControls()
			stopWatch()
			<-watched
			ui.finish()
			return ExitStopped
		}
	}
	endControls()
	// Everything the server sent before its answer is drawn before the
	// end. A task that ran sent its final state before its result; a run
	// refused with an error started no task and has nothing more to say.
	if out.err == nil {
		bound := o.drain
		if bound == 0 {
			bound = drainTimeout
		}
		drainCtx, cancelDrain := context.WithTimeout(context.Background(), bound)
		_, _ = ed.Await(drainCtx, func(n headless.Notification) bool {
			var p api.TaskUpdateParams
			return n.Method == api.MethodTaskUpdate && n.Decode(&p) == nil && p.TaskID == taskID &&
				p.Event.Kind == api.EventStateChanged && isFinal(p.State)
		})
		cancelDrain()
	}
	stopWatch()
	<-watched
	ui.finish()

	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, _ = ed.Shutdown(sctx)
	cancel()

	if out.err != nil {
		fmt.Fprintf(o.Stderr, "agentls run: %s\n", forTerminal(out.err))
		var we *api.Error
		if errors.As(out.err, &we) && (we.Code == api.CodeModelUnavailable || we.Code == api.CodeInvalidParams) {
			return ExitUsage
		}
		return ExitFailed
	}
	ui.result(&out.res)
	switch out.res.State {
	case api.TaskDone:
		if ui.refusals(&out.res) {
			return ExitRefused
		}
		return ExitDone
	case api.TaskStopped:
		return ExitStopped
	}
	return ExitFailed
}

// start starts the server as `agentls run`'s editor, with the settings of
// o, or says on stderr why it could not (cmd names the command) and returns
// the exit code.
func start(ctx context.Context, cmd string, o Options) (*headless.Editor, int) {
	if fi, err := os.Stat(o.Workspace); err != nil || !fi.IsDir() {
		fmt.Fprintf(o.Stderr, "%s: --workspace %s is not a directory\n", cmd, o.Workspace)
		return nil, ExitUsage
	}
	init := map[string]any{"commands": api.CommandsAsk}
	if o.Mode != "" {
		init["editMode"] = o.Mode
	}
	if o.Model != "" {
		init["model"] = o.Model
	}
	if o.MaxWorkers > 0 {
		init["maxWorkers"] = o.MaxWorkers
	}
	if len(o.PassEnv) > 0 {
		init["commandEnv"] = map[string]any{"pass": o.PassEnv}
	}
	if o.Thinking {
		init["thinking"] = map[string]any{"enabled": true}
	}
	if len(o.Engines) > 0 {
		init["engines"] = o.Engines
	}
	if len(o.Diagnostics) > 0 {
		init["diagnostics"] = map[string]any{"commands": o.Diagnostics}
	}
	var command []string
	if o.Serve == nil {
		command = append(command, o.Server...)
		command = append(command, "serve", "--log-level", "error")
		if o.Record != "" {
			command = append(command, "--record", o.Record)
		}
	}
	startCtx, cancelStart := context.WithTimeout(ctx, 30*time.Second)
	defer cancelStart()
	ed, err := headless.Start(startCtx, headless.Options{
		Root:    o.Workspace,
		Command: command,
		Serve:   o.Serve,
		Env:     o.Env,
		Stderr:  o.Stderr,
		Caps: headless.Capabilities{ApplyEdit: true, DocumentChanges: true,
			ResourceOperations: []string{"create", "delete"},
			ReadFile:           true, RunCommand: true, Ask: true},
		InitializationOptions: init,
		ClientName:            "agentls run",
	})
	if err != nil {
		fmt.Fprintf(o.Stderr, "%s: %s\n", cmd, forTerminal(err))
		var we *api.Error
		if errors.As(err, &we) && we.Code == api.CodeInvalidParams {
			return nil, ExitUsage
		}
		return nil, ExitFailed
	}
	return ed, 0
}

func isFinal(state string) bool {
	return state == api.TaskDone || state == api.TaskFailed || state == api.TaskStopped
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "run-" + hex.EncodeToString(b[:])
}

// ui is the terminal side: the tree or the lines, the questions, the result.
type ui struct {
	o  Options
	in *lines // nil without input

	mu       sync.Mutex // one writer at a time; a question holds it while it waits
	tree     *tree
	drawn    int  // lines of the live tree on screen
	controls bool // the person may steer the run (controls.go)
	// typed counts the lines the terminal echoed below the live tree (a
	// control typed and its Enter): the next redraw clears them too. The
	// reading goroutine adds to it without the lock, which a question
	// holds while it waits for its line.
	typed atomic.Int32

	refused refusedCount
}

// refusedCount counts the commands not approved (the changes not applied
// are in the result) and whether some approval could not be asked for.
type refusedCount struct {
	mu       sync.Mutex
	commands int
	unasked  bool
}

func newUI(o Options) *ui {
	u := &ui{o: o, tree: newTree()}
	if o.Stdin != nil {
		u.in = newLines(o.Stdin)
	}
	return u
}

// notification shows one notification.
func (u *ui) notification(n headless.Notification) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.o.JSON {
		line, _ := json.Marshal(struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}{n.Method, n.Params})
		fmt.Fprintf(u.o.Stdout, "%s\n", line)
		return
	}
	switch n.Method {
	case api.MethodTaskUpdate:
		var p api.TaskUpdateParams
		if n.Decode(&p) != nil {
			return
		}
		line := u.tree.apply(&p)
		if u.o.Live {
			u.redrawLocked()
		} else if line != "" {
			fmt.Fprintln(u.o.Stderr, line)
		}
	case api.MethodLogMessage, api.MethodShowMessage:
		var p api.LogMessageParams
		if n.Decode(&p) == nil {
			u.printLocked("agentls: " + strings.TrimPrefix(p.Message, "agentls: "))
		}
	}
}

// printLocked prints a line above the live tree.
func (u *ui) printLocked(s string) {
	u.clearLocked()
	fmt.Fprintln(u.o.Stderr, s)
	if u.o.Live {
		u.redrawLocked()
	}
}

func (u *ui) note(s string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.printLocked(s)
}

func (u *ui) clearLocked() {
	n := u.drawn + int(u.typed.Swap(0))
	if u.o.Live && n > 0 {
		fmt.Fprintf(u.o.Stderr, "\x1b[%dA\x1b[J", n)
	}
	u.drawn = 0
}

func (u *ui) redrawLocked() {
	u.clearLocked()
	lines := u.tree.render(true)
	if u.controls {
		lines = append(lines, "\x1b[2m  keys: s ID skip · r ID remove · a TEXT add · q stop · ? help (then Enter)\x1b[0m")
	}
	for _, l := range lines {
		fmt.Fprintln(u.o.Stderr, l)
	}
	u.drawn = len(lines)
}

// finish leaves the final tree on the screen.
func (u *ui) finish() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.o.Live {
		u.redrawLocked()
		u.drawn = 0
	}
}

// approve answers window/showMessageRequest: a change to apply or a command
// to run. --yes approves; a person at the terminal chooses; otherwise no
// one can be asked, and the answer is an error that says so and how to
// approve (the change is not applied, the command not run).
func (u *ui) approve(ctx context.Context, raw json.RawMessage) (any, error) {
	var p api.ShowMessageRequestParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	pick := func(titles ...string) *api.MessageActionItem {
		for _, t := range titles {
			for _, a := range p.Actions {
				if a.Title == t {
					return &a
				}
			}
		}
		return nil
	}
	command := pick("Run") != nil
	if u.o.Yes {
		u.note("approved (--yes): " + firstLine(p.Message))
		if item := pick("Apply", "Run"); item != nil {
			return *item, nil
		}
		return nil, nil
	}
	if !u.o.Interactive {
		u.refuse(command, true)
		u.note("not approved: no one could be asked (no terminal; --yes approves): " + firstLine(p.Message))
		return nil, api.Errorf(api.CodeRequestFailed, "no one could be asked: agentls run has no terminal (--yes approves changes and commands)")
	}
	titles := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		titles[i] = a.Title
	}
	answer, ok := u.prompt(ctx, p.Message, titles)
	item := pick(answer)
	if !ok || item == nil || (item.Title != "Apply" && item.Title != "Run" && item.Title != "Always allow") {
		u.refuse(command, false)
	}
	if !ok || item == nil {
		return nil, nil
	}
	return *item, nil
}

// refuse counts an approval not given: for a command or a change, and
// because no one could be asked or not.
func (u *ui) refuse(command, unasked bool) {
	r := &u.refused
	r.mu.Lock()
	defer r.mu.Unlock()
	if command {
		r.commands++
	}
	r.unasked = r.unasked || unasked
}

// refusals tells, on stderr, of the changes and commands that were refused
// or not applied, and how to approve them when no one could be asked. It
// reports whether there were any.
func (u *ui) refusals(res *api.RunResult) bool {
	r := &u.refused
	r.mu.Lock()
	commands, unasked := r.commands, r.unasked
	r.mu.Unlock()
	changes := res.Rejected
	if changes == 0 && commands == 0 {
		return false
	}
	var parts []string
	if changes > 0 {
		parts = append(parts, plural(changes, "change was", "changes were")+" not applied")
	}
	if commands > 0 {
		parts = append(parts, plural(commands, "command was", "commands were")+" not run")
	}
	msg := "agentls run: done, but " + strings.Join(parts, " and ")
	if unasked {
		msg += ": no one could be asked to approve (no terminal); run again with --yes to approve, or from a terminal to choose"
	}
	fmt.Fprintln(u.o.Stderr, msg)
	return true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ask answers agent/ask on the terminal; without one, the question is
// dismissed.
func (u *ui) ask(ctx context.Context, raw json.RawMessage) (any, error) {
	var p api.AskParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	if !u.o.Interactive {
		u.note("question dismissed (no terminal): " + p.Question)
		return api.AskResult{}, nil
	}
	answer, ok := u.prompt(ctx, "agentls asks: "+p.Question, p.Options)
	if !ok {
		return api.AskResult{}, nil
	}
	return api.AskResult{Answer: &answer}, nil
}

// shownOutputLines is how much of a command's output `agentls run` shows:
// its last lines, where results and errors are.
const shownOutputLines = 40

// runCommand answers agent/runCommand: it runs the command (approved
// before the server asks) and shows what it printed and how it ended, so
// the person sees the real result rather than the model's account of it.
func (u *ui) runCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p api.RunCommandParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	res := headless.RunShell(ctx, p)
	u.note(commandReport(p.Command, res))
	return res, nil
}

// commandReport is a command, the last lines of its output and its exit
// status, as `agentls run` shows them.
func commandReport(command string, res api.RunCommandResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ %s\n", command)
	out := strings.TrimRight(res.Output, "\n")
	if out != "" {
		lines := strings.Split(out, "\n")
		if n := len(lines) - shownOutputLines; n > 0 {
			fmt.Fprintf(&b, "│ … %d lines above not shown\n", n)
			lines = lines[n:]
		}
		for _, l := range lines {
			fmt.Fprintf(&b, "│ %s\n", l)
		}
	}
	if res.TimedOut {
		b.WriteString("└ timed out: killed")
	} else {
		fmt.Fprintf(&b, "└ exit status %d", res.ExitCode)
	}
	return b.String()
}

// prompt asks on the terminal and reads one line: a number or the text of
// an option, or free text when there are no options. An empty line or the
// end of input dismisses.
func (u *ui) prompt(ctx context.Context, msg string, options []string) (string, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.clearLocked()
	show := func() {
		fmt.Fprintln(u.o.Stderr, msg)
		for i, o := range options {
			fmt.Fprintf(u.o.Stderr, "  %d) %s\n", i+1, o)
		}
		fmt.Fprint(u.o.Stderr, "> ")
	}
	if u.in == nil {
		show()
		return "", false
	}
	line, err := u.in.next(ctx, show)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(u.o.Stderr, "(the question was withdrawn)")
		}
		return "", false
	}
	s := strings.TrimSpace(line)
	if s == "" {
		return "", false
	}
	for i, o := range options {
		if s == fmt.Sprint(i+1) || strings.EqualFold(s, o) {
			return o, true
		}
	}
	if len(options) > 0 && u.o.Live {
		u.redrawLocked()
	}
	return s, true
}

// result prints the summary and the diffs on stdout.
func (u *ui) result(res *api.RunResult) {
	if u.o.JSON {
		line, _ := json.Marshal(struct {
			Result *api.RunResult `json:"result"`
		}{res})
		fmt.Fprintf(u.o.Stdout, "%s\n", line)
		return
	}
	w := u.o.Stdout
	fmt.Fprintf(w, "Task %s: %s\n%s\n", res.TaskID, res.State, res.Summary)
	if res.Counts.Total() > 0 {
		fmt.Fprintf(w, "Subtasks: %s\n", res.Counts.String())
	}
	if res.Applied+res.Rejected > 0 {
		fmt.Fprintf(w, "Changes: %d applied, %d rejected\n", res.Applied, res.Rejected)
	}
	if !res.Usage.Empty() {
		fmt.Fprintf(w, "Tokens: %s\n", usageText(res.Usage))
		for _, s := range res.Subtasks {
			if s.Usage != nil && !s.Usage.Empty() {
				fmt.Fprintf(w, "  %s %s: %s\n", s.ID, short(s.Content, 50), usageText(*s.Usage))
			}
		}
	}
	for _, s := range res.Subtasks {
		if len(s.Todos) > 0 {
			fmt.Fprintf(w, "Todos of %s %s:\n", s.ID, short(s.Content, 50))
			for _, td := range s.Todos {
				fmt.Fprintf(w, "  %s\n", todoLine(td))
			}
		}
	}
	if res.SessionID != "" {
		fmt.Fprintf(w, "Session: %s (agentls run --session %s PROMPT follows up on it)\n", res.SessionID, res.SessionID)
	}
	applied := false
	for _, c := range res.Changes {
		status := "applied"
		if !c.Applied {
			status = "NOT applied"
		}
		applied = applied || c.Applied
		fmt.Fprintf(w, "\n%s %s (%s)\n", c.Operation, c.Path, status)
		fmt.Fprint(w, c.Diff)
		if c.Diff != "" && !strings.HasSuffix(c.Diff, "\n") {
			fmt.Fprintln(w)
		}
	}
	if applied {
		fmt.Fprintf(u.o.Stderr, "To take these changes back: agentls undo --task %s\n", res.TaskID)
	}
}

// usageText says what a usage counts: "2467 in (1200 cached), 244 out,
// $0.0111; context 344 of 200000 tokens". The cost and the context are
// said only when known.
func usageText(u api.Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d in", u.InputTokens)
	if u.CacheReadTokens > 0 {
		fmt.Fprintf(&b, " (%d cached)", u.CacheReadTokens)
	}
	fmt.Fprintf(&b, ", %d out", u.OutputTokens)
	if u.Cost != nil {
		fmt.Fprintf(&b, ", $%.4f", *u.Cost)
	}
	switch {
	case u.ContextTokens > 0 && u.ContextWindow > 0:
		fmt.Fprintf(&b, "; context %d of %d tokens (%d%%)", u.ContextTokens, u.ContextWindow, u.ContextTokens*100/u.ContextWindow)
	case u.ContextTokens > 0:
		fmt.Fprintf(&b, "; context %d tokens", u.ContextTokens)
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
