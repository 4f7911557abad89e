package workforce

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// slowEvents handles nothing until release is closed, and counts what it
// handled.
type slowEvents struct {
	release chan struct{}
	sent    atomic.Int64
}

func (n *slowEvents) Event(context.Context, Event) error {
	<-n.release
	n.sent.Add(1)
	return nil
}

func update(seq uint64) Event {
	return Event{Seq: seq, Update: &api.TaskEvent{Kind: api.EventMessage}}
}

func TestOutboxFlush(t *testing.T) {
	t.Run("returns once what was queued before it has been handled", func(t *testing.T) {
		n := &slowEvents{release: make(chan struct{})}
		o := newOutbox(n, nil, false, zap.NewNop())
		defer o.close()
		o.push(context.Background(), update(1))
		o.push(context.Background(), update(2))
		flushed := make(chan int64, 1)
		go func() {
			o.flush(testkit.Context(t))
			flushed <- n.sent.Load()
		}()
		close(n.release)
		if got := <-flushed; got != 2 {
			t.Fatalf("flush returned with %d of 2 events handled", got)
		}
	})

	t.Run("gives up when its context ends, the client not reading", func(t *testing.T) {
		n := &slowEvents{release: make(chan struct{})}
		o := newOutbox(n, nil, false, zap.NewNop())
		o.push(context.Background(), update(1))
		ctx, cancel := context.WithCancel(testkit.Context(t))
		cancel()
		o.flush(ctx) // returns
		close(n.release)
		o.close()
	})
}
