package workforce

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/tracking"
)

// Editor is the part of the editor connection the workforce uses: every
// read, command, edit and question goes through it. *rpc.Editor satisfies
// it. A call the client cannot take fails with an error wrapping
// api.ErrUnsupported, and the workforce takes the fallback of docs/PROTOCOL.md §4.
type Editor interface {
	editing.Editor
	RunCommand(ctx context.Context, p api.RunCommandParams) (api.RunCommandResult, error)
	Ask(ctx context.Context, p api.AskParams) (*string, error)
}

// Model answers model calls; every model of package clients satisfies it.
type Model interface {
	Complete(ctx context.Context, req *clients.Request, onDelta func(clients.Delta)) (*clients.Response, error)
}

// ModelSource turns the model setting of docs/PROTOCOL.md §2 (or a run's own
// model) into a Model. source names where spec comes from, for the words of
// its errors ("" is initializationOptions.model). It returns the effective
// "provider:model" spec (for the trace), or an *api.Error with code
// api.CodeModelUnavailable saying how to configure one.
type ModelSource interface {
	Model(spec, source string) (Model, string, error)
}

// SourceRunModel names agent/run's own model in the errors of its
// resolution.
const SourceRunModel = "agent/run model"

// Config builds an Engine.
type Config struct {
	// Root is the workspace root (absolute).
	Root string
	// Editor makes the reverse calls; Events receives what the tasks do.
	Editor Editor
	Events Events
	// Tracking is the workspace's heat map, intents, trace, sessions and
	// usage.
	Tracking *tracking.Workspace
	// Models resolves the model of each agent/run.
	Models ModelSource
	// MaxTurns bounds a worker's model calls (30 by default, docs/WORKFORCE.md).
	MaxTurns int
	// MaxSubtasks bounds a plan (20).
	MaxSubtasks int
	// Logger receives the engine's logs (nil: none).
	Logger *zap.Logger
	// NewID makes task ids (nil: 16 random bytes in hex).
	NewID func() string
	// Shell runs a command when the editor cannot (nil: RunShell). Tests
	// replace it.
	Shell func(ctx context.Context, p api.RunCommandParams) api.RunCommandResult
	// Graph is the workspace's code graph (nil: none): the repo map of
	// the prompts comes from it, and every change applied is told to it.
	Graph *codegraph.Graph
	// Tools offers the MCP servers' tools to workers (nil: none).
	Tools ToolSource
	// Bridge serves the editor's tools to external agents (nil: MCPEntry
	// fails with ErrNoBridge).
	Bridge Bridge
	// Engines runs subtasks on external agents (nil: none, every subtask
	// on the built-in worker); EngineWorkDir is where isolated engines get
	// their worktrees.
	Engines       EngineRunner
	EngineWorkDir string
	// Redactor knows the secrets (nil: those of this process's
	// environment): they are taken out of every notification, tool result
	// and run result, and commands and git run without them (but those the
	// commandEnv setting passes).
	Redactor *redact.Redactor
}

// Engine runs the tasks of one workspace: one agent/run each. It is safe for
// concurrent use; every goroutine it starts belongs to a task and has ended
// when that task's Run returns.
type Engine struct {
	cfg Config
	log *zap.Logger

	mu      sync.Mutex
	tasks   map[string]*task // running
	ended   map[string]*task // finished, the most recent ones
	order   []string         // ended, oldest first
	runs    int              // agent/run calls so far (the N of a script's "N:" keys, docs/MODELS.md)
	closed  bool
	allowed map[string]bool // "command:<line>" and "mcp:<tool>" the person chose "Always allow" for
	running sync.WaitGroup
	queues  bool // cfg.Events is a Queueing one: tasks hand it their events directly

	// extra is the workers' second set of tools, after the registry: the
	// MCP tools of Config.Tools (nil: none; registry.go, toolSet).
	extra toolSet
	// diag hears the editor's reports of new diagnostics for the workers
	// that wait on them (diagnostics.go).
	diag diagWatch
}

// keepEnded is how many finished tasks still answer the controls (with
// -32012 rather than -32011).
const keepEnded = 64

// New returns an Engine.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Root == "":
		return nil, errors.New("workforce: Config.Root is empty")
	case cfg.Editor == nil || cfg.Events == nil || cfg.Tracking == nil || cfg.Models == nil:
		return nil, errors.New("workforce: Config needs Editor, Events, Tracking and Models")
	}
	if cfg.MaxTurns <= 0 {
		cfg.MaxTurns = 30
	}
	if cfg.MaxSubtasks <= 0 {
		cfg.MaxSubtasks = 20
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	if cfg.Shell == nil {
		cfg.Shell = RunShell
	}
	if cfg.Redactor == nil {
		cfg.Redactor = redact.FromEnviron(os.Environ())
	}
	_, queues := cfg.Events.(Queueing)
	e := &Engine{
		queues:  queues,
		cfg:     cfg,
		log:     cfg.Logger,
		tasks:   map[string]*task{},
		ended:   map[string]*task{},
		allowed: map[string]bool{},
	}
	if cfg.Tools != nil {
		e.extra = mcpTools{src: cfg.Tools}
	}
	return e, nil
}

func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Run runs one agent/run to its end and returns its result: planning, the
// subtasks, the changes and the usage. It returns an error only when the
// task could not start (bad params, unknown session, no model); a task that
// started always ends with a result, whose state is done, failed or stopped.
// Cancelling ctx stops the task ($/cancelRequest, end of input): Run then
// returns the result with state stopped together with ctx's error.
func (e *Engine) Run(ctx context.Context, p api.RunParams, s api.Settings) (*api.RunResult, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, invalid("\"prompt\" is required")
	}
	if p.EditMode != "" {
		if !api.ValidEditMode(p.EditMode) {
			return nil, invalid("\"editMode\" %q is not one of %s", p.EditMode, strings.Join(api.EditModes, ", "))
		}
		s.EditMode = p.EditMode
	}
	ws := e.cfg.Tracking
	if p.SessionID != "" {
		if _, err := ws.Sessions.Messages(p.SessionID); err != nil {
			return nil, fmt.Errorf("%w %q: %w", ErrUnknownSession, p.SessionID, err)
		}
	}
	if err := e.checkEngine(p.Engine); err != nil {
		return nil, invalid("\"engine\": %w", err)
	}
	if p.IntentID != "" {
		if _, _, err := ws.Intents.Select(p.IntentID); err != nil {
			return nil, invalid("\"intentId\": %w", err)
		}
	}
	modelSpec, modelSource := s.Model, ""
	if strings.TrimSpace(p.Model) != "" {
		modelSpec, modelSource = p.Model, SourceRunModel
	}
	model, spec, err := e.cfg.Models.Model(modelSpec, modelSource)
	if err != nil {
		return nil, err
	}
	atts, err := e.attach(ctx, p, s, spec)
	if err != nil {
		return nil, err
	}
	t, err := e.start(p, s, model, spec)
	if err != nil {
		return nil, err
	}
	t.attachments = atts
	defer e.running.Done()
	res := redact.Value(e.cfg.Redactor, t.run(ctx))
	e.finish(t)
	if ctx.Err() != nil {
		return res, context.Cause(ctx)
	}
	return res, nil
}

// start registers a new task.
func (e *Engine) start(p api.RunParams, s api.Settings, model Model, spec string) (*task, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	id := p.TaskID
	if id == "" {
		id = e.cfg.NewID()
	}
	if e.tasks[id] != nil || e.ended[id] != nil {
		return nil, invalid("\"taskId\" %q is already in use", id)
	}
	e.runs++
	t := newTask(e, id, p, s, model, spec, e.runs)
	if err := t.open(); err != nil {
		return nil, err
	}
	e.tasks[id] = t
	e.running.Add(1)
	return t, nil
}

// finish moves a task to the ended list.
func (e *Engine) finish(t *task) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.tasks, t.id)
	e.ended[t.id] = t
	e.order = append(e.order, t.id)
	if len(e.order) > keepEnded {
		delete(e.ended, e.order[0])
		e.order = e.order[1:]
	}
}

func (e *Engine) lookup(id string) (*task, error) {
	if id == "" {
		return nil, invalid("\"taskId\" is required")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.tasks[id]; t != nil {
		return t, nil
	}
	if t := e.ended[id]; t != nil {
		return t, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownTask, id)
}

// Runs reports whether the task taskID is running on e.
func (e *Engine) Runs(taskID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.tasks[taskID] != nil
}

// Stop stops a task: every model call, reverse call and command of it is
// cancelled, and its Run returns with state stopped. It reports false when
// the task had already ended.
func (e *Engine) Stop(taskID string) (bool, error) {
	t, err := e.lookup(taskID)
	if err != nil {
		return false, err
	}
	return t.stop(), nil
}

// AddSubtask adds a subtask to a running task and returns its id.
func (e *Engine) AddSubtask(p api.AddSubtaskParams) (string, error) {
	t, err := e.lookup(p.TaskID)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(p.Content) == "" {
		return "", invalid("\"content\" is required")
	}
	return t.addSubtask(p.Content, p.DependsOn)
}

// RemoveSubtask removes a pending subtask.
func (e *Engine) RemoveSubtask(p api.SubtaskParams) error {
	t, err := e.lookup(p.TaskID)
	if err != nil {
		return err
	}
	return t.removeSubtask(p.SubtaskID)
}

// SkipSubtask skips a pending or running subtask (a running one is
// cancelled); its dependants go on as if it were done.
func (e *Engine) SkipSubtask(p api.SubtaskParams) error {
	t, err := e.lookup(p.TaskID)
	if err != nil {
		return err
	}
	return t.skipSubtask(p.SubtaskID)
}

// Close stops every task and waits until each has ended and flushed its
// session. No task starts afterwards.
func (e *Engine) Close() { e.closeWith((*task).stop) }

// Interrupt is Close for an editor that went away: every task still
// running is stopped and its session records it as interrupted, its
// summary saying why ("the editor closed agentls"). It returns the ids of
// those tasks.
func (e *Engine) Interrupt(why string) []string {
	var ids []string
	var mu sync.Mutex
	e.closeWith(func(t *task) bool {
		if !t.interrupt(why) {
			return false
		}
		mu.Lock()
		ids = append(ids, t.id)
		mu.Unlock()
		return true
	})
	slices.Sort(ids)
	return ids
}

func (e *Engine) closeWith(stop func(*task) bool) {
	e.mu.Lock()
	e.closed = true
	list := make([]*task, 0, len(e.tasks))
	for _, t := range e.tasks {
		list = append(list, t)
	}
	e.mu.Unlock()
	for _, t := range list {
		stop(t)
	}
	e.running.Wait()
}

// allowedBefore reports whether the person chose "Always allow" for this
// key ("command:<line>", "mcp:<tool>") in this process.
func (e *Engine) allowedBefore(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.allowed[key]
}

func (e *Engine) allow(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.allowed[key] = true
}
