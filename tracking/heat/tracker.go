package heat

import (
	"sync"
	"time"

	"github.com/agentls/agentls/api"
	"go.uber.org/zap"
)

// rank orders actions for last-write-wins ties: an access at the same
// instant as another is won by the stronger action.
func rank(action string) int {
	switch action {
	case api.ActionWrite:
		return 7
	case api.ActionBlocked:
		return 6
	case api.ActionMCP:
		return 5
	case api.ActionSearch:
		return 4
	case api.ActionRead:
		return 3
	case api.ActionUserProvided:
		return 2
	case api.ActionUserReferenced:
		return 1
	}
	return 0
}

// node is one file as one tracker sees it.
type node struct {
	heat      float64
	inContext bool
	action    string
	turn      int       // the tracker's turn at the last access
	at        time.Time // the last access, for last-write-wins
}

// change is a file a tracker changed since the last tick; n is nil when the
// file was pruned.
type change struct {
	path string
	n    *node
}

// Tracker is the heat of one worker: the files its model has touched, which
// of them are still in its context, and how hot they are. A worker feeds it
// every file access (Access, Blocked: the observer editing calls) and every
// model turn (Turn). Its methods are safe for concurrent use; they record the
// change and return at once, the Map's tick does the rest.
type Tracker struct {
	m      *Map
	id     uint64
	taskID string
	worker string

	mu        sync.Mutex
	nodes     map[string]*node
	dirty     map[string]struct{}         // changed since the last tick
	decaying  map[string]struct{}         // out of context, heat above the prune line
	byTurn    map[int]map[string]struct{} // in-context files by the turn of their last access
	turn      int
	lastInput int64
	closed    bool
}

// TaskID returns the task the tracker belongs to.
func (t *Tracker) TaskID() string { return t.taskID }

// Worker returns the worker (subtask) the tracker belongs to.
func (t *Tracker) Worker() string { return t.worker }

// Access records that the worker touched path (workspace-relative, "/"
// separators) with action (one of api.ActionRead, ActionWrite, ActionSearch,
// ActionUserProvided, ActionUserReferenced, ActionBlocked, ActionMCP): the
// file's heat goes to 1 and it enters
// the worker's context. Paths outside the workspace or under an ignored
// folder (node_modules, .git, build output) are not tracked. An unknown
// action is recorded as a read.
func (t *Tracker) Access(path, action string) {
	p, ok := normalize(path, t.m.ignore)
	if !ok {
		return
	}
	if rank(action) == 0 {
		t.m.log.Debug("heat: unknown action recorded as read", zap.String("action", action))
		action = api.ActionRead
	}
	now := t.m.clock.Now()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	n := t.nodes[p]
	if n == nil {
		n = &node{}
		t.nodes[p] = n
	} else if n.inContext {
		t.leaveBucket(p, n.turn)
	}
	n.heat = 1
	n.inContext = true
	n.action = action
	n.turn = t.turn
	n.at = now
	b := t.byTurn[t.turn]
	if b == nil {
		b = make(map[string]struct{})
		t.byTurn[t.turn] = b
	}
	b[p] = struct{}{}
	delete(t.decaying, p)
	t.dirty[p] = struct{}{}
	t.mu.Unlock()
	t.m.wake()
}

// Blocked records that the worker was refused access to path (zone or
// intent scope): the file shows as hot with lastAction "blocked", so the
// person sees where the agent tried to go.
func (t *Tracker) Blocked(path, reason string) {
	t.m.log.Debug("heat: blocked access", zap.String("path", path), zap.String("reason", reason))
	t.Access(path, api.ActionBlocked)
}

// Turn records the end of one model turn whose request used inputTokens
// tokens of context (0 when the provider did not say). Files not accessed
// for ContextTurns turns leave the context and start to cool; when the input
// tokens fall below CompactionThreshold of the previous turn's (by default,
// by more than half), the model's context was compacted and every file
// leaves it.
func (t *Tracker) Turn(inputTokens int64) {
	tune := t.m.tune()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	compacted := inputTokens > 0 && t.lastInput > 0 && tune.CompactionThreshold > 0 &&
		float64(inputTokens) < tune.CompactionThreshold*float64(t.lastInput)
	if inputTokens > 0 {
		t.lastInput = inputTokens
	}
	t.turn++
	limit := t.turn - tune.ContextTurns
	for turn, files := range t.byTurn {
		if !compacted && turn > limit {
			continue
		}
		for p := range files {
			t.outOfContext(p)
		}
		delete(t.byTurn, turn)
	}
}

// Close records that the worker ended: its context is gone, so its files
// leave context and cool off. Once they are all pruned the tracker is
// dropped. Accesses after Close are ignored.
func (t *Tracker) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.closed = true
	for turn, files := range t.byTurn {
		for p := range files {
			t.outOfContext(p)
		}
		delete(t.byTurn, turn)
	}
}

func (t *Tracker) leaveBucket(p string, turn int) {
	if b := t.byTurn[turn]; b != nil {
		delete(b, p)
		if len(b) == 0 {
			delete(t.byTurn, turn)
		}
	}
}

// outOfContext moves an in-context file out; its bucket is the caller's.
func (t *Tracker) outOfContext(p string) {
	n := t.nodes[p]
	if n == nil || !n.inContext {
		return
	}
	n.inContext = false
	t.decaying[p] = struct{}{}
	t.dirty[p] = struct{}{}
}

// collect applies one tick's decay (heat × factor for files out of context,
// pruned below the line) and returns every file changed since the last
// tick. Its cost is proportional to the files cooling and changed, never to
// the files tracked.
func (t *Tracker) collect(factor, prune float64, out []change) ([]change, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.decaying {
		n := t.nodes[p]
		n.heat *= factor
		if n.heat < prune {
			delete(t.nodes, p)
			delete(t.decaying, p)
		}
		t.dirty[p] = struct{}{}
	}
	return t.drainLocked(out), t.closed && len(t.nodes) == 0
}

// drain returns every file changed since the last tick or drain, without
// decay: Snapshot folds them into the views.
func (t *Tracker) drain(out []change) []change {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.drainLocked(out)
}

func (t *Tracker) drainLocked(out []change) []change {
	for p := range t.dirty {
		c := change{path: p}
		if n := t.nodes[p]; n != nil {
			cp := *n
			c.n = &cp
		}
		out = append(out, c)
	}
	t.dirty = reset(t.dirty)
	return out
}

// reset empties a set. clear costs the map's capacity, which never shrinks,
// so a set that once held many files is replaced instead: a tick after a
// burst must cost what changed, not what once did.
func reset(s map[string]struct{}) map[string]struct{} {
	if len(s) > 256 {
		return make(map[string]struct{})
	}
	clear(s)
	return s
}
