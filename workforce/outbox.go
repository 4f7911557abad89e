package workforce

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/queue"
)

// outbox sends a task's notifications (agent/taskUpdate, $/progress,
// window/logMessage) in the order they were queued, from a goroutine the
// task owns (package queue). Whoever queues never waits on the editor, so
// no lock of the task is ever held while a notification is written, and a
// worker, a control or agent/stop never waits behind an editor that is
// slow to read. close hands the last ones over and waits until all have
// been given to the connection.
//
// The sends are bounded by the connection, not by the task (a stopped task
// still reports how it ended): a send waits only while the connection's
// backlog is past its high-water mark, and fails at once when the
// connection has ended or given up on the editor.
type outbox struct {
	n   Notifier
	log *zap.Logger
	// direct: n queues what it is given (it wraps a Queueing notifier), so
	// it is handed each notification as it is made, in order, under mu.
	direct bool
	q      *queue.Queue[note]

	mu     sync.Mutex
	closed bool
}

// note is one notification: exactly one of its fields is set.
type note struct {
	update   *api.TaskUpdateParams
	progress *api.ProgressParams
	warning  string
}

func newOutbox(n Notifier, direct bool, log *zap.Logger) *outbox {
	o := &outbox{n: n, log: log, direct: direct}
	if !direct {
		o.q = queue.New(o.send, queue.Options{Name: "task notifications", Log: log})
	}
	return o
}

// Queueing is implemented by a Notifier that never waits on its peer: it
// queues what it is handed and sends it from a goroutine of its own (the
// ACP face's session updates). The task then hands it each notification as
// it is made instead of through the outbox's goroutine, so the order of
// what it sends holds against the reverse calls the workers make: a tool
// call's event reaches it before the file read or edit that call makes.
type Queueing interface {
	Notifier
	// Queues marks the notifier; it is never called.
	Queues()
}

// push queues a notification. After close it is dropped (and logged: every
// notification of a task is made before the task ends).
func (o *outbox) push(nt note) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		o.log.Error("bug: a notification made after its task ended is dropped")
		return
	}
	if o.direct {
		// A bug in the face's translation must not take the task down.
		queue.Guard(o.log, "task notifications", func() { o.send(nt) })
		return
	}
	o.q.Push(nt) // the queue logs what its bound drops
}

// flush waits until every notification queued before it has been handed to
// the connection, or ctx ends. A question to the person calls it first, so
// the editor has shown what led to the question (the tool call, the
// subtask's end) before it asks.
func (o *outbox) flush(ctx context.Context) {
	if o.direct {
		return
	}
	_ = o.q.Flush(ctx)
}

func (o *outbox) send(nt note) {
	ctx := context.Background()
	var err error
	switch {
	case nt.update != nil:
		err = o.n.TaskUpdate(ctx, nt.update)
	case nt.progress != nil:
		err = o.n.Progress(ctx, nt.progress)
	default:
		err = o.n.LogMessage(ctx, api.MessageTypeWarning, nt.warning)
	}
	if err != nil {
		o.log.Debug("notification not sent", zap.Error(err))
	}
}

// close waits until every notification queued has been sent (or failed).
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	if !o.direct {
		o.q.Close()
	}
}
