package rpc

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testkit"
)

// holdHandler holds its "hold" notification until release is closed, and
// answers "seen" with whether that notification had been handled.
type holdHandler struct {
	release chan struct{}
	handled atomic.Bool
}

func (h *holdHandler) Gate(*Request) error { return nil }

func (h *holdHandler) HandleNotification(_ context.Context, req *Request) {
	if req.Method() == "hold" {
		<-h.release
		h.handled.Store(true)
	}
}

func (h *holdHandler) HandleCall(context.Context, *Request) (any, error) {
	return h.handled.Load(), nil
}

func TestCallsSeeTheNotificationsBeforeThem(t *testing.T) {
	t.Run("a call's handler starts after the notifications read before it are handled", func(t *testing.T) {
		h := &holdHandler{release: make(chan struct{})}
		var once sync.Once
		free := func() { once.Do(func() { close(h.release) }) }
		server, client := pipePair(t, h, newTestHandler())
		t.Cleanup(free) // runs before the pair's cleanup, which waits for the handler
		ctx := testkit.Context(t)
		if err := client.Notify(ctx, "hold", nil); err != nil {
			t.Fatal(err)
		}
		answer := make(chan bool, 1)
		go func() {
			var seen bool
			if err := client.Call(ctx, "seen", nil, &seen); err != nil {
				t.Error(err)
			}
			answer <- seen
		}()
		// The call has been read (it is in flight) while the notification
		// before it is still being handled.
		for deadline := time.Now().Add(10 * time.Second); ; {
			server.mu.Lock()
			n := len(server.inflight)
			server.mu.Unlock()
			if n == 1 {
				break
			}
			select {
			case seen := <-answer:
				t.Fatalf("the call was answered (seen %v) while the notification before it was still being handled", seen)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("the call never reached the server")
			}
			time.Sleep(time.Millisecond)
		}
		free()
		if !<-answer {
			t.Fatal("the call ran before the notification sent before it was handled")
		}
	})
}

// panicHandler panics on its "boom" notification and counts the others.
type panicHandler struct{ after atomic.Int32 }

func (h *panicHandler) Gate(*Request) error { return nil }

func (h *panicHandler) HandleNotification(_ context.Context, req *Request) {
	if req.Method() == "boom" {
		panic("a bug in a notification's handler")
	}
	h.after.Add(1)
}

func (h *panicHandler) HandleCall(context.Context, *Request) (any, error) {
	return h.after.Load(), nil
}

func TestANotificationThatPanicsIsABugAndTheNextIsHandled(t *testing.T) {
	h := &panicHandler{}
	_, client := pipePair(t, h, newTestHandler())
	ctx := testkit.Context(t)
	for _, m := range []string{"boom", "after", "boom", "after"} {
		if err := client.Notify(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The call's handler starts once the notifications before it are
	// handled: both "after"s, past the panics.
	var after int32
	if err := client.Call(ctx, "count", nil, &after); err != nil {
		t.Fatal(err)
	}
	if after != 2 {
		t.Errorf("%d notifications handled after the panics, want 2", after)
	}
}
