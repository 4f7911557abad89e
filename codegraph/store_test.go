package codegraph

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hold makes *hook wait at its call until the returned release is
// called, and reports through reached that it was reached; the test ends
// released.
func hold(t *testing.T, hook *func()) (reached <-chan struct{}, release func()) {
	t.Helper()
	at, gate := make(chan struct{}, 1), make(chan struct{})
	prev := *hook
	*hook = func() {
		select {
		case at <- struct{}{}:
		default:
		}
		<-gate
	}
	var once bool
	release = func() {
		if !once {
			once = true
			close(gate)
		}
	}
	t.Cleanup(func() {
		release()
		*hook = prev
	})
	return at, release
}

func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestStoreNeverHoldsUpdates(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	g := start(t, Config{Root: root, StateFile: state, SaveDelay: time.Nanosecond})
	reached, release := hold(t, &storeHook)
	// a change: the graph is stored at once, and the store is held
	writeFile(t, root, "cart/discount.go", "package cart\n\nfunc Discount(c *Cart) int { return c.Sum() / 10 }\n")
	g.Changed("cart/discount.go")
	select {
	case <-reached:
	case <-bounded(t).Done():
		t.Fatal("no store started after a change")
	}
	t.Run("an edit told while the store is written is in the graph at once", func(t *testing.T) {
		writeFile(t, root, "cart/tax.go", "package cart\n\nfunc Tax(c *Cart) int { return c.Sum() / 5 }\n")
		g.Changed("cart/tax.go")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Current(ctx); err != nil {
			t.Fatalf("the edit waited for the store: %v", err)
		}
		if !has(dump(g), "def function Tax 3:0-3:44") {
			t.Errorf("the edit is not in the graph:\n%s", dump(g))
		}
		writeFile(t, root, "main.go", "package main\n\nfunc other() {}\n")
		g.SetContent("main.go", "package main\n\nfunc other() {}\n")
		if !has(dump(g), "def function other 3:0-3:15") {
			t.Errorf("text agentls wrote is not in the graph:\n%s", dump(g))
		}
	})
	t.Run("what changed while the store was written outlives it, and is stored next", func(t *testing.T) {
		release()
		ctx := bounded(t)
		for g.Stats().Stores < 2 || g.Stats().Storing || g.unstored() {
			if ctx.Err() != nil {
				t.Fatalf("the graph was not stored again: %+v", g.Stats())
			}
			time.Sleep(time.Millisecond)
		}
		d := dump(g)
		for _, line := range []string{"def function Tax 3:0-3:44", "def function other 3:0-3:15", "def function Discount 3:0-3:50"} {
			if !has(d, line) {
				t.Errorf("after the stores, %q is missing:\n%s", line, d)
			}
		}
		if st := g.Stats(); st.InMemory != 0 {
			t.Errorf("%d files still in memory after the stores, want every one read from the stored graph", st.InMemory)
		}
		again := startStopped(t, Config{Root: root, StateFile: state})
		if again.dump != dump(g) {
			t.Errorf("the restarted graph differs:\n%s", lineDiff(dump(g), again.dump))
		}
	})
}

// runWalkHeld runs a graph of root from its stored graph state, the walk
// that checks the stored graph waiting grace for a first answer (walkGrace)
// and then held at walkHook until the test ends; reached says it is held.
func runWalkHeld(t *testing.T, root, state string, grace time.Duration) (*Graph, <-chan struct{}) {
	t.Helper()
	was := walkGrace
	walkGrace = grace
	t.Cleanup(func() { walkGrace = was })
	reached, release := hold(t, &walkHook)
	g, err := New(Config{Root: root, StateFile: state})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	t.Cleanup(func() {
		release()
		cancel()
		<-done
	})
	return g, reached
}

func TestStoredGraphAnswersBeforeTheWalk(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	startStopped(t, Config{Root: root, StateFile: state})
	writeFile(t, root, "cart/tax.go", "package cart\n\nfunc Tax(c *Cart) int { return c.Sum() / 5 }\n")
	g, reached := runWalkHeld(t, root, state, time.Nanosecond) // the walk starts at once, and is held
	<-reached
	qctx, qcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer qcancel()
	res, err := g.CodeGraph(qctx, Query{Symbol: "Cart.Add"})
	if err != nil {
		t.Fatalf("a query while the walk is held: %v", err)
	}
	if !edgeSet(res)["main.go#main calls cart/cart.go#Cart.Add"] {
		t.Errorf("the stored graph's answer lacks its edges: %v", res.Edges)
	}
	if st := g.Stats(); st.Current || st.InMemory != 0 {
		t.Errorf("answered from %+v, want the stored graph, read in place, before the walk", st)
	}
	if _, err := g.CodeGraph(qctx, Query{Symbol: "Tax"}); err == nil {
		t.Error("a file made while agentls was not running is in the graph before the walk found it")
	}
}

func TestDamagedDetailIsParsedAgain(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	first := startStopped(t, Config{Root: root, StateFile: state})
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	// the first blob follows the magic: damage a byte of it, not the summary
	data[len(imageMagic)+2] ^= 0xff
	if err := os.WriteFile(state, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, inMemory := range []int64{-1, 1 << 30} {
		g := start(t, Config{Root: root, StateFile: state, InMemory: inMemory})
		_ = dump(g) // reads every detail: the damaged one is told
		ctx := bounded(t)
		for g.Stats().Parsed == 0 {
			if ctx.Err() != nil {
				t.Fatal("the damaged file was not parsed again")
			}
			time.Sleep(time.Millisecond)
		}
		if err := g.Current(ctx); err != nil {
			t.Fatal(err)
		}
		if d := dump(g); d != first.dump {
			t.Errorf("in memory up to %d: after the damaged file is parsed again the graph differs:\n%s", inMemory, lineDiff(first.dump, d))
		}
	}
}

func TestStoredGraphIsPrivate(t *testing.T) {
	top := t.TempDir()
	state := filepath.Join(top, "a", "b", "codegraph.bin")
	startStopped(t, Config{Root: fixture(t, "go"), StateFile: state})
	for _, d := range []string{filepath.Join(top, "a"), filepath.Join(top, "a", "b")} {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v (%v), want 0700", d, fi.Mode().Perm(), err)
		}
	}
	if fi, err := os.Stat(state); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v (%v), want 0600", state, fi.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(state))
	if len(entries) != 1 {
		t.Errorf("the state directory holds %d entries, want the stored graph alone", len(entries))
	}
}

func TestImageRefusesWhatDoesNotCheckOut(t *testing.T) {
	root := fixture(t, "python")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	startStopped(t, Config{Root: root, StateFile: state})
	data, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseImage(data, nil); err != nil {
		t.Fatalf("the stored graph does not read back: %v", err)
	}
	footer := len(data) - footerSize
	sum := int(binary.LittleEndian.Uint64(data[footer:]))
	for name, damage := range map[string]func([]byte){
		"a byte of the summary": func(b []byte) { b[sum+9] ^= 1 },
		"the version":           func(b []byte) { b[footer+12]++ },
		"the summary's offset":  func(b []byte) { b[footer] ^= 0x40 },
		"the magic":             func(b []byte) { b[0] = 'x' },
		"a truncation":          nil,
	} {
		b := append([]byte{}, data...)
		if damage == nil {
			b = b[:len(b)-3]
		} else {
			damage(b)
		}
		if _, err := parseImage(b, nil); err == nil {
			t.Errorf("%s: read as a stored graph", name)
		}
		if err := os.WriteFile(state, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := openImage(state, -1); err == nil {
			t.Errorf("%s: opened in place as a stored graph", name)
		}
	}
	_ = strings.TrimSpace
}

// TestStoresTakeATenthOfTheMachine: the delay before a store is the one
// configured, or ten times the last store's time when that is longer,
// within five minutes.
func TestStoresTakeATenthOfTheMachine(t *testing.T) {
	g, err := New(Config{Root: t.TempDir(), SaveDelay: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for last, want := range map[time.Duration]time.Duration{
		0: time.Second, 50 * time.Millisecond: time.Second, 3 * time.Second: 30 * time.Second, time.Hour: 5 * time.Minute,
	} {
		g.lastStore.Store(int64(last))
		if got := g.saveDelay(); got != want {
			t.Errorf("after a store of %v: a delay of %v, want %v", last, got, want)
		}
	}
}
