// Package heat is the heat map of docs/PROTOCOL.md §3 and §5: which files the agents
// touch, which are in a model's context, and how hot they are.
//
// Each worker has its own Tracker, fed by the editing layer (Access, Blocked)
// and by the worker loop (Turn). A Map owns the trackers and two kinds of
// view: one per task (its workers merged) and one for the whole workspace
// (every worker merged). A view merges a file field by field over the
// trackers that hold it: the highest heat, inContext when any has it in
// context, the highest turn, and lastAction of the last access (at the same
// instant write beats blocked, mcp, search, read, userProvided and
// userReferenced).
//
// A ticker (Run) drives the map: each tick decays files out of context
// (heat × Decay per Interval), prunes them below PruneBelow, and sends each
// view's changes as one agent/heatUpdate with a seq that rises by one per
// update. Guarantees:
//   - the work of a tick is proportional to the files that changed or are
//     cooling, not to the files tracked;
//   - at most one update per MinInterval per view, and none while nothing
//     changes; after IdleAfter without change the ticker slows to
//     IdleInterval, and the next access wakes it;
//   - updates of one view leave in seq order; a Snapshot gives the view with
//     every access recorded before it (read your writes) and the seq of the
//     last update built, so a client that applies later updates over it
//     (updates are whole nodes, removals are paths) converges;
//   - what changes between two ticks is coalesced: an update carries each
//     changed file as it is at the tick, not every access. An update the
//     Emitter fails to send is logged and not sent again (its seq is used),
//     so a client that sees a gap in seq takes a Snapshot.
//
// A Map and its Trackers are safe for concurrent use.
package heat

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/api"
	"go.uber.org/zap"
)

// Emitter receives the heat map's updates (the LSP face sends them as
// agent/heatUpdate); package core routes them to the face.
type Emitter interface {
	HeatUpdate(ctx context.Context, p *api.HeatUpdateParams) error
}

// Options tune a Map. Zero fields take the defaults of DefaultOptions.
type Options struct {
	Decay        float64 // heat multiplier per Interval for files out of context (0.95)
	PruneBelow   float64 // files cooler than this are dropped (0.01)
	ContextTurns int     // model turns without access before a file leaves context (3)
	// CompactionThreshold: a turn whose input tokens are below this
	// fraction of the previous turn's means the context was compacted
	// (0.5; SetTuning can turn it off with 0).
	CompactionThreshold float64
	Interval            time.Duration // tick period while active (100 ms)
	MinInterval         time.Duration // at most one update per view per this (100 ms)
	IdleAfter           time.Duration // no change for this long slows the ticker (2 s)
	IdleInterval        time.Duration // tick period while idle (500 ms)
	Ignore              []string      // folder names never tracked (DefaultIgnore)
	Clock               Clock         // SystemClock
	Logger              *zap.Logger   // zap.NewNop()
}

// DefaultOptions returns the defaults of the protocol.
func DefaultOptions() Options {
	return Options{
		Decay:               0.95,
		PruneBelow:          0.01,
		ContextTurns:        3,
		CompactionThreshold: 0.5,
		Interval:            100 * time.Millisecond,
		MinInterval:         100 * time.Millisecond,
		IdleAfter:           2 * time.Second,
		IdleInterval:        500 * time.Millisecond,
		Ignore:              DefaultIgnore,
		Clock:               SystemClock{},
		Logger:              zap.NewNop(),
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Decay <= 0 || o.Decay > 1 {
		o.Decay = d.Decay
	}
	if o.PruneBelow <= 0 || o.PruneBelow >= 1 {
		o.PruneBelow = d.PruneBelow
	}
	if o.ContextTurns <= 0 {
		o.ContextTurns = d.ContextTurns
	}
	if o.CompactionThreshold <= 0 || o.CompactionThreshold >= 1 {
		o.CompactionThreshold = d.CompactionThreshold
	}
	if o.Interval <= 0 {
		o.Interval = d.Interval
	}
	if o.MinInterval <= 0 {
		o.MinInterval = d.MinInterval
	}
	if o.IdleAfter <= 0 {
		o.IdleAfter = d.IdleAfter
	}
	if o.IdleInterval <= 0 {
		o.IdleInterval = d.IdleInterval
	}
	if o.Ignore == nil {
		o.Ignore = d.Ignore
	}
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	return o
}

// Map owns the trackers and views of one workspace. Safe for concurrent use.
type Map struct {
	opts   Options
	clock  Clock
	log    *zap.Logger
	emit   Emitter
	ignore map[string]bool

	tickMu sync.Mutex // serialises ticks, so updates leave in seq order

	mu       sync.Mutex
	nextID   uint64
	trackers map[*Tracker]struct{}
	views    map[string]*view // "" is the workspace view
	lastTick time.Time
	scratch  []change

	idle   atomic.Bool
	wakeCh chan struct{}

	// tuning is what the heat setting changes while the map runs
	// (SetTuning).
	tuning atomic.Pointer[api.HeatSettings]
}

// New returns a Map that sends its updates to emit (nil: updates are only
// kept for Snapshot).
func New(emit Emitter, opts Options) *Map {
	opts = opts.withDefaults()
	m := &Map{
		opts:     opts,
		clock:    opts.Clock,
		log:      opts.Logger,
		emit:     emit,
		ignore:   make(map[string]bool, len(opts.Ignore)),
		trackers: make(map[*Tracker]struct{}),
		views:    map[string]*view{"": newView("")},
		wakeCh:   make(chan struct{}, 1),
	}
	for _, s := range opts.Ignore {
		m.ignore[s] = true
	}
	m.tuning.Store(&api.HeatSettings{Decay: opts.Decay, ContextTurns: opts.ContextTurns, CompactionThreshold: opts.CompactionThreshold})
	return m
}

// SetTuning applies the heat setting (docs/TRACKING.md): the decay of the
// ticks after it, and the context turns and compaction threshold of the
// turns after it. A value out of range (api.ApplySettings refuses them)
// keeps the one in force; a CompactionThreshold of 0 turns the detection
// of compaction off.
func (m *Map) SetTuning(h api.HeatSettings) {
	cur := m.tune()
	if h.Decay <= 0 || h.Decay > 1 {
		h.Decay = cur.Decay
	}
	if h.ContextTurns <= 0 {
		h.ContextTurns = cur.ContextTurns
	}
	if h.CompactionThreshold < 0 || h.CompactionThreshold >= 1 {
		h.CompactionThreshold = cur.CompactionThreshold
	}
	m.tuning.Store(&h)
}

// Tuning returns the heat setting in force.
func (m *Map) Tuning() api.HeatSettings { return *m.tune() }

func (m *Map) tune() *api.HeatSettings { return m.tuning.Load() }

// Tracker returns a new tracker for one worker of task taskID. Call Close on
// it when the worker ends.
func (m *Map) Tracker(taskID, worker string) *Tracker {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.nextID++
	t := &Tracker{
		m:        m,
		id:       m.nextID,
		taskID:   taskID,
		worker:   worker,
		nodes:    make(map[string]*node),
		dirty:    make(map[string]struct{}),
		decaying: make(map[string]struct{}),
		byTurn:   make(map[int]map[string]struct{}),
	}
	m.trackers[t] = struct{}{}
	v := m.views[taskID]
	if v == nil {
		v = newView(taskID)
		m.views[taskID] = v
	}
	v.trackers++
	return t
}

// Snapshot returns a view with every access recorded before the call: the
// task's when taskID is set, else the workspace's. Nodes are sorted by path.
// Accesses the ticker has not handled yet are folded into the views first
// (without decay, which stays the ticker's), so a snapshot taken after a
// run ended holds all of that run's accesses. Those changes still go out
// in the next update, whose seq is above the snapshot's: a client that
// applies it over the snapshot converges.
func (m *Map) Snapshot(taskID string) (api.HeatSnapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.foldPending()
	v := m.views[taskID]
	if v == nil {
		return api.HeatSnapshot{}, ErrUnknownTask
	}
	nodes := make([]api.HeatNode, 0, len(v.entries))
	for p, e := range v.entries {
		nodes = append(nodes, e.merged.wire(p))
	}
	slices.SortFunc(nodes, func(a, b api.HeatNode) int { return strings.Compare(a.Path, b.Path) })
	return api.HeatSnapshot{Seq: v.seq, Nodes: nodes}, nil
}

// foldPending moves the trackers' changes since the last tick into the
// views. The caller holds mu.
func (m *Map) foldPending() {
	all := m.views[""]
	for t := range m.trackers {
		changes := t.drain(m.scratch[:0])
		m.scratch = changes
		tv := m.views[t.taskID]
		for _, c := range changes {
			all.apply(t, c)
			tv.apply(t, c)
		}
	}
}

// wake tells an idle Run loop that something changed.
func (m *Map) wake() {
	if m.idle.Load() {
		select {
		case m.wakeCh <- struct{}{}:
		default:
		}
	}
}

// Run ticks the map until ctx ends: every Interval while files change or
// cool, every IdleInterval after IdleAfter without change, and at once when
// an access wakes it from idle. It returns ctx's error.
func (m *Map) Run(ctx context.Context) error {
	tk := m.clock.NewTicker(m.opts.Interval)
	defer tk.Stop()
	lastChange := m.clock.Now()
	idle := false
	setIdle := func(v bool) {
		if v == idle {
			return
		}
		idle = v
		m.idle.Store(v)
		if v {
			tk.Reset(m.opts.IdleInterval)
		} else {
			tk.Reset(m.opts.Interval)
		}
	}
	for {
		var now time.Time
		select {
		case <-ctx.Done():
			m.idle.Store(false)
			return ctx.Err()
		case <-m.wakeCh:
			now = m.clock.Now()
		case now = <-tk.C():
		}
		if m.Tick(ctx, now) {
			lastChange = now
			setIdle(false)
		} else if now.Sub(lastChange) >= m.opts.IdleAfter {
			setIdle(true)
		}
	}
}

// Tick runs one tick at now and sends the views' updates. It reports whether
// anything changed or is still waiting to be sent. Run calls it; tests and
// benchmarks call it directly with a steady clock.
func (m *Map) Tick(ctx context.Context, now time.Time) bool {
	m.tickMu.Lock()
	defer m.tickMu.Unlock()
	updates, active := m.tick(now)
	if m.emit != nil {
		for _, u := range updates {
			if err := m.emit.HeatUpdate(ctx, u); err != nil {
				m.log.Warn("heat: update not sent", zap.String("taskId", u.TaskID), zap.Uint64("seq", u.Seq), zap.Error(err))
			}
		}
	}
	return active
}

func (m *Map) tick(now time.Time) ([]*api.HeatUpdateParams, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	decay := m.tune().Decay
	factor := decay
	if !m.lastTick.IsZero() {
		steps := float64(now.Sub(m.lastTick)) / float64(m.opts.Interval)
		factor = math.Pow(decay, min(max(steps, 0), 50))
	}
	m.lastTick = now

	active := false
	all := m.views[""]
	for t := range m.trackers {
		changes, done := t.collect(factor, m.opts.PruneBelow, m.scratch[:0])
		m.scratch = changes
		if len(changes) > 0 {
			active = true
		}
		tv := m.views[t.taskID]
		for _, c := range changes {
			all.apply(t, c)
			tv.apply(t, c)
		}
		if done {
			delete(m.trackers, t)
			tv.trackers--
		}
	}

	var out []*api.HeatUpdateParams
	for id, v := range m.views {
		if len(v.dirty) > 0 {
			if now.Sub(v.lastEmit) < m.opts.MinInterval {
				active = true
				continue
			}
			out = append(out, v.delta(now))
			active = true // a Snapshot may have folded changes in since the last tick
		}
		if id != "" && v.trackers == 0 && len(v.entries) == 0 {
			delete(m.views, id)
		}
	}
	// The workspace view first, then tasks by id: a steady order for clients
	// and tests.
	slices.SortFunc(out, func(a, b *api.HeatUpdateParams) int { return strings.Compare(a.TaskID, b.TaskID) })
	return out, active
}

// view is the merge of some trackers: a task's, or all of them.
type view struct {
	taskID   string
	trackers int // live trackers feeding a task view
	entries  map[string]*entry
	dirty    map[string]struct{}
	seq      uint64
	lastEmit time.Time
}

type entry struct {
	holders []holder
	merged  node
}

type holder struct {
	t *Tracker
	n node
}

func newView(taskID string) *view {
	return &view{taskID: taskID, entries: make(map[string]*entry), dirty: make(map[string]struct{})}
}

// apply records one tracker's change of one file and merges the file again
// from the trackers that hold it.
func (v *view) apply(t *Tracker, c change) {
	e := v.entries[c.path]
	if e == nil {
		if c.n == nil {
			return
		}
		e = &entry{}
		v.entries[c.path] = e
	}
	i := slices.IndexFunc(e.holders, func(h holder) bool { return h.t == t })
	switch {
	case c.n == nil && i >= 0:
		e.holders = slices.Delete(e.holders, i, i+1)
	case c.n != nil && i >= 0:
		e.holders[i].n = *c.n
	case c.n != nil:
		e.holders = append(e.holders, holder{t: t, n: *c.n})
	}
	v.dirty[c.path] = struct{}{}
	if len(e.holders) == 0 {
		delete(v.entries, c.path)
		return
	}
	e.merged = merge(e.holders)
}

// merge is a file as the view shows it, from the trackers that hold it
// (at least one): the highest heat, in
// context while any tracker has it in context, the highest turn, and the
// action of the last access (at the same instant the stronger action, then
// the older tracker, so the choice is steady). Every field is a max or an
// OR, so the result does not depend on the order the changes arrived in.
func merge(hs []holder) node {
	m := hs[0].n
	last := 0
	for j := 1; j < len(hs); j++ {
		n := &hs[j].n
		m.heat = max(m.heat, n.heat)
		m.inContext = m.inContext || n.inContext
		m.turn = max(m.turn, n.turn)
		if wins(hs[j], hs[last]) {
			last = j
		}
	}
	m.action = hs[last].n.action
	m.at = hs[last].n.at
	return m
}

// wins reports whether a beats b: the later access, then the stronger
// action, then the older tracker (so the choice is steady).
func wins(a, b holder) bool {
	if !a.n.at.Equal(b.n.at) {
		return a.n.at.After(b.n.at)
	}
	if ra, rb := rank(a.n.action), rank(b.n.action); ra != rb {
		return ra > rb
	}
	return a.t.id < b.t.id
}

// delta turns the dirty set into one update and clears it.
func (v *view) delta(now time.Time) *api.HeatUpdateParams {
	u := &api.HeatUpdateParams{TaskID: v.taskID, Updates: []api.HeatNode{}, Removed: []string{}}
	for p := range v.dirty {
		if e := v.entries[p]; e != nil {
			u.Updates = append(u.Updates, e.merged.wire(p))
		} else {
			u.Removed = append(u.Removed, p)
		}
	}
	slices.SortFunc(u.Updates, func(a, b api.HeatNode) int { return strings.Compare(a.Path, b.Path) })
	slices.Sort(u.Removed)
	v.dirty = reset(v.dirty)
	v.seq++
	u.Seq = v.seq
	v.lastEmit = now
	return u
}

func (n node) wire(path string) api.HeatNode {
	return api.HeatNode{
		Path:       path,
		Heat:       math.Round(n.heat*1000) / 1000,
		InContext:  n.inContext,
		LastAction: n.action,
		Turn:       n.turn,
	}
}
