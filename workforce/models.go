package workforce

import (
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/redact"
)

// Models is the ModelSource of the sidecar: clients.Resolve per docs/MODELS.md,
// keeping each resolved model for later runs (a script's cursors, a
// provider's connections), optionally recording every answer into a script
// file (`agentls run --record`). Safe for concurrent use.
type Models struct {
	env    func(string) string
	opts   clients.Options
	record string
	red    *redact.Redactor

	mu       sync.Mutex
	models   map[string]*clients.Resolved
	recorder *clients.Recorder
	recorded map[string]Model // by the key of models
}

// NewModels returns a Models that reads the environment through env,
// resolves relative script paths against dir, and, when record is not "",
// records every answer into that file with the secrets red knows redacted.
func NewModels(env func(string) string, dir, record string, onRetry func(clients.RetryEvent), log *zap.Logger, red *redact.Redactor) *Models {
	return &Models{
		env:      env,
		opts:     clients.Options{Logger: log, Dir: dir, OnRetry: onRetry},
		record:   record,
		red:      red,
		models:   map[string]*clients.Resolved{},
		recorded: map[string]Model{},
	}
}

// Model implements ModelSource.
func (m *Models) Model(spec, source string) (Model, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, key, err := m.resolveLocked(spec, source)
	if err != nil {
		return nil, "", err
	}
	if m.record == "" {
		return r.Model, r.Spec, nil
	}
	if m.recorded[key] == nil {
		m.recorded[key] = m.recordLocked(r.Model)
	}
	return m.recorded[key], r.Spec, nil
}

// resolveLocked resolves spec once and keeps it; key is what it is kept
// under.
func (m *Models) resolveLocked(spec, source string) (*clients.Resolved, string, error) {
	key := spec
	if key == "" {
		key = "\x00env" // resolved from the environment
	}
	if r := m.models[key]; r != nil {
		return r, key, nil
	}
	opts := m.opts
	opts.Source = source
	r, err := clients.Resolve(spec, m.env, opts)
	if err != nil {
		return nil, "", err
	}
	m.models[key] = r
	return r, key, nil
}

// recordLocked wraps model so that its answers are recorded. Every model
// records into the one file: a session that changes models replays from
// it.
func (m *Models) recordLocked(model Model) Model {
	if m.recorder == nil {
		m.recorder = clients.NewRecorder(model, m.record, m.opts.Logger, m.red)
	}
	return m.recorder.For(model)
}

// Session returns the models of one session of the workspace (an ACP
// session; the LSP face's connection, which is its one session): the
// providers' clients are those of m, shared, but a scripted model is
// played from its start for each session, with its own position, as the
// session's own run count ("N:" keys) is its own. Safe for concurrent
// use.
func (m *Models) Session() ModelSource { return &sessionModels{m: m, own: map[string]Model{}} }

// sessionModels is Models.Session.
type sessionModels struct {
	m *Models

	mu  sync.Mutex
	own map[string]Model // the session's own fork of a script, by the key of m.models
}

func (s *sessionModels) Model(spec, source string) (Model, string, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	r, key, err := s.m.resolveLocked(spec, source)
	if err != nil {
		return nil, "", err
	}
	script, ok := r.Model.(*clients.Script)
	if !ok {
		if s.m.record == "" {
			return r.Model, r.Spec, nil
		}
		if s.m.recorded[key] == nil {
			s.m.recorded[key] = s.m.recordLocked(r.Model)
		}
		return s.m.recorded[key], r.Spec, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.own[key] == nil {
		var model Model = script.Fork()
		if s.m.record != "" {
			model = s.m.recordLocked(model)
		}
		s.own[key] = model
	}
	return s.own[key], r.Spec, nil
}

// Close writes the recording a last time, when there is one.
func (m *Models) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.recorder == nil {
		return nil
	}
	return m.recorder.Close()
}
