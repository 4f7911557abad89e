// Package usage sums the model tokens of every model call per subtask, task
// and session, prices them (PriceOf: the prices setting over the built-in
// prices), and passes each call's input tokens on to the heat tracker's
// turn hook (which detects context compaction from them). A sum has a cost
// only when every call in it had a price. A Counter is safe for concurrent
// use.
package usage

import (
	"sync"

	"github.com/agentls/agentls/api"
)

// TurnObserver is told of every model turn with the input tokens it used;
// *heat.Tracker satisfies it.
type TurnObserver interface {
	Turn(inputTokens int64)
}

type subtaskKey struct{ task, subtask string }

// Counter holds the sums of one process.
type Counter struct {
	mu       sync.Mutex
	subtasks map[subtaskKey]api.Usage
	tasks    map[string]api.Usage
	sessions map[string]api.Usage
}

// New returns an empty Counter.
func New() *Counter {
	return &Counter{subtasks: map[subtaskKey]api.Usage{}, tasks: map[string]api.Usage{}, sessions: map[string]api.Usage{}}
}

// Add counts one model call of a subtask (subtaskID "" for the
// coordinator), priced or not (u.Cost), with the context it used.
// Negative counts are taken as 0.
func (c *Counter) Add(sessionID, taskID, subtaskID string, u api.Usage) {
	u.InputTokens, u.OutputTokens = max(u.InputTokens, 0), max(u.OutputTokens, 0)
	u.CacheReadTokens, u.CacheWriteTokens = max(u.CacheReadTokens, 0), max(u.CacheWriteTokens, 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	k := subtaskKey{taskID, subtaskID}
	c.subtasks[k] = c.subtasks[k].Plus(u)
	c.tasks[taskID] = c.tasks[taskID].Plus(u.Total())
	if sessionID != "" {
		c.sessions[sessionID] = c.sessions[sessionID].Plus(u.Total())
	}
}

// Subtask returns a subtask's sum ("" is the coordinator), with the
// context of its last call.
func (c *Counter) Subtask(taskID, subtaskID string) api.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subtasks[subtaskKey{taskID, subtaskID}]
}

// Task returns a task's sum: its coordinator and every subtask.
func (c *Counter) Task(taskID string) api.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tasks[taskID]
}

// Session returns a session's sum over the tasks of this process.
func (c *Counter) Session(sessionID string) api.Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[sessionID]
}

// Meter is the counter of one worker's model calls.
type Meter struct {
	c                         *Counter
	sessionID, taskID, subtID string
	turns                     TurnObserver
	price                     api.Price
}

// Meter returns the meter of one subtask; turns (may be nil) is told of
// every call's input tokens.
func (c *Counter) Meter(sessionID, taskID, subtaskID string, turns TurnObserver) *Meter {
	return &Meter{c: c, sessionID: sessionID, taskID: taskID, subtID: subtaskID, turns: turns}
}

// Priced sets the price of the meter's model (PriceOf): its calls are
// given a cost when the price has one, and the context window.
func (m *Meter) Priced(p api.Price) *Meter {
	m.price = p
	return m
}

// ModelCall counts one model call and ends the worker's turn. It returns
// the call's usage as counted: priced, with its context (the call's input
// tokens, the model's window).
func (m *Meter) ModelCall(u api.Usage) api.Usage {
	u.Cost = m.price.Cost(u)
	u.ContextTokens, u.ContextWindow = 0, 0
	if u.InputTokens > 0 {
		u.ContextTokens, u.ContextWindow = u.InputTokens, m.price.ContextWindow
	}
	m.c.Add(m.sessionID, m.taskID, m.subtID, u)
	if m.turns != nil {
		m.turns.Turn(max(u.InputTokens, 0))
	}
	return u
}
