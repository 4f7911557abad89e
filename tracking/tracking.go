// Package tracking is what happened in a workspace, kept so that a person
// can see it live and find it again later: the heat map (package heat), the
// intents and their gate (intents), the trace of applied changes (trace),
// the sessions on disk (sessions), token usage (usage) and the checkpoints
// that undo a task (checkpoint).
//
// A Workspace ties them together for one workspace root and answers the
// agent/* methods of docs/PROTOCOL.md §3 that read them: agent/heatSnapshot,
// agent/trace, agent/sessions, agent/session and agent/deleteSession. Each
// answer is exactly the rpc result type; errors wrap the sentinels of
// errors.go. A Workspace is safe for concurrent use.
package tracking

import (
	"context"
	"fmt"
	"os"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/tracking/checkpoint"
	"github.com/agentls/agentls/tracking/heat"
	"github.com/agentls/agentls/tracking/intents"
	"github.com/agentls/agentls/tracking/sessions"
	"github.com/agentls/agentls/tracking/trace"
	"github.com/agentls/agentls/tracking/usage"
)

// Config opens a Workspace.
type Config struct {
	Root     string // absolute workspace root
	StateDir string // "" resolves docs/PROTOCOL.md §6's places from the environment
	// Trace is the trace setting of docs/PROTOCOL.md §2 (nil: on when
	// .orchestration/ exists). It is read at every change.
	Trace func() *bool
	// Heat receives the heat map's updates, for the face to send (the
	// LSP face's agent/heatUpdate).
	Heat heat.Emitter
	// Report is told, in words for the person, of damaged files set aside
	// and of a broken intents file (window/logMessage). It may be nil.
	Report      func(msg string)
	HeatOptions heat.Options // Logger and Clock default to the Workspace's
	Logger      *zap.Logger
	// Redactor takes the known secrets out of the trace and the sessions
	// written (nil: nothing is redacted).
	Redactor *redact.Redactor
}

// RewrittenFiles are the workspace-relative files tracking rewrites whole
// (atomically): older releases left ".tmp-<name>-<digits>" beside them when
// they crashed mid-write, a name too plain to remove anywhere else.
func RewrittenFiles() []string { return []string{trace.MapRelPath} }

// Workspace is the tracking of one workspace.
type Workspace struct {
	Root string
	// StateDir is the state directory (docs/PROTOCOL.md §6).
	StateDir string
	Heat     *heat.Map
	Intents  *intents.Store
	Trace    *trace.Log
	Sessions *sessions.Store
	Usage    *usage.Counter
	// Checkpoints keep what undoing a task takes (agent/undo).
	Checkpoints *checkpoint.Store

	traceSetting func() *bool
	log          *zap.Logger
}

// Open opens the tracking of cfg.Root: the session registry is read (damaged
// files set aside and reported), the rest is read on use.
func Open(cfg Config) (*Workspace, error) {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	report := func(msg string) {
		if cfg.Report != nil {
			cfg.Report(msg)
		}
	}
	state := cfg.StateDir
	if state == "" {
		var err error
		if state, err = sessions.StateDir(os.Getenv, os.UserHomeDir); err != nil {
			return nil, fmt.Errorf("tracking: %w", err)
		}
	}
	reg, err := sessions.Open(state, cfg.Root, sessions.Options{OnReport: report, Logger: cfg.Logger, Redactor: cfg.Redactor})
	if err != nil {
		return nil, fmt.Errorf("tracking: %w", err)
	}
	ho := cfg.HeatOptions
	if ho.Logger == nil {
		ho.Logger = cfg.Logger
	}
	in := intents.NewStore(cfg.Root, intents.Options{
		OnBroken: func(err error) { report("agentls: " + err.Error()) },
		Logger:   cfg.Logger,
	})
	w := &Workspace{
		Root:     cfg.Root,
		StateDir: state,
		Heat:     heat.New(cfg.Heat, ho),
		Intents:  in,
		Sessions: reg,
		Usage:    usage.New(),
		log:      cfg.Logger,
		traceSetting: func() *bool {
			if cfg.Trace == nil {
				return nil
			}
			return cfg.Trace()
		},
	}
	w.Trace = trace.Open(cfg.Root, trace.Options{IntentName: w.intentName, Logger: cfg.Logger, Redactor: cfg.Redactor})
	w.Checkpoints = checkpoint.Open(reg.Dir(), checkpoint.Options{Redactor: cfg.Redactor, Logger: cfg.Logger})
	return w, nil
}

func (w *Workspace) intentName(id string) string {
	in, err := w.Intents.Get(id)
	if err != nil {
		return ""
	}
	return in.Name
}

// Close releases what the workspace holds on behalf of this process: the
// tasks it still runs are marked interrupted and its owner lock on the
// session store is released, so that other processes on the workspace see
// those tasks as ended. Call it when the server stops, after its tasks
// ended and after Run returned.
func (w *Workspace) Close() error {
	if err := w.Sessions.Close(); err != nil {
		return fmt.Errorf("tracking: %w", err)
	}
	return nil
}

// Run drives the heat map's ticker until ctx ends.
func (w *Workspace) Run(ctx context.Context) error { return w.Heat.Run(ctx) }

// TraceEnabled reports whether applied changes are traced now.
func (w *Workspace) TraceEnabled() bool { return trace.Enabled(w.Root, w.traceSetting()) }

// RecordChange traces one applied change when the trace is on. It returns
// the entry written, or nil when the trace is off.
func (w *Workspace) RecordChange(c trace.Change) (*api.TraceEntry, error) {
	if !w.TraceEnabled() {
		return nil, nil
	}
	e, err := w.Trace.Record(c)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// HeatSnapshot answers agent/heatSnapshot.
func (w *Workspace) HeatSnapshot(p api.HeatSnapshotParams) (api.HeatSnapshot, error) {
	s, err := w.Heat.Snapshot(p.TaskID)
	if err != nil {
		return api.HeatSnapshot{}, fmt.Errorf("taskId %q: %w", p.TaskID, err)
	}
	return s, nil
}

// TraceEntries answers agent/trace.
func (w *Workspace) TraceEntries(p api.TraceParams) (api.TraceResult, error) {
	return w.Trace.Query(p.Path, p.Line)
}

// ListSessions answers agent/sessions.
func (w *Workspace) ListSessions() (api.SessionsResult, error) { return w.Sessions.Sessions() }

// Session answers agent/session.
func (w *Workspace) Session(p api.SessionParams) (api.SessionResult, error) {
	return w.Sessions.Session(p.SessionID)
}

// DeleteSession answers agent/deleteSession: the session goes, and with it
// the checkpoints of its tasks.
func (w *Workspace) DeleteSession(p api.SessionParams) (api.Empty, error) {
	if err := w.Sessions.Delete(p.SessionID); err != nil {
		return api.Empty{}, err
	}
	if err := w.Checkpoints.DeleteSession(p.SessionID); err != nil {
		w.log.Warn("the checkpoints of a deleted session were not removed", zap.String("session", p.SessionID), zap.Error(err))
	}
	return api.Empty{}, nil
}

// IntentList answers agent/intents: the intents of the file, in its order,
// each marked selectable unless it is completed. A broken file is no
// error: the result says why it cannot be used.
func (w *Workspace) IntentList() api.IntentsResult {
	res := api.IntentsResult{Intents: []api.IntentInfo{}}
	list, err := w.Intents.Intents()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	for _, in := range list {
		res.Intents = append(res.Intents, api.IntentInfo{
			ID: in.ID, Name: in.Name, Status: in.Status,
			OwnedScope:         nonNil(in.OwnedScope),
			Constraints:        nonNil(in.Constraints),
			AcceptanceCriteria: nonNil(in.AcceptanceCriteria),
			Selectable:         !in.Completed(),
		})
	}
	return res
}

// nonNil keeps an absent list as [] on the wire.
func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
