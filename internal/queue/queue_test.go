package queue

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// testContext bounds a test's waits; the queue never needs that long.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// gate is a handler that holds each item until it is let through.
type gate struct {
	mu      sync.Mutex
	got     []int
	pass    chan struct{}
	started chan int
}

func newGate() *gate { return &gate{pass: make(chan struct{}), started: make(chan int, 1024)} }

func (g *gate) handle(v int) {
	g.started <- v
	<-g.pass
	g.mu.Lock()
	g.got = append(g.got, v)
	g.mu.Unlock()
}

func (g *gate) open() { close(g.pass) }

func (g *gate) handled() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.got...)
}

func TestOrder(t *testing.T) {
	var got []int
	q := New(func(v int) { got = append(got, v) }, Options{})
	for i := range 1000 {
		if !q.Push(i) {
			t.Fatalf("push %d refused", i)
		}
	}
	q.Close()
	for i, v := range got {
		if v != i {
			t.Fatalf("item %d handled at %d", v, i)
		}
	}
	if len(got) != 1000 {
		t.Fatalf("%d items handled, want 1000", len(got))
	}
}

func TestOneAtATime(t *testing.T) {
	var in, most atomic.Int32
	var n atomic.Int32
	q := New(func(int) {
		cur := in.Add(1)
		for {
			m := most.Load()
			if cur <= m || most.CompareAndSwap(m, cur) {
				break
			}
		}
		runtime.Gosched()
		in.Add(-1)
		n.Add(1)
	}, Options{})
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			for i := range 200 {
				q.Push(p*1000 + i)
			}
		})
	}
	wg.Wait()
	q.Close()
	if most.Load() != 1 || n.Load() != 1600 {
		t.Errorf("%d items handled, at most %d at once; want 1600, one at a time", n.Load(), most.Load())
	}
}

func TestPushNeverWaitsOnTheHandler(t *testing.T) {
	g := newGate()
	q := New(g.handle, Options{})
	defer q.Close()
	defer g.open()
	// The handler holds the first item: every push still returns.
	for i := range 100 {
		if !q.Push(i) {
			t.Fatalf("push %d refused", i)
		}
	}
	<-g.started
}

func TestBound(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	g := newGate()
	q := New(g.handle, Options{Name: "test", Limit: 3, Log: zap.New(core)})
	for i := range 3 {
		if !q.Push(i) {
			t.Fatalf("push %d refused under the limit", i)
		}
	}
	<-g.started // the first is being handled: it still counts until it is done
	for i := 3; i < 6; i++ {
		if q.Push(i) {
			t.Fatalf("push %d accepted past the limit", i)
		}
	}
	if n := logs.FilterMessage("queue full: items are dropped until it has room").Len(); n != 1 {
		t.Errorf("%d errors logged for a run of drops, want 1", n)
	}
	g.open()
	if err := q.Flush(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if !q.Push(6) {
		t.Fatal("push refused once the queue had room")
	}
	q.Close()
	room := logs.FilterMessage("queue has room again").All()
	if len(room) != 1 || room[0].ContextMap()["dropped"] != int64(3) {
		t.Errorf("room again logged %v, want once with 3 dropped", room)
	}
	if got := g.handled(); len(got) != 4 || got[3] != 6 {
		t.Errorf("handled %v, want 0 1 2 6", got)
	}
}

func TestFlushWaitsForWhatCameBefore(t *testing.T) {
	g := newGate()
	q := New(g.handle, Options{})
	defer q.Close()
	q.Push(1)
	q.Push(2)
	<-g.started
	short, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("gave up")
	cancel(cause)
	if err := q.Flush(short); !errors.Is(err, cause) {
		t.Fatalf("flush with an ended context: %v, want its cause", err)
	}
	mark := q.Mark()
	q.Push(3) // after the mark: not waited for
	flushed := make(chan error, 1)
	go func() { flushed <- q.Await(testContext(t), mark) }()
	select {
	case err := <-flushed:
		t.Fatalf("await returned (%v) while items before its mark were held", err)
	default:
	}
	g.open()
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := g.handled(); len(got) < 2 || got[0] != 1 || got[1] != 2 {
		t.Errorf("after the flush handled %v, want 1 and 2 first", got)
	}
}

func TestCloseDrains(t *testing.T) {
	g := newGate()
	q := New(g.handle, Options{})
	for i := range 5 {
		q.Push(i)
	}
	<-g.started
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	// Once Close has begun, pushes are refused; those accepted before
	// are handled.
	accepted := 0
	for q.Push(5 + accepted) {
		accepted++
		runtime.Gosched()
	}
	select {
	case <-closed:
		t.Fatal("Close returned while items were waiting")
	default:
	}
	g.open()
	<-closed
	got := g.handled()
	if len(got) != 5+accepted {
		t.Fatalf("handled %v, want the %d items accepted", got, 5+accepted)
	}
	for i, v := range got {
		if v != i {
			t.Fatalf("handled %v, want them in order", got)
		}
	}
	if q.Push(100) {
		t.Error("push accepted after Close")
	}
}

func TestAPanicIsABugAndTheQueueGoesOn(t *testing.T) {
	core, logs := observer.New(zap.ErrorLevel)
	var got []int
	q := New(func(v int) {
		if v == 2 {
			panic("a translation bug")
		}
		got = append(got, v)
	}, Options{Name: "test", Log: zap.New(core)})
	for i := 1; i <= 3; i++ {
		q.Push(i)
	}
	q.Close()
	if len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Errorf("handled %v, want 1 and 3", got)
	}
	bugs := logs.FilterMessage("bug: a handler panicked; what follows goes on").All()
	if len(bugs) != 1 {
		t.Fatalf("%d bugs logged, want 1", len(bugs))
	}
	if m := bugs[0].ContextMap(); m["panic"] != "a translation bug" || len(m["stack"].(string)) == 0 {
		t.Errorf("bug logged as %v, want the panic and its stack", m)
	}
}

func TestAnIdleQueueHoldsNoGoroutine(t *testing.T) {
	q := New(func(int) {}, Options{})
	q.Push(1)
	ctx := testContext(t)
	for {
		q.mu.Lock()
		running := q.running
		q.mu.Unlock()
		if !running {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the goroutine is still running with nothing to do")
		case <-time.After(time.Millisecond):
		}
	}
	q.Close()
}
