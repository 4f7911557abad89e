package workforce

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/conc/panics"
	"github.com/sourcegraph/conc/pool"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/tracking/heat"
)

// errStopped is the cause of a stopped task's context.
var errStopped = errors.New("stopped by the user")

// errSkipped is the cause of a skipped subtask's context.
var errSkipped = errors.New("skipped by the user")

// task is one agent/run.
type task struct {
	e         *Engine
	id        string
	sessionID string
	prompt    string
	params    api.RunParams
	settings  api.Settings
	model     Model
	spec      string
	price     api.Price // of the model, for the usage (tracking/usage)
	// window is the model's context window in tokens (0: unknown), which
	// compaction keeps the conversations within (compact.go).
	window int64
	runN   int // the N of a script's "N:" keys (docs/MODELS.md)
	log    *zap.Logger
	// attachments are what the user gave with the prompt, and references
	// the workspace files the prompt names (attachments.go).
	attachments []attachment
	references  []string
	// instr are the project's instruction files (instructions.go).
	instr *instructions

	ctx    context.Context
	cancel context.CancelCauseFunc

	edit     *editing.Workspace
	editTask *editing.Task
	journal  *journal
	// out hands the task's events over in order; they are queued under
	// mu, so the seq of an update and its place on the wire agree.
	out *outbox

	mu          sync.Mutex
	state       string
	seq         uint64
	progressed  bool   // how far the task is changed: the next mutate's last update says it
	interrupted string // why, when the editor went away: the session records interrupted
	subs        []*subtask
	waiting     int
	changes     []api.Change
	stopped     bool
	ended       bool
	summary     string
	trackers    map[string]*heat.Tracker // by agent id
	workers     map[string]*worker       // running, by subtask id
	ids         map[string]bool          // every subtask id used, removed ones too
	removed     int                      // subtasks removed from the plan

	// Review mode: the changes held, by path, in order; whether the task
	// is in its review, and how to end it.
	heldChanges  map[string][]landing
	reviewing    bool
	cancelReview context.CancelCauseFunc

	wake chan struct{}

	// changeEpoch counts the changes applied; diagRuns are the diagnostics
	// commands' last outputs, under diagMu (diagnostics_command.go).
	changeEpoch atomic.Uint64
	diagMu      sync.Mutex
	diagRuns    map[string]diagRun
}

// subtask is one node of the plan.
type subtask struct {
	api.Subtask
	cancel context.CancelCauseFunc // while running
	skip   bool                    // skip asked while running
}

func newTask(e *Engine, id string, p api.RunParams, s api.Settings, model Model, spec string, run int) *task {
	t := &task{
		e: e, id: id, prompt: p.Prompt, params: p, settings: s,
		model: model, spec: spec, runN: run,
		price:    priceOf(spec, s),
		log:      e.log.With(zap.String("task", id)),
		state:    api.TaskPlanning,
		trackers: map[string]*heat.Tracker{},
		workers:  map[string]*worker{},
		ids:      map[string]bool{},
		wake:     make(chan struct{}, 1),
	}
	t.instr = newInstructions(t)
	t.out = newOutbox(e.cfg.Events, e.cfg.Redactor, e.queues, t.log)
	t.ctx, t.cancel = context.WithCancelCause(context.Background())
	return t
}

// open records the task in its session and sets up its editing.
func (t *task) open() error {
	ws := t.e.cfg.Tracking
	sid, err := ws.Sessions.StartTask(t.params.SessionID, t.id, t.prompt)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnknownSession, err)
	}
	t.sessionID = sid
	ed := &taskEditor{Editor: t.e.cfg.Editor, t: t}
	t.edit, err = editing.New(editing.Config{
		Root:     t.e.cfg.Root,
		Zones:    t.settings.Zones,
		EditMode: t.settings.EditMode,
		Editor:   ed,
		UnsetEnv: t.unsetEnv(),
		Observer: (*observer)(t),
		Logger:   t.log,
		Warn:     func(ctx context.Context, msg string) { t.warn(msg) },
		Changed:  t.e.graphChanged,
	})
	if err != nil {
		_ = ws.Sessions.SetTaskState(sid, t.id, api.TaskFailed)
		return invalid("%w", err)
	}
	t.editTask = t.edit.Task(t.id, editing.Slug(t.prompt), t.settings.EditMode)
	t.journal = newJournal(ws.Sessions, sid, t.id, t.log)
	return nil
}

// run plans and runs the task to its end.
func (t *task) run(parent context.Context) *api.RunResult {
	defer t.cancel(nil)
	// The caller's context ($/cancelRequest on agent/run, the end of the
	// connection) stops the task like agent/stop.
	stopOnCancel := context.AfterFunc(parent, func() { t.stop() })
	defer stopOnCancel()

	// The start comes first, and is handled before the task does
	// anything: what a face does for it (the LSP face's progress token)
	// precedes every call the task makes.
	t.out.push(t.ctx, Event{TaskID: t.id, SessionID: t.sessionID, State: api.TaskPlanning,
		Start: &Start{Prompt: t.prompt, Model: t.spec, Token: t.params.WorkDoneToken}})
	t.out.flush(t.ctx)
	t.window = t.contextWindow(t.ctx)
	t.price.ContextWindow = t.window
	t.references = t.edit.UserPaths(t.prompt, maxReferences)
	t.journal.add(api.SessionMessage{Role: "user", Text: t.prompt + attachedNote(t.attachments), TaskID: t.id})
	t.journal.flush(t.ctx)
	if t.params.SessionID != "" {
		t.emit(api.TaskEvent{Kind: api.EventSessionContinued, Text: t.params.SessionID})
	}
	t.emit(api.TaskEvent{Kind: api.EventStateChanged, State: api.TaskPlanning})

	plan, err := t.plan(t.ctx)
	if err == nil {
		t.mutate(func() []api.TaskEvent {
			t.subs = plan
			for _, s := range plan {
				t.ids[s.ID] = true
				s.Engine = engineOf(t.params.Engine, s.Engine)
			}
			if !t.stopped {
				t.state = api.TaskRunning
			}
			return []api.TaskEvent{{Kind: api.EventPlanned, Text: planText(plan)}, {Kind: api.EventStateChanged, State: t.state}}
		})
		t.journal.add(api.SessionMessage{Role: "assistant", Text: "Plan:\n" + planText(plan), TaskID: t.id, Kind: api.MessagePlan})
		t.schedule()
	} else if !t.isStopped() {
		t.log.Warn("planning failed", zap.Error(err))
		t.mutate(func() []api.TaskEvent {
			t.summary = "Planning failed: " + err.Error()
			return nil
		})
	}
	return t.end()
}

// schedule starts every subtask whose dependencies are done or skipped, at
// most maxWorkers at once, until none is left to start and none runs.
func (t *task) schedule() {
	max := t.settings.MaxWorkers
	if max <= 0 {
		max = 1
	}
	p := pool.New().WithMaxGoroutines(max)
	defer p.Wait()
	for {
		type started struct {
			s   *subtask
			ctx context.Context
		}
		var start []started
		finished := false
		t.mutate(func() []api.TaskEvent {
			var evs []api.TaskEvent
			if t.stopped {
				finished = t.runningLocked() == 0
				return nil
			}
			evs = t.blockLocked(evs)
			running := t.runningLocked()
			for _, s := range t.subs {
				if running >= max {
					break
				}
				if s.State == api.SubtaskPending && t.readyLocked(s) {
					s.State = api.SubtaskRunning
					running++
					ctx, cancel := context.WithCancelCause(t.ctx)
					s.cancel = cancel
					start = append(start, started{s, ctx})
					evs = append(evs, api.TaskEvent{Kind: api.EventSubtaskStarted, SubtaskID: s.ID, Text: s.Content})
				}
			}
			finished = running == 0
			t.progressed = len(start) > 0
			return evs
		})
		for _, st := range start {
			p.Go(func() { t.work(st.ctx, st.s) })
		}
		if finished {
			return
		}
		<-t.wake
	}
}

// work runs one worker; a panic becomes a failed subtask.
func (t *task) work(ctx context.Context, s *subtask) {
	var summary string
	var err error
	var pc panics.Catcher
	pc.Try(func() {
		w := t.worker(ctx, s.ID)
		if s.Engine != "" {
			summary, err = w.runEngine(ctx, s.Engine)
			return
		}
		summary, err = w.run(ctx)
	})
	if r := pc.Recovered(); r != nil {
		t.log.Error("bug: a worker panicked; its subtask fails", zap.String("subtask", s.ID),
			zap.Any("panic", r.Value), zap.ByteString("stack", r.Stack))
		err = fmt.Errorf("internal error: %v", r.Value)
	}
	t.finishSubtask(s, summary, err)
}

func (t *task) finishSubtask(s *subtask, summary string, err error) {
	var msg api.SessionMessage
	t.mutate(func() []api.TaskEvent {
		if s.cancel != nil {
			s.cancel(nil)
			s.cancel = nil
		}
		ev := api.TaskEvent{Kind: api.EventSubtaskFinished, SubtaskID: s.ID}
		switch {
		case s.skip:
			s.State = api.SubtaskSkipped
			ev.Reason = errSkipped.Error()
		case err == nil:
			s.State, s.Result = api.SubtaskDone, summary
			ev.Summary = summary
		case t.stopped:
			s.State, s.Error = api.SubtaskFailed, "stopped before it finished"
			ev.Reason = s.Error
		default:
			s.State, s.Error = api.SubtaskFailed, err.Error()
			ev.Reason = s.Error
		}
		ev.State = s.State
		t.progressed = true
		text := ev.Summary
		if text == "" {
			text = s.State + ": " + ev.Reason
		}
		msg = api.SessionMessage{Role: "assistant", Text: text, TaskID: t.id, SubtaskID: s.ID}
		return []api.TaskEvent{ev}
	})
	t.journal.add(msg)
	t.kick()
}

func (t *task) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// readyLocked: every dependency is done or skipped.
func (t *task) readyLocked(s *subtask) bool {
	for _, d := range s.DependsOn {
		dep := t.findLocked(d)
		if dep == nil {
			continue // removed: nothing to wait for
		}
		if dep.State != api.SubtaskDone && dep.State != api.SubtaskSkipped {
			return false
		}
	}
	return true
}

// blockLocked marks pending subtasks whose dependency failed or is blocked,
// until nothing changes.
func (t *task) blockLocked(evs []api.TaskEvent) []api.TaskEvent {
	for changed := true; changed; {
		changed = false
		for _, s := range t.subs {
			if s.State != api.SubtaskPending {
				continue
			}
			for _, d := range s.DependsOn {
				dep := t.findLocked(d)
				if dep != nil && (dep.State == api.SubtaskFailed || dep.State == api.SubtaskBlocked) {
					s.State = api.SubtaskBlocked
					s.Error = fmt.Sprintf("blocked: subtask %s %s", dep.ID, dep.State)
					evs = append(evs, api.TaskEvent{Kind: api.EventSubtaskFinished, SubtaskID: s.ID, State: s.State, Reason: s.Error})
					changed = true
					break
				}
			}
		}
	}
	return evs
}

func (t *task) runningLocked() int {
	n := 0
	for _, s := range t.subs {
		if s.State == api.SubtaskRunning {
			n++
		}
	}
	return n
}

func (t *task) findLocked(id string) *subtask {
	for _, s := range t.subs {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// end decides the final state, has the changes held in review mode
// reviewed, flushes the session and builds the result.
func (t *task) end() *api.RunResult {
	t.mu.Lock()
	state := api.TaskFailed
	switch {
	case t.stopped:
		state = api.TaskStopped
	case len(t.subs) > 0 && t.allSettledLocked():
		state = api.TaskDone
	}
	t.mu.Unlock()
	t.reviewHeld(state)
	var res *api.RunResult
	sessionState := ""
	t.mutate(func() []api.TaskEvent {
		t.ended = true
		t.state = state
		t.summary = t.summaryLocked()
		res = &api.RunResult{
			TaskID:    t.id,
			SessionID: t.sessionID,
			State:     t.state,
			Summary:   t.summary,
			Subtasks:  t.subtasksLocked(),
			Changes:   append([]api.Change{}, t.changes...),
		}
		res.Applied, res.Rejected = countChanges(res.Changes)
		res.Counts = t.countsLocked()
		sessionState = t.state
		if t.interrupted != "" {
			// The editor is gone: nobody saw it stop. The session says so.
			sessionState = api.TaskInterrupted
		}
		counts := res.Counts
		return []api.TaskEvent{{Kind: api.EventStateChanged, State: t.state, Summary: t.summary,
			Applied: &res.Applied, Rejected: &res.Rejected, Counts: &counts}}
	})
	ws := t.e.cfg.Tracking
	res.Usage = ws.Usage.Task(t.id)
	t.journal.add(api.SessionMessage{Role: "assistant", Text: t.summary, TaskID: t.id, Kind: api.MessageSummary})
	t.journal.close(sessionState, res.Usage, res.Subtasks)
	// Every event of the task is handed over before agent/run answers, so
	// the reply comes after the last of them.
	t.out.close()
	t.log.Info("task ended", zap.String("state", sessionState), zap.Int("subtasks", len(res.Subtasks)), zap.Int("changes", len(res.Changes)))
	return res
}

// countChanges counts the changes applied and those not applied (refused
// by the person or the editor, or failed).
func countChanges(changes []api.Change) (applied, rejected int) {
	for _, c := range changes {
		if c.Applied {
			applied++
		} else {
			rejected++
		}
	}
	return applied, rejected
}

func (t *task) allSettledLocked() bool {
	for _, s := range t.subs {
		if s.State != api.SubtaskDone && s.State != api.SubtaskSkipped {
			return false
		}
	}
	return true
}

// countsLocked counts the subtasks by how they ended: the one count the
// summary, the end event and agent/run's result all give.
func (t *task) countsLocked() api.SubtaskCounts {
	c := api.SubtaskCounts{Removed: t.removed}
	for _, s := range t.subs {
		switch s.State {
		case api.SubtaskDone:
			c.Done++
		case api.SubtaskSkipped:
			c.Skipped++
		case api.SubtaskFailed:
			c.Failed++
		case api.SubtaskBlocked:
			c.Blocked++
		default: // pending, or running: the task stopped before it ran them
			c.NotRun++
		}
	}
	return c
}

// summaryLocked says what the task did, in a few lines: its first line
// from the counts, then a line per subtask.
func (t *task) summaryLocked() string {
	if t.summary != "" && len(t.subs) == 0 {
		return t.summary // planning failed
	}
	c := t.countsLocked()
	var b strings.Builder
	switch {
	case c.Total() == 0 && t.state == api.TaskStopped && t.interrupted != "":
		return "Interrupted before the plan was made: " + t.interrupted + "."
	case c.Total() == 0 && t.state == api.TaskStopped:
		return "Stopped by the user before the plan was made."
	case c.Total() == 0:
		return "Failed: no subtask was left to run."
	case t.state == api.TaskStopped && t.interrupted != "":
		fmt.Fprintf(&b, "Interrupted after %d of %d subtasks: %s.", c.Done, c.Total(), t.interrupted)
	case t.state == api.TaskStopped:
		fmt.Fprintf(&b, "Stopped by the user: %s.", c.String())
	case t.state == api.TaskDone && c.Done == c.Total():
		if len(t.subs) == 1 && t.subs[0].Result != "" {
			return t.subs[0].Result
		}
		if c.Done == 1 {
			b.WriteString("1 subtask done.")
		} else {
			fmt.Fprintf(&b, "All %d subtasks done.", c.Done)
		}
	case t.state == api.TaskDone:
		fmt.Fprintf(&b, "%s.", c.String())
	default:
		fmt.Fprintf(&b, "Failed: %s.", c.String())
	}
	for _, s := range t.subs {
		line := ""
		switch s.State {
		case api.SubtaskDone:
			line = s.Result
		case api.SubtaskSkipped:
			line = "skipped"
		case api.SubtaskFailed, api.SubtaskBlocked:
			line = s.State + ": " + s.Error
		default:
			line = "not run"
		}
		fmt.Fprintf(&b, "\n- %s (%s): %s", s.ID, oneLine(s.Content, 80), oneLine(line, 300))
	}
	return b.String()
}

func (t *task) subtasksLocked() []api.Subtask {
	out := make([]api.Subtask, len(t.subs))
	for i, s := range t.subs {
		out[i] = s.Subtask
		out[i].DependsOn = append([]string{}, s.DependsOn...)
	}
	return out
}

// mutate changes the task under its lock and queues the updates it
// returns, each with the next seq and the state and subtasks as they are
// after the change, on the task's outbox: they leave in seq order, and
// nothing here waits on the client. When f says how far the task is
// changed (progressed), its last update carries the task's Progress.
func (t *task) mutate(f func() []api.TaskEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	prev := t.state
	t.progressed = false
	evs := f()
	if t.state != prev && t.journal != nil {
		t.journal.state(t.state)
	}
	if len(evs) == 0 {
		return
	}
	subs := t.subtasksLocked()
	var progress *Progress
	if t.progressed {
		progress = t.progressLocked()
	}
	for i, ev := range evs {
		t.seq++
		out := Event{TaskID: t.id, SessionID: t.sessionID, Seq: t.seq, State: t.state, Subtasks: subs, Update: &ev}
		if i == len(evs)-1 {
			out.Progress = progress
		}
		t.out.push(context.Background(), out)
	}
}

// emit sends one event without changing the task.
func (t *task) emit(ev api.TaskEvent) {
	t.mutate(func() []api.TaskEvent { return []api.TaskEvent{ev} })
}

// beginWait and endWait bracket a wait on the person: the task is waiting
// while at least one is under way.
func (t *task) beginWait(ev api.TaskEvent) {
	t.mutate(func() []api.TaskEvent {
		t.waiting++
		evs := []api.TaskEvent{}
		if ev.Kind != "" {
			evs = append(evs, ev)
		}
		if t.waiting == 1 && t.state == api.TaskRunning {
			t.state = api.TaskWaiting
			evs = append(evs, api.TaskEvent{Kind: api.EventStateChanged, State: t.state})
		}
		return evs
	})
}

func (t *task) endWait(ev api.TaskEvent) {
	t.mutate(func() []api.TaskEvent {
		t.waiting--
		evs := []api.TaskEvent{}
		if ev.Kind != "" {
			evs = append(evs, ev)
		}
		if t.waiting == 0 && t.state == api.TaskWaiting {
			t.state = api.TaskRunning
			evs = append(evs, api.TaskEvent{Kind: api.EventStateChanged, State: t.state})
		}
		return evs
	})
}

// interrupt stops the task because the editor went away (why says how):
// its session records it as interrupted. It reports false when the task
// had already ended.
func (t *task) interrupt(why string) bool {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return false
	}
	t.interrupted = why
	t.mu.Unlock()
	return t.stop()
}

// stop cancels everything the task runs. It reports false when the task had
// already ended.
func (t *task) stop() bool {
	t.mu.Lock()
	if t.ended {
		t.mu.Unlock()
		return false
	}
	first := !t.stopped
	t.stopped = true
	cancel, review := t.cancel, t.cancelReview
	t.mu.Unlock()
	if first {
		t.log.Info("stopping")
	}
	if cancel != nil {
		cancel(errStopped)
	}
	if review != nil {
		review(errStopped) // a stop during the review ends it
	}
	t.kick()
	return true
}

func (t *task) isStopped() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stopped
}

func (t *task) addSubtask(content string, deps []string) (string, error) {
	var id string
	var err error
	t.mutate(func() []api.TaskEvent {
		if t.ended || t.stopped || t.reviewing || t.state == api.TaskPlanning {
			err = fmt.Errorf("%w: task %q is %s; subtasks are added while it runs", ErrWrongState, t.id, t.stateNameLocked())
			return nil
		}
		for _, d := range deps {
			if t.findLocked(d) == nil {
				err = invalid("\"dependsOn\": task %q has no subtask %q", t.id, d)
				return nil
			}
		}
		for n := len(t.ids) + 1; ; n++ {
			if !t.ids[strconv.Itoa(n)] {
				id = strconv.Itoa(n)
				break
			}
		}
		t.ids[id] = true
		s := &subtask{Subtask: api.Subtask{ID: id, Content: content, State: api.SubtaskPending, DependsOn: append([]string{}, deps...),
			Engine: engineOf(t.params.Engine, "")}}
		t.subs = append(t.subs, s)
		return []api.TaskEvent{{Kind: api.EventSubtaskAdded, SubtaskID: id, Text: content}}
	})
	if err != nil {
		return "", err
	}
	t.journal.add(api.SessionMessage{Role: "user", Text: "Added subtask: " + content, TaskID: t.id, SubtaskID: id})
	t.kick()
	return id, nil
}

func (t *task) removeSubtask(id string) error {
	var err error
	t.mutate(func() []api.TaskEvent {
		s, e := t.controllableLocked(id)
		if e != nil {
			err = e
			return nil
		}
		if s.State != api.SubtaskPending {
			err = fmt.Errorf("%w: subtask %q is %s; only a pending subtask can be removed (skip a running one)", ErrWrongState, id, s.State)
			return nil
		}
		t.subs = slices.DeleteFunc(t.subs, func(x *subtask) bool { return x == s })
		t.removed++
		for _, o := range t.subs {
			o.DependsOn = slices.DeleteFunc(o.DependsOn, func(d string) bool { return d == id })
		}
		t.progressed = true
		return []api.TaskEvent{{Kind: api.EventSubtaskRemoved, SubtaskID: id}}
	})
	if err == nil {
		t.kick()
	}
	return err
}

func (t *task) skipSubtask(id string) error {
	var err error
	var cancel context.CancelCauseFunc
	t.mutate(func() []api.TaskEvent {
		s, e := t.controllableLocked(id)
		if e != nil {
			err = e
			return nil
		}
		switch s.State {
		case api.SubtaskPending:
			s.State = api.SubtaskSkipped
			return []api.TaskEvent{{Kind: api.EventSubtaskSkipped, SubtaskID: id, State: s.State}}
		case api.SubtaskRunning:
			if s.skip {
				return nil
			}
			s.skip = true
			cancel = s.cancel
			return []api.TaskEvent{{Kind: api.EventSubtaskSkipped, SubtaskID: id, State: s.State}}
		}
		err = fmt.Errorf("%w: subtask %q is %s; only a pending or running subtask can be skipped", ErrWrongState, id, s.State)
		return nil
	})
	if cancel != nil {
		cancel(errSkipped)
	}
	if err == nil {
		t.kick()
	}
	return err
}

// controllableLocked finds a subtask of a task that is still going.
func (t *task) controllableLocked(id string) (*subtask, error) {
	if id == "" {
		return nil, invalid("\"subtaskId\" is required")
	}
	if t.ended || t.stopped || t.reviewing {
		return nil, fmt.Errorf("%w: task %q is %s", ErrWrongState, t.id, t.stateNameLocked())
	}
	s := t.findLocked(id)
	if s == nil {
		return nil, fmt.Errorf("%w %q in task %q", ErrUnknownSubtask, id, t.id)
	}
	return s, nil
}

func (t *task) stateNameLocked() string {
	switch {
	case t.ended:
		return t.state
	case t.reviewing:
		return "ending: the person is reviewing its changes"
	case t.stopped:
		return "stopping"
	}
	return t.state
}

// progressLocked is how far the task is: its subtasks ended and running.
func (t *task) progressLocked() *Progress {
	p := &Progress{Total: len(t.subs)}
	for _, s := range t.subs {
		switch s.State {
		case api.SubtaskDone, api.SubtaskSkipped, api.SubtaskFailed, api.SubtaskBlocked:
			p.Done++
		case api.SubtaskRunning:
			p.Running = append(p.Running, s.ID)
		}
	}
	return p
}

// warn shows a warning to the person, in order with the task's other
// events.
func (t *task) warn(msg string) {
	t.out.push(context.Background(), Event{TaskID: t.id, SessionID: t.sessionID, Warning: msg})
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

func planText(subs []*subtask) string {
	var b strings.Builder
	for _, s := range subs {
		fmt.Fprintf(&b, "%s. %s", s.ID, s.Content)
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(&b, " (after %s)", strings.Join(s.DependsOn, ", "))
		}
		b.WriteByte('\n')
	}
	return strings.TrimSuffix(b.String(), "\n")
}
