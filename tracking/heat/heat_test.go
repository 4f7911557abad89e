package heat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

// ---- fakes ----

type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	tickers chan *fakeTicker
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), tickers: make(chan *fakeTicker, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

func (c *fakeClock) NewTicker(d time.Duration) Ticker {
	tk := &fakeTicker{c: make(chan time.Time), resets: make(chan time.Duration, 16)}
	c.tickers <- tk
	return tk
}

type fakeTicker struct {
	c      chan time.Time
	resets chan time.Duration
}

func (t *fakeTicker) C() <-chan time.Time   { return t.c }
func (t *fakeTicker) Reset(d time.Duration) { t.resets <- d }
func (t *fakeTicker) Stop()                 {}

type recorder struct {
	mu      sync.Mutex
	updates []*api.HeatUpdateParams
	ch      chan *api.HeatUpdateParams
}

func newRecorder() *recorder { return &recorder{ch: make(chan *api.HeatUpdateParams, 1024)} }

func (r *recorder) HeatUpdate(_ context.Context, p *api.HeatUpdateParams) error {
	r.mu.Lock()
	r.updates = append(r.updates, p)
	r.mu.Unlock()
	r.ch <- p
	return nil
}

// take returns and forgets the updates sent so far.
func (r *recorder) take() []*api.HeatUpdateParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.updates
	r.updates = nil
	for range out {
		<-r.ch
	}
	return out
}

func forView(us []*api.HeatUpdateParams, taskID string) *api.HeatUpdateParams {
	for _, u := range us {
		if u.TaskID == taskID {
			return u
		}
	}
	return nil
}

func nodeOf(u *api.HeatUpdateParams, path string) (api.HeatNode, bool) {
	if u == nil {
		return api.HeatNode{}, false
	}
	for _, n := range u.Updates {
		if n.Path == path {
			return n, true
		}
	}
	return api.HeatNode{}, false
}

type fixture struct {
	t     *testing.T
	clock *fakeClock
	rec   *recorder
	m     *Map
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := newFakeClock()
	r := newRecorder()
	return &fixture{t: t, clock: c, rec: r, m: New(r, Options{Clock: c})}
}

// tick advances the clock by one interval, ticks, and returns the updates.
func (f *fixture) tick() []*api.HeatUpdateParams {
	f.t.Helper()
	f.m.Tick(context.Background(), f.clock.Advance(100*time.Millisecond))
	return f.rec.take()
}

func snapshotNode(t *testing.T, m *Map, taskID, path string) (api.HeatNode, bool) {
	t.Helper()
	s, err := m.Snapshot(taskID)
	if err != nil {
		t.Fatalf("Snapshot(%q): %v", taskID, err)
	}
	for _, n := range s.Nodes {
		if n.Path == path {
			return n, true
		}
	}
	return api.HeatNode{}, false
}

// ---- tests ----

func TestAccessPutsAFileInContextAtFullHeat(t *testing.T) {
	f := newFixture(t)
	tr := f.m.Tracker("task1", "1")
	tr.Access("src/a.go", api.ActionRead)
	us := f.tick()
	for _, id := range []string{"", "task1"} {
		n, ok := nodeOf(forView(us, id), "src/a.go")
		if !ok {
			t.Fatalf("view %q: no update for src/a.go in %+v", id, us)
		}
		want := api.HeatNode{Path: "src/a.go", Heat: 1, InContext: true, LastAction: api.ActionRead, Turn: 0}
		if n != want {
			t.Errorf("view %q: got %+v, want %+v", id, n, want)
		}
	}
}

func TestDecay(t *testing.T) {
	t.Run("files in context keep their heat", func(t *testing.T) {
		f := newFixture(t)
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionWrite)
		f.tick()
		for range 5 {
			if us := f.tick(); len(us) != 0 {
				t.Fatalf("an untouched file in context produced updates: %+v", us)
			}
		}
		if n, _ := snapshotNode(t, f.m, "", "a.go"); n.Heat != 1 || !n.InContext {
			t.Errorf("got %+v, want heat 1 in context", n)
		}
	})
	t.Run("files out of context lose five percent per tick", func(t *testing.T) {
		f := newFixture(t)
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		f.tick()
		tr.Close()
		want := 1.0
		for i := range 10 {
			want *= 0.95
			n, ok := nodeOf(forView(f.tick(), ""), "a.go")
			if !ok {
				t.Fatalf("tick %d: no update for a cooling file", i)
			}
			if n.InContext || math.Abs(n.Heat-want) > 0.0006 {
				t.Fatalf("tick %d: got %+v, want heat %.3f out of context", i, n, want)
			}
		}
	})
	t.Run("a late tick decays by the time that passed", func(t *testing.T) {
		f := newFixture(t)
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		f.tick()
		tr.Close()
		f.m.Tick(context.Background(), f.clock.Advance(300*time.Millisecond))
		n, _ := nodeOf(forView(f.rec.take(), ""), "a.go")
		if want := math.Pow(0.95, 3); math.Abs(n.Heat-want) > 0.0006 {
			t.Errorf("heat after 300 ms = %v, want %.3f", n.Heat, want)
		}
	})
}

func TestPruning(t *testing.T) {
	f := newFixture(t)
	tr := f.m.Tracker("t", "1")
	tr.Access("a.go", api.ActionRead)
	f.tick()
	tr.Close()
	// 0.95^90 ≈ 0.0099: the 90th tick prunes.
	for i := 1; i <= 89; i++ {
		if u := forView(f.tick(), ""); u == nil || len(u.Removed) != 0 {
			t.Fatalf("tick %d: want a heat update and no removal, got %+v", i, u)
		}
	}
	us := f.tick()
	u := forView(us, "")
	if u == nil || len(u.Removed) != 1 || u.Removed[0] != "a.go" || len(u.Updates) != 0 {
		t.Fatalf("90th tick: want a.go removed, got %+v", u)
	}
	if tu := forView(us, "t"); tu == nil || len(tu.Removed) != 1 {
		t.Fatalf("task view: want a.go removed, got %+v", tu)
	}
	if _, ok := snapshotNode(t, f.m, "", "a.go"); ok {
		t.Error("a pruned file is still in the snapshot")
	}
	if _, err := f.m.Snapshot("t"); !errors.Is(err, ErrUnknownTask) {
		t.Errorf("Snapshot of an ended, cooled task: err = %v, want ErrUnknownTask", err)
	}
	if us := f.tick(); len(us) != 0 {
		t.Errorf("an empty map produced updates: %+v", us)
	}
}

func TestContextTurns(t *testing.T) {
	cases := []struct {
		name      string
		turns     int
		inContext bool
	}{
		{"keeps a file in context for two turns without access", 2, true},
		{"moves a file out of context after three turns without access", 3, false},
		{"keeps it out after more turns", 5, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tr := f.m.Tracker("t", "1")
			tr.Access("a.go", api.ActionRead)
			tr.Access("b.go", api.ActionRead)
			for i := range c.turns {
				tr.Turn(1000)
				if i == 0 {
					tr.Access("b.go", api.ActionRead) // b.go is touched again in turn 1
				}
			}
			f.tick()
			n, ok := snapshotNode(t, f.m, "t", "a.go")
			if !ok || n.InContext != c.inContext {
				t.Errorf("a.go = %+v (present %v), want inContext %v", n, ok, c.inContext)
			}
			b, _ := snapshotNode(t, f.m, "t", "b.go")
			if want := c.turns < 4; b.InContext != want || b.Turn != 1 {
				t.Errorf("b.go = %+v, want inContext %v at turn 1", b, want)
			}
		})
	}
}

func TestCompaction(t *testing.T) {
	cases := []struct {
		name      string
		before    int64
		after     int64
		inContext bool
	}{
		{"a drop of more than half empties the context", 10000, 4999, false},
		{"a drop of exactly half does not", 10000, 5000, true},
		{"a rise does not", 10000, 20000, true},
		{"a turn without usage does not", 10000, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tr := f.m.Tracker("t", "1")
			tr.Turn(c.before)
			tr.Access("a.go", api.ActionRead)
			tr.Turn(c.after)
			f.tick()
			if n, _ := snapshotNode(t, f.m, "", "a.go"); n.InContext != c.inContext {
				t.Errorf("got %+v, want inContext %v", n, c.inContext)
			}
		})
	}
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name       string
		first      string
		second     string
		gap        time.Duration
		wantAction string
	}{
		{"a later read beats an earlier write", api.ActionWrite, api.ActionRead, time.Millisecond, api.ActionRead},
		{"a write beats a read at the same instant", api.ActionRead, api.ActionWrite, 0, api.ActionWrite},
		{"a write beats a read at the same instant whatever the order", api.ActionWrite, api.ActionRead, 0, api.ActionWrite},
		{"a search beats a read at the same instant", api.ActionRead, api.ActionSearch, 0, api.ActionSearch},
		{"a write beats a search at the same instant", api.ActionSearch, api.ActionWrite, 0, api.ActionWrite},
		{"an MCP call is kept as its own action, beating a search at the same instant", api.ActionSearch, api.ActionMCP, 0, api.ActionMCP},
		{"a write beats an MCP call at the same instant", api.ActionMCP, api.ActionWrite, 0, api.ActionWrite},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			a := f.m.Tracker("t1", "1")
			b := f.m.Tracker("t2", "1")
			a.Access("x.go", c.first)
			f.clock.Advance(c.gap)
			b.Access("x.go", c.second)
			us := f.tick()
			n, ok := nodeOf(forView(us, ""), "x.go")
			if !ok || n.LastAction != c.wantAction {
				t.Errorf("workspace view: got %+v, want lastAction %q", n, c.wantAction)
			}
			if n, _ := nodeOf(forView(us, "t1"), "x.go"); n.LastAction != c.first {
				t.Errorf("task t1 view shows %q, want its own %q", n.LastAction, c.first)
			}
		})
	}
	t.Run("the workspace keeps a file another worker still holds", func(t *testing.T) {
		f := newFixture(t)
		a := f.m.Tracker("t", "1")
		b := f.m.Tracker("t", "2")
		a.Access("x.go", api.ActionRead)
		f.clock.Advance(time.Millisecond)
		b.Access("x.go", api.ActionWrite)
		f.tick()
		b.Close()
		for range 100 {
			f.tick()
		}
		n, ok := snapshotNode(t, f.m, "", "x.go")
		if !ok || !n.InContext || n.LastAction != api.ActionRead || n.Heat != 1 {
			t.Errorf("got %+v (present %v), want worker 1's read in context", n, ok)
		}
	})
}

func TestMergeAcrossWorkers(t *testing.T) {
	// Worker 1 reads x.go in its turn 2 and keeps it; worker 2 writes it a
	// moment later in its turn 0, then ends: its copy leaves context and
	// cools.
	setup := func(t *testing.T) *fixture {
		f := newFixture(t)
		a := f.m.Tracker("t", "1")
		b := f.m.Tracker("t", "2")
		a.Turn(1000)
		a.Turn(1000)
		a.Access("x.go", api.ActionRead)
		f.clock.Advance(time.Millisecond)
		b.Access("x.go", api.ActionWrite)
		f.tick()
		b.Close()
		for range 5 {
			f.tick()
		}
		return f
	}
	for _, view := range []string{"", "t"} {
		name := "the workspace view"
		if view != "" {
			name = "the task view"
		}
		t.Run(name+" keeps a file in context while one worker still holds it", func(t *testing.T) {
			n, ok := snapshotNode(t, setup(t).m, view, "x.go")
			if !ok || !n.InContext {
				t.Errorf("got %+v (present %v), want inContext: worker 1 still holds x.go", n, ok)
			}
		})
		t.Run(name+" shows the hottest heat of the workers", func(t *testing.T) {
			if n, _ := snapshotNode(t, setup(t).m, view, "x.go"); n.Heat != 1 {
				t.Errorf("got heat %v, want worker 1's 1 (worker 2's copy is cooling)", n.Heat)
			}
		})
		t.Run(name+" shows the highest turn of the workers", func(t *testing.T) {
			if n, _ := snapshotNode(t, setup(t).m, view, "x.go"); n.Turn != 2 {
				t.Errorf("got turn %d, want worker 1's 2", n.Turn)
			}
		})
		t.Run(name+" shows the action of the last access", func(t *testing.T) {
			if n, _ := snapshotNode(t, setup(t).m, view, "x.go"); n.LastAction != api.ActionWrite {
				t.Errorf("got lastAction %q, want worker 2's later write", n.LastAction)
			}
		})
	}
	t.Run("an update sent after a worker ends carries the merged node", func(t *testing.T) {
		f := newFixture(t)
		a := f.m.Tracker("t", "1")
		b := f.m.Tracker("t", "2")
		a.Access("x.go", api.ActionRead)
		f.clock.Advance(time.Millisecond)
		b.Access("x.go", api.ActionWrite)
		f.tick()
		b.Close()
		n, ok := nodeOf(forView(f.tick(), ""), "x.go")
		if !ok || !n.InContext || n.Heat != 1 || n.LastAction != api.ActionWrite {
			t.Errorf("got %+v (present %v), want x.go in context at heat 1, last written", n, ok)
		}
	})
}

func TestSnapshotReadsItsWrites(t *testing.T) {
	// A run's worker touches files and ends; the snapshot is asked before
	// the ticker ran again.
	run := func(f *fixture) {
		f.tick() // the ticker ran once before the run
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		tr.Access("b.go", api.ActionWrite)
		tr.Close()
	}
	for _, view := range []string{"", "t"} {
		name := "the workspace snapshot"
		if view != "" {
			name = "the task snapshot"
		}
		t.Run(name+" holds every access of a run that ended before it was asked", func(t *testing.T) {
			f := newFixture(t)
			run(f)
			for _, p := range []string{"a.go", "b.go"} {
				if n, ok := snapshotNode(t, f.m, view, p); !ok || n.Heat != 1 || n.InContext {
					t.Errorf("%s: got %+v (present %v), want it at heat 1, out of context", p, n, ok)
				}
			}
		})
	}
	t.Run("the changes a snapshot saw still go out in the next update, above its seq", func(t *testing.T) {
		f := newFixture(t)
		run(f)
		s, err := f.m.Snapshot("")
		if err != nil {
			t.Fatal(err)
		}
		u := forView(f.tick(), "")
		if u == nil || u.Seq <= s.Seq || len(u.Updates) != 2 {
			t.Fatalf("next update %+v after snapshot seq %d, want a.go and b.go with a higher seq", u, s.Seq)
		}
	})
}

func TestSeqRisesByOnePerUpdateOfEachView(t *testing.T) {
	f := newFixture(t)
	a := f.m.Tracker("t1", "1")
	b := f.m.Tracker("t2", "1")
	last := map[string]uint64{}
	for i := range 20 {
		a.Access(fmt.Sprintf("f%d.go", i), api.ActionRead)
		if i%2 == 0 {
			b.Access("g.go", api.ActionRead)
		}
		for _, u := range f.tick() {
			if u.Seq != last[u.TaskID]+1 {
				t.Fatalf("view %q: seq %d after %d", u.TaskID, u.Seq, last[u.TaskID])
			}
			last[u.TaskID] = u.Seq
		}
	}
	if last[""] != 20 || last["t1"] != 20 || last["t2"] != 10 {
		t.Errorf("final seqs %v, want workspace 20, t1 20, t2 10", last)
	}
	if s, _ := f.m.Snapshot("t2"); s.Seq != 10 {
		t.Errorf("snapshot seq %d, want the last update's 10", s.Seq)
	}
}

func TestDeltasCarryOnlyWhatChanged(t *testing.T) {
	f := newFixture(t)
	tr := f.m.Tracker("t", "1")
	for i := range 100 {
		tr.Access(fmt.Sprintf("f%03d.go", i), api.ActionRead)
	}
	if u := forView(f.tick(), ""); u == nil || len(u.Updates) != 100 {
		t.Fatalf("first update: want 100 nodes")
	}
	tr.Access("f007.go", api.ActionWrite)
	tr.Access("new.go", api.ActionRead)
	u := forView(f.tick(), "")
	if u == nil || len(u.Updates) != 2 || u.Updates[0].Path != "f007.go" || u.Updates[1].Path != "new.go" {
		t.Fatalf("second update: got %+v, want f007.go and new.go only", u)
	}
}

func TestRateLimitAndIdleSilence(t *testing.T) {
	t.Run("sends nothing while nothing changes", func(t *testing.T) {
		f := newFixture(t)
		f.m.Tracker("t", "1").Access("a.go", api.ActionRead)
		f.tick()
		for range 50 {
			if us := f.tick(); len(us) != 0 {
				t.Fatalf("idle tick sent %+v", us)
			}
		}
	})
	t.Run("holds a second update back until 100 ms passed", func(t *testing.T) {
		f := newFixture(t)
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		f.tick()
		tr.Access("b.go", api.ActionRead)
		if !f.m.Tick(context.Background(), f.clock.Advance(40*time.Millisecond)) {
			t.Error("a held-back update must count as activity")
		}
		if us := f.rec.take(); len(us) != 0 {
			t.Fatalf("sent %d updates 40 ms after the last", len(us))
		}
		f.m.Tick(context.Background(), f.clock.Advance(60*time.Millisecond))
		if n, ok := nodeOf(forView(f.rec.take(), ""), "b.go"); !ok || n.Heat != 1 {
			t.Fatalf("the held-back change was not sent at 100 ms")
		}
	})
	t.Run("slows to 500 ms after 2 s idle and wakes on access", func(t *testing.T) {
		f := newFixture(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- f.m.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Run returned %v", err)
			}
		}()
		tk := recvDeadline(t, f.clock.tickers)

		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		tk.c <- f.clock.Advance(100 * time.Millisecond)
		if u := <-f.rec.ch; u.Seq != 1 {
			t.Fatalf("first update seq %d", u.Seq)
		}
		<-f.rec.ch // the task view's
		for range 19 {
			tk.c <- f.clock.Advance(100 * time.Millisecond)
		}
		select {
		case d := <-tk.resets:
			t.Fatalf("ticker reset to %v before 2 s of idle", d)
		default:
		}
		tk.c <- f.clock.Advance(100 * time.Millisecond)
		if d := recvDeadline(t, tk.resets); d != 500*time.Millisecond {
			t.Fatalf("after 2 s idle the ticker was reset to %v, want 500ms", d)
		}
		f.clock.Advance(300 * time.Millisecond)
		tr.Access("b.go", api.ActionWrite)
		if u := recvDeadline(t, f.rec.ch); len(u.Updates) != 1 || u.Updates[0].Path != "b.go" {
			t.Fatalf("the access that woke the map sent %+v", u)
		}
		if d := recvDeadline(t, tk.resets); d != 100*time.Millisecond {
			t.Fatalf("after waking the ticker was reset to %v, want 100ms", d)
		}
	})
}

func TestPathNormalisation(t *testing.T) {
	ignore := map[string]bool{}
	for _, s := range DefaultIgnore {
		ignore[s] = true
	}
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"keeps a clean relative path", "src/a.go", "src/a.go", true},
		{"drops a leading ./", "./src/a.go", "src/a.go", true},
		{"cleans dot segments", "src/../lib//b.go", "lib/b.go", true},
		{"turns backslashes into slashes", `src\win\c.go`, "src/win/c.go", true},
		{"refuses an absolute path", "/etc/passwd", "", false},
		{"refuses a drive path", `C:\x.go`, "", false},
		{"refuses a path that leaves the workspace", "../x.go", "", false},
		{"refuses the workspace itself", ".", "", false},
		{"refuses an empty path", "", "", false},
		{"ignores node_modules", "web/node_modules/react/index.js", "", false},
		{"ignores .git", ".git/config", "", false},
		{"ignores build output", "target/debug/app", "", false},
		{"keeps a file merely named like a folder", "cmd/build.go", "cmd/build.go", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := normalize(c.in, ignore)
			if got != c.want || ok != c.ok {
				t.Errorf("normalize(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
			}
		})
	}
	t.Run("tracks the normalised path and skips ignored ones", func(t *testing.T) {
		f := newFixture(t)
		tr := f.m.Tracker("t", "1")
		tr.Access("./src/a.go", api.ActionRead)
		tr.Access("node_modules/x/index.js", api.ActionRead)
		tr.Access("../outside.go", api.ActionRead)
		f.tick()
		s, _ := f.m.Snapshot("")
		if len(s.Nodes) != 1 || s.Nodes[0].Path != "src/a.go" {
			t.Errorf("snapshot %+v, want src/a.go only", s.Nodes)
		}
	})
}

func TestBlockedShowsAsBlocked(t *testing.T) {
	f := newFixture(t)
	f.m.Tracker("t", "1").Blocked("secret/key.pem", "outside the zones")
	n, ok := nodeOf(forView(f.tick(), "t"), "secret/key.pem")
	if !ok || n.LastAction != api.ActionBlocked || n.Heat != 1 {
		t.Errorf("got %+v, want a hot blocked node", n)
	}
}

func TestConcurrentAccessAndTicks(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	for w := range 4 {
		tr := f.m.Tracker("t", fmt.Sprint(w))
		wg.Go(func() {
			for i := range 500 {
				tr.Access(fmt.Sprintf("f%d.go", i%50), api.ActionRead)
				if i%10 == 0 {
					tr.Turn(int64(1000 + i))
				}
			}
			tr.Close()
		})
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		for {
			select {
			case <-stop:
				return
			default:
				f.m.Tick(context.Background(), f.clock.Advance(100*time.Millisecond))
				f.rec.take()
			}
		}
	}()
	wg.Wait()
	close(stop)
	<-ticked
	for range 100 {
		f.tick()
	}
	if s, _ := f.m.Snapshot(""); len(s.Nodes) != 0 {
		t.Errorf("after every worker closed and cooled, %d nodes remain", len(s.Nodes))
	}
}

func recvDeadline[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("nothing received before the deadline")
		var zero T
		return zero
	}
}

func TestTuningFromTheHeatSetting(t *testing.T) {
	t.Run("starts with the defaults of the setting", func(t *testing.T) {
		f := newFixture(t)
		if got := f.m.Tuning(); got != (api.HeatSettings{Decay: 0.95, ContextTurns: 3, CompactionThreshold: 0.5}) {
			t.Errorf("tuning = %+v", got)
		}
	})
	t.Run("cools files by the decay set", func(t *testing.T) {
		f := newFixture(t)
		f.m.SetTuning(api.HeatSettings{Decay: 0.5, ContextTurns: 3, CompactionThreshold: 0.5})
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		f.tick()
		tr.Close()
		n, _ := nodeOf(forView(f.tick(), ""), "a.go")
		if math.Abs(n.Heat-0.5) > 1e-9 {
			t.Errorf("heat after one tick = %v, want 0.5", n.Heat)
		}
	})
	t.Run("keeps a file in context for the turns set", func(t *testing.T) {
		f := newFixture(t)
		f.m.SetTuning(api.HeatSettings{Decay: 0.95, ContextTurns: 1, CompactionThreshold: 0.5})
		tr := f.m.Tracker("t", "1")
		tr.Access("a.go", api.ActionRead)
		tr.Turn(100)
		f.tick()
		if n, _ := snapshotNode(t, f.m, "", "a.go"); n.InContext {
			t.Errorf("after one turn with contextTurns 1: %+v", n)
		}
	})
	for _, c := range []struct {
		name      string
		threshold float64
		after     int64
		inContext bool
	}{
		{"detects compaction below the threshold set", 0.8, 7999, false},
		{"does not above it", 0.8, 8000, true},
		{"never detects it with a threshold of 0", 0, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.m.SetTuning(api.HeatSettings{Decay: 0.95, ContextTurns: 3, CompactionThreshold: c.threshold})
			tr := f.m.Tracker("t", "1")
			tr.Turn(10000)
			tr.Access("a.go", api.ActionRead)
			tr.Turn(c.after)
			f.tick()
			if n, _ := snapshotNode(t, f.m, "", "a.go"); n.InContext != c.inContext {
				t.Errorf("got %+v, want inContext %v", n, c.inContext)
			}
		})
	}
	t.Run("keeps the values in force for values out of range", func(t *testing.T) {
		f := newFixture(t)
		f.m.SetTuning(api.HeatSettings{Decay: 0.9, ContextTurns: 2, CompactionThreshold: 0.25})
		f.m.SetTuning(api.HeatSettings{Decay: 0, ContextTurns: -1, CompactionThreshold: 1})
		if got := f.m.Tuning(); got != (api.HeatSettings{Decay: 0.9, ContextTurns: 2, CompactionThreshold: 0.25}) {
			t.Errorf("tuning = %+v", got)
		}
	})
}

func TestUserActions(t *testing.T) {
	f := newFixture(t)
	tr := f.m.Tracker("t", "coordinator")
	tr.Access("shot.png", api.ActionUserProvided)
	tr.Access("README.md", api.ActionUserReferenced)
	f.tick()
	for path, action := range map[string]string{"shot.png": api.ActionUserProvided, "README.md": api.ActionUserReferenced} {
		t.Run("records "+action+" as an access in context", func(t *testing.T) {
			if n, ok := snapshotNode(t, f.m, "t", path); !ok || n.LastAction != action || n.Heat != 1 || !n.InContext {
				t.Errorf("%s = %+v (present %v)", path, n, ok)
			}
		})
	}
	t.Run("ranks a reference below everything else at the same instant", func(t *testing.T) {
		if rank(api.ActionUserReferenced) >= rank(api.ActionUserProvided) || rank(api.ActionUserProvided) >= rank(api.ActionRead) {
			t.Errorf("ranks: referenced %d, provided %d, read %d", rank(api.ActionUserReferenced), rank(api.ActionUserProvided), rank(api.ActionRead))
		}
	})
}
