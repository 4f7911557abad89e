package codegraph

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// storedDetails reads the stored graph at state: each file's detail bytes,
// by path.
func storedDetails(t *testing.T, state string) map[string]string {
	t.Helper()
	im, err := openImage(state, 1<<30)
	if err != nil || im == nil {
		t.Fatalf("the stored graph does not read: %v", err)
	}
	out := map[string]string{}
	for i, f := range im.files {
		b, err := im.blob(uint32(i))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		out[f.Path] = b
	}
	return out
}

func TestStoreCopiesWhatDidNotChange(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	startStopped(t, Config{Root: root, StateFile: state})
	before := storedDetails(t, state)

	g := start(t, Config{Root: root, StateFile: state, SaveDelay: time.Nanosecond})
	stores := g.Stats().Stores
	writeFile(t, root, "cart/sum.go", "package cart\n\nfunc (c *Cart) Total() int {\n\treturn len(c.items)\n}\n")
	decoded := decodes.Load()
	g.Changed("cart/sum.go")
	ctx := bounded(t)
	for st := g.Stats(); st.Stores == stores || st.Storing || g.unstored(); st = g.Stats() {
		if ctx.Err() != nil {
			t.Fatalf("the change was not stored: %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
	// the changed file's detail is decoded to index it (once in memory,
	// once stored); the others' are copied
	if n := decodes.Load() - decoded; n > 2 {
		t.Errorf("the change and its store decoded %d details, want the changed file's alone", n)
	}
	after := storedDetails(t, state)
	if len(after) != len(before) {
		t.Fatalf("%d files stored, want %d", len(after), len(before))
	}
	for p, b := range before {
		switch {
		case p == "cart/sum.go" && after[p] == b:
			t.Errorf("%s changed but its stored detail did not", p)
		case p != "cart/sum.go" && after[p] != b:
			t.Errorf("%s did not change but its stored detail did", p)
		}
	}
	// the copied index entries: the stored graph answers as one built afresh
	fresh := start(t, Config{Root: root})
	again := startStopped(t, Config{Root: root, StateFile: state})
	if again.st.Parsed != 0 || again.dump != dump(fresh) {
		t.Errorf("restarted: parsed %d (want 0), and the graph differs from one built afresh:\n%s", again.st.Parsed, lineDiff(dump(fresh), again.dump))
	}
}

func TestStoreCutShortLeavesTheStoredGraph(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	first := startStopped(t, Config{Root: root, StateFile: state})
	// a store that stops half way (the process killed): its file is never
	// put in place
	im, err := openImage(state, 0)
	if err != nil || im == nil {
		t.Fatal(err)
	}
	w, err := newImageWriter(state)
	if err != nil {
		t.Fatal(err)
	}
	defer w.abort()
	for _, f := range im.files[:len(im.files)/2] {
		if err := w.copy(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.w.Flush(); err != nil {
		t.Fatal(err)
	}
	im.f.Close()
	if _, err := os.Stat(w.p.Name()); err != nil {
		t.Fatalf("the store cut short left no file of its own: %v", err)
	}
	again := startStopped(t, Config{Root: root, StateFile: state})
	if again.st.Parsed != 0 || again.dump != first.dump {
		t.Errorf("after a store cut short: parsed %d (want 0), graph:\n%s", again.st.Parsed, lineDiff(first.dump, again.dump))
	}
}

func TestWalkWaitsForTheFirstAnswer(t *testing.T) {
	root := fixture(t, "go")
	state := filepath.Join(t.TempDir(), "codegraph.bin")
	startStopped(t, Config{Root: root, StateFile: state})
	g, reached := runWalkHeld(t, root, state, time.Hour) // the answer alone lets the walk start
	if err := g.Ready(bounded(t)); err != nil {
		t.Fatal(err)
	}
	res, err := g.CodeGraph(bounded(t), Query{Symbol: "Cart.Add"})
	if err != nil || !edgeSet(res)["main.go#main calls cart/cart.go#Cart.Add"] {
		t.Fatalf("the stored graph's first answer: %v, %v", err, res)
	}
	select {
	case <-reached:
	case <-bounded(t).Done():
		t.Fatal("the walk did not start after the first answer")
	}
}
