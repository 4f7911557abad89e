// Package queue is an ordered FIFO drained by one goroutine it owns: the
// one queue behind a task's outbox, a task's journal, an ACP session's
// updates and a connection's notifications.
//
// What a Queue guarantees:
//
//   - Order. Items are handed to the handler in the order Push accepted
//     them, one at a time, never two at once.
//   - Push never blocks. It appends and returns; the goroutine that
//     handles the items is started when there are some and ends when there
//     are none, so a Queue with nothing to do holds no goroutine.
//   - A bound, with a stated policy: at most Limit items wait (Options;
//     DefaultLimit). An item pushed past it is dropped: Push returns false,
//     the first drop of a run is logged as an error and the run's count
//     when an item is accepted again. A handler that far behind is stuck;
//     its producers (a read loop, a task under its lock) must not wait on
//     it, nor may memory grow without end.
//   - Flush waits until every item accepted before it was called has been
//     handled; Mark and Await do the same for a point taken earlier.
//   - Close drains: it stops accepting (Push returns false) and returns
//     once every item accepted before has been handled.
//   - A panic in the handler of one item is recovered and logged as a bug,
//     with its stack, and the queue goes on with the next item.
//
// A Queue is safe for concurrent use.
package queue

import (
	"context"
	"runtime/debug"
	"sync"

	"go.uber.org/zap"
)

// DefaultLimit is how many items wait at most when Options.Limit is 0.
const DefaultLimit = 1 << 16

// Options configure a Queue.
type Options struct {
	// Name says which queue in the logs.
	Name string
	// Limit is how many items may wait (0: DefaultLimit).
	Limit int
	// Log receives the bugs (a handler's panic) and the drops (nil: none).
	Log *zap.Logger
}

// Queue hands the items pushed to its handler, in order, from a goroutine
// of its own.
type Queue[T any] struct {
	handle func(T)
	opts   Options

	mu      sync.Mutex
	items   []T
	running bool // the goroutine is draining
	closed  bool
	// pushed and handled count the items accepted and handled so far;
	// waiters wait for handled to reach their mark.
	pushed, handled uint64
	waiters         []waiter
	dropped         int // items dropped since the last one accepted
	done            sync.WaitGroup
}

type waiter struct {
	mark uint64
	ch   chan struct{}
}

// New returns a Queue that hands each item to handle.
func New[T any](handle func(T), opts Options) *Queue[T] {
	if opts.Limit <= 0 {
		opts.Limit = DefaultLimit
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	return &Queue[T]{handle: handle, opts: opts}
}

// Push queues v. It never blocks. It returns false when v was dropped:
// the queue is closed, or Limit items wait.
func (q *Queue[T]) Push(v T) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.pushed-q.handled >= uint64(q.opts.Limit) {
		q.dropped++
		first := q.dropped == 1
		q.mu.Unlock()
		if first {
			q.opts.Log.Error("queue full: items are dropped until it has room", zap.String("queue", q.opts.Name), zap.Int("limit", q.opts.Limit))
		}
		return false
	}
	dropped := q.dropped
	q.dropped = 0
	q.items = append(q.items, v)
	q.pushed++
	if !q.running {
		q.running = true
		q.done.Go(q.drain)
	}
	q.mu.Unlock()
	if dropped > 0 {
		q.opts.Log.Warn("queue has room again", zap.String("queue", q.opts.Name), zap.Int("dropped", dropped))
	}
	return true
}

// drain handles the items until none is left.
func (q *Queue[T]) drain() {
	for {
		q.mu.Lock()
		batch := q.items
		q.items = nil
		if len(batch) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for i := range batch {
			q.handleOne(batch[i])
			var zero T
			batch[i] = zero // the handler's item is not kept alive by the batch
			q.mu.Lock()
			q.handled++
			q.wakeLocked()
			q.mu.Unlock()
		}
	}
}

func (q *Queue[T]) handleOne(v T) {
	Guard(q.opts.Log, q.opts.Name, func() { q.handle(v) })
}

// Guard runs f, recovering a panic: it is logged as a bug with its stack,
// and Guard returns as if f had.
func Guard(log *zap.Logger, name string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			if log == nil {
				log = zap.NewNop()
			}
			log.Error("bug: a handler panicked; what follows goes on", zap.String("queue", name),
				zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
		}
	}()
	f()
}

func (q *Queue[T]) wakeLocked() {
	keep := q.waiters[:0]
	for _, w := range q.waiters {
		if q.handled >= w.mark {
			close(w.ch)
		} else {
			keep = append(keep, w)
		}
	}
	clear(q.waiters[len(keep):])
	q.waiters = keep
}

// Mark is how many items the queue has accepted so far: Await(ctx, Mark())
// waits for those.
func (q *Queue[T]) Mark() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushed
}

// Await waits until mark items have been handled, or ctx ends (its cause).
func (q *Queue[T]) Await(ctx context.Context, mark uint64) error {
	q.mu.Lock()
	if q.handled >= mark {
		q.mu.Unlock()
		return nil
	}
	w := waiter{mark: mark, ch: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	q.mu.Unlock()
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Flush waits until every item accepted before it was called has been
// handled, or ctx ends (its cause).
func (q *Queue[T]) Flush(ctx context.Context) error { return q.Await(ctx, q.Mark()) }

// Close stops accepting items and waits until every item accepted before
// has been handled. It may be called more than once.
func (q *Queue[T]) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.done.Wait()
}
