package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
)

// Recorder wraps a Model and writes what it answered, per agent and in
// order, as a script (docs/MODELS.md, scripted model), so a real session can be replayed
// offline with script:PATH. Each turn keeps how long the answer took as its
// delayMs, so that a replay answers the agents in the order, and with the
// overlaps, of the session it replays. The file is replaced atomically after every
// answer, so a crash keeps every turn recorded before it. No known secret
// is written: a model that repeats a key it saw is recorded with the key
// redacted. Safe for concurrent use.
type Recorder struct {
	model Model
	path  string
	log   *zap.Logger
	red   *redact.Redactor
	now   func() time.Time // the clock that times each answer

	mu     sync.Mutex
	agents map[string][]Turn
	order  []string
	err    error // first write error
}

// NewRecorder records the answers of m into path, with the secrets red
// knows redacted (nil: none).
func NewRecorder(m Model, path string, log *zap.Logger, red *redact.Redactor) *Recorder {
	if log == nil {
		log = zap.NewNop()
	}
	return &Recorder{model: m, path: path, log: log, red: red, now: time.Now, agents: map[string][]Turn{}}
}

// Complete calls the wrapped model and records its answer with the time it
// took as its delayMs. A failed call is
// recorded as an "error" turn, except a cancelled one (a replay is cancelled
// by its own user). A failure to write the file does not fail the call: it
// is logged and returned by Close.
func (r *Recorder) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	return r.complete(ctx, r.model, req, onDelta)
}

// For returns a Model that answers with m and records its answers in r,
// in the same script as the answers of r's own model: the runs of a
// session that changed models replay from one file.
func (r *Recorder) For(m Model) Model { return &recording{r: r, m: m} }

// recording is a model whose answers a Recorder records.
type recording struct {
	r *Recorder
	m Model
}

func (c *recording) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	return c.r.complete(ctx, c.m, req, onDelta)
}

func (r *Recorder) complete(ctx context.Context, m Model, req *Request, onDelta func(Delta)) (*Response, error) {
	start := r.now()
	resp, err := m.Complete(ctx, req, onDelta)
	t := Turn{DelayMs: max(r.now().Sub(start).Milliseconds(), 0)}
	switch {
	case err == nil:
		t.Text = resp.Text
		for _, c := range resp.ToolCalls {
			t.ToolCalls = append(t.ToolCalls, ScriptToolCall{Name: c.Name, Arguments: arguments(c.Arguments)})
		}
		u := resp.Usage
		t.Usage = &u
	case errors.Is(err, ErrCancelled), errors.Is(err, ErrTimeout), errors.Is(err, context.Canceled):
		return resp, err
	default:
		t.Error = err.Error()
	}
	key := ScriptKey(req.Agent, req.Run)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.agents[key]; !ok {
		r.order = append(r.order, key)
	}
	r.agents[key] = append(r.agents[key], t)
	if werr := r.writeLocked(); werr != nil {
		r.log.Warn("cannot write the recording", zap.String("path", r.path), zap.Error(werr))
		if r.err == nil {
			r.err = werr
		}
	}
	return resp, err
}

// Close writes the file a last time and reports the first write error.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.writeLocked(); err != nil && r.err == nil {
		r.err = err
	}
	return r.err
}

// Marshal returns the recording in the script format, agents in the order
// they first answered.
func (r *Recorder) Marshal() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.marshalLocked()
}

func (r *Recorder) marshalLocked() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"agents":{`)
	for i, key := range r.order {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		turns, err := json.Marshal(r.agents[key])
		if err != nil {
			return nil, fmt.Errorf("recording agent %q: %w", key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(turns)
	}
	b.WriteString("}}")
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func (r *Recorder) writeLocked() error {
	data, err := r.marshalLocked()
	if err != nil {
		return err
	}
	return fsutil.WriteAtomic(r.path, r.red.JSON(data), 0o644)
}
