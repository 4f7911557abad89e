package workforce

import (
	"context"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// slowNotifier sends nothing until release is closed, and counts what it
// sent.
type slowNotifier struct {
	release chan struct{}
	sent    atomic.Int64
}

func (n *slowNotifier) TaskUpdate(context.Context, *api.TaskUpdateParams) error {
	<-n.release
	n.sent.Add(1)
	return nil
}
func (n *slowNotifier) Progress(context.Context, *api.ProgressParams) error { return nil }
func (n *slowNotifier) LogMessage(context.Context, api.MessageType, string) error {
	return nil
}

func TestOutboxFlush(t *testing.T) {
	t.Run("returns once what was queued before it has been sent", func(t *testing.T) {
		n := &slowNotifier{release: make(chan struct{})}
		o := newOutbox(n, false, zap.NewNop())
		defer o.close()
		o.push(note{update: &api.TaskUpdateParams{Seq: 1}})
		o.push(note{update: &api.TaskUpdateParams{Seq: 2}})
		flushed := make(chan int64, 1)
		go func() {
			o.flush(testkit.Context(t))
			flushed <- n.sent.Load()
		}()
		close(n.release)
		if got := <-flushed; got != 2 {
			t.Fatalf("flush returned with %d of 2 notifications sent", got)
		}
	})

	t.Run("gives up when its context ends, the editor not reading", func(t *testing.T) {
		n := &slowNotifier{release: make(chan struct{})}
		o := newOutbox(n, false, zap.NewNop())
		o.push(note{update: &api.TaskUpdateParams{Seq: 1}})
		ctx, cancel := context.WithCancel(testkit.Context(t))
		cancel()
		o.flush(ctx) // returns
		close(n.release)
		o.close()
	})
}
