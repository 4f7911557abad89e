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
	key := spec
	if key == "" {
		key = "\x00env" // resolved from the environment
	}
	r := m.models[key]
	if r == nil {
		opts := m.opts
		opts.Source = source
		var err error
		if r, err = clients.Resolve(spec, m.env, opts); err != nil {
			return nil, "", err
		}
		m.models[key] = r
	}
	if m.record == "" {
		return r.Model, r.Spec, nil
	}
	if m.recorder == nil {
		m.recorder = clients.NewRecorder(r.Model, m.record, m.opts.Logger, m.red)
	}
	if m.recorded[key] == nil {
		// Every model records into the one file: a session that changes
		// models replays from it.
		m.recorded[key] = m.recorder.For(r.Model)
	}
	return m.recorded[key], r.Spec, nil
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
