package workforce

import (
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/tracking/sessions"
)

// journal writes a task's messages and state to its session as the task
// goes, in order, on a goroutine of its own: a worker never waits for an
// fsync, and a crash loses at most what was still queued. close drains the
// queue and records the final state and usage.
type journal struct {
	store     *sessions.Store
	sessionID string
	taskID    string
	log       *zap.Logger

	mu     sync.Mutex
	queue  []func() error
	kick   chan struct{}
	closed bool
	done   chan struct{}
}

func newJournal(store *sessions.Store, sessionID, taskID string, log *zap.Logger) *journal {
	j := &journal{store: store, sessionID: sessionID, taskID: taskID, log: log, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go j.loop()
	return j
}

func (j *journal) push(op func() error) {
	j.mu.Lock()
	if j.closed {
		j.mu.Unlock()
		return
	}
	j.queue = append(j.queue, op)
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
}

// add appends a message to the session's history.
func (j *journal) add(m api.SessionMessage) {
	j.push(func() error { return j.store.Append(j.sessionID, m) })
}

// state records the task's state.
func (j *journal) state(state string) {
	j.push(func() error { return j.store.SetTaskState(j.sessionID, j.taskID, state) })
}

func (j *journal) loop() {
	defer close(j.done)
	for {
		j.mu.Lock()
		ops, closed := j.queue, j.closed
		j.queue = nil
		j.mu.Unlock()
		for _, op := range ops {
			if err := op(); err != nil {
				j.log.Warn("session not written", zap.String("session", j.sessionID), zap.Error(err))
			}
		}
		if closed && len(ops) == 0 {
			return
		}
		if len(ops) == 0 {
			<-j.kick
		}
	}
}

// close writes what is queued, then the task's final state, usage and
// subtasks, and waits until it is on disk.
func (j *journal) close(state string, u api.Usage, subtasks []api.Subtask) {
	j.push(func() error { return j.store.SetTaskResult(j.sessionID, j.taskID, u, subtasks) })
	j.state(state)
	j.mu.Lock()
	j.closed = true
	j.mu.Unlock()
	select {
	case j.kick <- struct{}{}:
	default:
	}
	<-j.done
}
