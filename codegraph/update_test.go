package codegraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	return readArchive(t, filepath.Join("testdata", name+".txtar")).workspace(t)
}

func has(dump, line string) bool {
	for _, l := range strings.Split(dump, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

func TestUpdates(t *testing.T) {
	t.Run("an edited file is parsed again and the references follow it", func(t *testing.T) {
		root := fixture(t, "go")
		g := start(t, Config{Root: root})
		before := dump(g)
		if !has(before, "call Sum 11:10 -> cart/sum.go#Cart.Sum (resolved)") {
			t.Fatalf("fixture changed:\n%s", before)
		}
		writeFile(t, root, "cart/sum.go", "package cart\n\nfunc (c *Cart) Total() int {\n\treturn len(c.items)\n}\n")
		if err := g.Refresh(context.Background(), "cart/sum.go"); err != nil {
			t.Fatal(err)
		}
		after := dump(g)
		for _, line := range []string{
			"def method Cart.Total 3:0-5:1",
			// Cart has no Sum now: a guess among the methods so named
			"call Sum 11:10 -> cart/cart.go#Pricer.Sum (name)",
		} {
			if !has(after, line) {
				t.Errorf("after the edit, %q is missing:\n%s", line, after)
			}
		}
		if strings.Contains(after, "Cart.Sum") {
			t.Errorf("the old definition is still there:\n%s", after)
		}
	})
	t.Run("a change told through Changed is in the graph once Current returns", func(t *testing.T) {
		root := fixture(t, "go")
		g := start(t, Config{Root: root})
		writeFile(t, root, "cart/discount.go", "package cart\n\nfunc Discount(c *Cart) int { return c.Sum() / 10 }\n")
		g.Changed("cart/discount.go")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := g.Current(ctx); err != nil {
			t.Fatal(err)
		}
		if !has(dump(g), "def function Discount 3:0-3:50") {
			t.Errorf("the new file is not in the graph:\n%s", dump(g))
		}
	})
	t.Run("a deleted file and a deleted directory leave the graph", func(t *testing.T) {
		root := fixture(t, "go")
		g := start(t, Config{Root: root})
		if err := os.Remove(filepath.Join(root, "main.go")); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(root, "cart")); err != nil {
			t.Fatal(err)
		}
		if err := g.Refresh(context.Background(), "main.go", "cart"); err != nil {
			t.Fatal(err)
		}
		if st := g.Stats(); st.Files != 0 {
			t.Errorf("%d files left, want 0:\n%s", st.Files, dump(g))
		}
	})
	t.Run("a walk of the workspace cut short drops nothing", func(t *testing.T) {
		g := start(t, Config{Root: fixture(t, "go")})
		before := g.Stats().Files
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // the graph stopping while the walk runs
		g.refreshDir(ctx, ".")
		if st := g.Stats(); st.Files != before || before == 0 {
			t.Errorf("%d files left of %d after a walk of the root cut short", st.Files, before)
		}
	})
	t.Run("a file the walks do not show is never in the graph", func(t *testing.T) {
		root := fixture(t, "go")
		writeFile(t, root, ".gitignore", "gen/\n")
		writeFile(t, root, "gen/gen.go", "package gen\n\nfunc Generated() {}\n")
		writeFile(t, root, "secret/key.go", "package secret\n\nfunc Key() {}\n")
		g := start(t, Config{Root: root, Zones: api.Zones{Allow: []string{"**"}, Deny: []string{"secret/**", "**/.git/**"}}})
		d := dump(g)
		if strings.Contains(d, "gen/") || strings.Contains(d, "secret/") {
			t.Errorf("an ignored or denied file is in the graph:\n%s", d)
		}
		if err := g.Refresh(context.Background(), "gen/gen.go", "secret/key.go"); err != nil {
			t.Fatal(err)
		}
		g.SetContent("secret/key.go", "package secret\n\nfunc Other() {}\n")
		if d := dump(g); strings.Contains(d, "gen/") || strings.Contains(d, "secret/") {
			t.Errorf("a refresh brought an ignored or denied file in:\n%s", d)
		}
	})
	t.Run("a workspace with more source files than the bound is held up to it", func(t *testing.T) {
		g := start(t, Config{Root: fixture(t, "go"), MaxFiles: 2})
		if st := g.Stats(); st.Files != 2 {
			t.Errorf("%d files held, want 2", st.Files)
		}
	})
	t.Run("text agentls wrote is parsed as the file's, saved or not", func(t *testing.T) {
		root := fixture(t, "go")
		g := start(t, Config{Root: root})
		g.SetContent("cart/sum.go", "package cart\n\nfunc (c *Cart) Count() int { return len(c.items) }\n")
		if !has(dump(g), "def method Cart.Count 3:0-3:50") {
			t.Errorf("the written text is not in the graph:\n%s", dump(g))
		}
	})
}

func TestStore(t *testing.T) {
	t.Run("a restart reads the stored graph and parses nothing unchanged", func(t *testing.T) {
		root := fixture(t, "typescript")
		state := filepath.Join(t.TempDir(), "state", "codegraph.bin")
		first := startStopped(t, Config{Root: root, StateFile: state})
		if first.st.Parsed != 3 {
			t.Fatalf("first build parsed %d files, want 3", first.st.Parsed)
		}
		second := startStopped(t, Config{Root: root, StateFile: state})
		if second.st.Parsed != 0 || second.dump != first.dump {
			t.Errorf("the restart parsed %d files (want 0), and its graph differs:\n%s", second.st.Parsed, lineDiff(first.dump, second.dump))
		}
		// a file changed while agentls was not running is parsed again
		writeFile(t, root, "src/main.js", "function other() {}\n")
		future := time.Now().Add(time.Hour)
		if err := os.Chtimes(filepath.Join(root, "src", "main.js"), future, future); err != nil {
			t.Fatal(err)
		}
		third := startStopped(t, Config{Root: root, StateFile: state})
		if third.st.Parsed != 1 || !has(third.dump, "def function other 1:0-1:19") {
			t.Errorf("after a change while stopped: parsed %d (want 1):\n%s", third.st.Parsed, third.dump)
		}
	})
	t.Run("a damaged stored graph is built afresh", func(t *testing.T) {
		root := fixture(t, "typescript")
		state := filepath.Join(t.TempDir(), "codegraph.bin")
		good := startStopped(t, Config{Root: root, StateFile: state})
		data, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		for _, damaged := range [][]byte{data[:len(data)/2], append([]byte("x"), data[1:]...), []byte("not a graph")} {
			if err := os.WriteFile(state, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			again := startStopped(t, Config{Root: root, StateFile: state})
			if again.st.Parsed != 3 || again.dump != good.dump {
				t.Errorf("from a damaged file: parsed %d (want 3), graph:\n%s", again.st.Parsed, lineDiff(good.dump, again.dump))
			}
		}
	})
	t.Run("every record survives the round trip", func(t *testing.T) {
		for _, name := range []string{"go", "goscope", "python", "typescript", "rust", "java", "c"} {
			for _, inMemory := range []int64{-1, 1 << 30} {
				root := fixture(t, name)
				g := start(t, Config{Root: root})
				state := filepath.Join(t.TempDir(), "codegraph.bin")
				h := start(t, Config{Root: root, StateFile: state, InMemory: inMemory})
				if st := h.Stats(); st.InMemory != 0 {
					t.Errorf("%s: %d files in memory after the first build, want every one read from the stored graph", name, st.InMemory)
				}
				if dump(h) != dump(g) {
					t.Errorf("%s (in memory up to %d bytes): the stored graph differs from the graph in memory:\n%s", name, inMemory, lineDiff(dump(g), dump(h)))
				}
			}
		}
	})
}

type stopped struct {
	st   Stats
	dump string
}

// startStopped builds a graph, waits for it, stops it (which stores it)
// and returns what it held.
func startStopped(t *testing.T, cfg Config) stopped {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	s := stopped{st: g.Stats(), dump: dump(g)}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return s
}

func TestQueries(t *testing.T) {
	root := fixture(t, "go")
	g := start(t, Config{Root: root})
	ctx := context.Background()
	t.Run("a file's node has its definitions, imports and neighbours", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Path: "main.go"})
		if err != nil {
			t.Fatal(err)
		}
		edges := edgeSet(res)
		for _, e := range []string{
			"main.go defines main.go#total",
			"main.go imports module:fmt",
			"main.go imports cart/cart.go",
			"main.go references cart/cart.go",
			"main.go references cart/sum.go",
		} {
			if !edges[e] {
				t.Errorf("edge %q missing; edges: %v", e, res.Edges)
			}
		}
	})
	t.Run("a symbol's node has its callers and callees", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Symbol: "Cart.Add"})
		if err != nil {
			t.Fatal(err)
		}
		edges := edgeSet(res)
		for _, e := range []string{
			"cart/cart.go#Cart defines cart/cart.go#Cart.Add",
			"main.go#main calls cart/cart.go#Cart.Add",
		} {
			if !edges[e] {
				t.Errorf("edge %q missing; edges: %v", e, res.Edges)
			}
		}
		res, err = g.CodeGraph(ctx, Query{Symbol: "main", Path: "main.go"})
		if err != nil {
			t.Fatal(err)
		}
		edges = edgeSet(res)
		for _, e := range []string{"main.go#main calls cart/cart.go#New", "main.go#main calls main.go#total"} {
			if !edges[e] {
				t.Errorf("edge %q missing; edges: %v", e, res.Edges)
			}
		}
	})
	t.Run("depth follows callers of callers", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Symbol: "Cart.Sum", Depth: 2})
		if err != nil {
			t.Fatal(err)
		}
		edges := edgeSet(res)
		if !edges["main.go#total calls cart/sum.go#Cart.Sum"] || !edges["main.go#main calls main.go#total"] {
			t.Errorf("depth 2 edges missing: %v", res.Edges)
		}
	})
	t.Run("an unknown path or symbol is an error naming it", func(t *testing.T) {
		for _, q := range []Query{{Path: "nope.go"}, {Path: "README"}, {Symbol: "Nothing"}, {}} {
			_, err := g.CodeGraph(ctx, q)
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) {
				t.Errorf("%+v: err = %v, want ErrNotFound or ErrInvalid", q, err)
			}
		}
	})
}

func TestNeighbourCounts(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/hello\n\ngo 1.21\n")
	writeFile(t, root, "main.go", "package main\n\nfunc main() {\n\tprintln(greet(\"a\"), greet(\"b\"), greet(\"c\"))\n}\n")
	writeFile(t, root, "greet.go", "package main\n\nfunc greet(name string) string { return hi(name) + hi(\"!\") }\n")
	writeFile(t, root, "hi.go", "package main\n\ntype A struct{}\ntype B struct{}\n\nfunc (A) hi() {}\nfunc (B) hi() {}\n\nfunc hi(s string) string { return s }\n")
	g := start(t, Config{Root: root})
	ctx := context.Background()
	count := func(t *testing.T, path, from, to string) int {
		t.Helper()
		res, err := g.CodeGraph(ctx, Query{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Edges {
			if e.Kind == "references" && e.From == from && e.To == to {
				return e.Count
			}
		}
		t.Fatalf("no references edge %s -> %s in %v", from, to, res.Edges)
		return 0
	}
	t.Run("a file that references another three times counts three from either side", func(t *testing.T) {
		if n := count(t, "main.go", "main.go", "greet.go"); n != 3 {
			t.Errorf("main.go's neighbours: main.go -> greet.go counts %d, want 3", n)
		}
		if n := count(t, "greet.go", "main.go", "greet.go"); n != 3 {
			t.Errorf("greet.go's neighbours: main.go -> greet.go counts %d, want 3", n)
		}
	})
	t.Run("a name that resolves to three definitions of one file counts its references once", func(t *testing.T) {
		if n := count(t, "greet.go", "greet.go", "hi.go"); n != 2 {
			t.Errorf("greet.go's neighbours: greet.go -> hi.go counts %d, want 2", n)
		}
		if n := count(t, "hi.go", "greet.go", "hi.go"); n != 2 {
			t.Errorf("hi.go's neighbours: greet.go -> hi.go counts %d, want 2", n)
		}
	})
}

func edgeSet(res *api.CodeGraphResult) map[string]bool {
	m := map[string]bool{}
	for _, e := range res.Edges {
		m[e.From+" "+e.Kind+" "+e.To] = true
	}
	return m
}

func TestRepoMap(t *testing.T) {
	root := fixture(t, "repomap")
	g := start(t, Config{Root: root})
	ctx := context.Background()
	t.Run("the most referenced definitions come first", func(t *testing.T) {
		m, err := g.RepoMap(ctx, RepoMapOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(m), "\n")
		if len(lines) < 3 || lines[0] != "store.go:" {
			t.Fatalf("the map does not start with store.go:\n%s", m)
		}
		for _, want := range []string{"type Store struct", "func (s *Store) Get(k string) string", "func (s *Store) Put(k, v string)"} {
			if !strings.Contains(strings.Join(lines[:5], "\n"), want) {
				t.Errorf("%q is not among store.go's first lines:\n%s", want, m)
			}
		}
		if a, c := strings.Index(m, "audit.go:"), strings.Index(m, "cache.go:"); a < 0 || c < 0 || a < c {
			t.Errorf("audit.go, which nobody uses, is not shown after cache.go, which users.go uses:\n%s", m)
		}
	})
	t.Run("a name the prompt mentions moves up", func(t *testing.T) {
		m, err := g.RepoMap(ctx, RepoMapOptions{Prompt: "Add a filter to AuditTrail"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(m, "audit.go:\n") {
			t.Errorf("the map does not start with audit.go:\n%s", m)
		}
	})
	t.Run("heat moves a file up", func(t *testing.T) {
		m, err := g.RepoMap(ctx, RepoMapOptions{Heat: map[string]float64{"orders.go": 1}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Index(m, "orders.go:") > strings.Index(m, "users.go:") {
			t.Errorf("orders.go, which is hot, ranks after users.go:\n%s", m)
		}
	})
	t.Run("the map fits its budget", func(t *testing.T) {
		for _, tokens := range []int{20, 60, 1024} {
			m, err := g.RepoMap(ctx, RepoMapOptions{Tokens: tokens})
			if err != nil {
				t.Fatal(err)
			}
			if len(m) > tokens*4 {
				t.Errorf("%d tokens: %d characters, more than %d", tokens, len(m), tokens*4)
			}
			if tokens >= 60 && m == "" {
				t.Errorf("%d tokens: an empty map", tokens)
			}
		}
	})
}

func TestRepoMapWeighsGuessesLess(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m\n\ngo 1.22\n")
	writeFile(t, root, "a/a.go", "package a\n\ntype Known struct{}\n\nfunc (Known) Run() {}\n")
	writeFile(t, root, "b/b.go", "package b\n\ntype Guess struct{}\n\nfunc (Guess) Start() {}\n")
	// c resolves k.Run to a (k's type shows) three times, and can only
	// guess that f().Start is b's, ten times
	writeFile(t, root, "c/c.go", "package c\n\nimport \"example.com/m/a\"\n\nfunc Use(k a.Known, f func() interface{ Start() }) {\n"+
		strings.Repeat("\tk.Run()\n", 3)+strings.Repeat("\tf().Start()\n", 10)+"}\n")
	g := start(t, Config{Root: root})
	m, err := g.RepoMap(context.Background(), RepoMapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := strings.Index(m, "a/a.go:"), strings.Index(m, "b/b.go:"); a < 0 || b < 0 || a > b {
		t.Errorf("a/a.go, which c resolves to 4 times, ranks after b/b.go, which it guesses 10 times:\n%s", m)
	}
}

// TestBuildStopsWithItsContext ends a build while the walk is still
// handing files to the parser: Run returns, and neither the walk nor a
// parsing goroutine is left waiting on the other.
func TestBuildStopsWithItsContext(t *testing.T) {
	root := t.TempDir()
	const body = "func f%[1]d_%[2]d(x int) int { return x + %[2]d }\n"
	for i := range 400 {
		dir := filepath.Join(root, "p"+strconv.Itoa(i/100))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var text strings.Builder
		text.WriteString("package p\n\n")
		for j := range 400 {
			fmt.Fprintf(&text, body, i, j)
		}
		if err := os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)+".go"), []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g, err := New(Config{Root: root, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	// the walk is far quicker than the parse: by the 100th file parsed, it
	// is waiting to hand over the next
	for deadline := time.Now().Add(time.Minute); g.Stats().Parsed < 100; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the build parsed %d files", g.Stats().Parsed)
		}
	}
	for range 1000 {
		runtime.Gosched() // let the walk come back to its next hand-over
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Log("the build ended before its context did")
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run: %v, want the context's end", err)
		}
	case <-time.After(time.Minute):
		buf := make([]byte, 1<<20)
		t.Fatalf("Run did not return after its context ended:\n%s", buf[:runtime.Stack(buf, true)])
	}
	// the parsing goroutines end with Run; give them a moment to be gone
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, "codegraph.(*Graph).parseFrom") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("parsing goroutines left after Run:\n%s", stacks)
		}
	}
}
