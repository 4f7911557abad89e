package workforce

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/internal/queue"
	"github.com/agentls/agentls/internal/redact"
)

// outbox hands a task's events to the face's Events in the order they were
// made, from a goroutine the task owns (package queue), with the known
// secrets taken out of them. Whoever pushes never waits on the client, so
// no lock of the task is ever held while an event is sent, and a worker, a
// control or agent/stop never waits behind a client that is slow to read.
// close hands the last ones over and waits until all have been handled.
//
// The sends are bounded by the connection, not by the task (a stopped task
// still reports how it ended): an event is handed over with a context
// that does not end with the task, but for its start's (Event.Start).
type outbox struct {
	ev  Events
	red *redact.Redactor
	log *zap.Logger
	// direct: ev queues what it is given (Queueing), so it is handed each
	// event as it is made, in order, under mu.
	direct bool
	q      *queue.Queue[sending]

	mu     sync.Mutex
	closed bool
}

// sending is an event with the context it is handed over with.
type sending struct {
	ctx context.Context
	ev  Event
}

func newOutbox(ev Events, red *redact.Redactor, direct bool, log *zap.Logger) *outbox {
	o := &outbox{ev: ev, red: red, log: log, direct: direct}
	if !direct {
		o.q = queue.New(o.send, queue.Options{Name: "task events", Log: log})
	}
	return o
}

// push queues an event, handed over with ctx. After close it is dropped
// (and logged: every event of a task is made before the task ends).
func (o *outbox) push(ctx context.Context, ev Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		o.log.Error("bug: an event made after its task ended is dropped")
		return
	}
	if o.direct {
		// A bug in the face's translation must not take the task down.
		queue.Guard(o.log, "task events", func() { o.send(sending{ctx, ev}) })
		return
	}
	o.q.Push(sending{ctx, ev}) // the queue logs what its bound drops
}

// flush waits until every event pushed before it has been handled, or ctx
// ends. A question to the person calls it first, so the client has shown
// what led to the question (the tool call, the subtask's end) before it
// asks.
func (o *outbox) flush(ctx context.Context) {
	if o.direct {
		return
	}
	_ = o.q.Flush(ctx)
}

func (o *outbox) send(s sending) {
	if err := o.ev.Event(s.ctx, redact.Value(o.red, s.ev)); err != nil {
		o.log.Debug("event not sent", zap.Error(err))
	}
}

// close waits until every event pushed has been handled (or failed).
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	if !o.direct {
		o.q.Close()
	}
}
