package workforce

import (
	"context"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/queue"
	"github.com/agentls/agentls/tracking/sessions"
)

// journal writes a task's messages and state to its session as the task
// goes, in order, on a goroutine of its own (package queue): a worker never
// waits for an fsync, and a crash loses at most what was still queued.
// close drains the queue and records the final state and usage.
type journal struct {
	store     *sessions.Store
	sessionID string
	taskID    string
	log       *zap.Logger
	q         *queue.Queue[func() error]
}

func newJournal(store *sessions.Store, sessionID, taskID string, log *zap.Logger) *journal {
	j := &journal{store: store, sessionID: sessionID, taskID: taskID, log: log}
	j.q = queue.New(j.write, queue.Options{Name: "journal", Log: log})
	return j
}

func (j *journal) write(op func() error) {
	if err := op(); err != nil {
		j.log.Warn("session not written", zap.String("session", j.sessionID), zap.Error(err))
	}
}

// push queues a write; after close it is dropped.
func (j *journal) push(op func() error) { j.q.Push(op) }

// add appends a message to the session's history.
func (j *journal) add(m api.SessionMessage) {
	j.push(func() error { return j.store.Append(j.sessionID, m) })
}

// flush waits until what is queued is on disk: the person's prompt is,
// before any model is asked, so that a crash at any later moment leaves the
// task in its session to be told as interrupted.
func (j *journal) flush(ctx context.Context) {
	if err := j.q.Flush(ctx); err != nil && ctx.Err() == nil {
		j.log.Warn("session not flushed", zap.String("session", j.sessionID), zap.Error(err))
	}
}

// state records the task's state.
func (j *journal) state(state string) {
	j.push(func() error { return j.store.SetTaskState(j.sessionID, j.taskID, state) })
}

// close writes what is queued, then the task's final state, usage and
// subtasks, and waits until it is on disk.
func (j *journal) close(state string, u api.Usage, subtasks []api.Subtask) {
	j.push(func() error { return j.store.SetTaskResult(j.sessionID, j.taskID, u, subtasks) })
	j.state(state)
	j.q.Close()
}
