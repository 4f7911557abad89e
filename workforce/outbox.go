package workforce

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// outbox sends a task's notifications (agent/taskUpdate, $/progress,
// window/logMessage) in the order they were queued, from a goroutine the
// task owns. Whoever queues never waits on the editor, so no lock of the
// task is ever held while a notification is written, and a worker, a
// control or agent/stop never waits behind an editor that is slow to read.
// close hands the last ones over and waits until all have been given to
// the connection.
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

	mu      sync.Mutex
	queue   []note
	running bool // the sending goroutine is started (on the first push)
	closed  bool
	kick    chan struct{}
	done    chan struct{} // closed when the goroutine has sent everything after close
	// pushed and sent count the notifications queued and sent (or failed);
	// flushes wait for sent to reach their mark.
	pushed, sent uint64
	flushes      []flushWaiter
}

type flushWaiter struct {
	mark uint64
	ch   chan struct{}
}

// note is one notification: exactly one of its fields is set.
type note struct {
	update   *api.TaskUpdateParams
	progress *api.ProgressParams
	warning  string
}

func newOutbox(n Notifier, direct bool, log *zap.Logger) *outbox {
	return &outbox{n: n, log: log, direct: direct, kick: make(chan struct{}, 1), done: make(chan struct{})}
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
	if o.closed {
		o.mu.Unlock()
		o.log.Error("bug: a notification made after its task ended is dropped")
		return
	}
	if o.direct {
		defer o.mu.Unlock()
		o.send(context.Background(), nt)
		return
	}
	o.queue = append(o.queue, nt)
	o.pushed++
	start := !o.running
	o.running = true
	o.mu.Unlock()
	if start {
		go o.loop()
	}
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

func (o *outbox) loop() {
	defer close(o.done)
	ctx := context.Background()
	for {
		o.mu.Lock()
		batch, closed := o.queue, o.closed
		o.queue = nil
		o.mu.Unlock()
		for _, nt := range batch {
			o.send(ctx, nt)
		}
		o.sentSome(uint64(len(batch)))
		if len(batch) > 0 {
			continue
		}
		if closed {
			return
		}
		<-o.kick
	}
}

// sentSome counts n more notifications sent and wakes the flushes whose
// mark is reached.
func (o *outbox) sentSome(n uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent += n
	keep := o.flushes[:0]
	for _, w := range o.flushes {
		if o.sent >= w.mark {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	o.flushes = keep
}

// flush waits until every notification queued before it has been handed to
// the connection, or ctx ends. A question to the person calls it first, so
// the editor has shown what led to the question (the tool call, the
// subtask's end) before it asks.
func (o *outbox) flush(ctx context.Context) {
	o.mu.Lock()
	if o.direct || o.sent >= o.pushed {
		o.mu.Unlock()
		return
	}
	w := flushWaiter{mark: o.pushed, ch: make(chan struct{})}
	o.flushes = append(o.flushes, w)
	o.mu.Unlock()
	select {
	case <-w.ch:
	case <-o.done:
	case <-ctx.Done():
	}
}

func (o *outbox) send(ctx context.Context, nt note) {
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
	if o.closed {
		o.mu.Unlock()
		<-o.done
		return
	}
	o.closed = true
	running := o.running
	o.mu.Unlock()
	if !running {
		close(o.done)
		return
	}
	select {
	case o.kick <- struct{}{}:
	default:
	}
	<-o.done
}
