// Command graph measures the code graph on a tree (docs/BENCHMARKS.md,
// scripts/bench-graph.sh). It prints one "name value unit" line per figure.
//
//   - -mode index: a full index with every core, written to the state file
//     as it parses; then the update of one changed file; then edits told
//     while the graph is being stored (the delay until each is in the
//     graph); then the repo map and two queries. The peak resident memory
//     of each phase is printed with it (rss_*: the high-water mark, reset
//     at the phase's start).
//   - -mode load: a process that starts from the stored graph: the time
//     from its start to the first agent/codeGraph answer, to the graph
//     being read, and to the walk that checks it being done.
//   - -mode restart: agentls itself (-agentls), started on the tree with
//     its state directory (-state, a directory) as an editor starts it:
//     the time from the process's start, and from initialize, to the
//     first agent/codeGraph answer (restart.go).
//   - -mode refs: how true its Go references are against an oracle
//     (refs.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentls/agentls/codegraph"
)

func main() {
	tree := flag.String("tree", "", "the tree to index (required)")
	state := flag.String("state", "", "the state file; for -mode restart, the state directory (default: a temporary one, removed)")
	workers := flag.Int("workers", 0, "parsing goroutines (0: GOMAXPROCS)")
	mode := flag.String("mode", "index", "index, load, restart or refs (the package comment)")
	drawn := flag.Int("names", 20, "refs: how many exported names to draw besides fmt.Errorf, io.Reader and strings.Builder")
	seed := flag.Uint64("seed", 1, "refs: the seed of the draw")
	update := flag.String("update", "", "the workspace-relative file to change for the update figures, and to ask about (default: the Go file at the 90th percentile of size)")
	symbol := flag.String("symbol", "io.Reader", "the symbol the queries ask about")
	inMemory := flag.Int64("inmemory", 0, "codegraph.Config.InMemory (0: its default)")
	agentls := flag.String("agentls", "", "restart: the agentls binary")
	runs := flag.Int("runs", 5, "restart: how many starts")
	editorWatches := flag.Bool("editorwatches", false, "restart: the client watches files for agentls (as VS Code does), so agentls does not watch the disk")
	profile := flag.String("cpuprofile", "", "write a CPU profile here (-mode load: to the first answer)")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fail(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *tree == "" {
		fmt.Fprintln(os.Stderr, "graph: -tree is required")
		os.Exit(2)
	}
	stateFile := *state
	if stateFile == "" {
		dir, err := os.MkdirTemp("", "agentls-graph-bench-")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		stateFile = filepath.Join(dir, "codegraph.bin")
		if *mode == "restart" {
			stateFile = dir
		}
	}
	o := options{tree: *tree, state: stateFile, workers: *workers, update: *update, symbol: *symbol, inMemory: *inMemory}
	var err error
	switch *mode {
	case "index":
		err = index(o)
	case "load":
		err = load(o)
	case "restart":
		err = restart(o, *agentls, *runs, *editorWatches)
	case "refs":
		err = refs(*tree, *drawn, *seed)
	default:
		err = fmt.Errorf("unknown -mode %q", *mode)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fail(err)
	}
}

type options struct {
	tree, state, update, symbol string
	workers                     int
	inMemory                    int64
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "graph:", err)
	os.Exit(1)
}

// newGraph makes the graph of the benchmark. A change is stored at once
// (SaveDelay of a nanosecond): the edits of index's store phase each find
// a store being written.
func newGraph(o options) (*codegraph.Graph, error) {
	return codegraph.New(codegraph.Config{Root: o.tree, StateFile: o.state, Workers: o.workers, SaveDelay: time.Nanosecond, InMemory: o.inMemory})
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func index(o options) error {
	g, err := newGraph(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)

	// the index, from nothing
	resetPeak()
	cpu0 := cpuTime()
	start := time.Now()
	go func() { done <- g.Run(ctx) }()
	if err := g.Current(ctx); err != nil {
		return err
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	st := g.Stats()
	fmt.Printf("workers %d\n", effective(o.workers))
	fmt.Printf("files %d\n", st.Files)
	fmt.Printf("definitions %d\n", st.Symbols)
	fmt.Printf("index_wall %.3f s\n", wall.Seconds())
	fmt.Printf("index_cpu %.3f s\n", cpu.Seconds())
	fmt.Printf("rss_index %.1f MiB\n", rssPeakMiB())
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Printf("heap_after_index %.1f MiB\n", float64(m.HeapAlloc)/(1<<20))
	fmt.Printf("stored_after_index %d files\n", st.Files-st.InMemory)

	update := o.update
	if update == "" {
		update = typicalGo(o.tree, g)
	}
	if update == "" {
		return fmt.Errorf("no Go file to change in %s", o.tree)
	}
	abs := filepath.Join(o.tree, filepath.FromSlash(update))
	orig, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	defer os.WriteFile(abs, orig, 0o644)
	edit := func(i int) error {
		text := append(append([]byte{}, orig...), []byte("\nfunc benchAdded"+strconv.Itoa(i)+"() {}\n")...)
		return os.WriteFile(abs, text, 0o644)
	}

	// one file's update, 20 times, the file's text changing each time
	resetPeak()
	var times []time.Duration
	for i := 0; i < 20; i++ {
		if err := edit(i); err != nil {
			return err
		}
		t0 := time.Now()
		if err := g.Refresh(ctx, update); err != nil {
			return err
		}
		times = append(times, time.Since(t0))
	}
	fmt.Printf("update_file %s (%d bytes)\n", update, len(orig))
	fmt.Printf("update_median %s\n", ms(median(times)))
	fmt.Printf("update_max %s\n", ms(slicesMax(times)))
	fmt.Printf("rss_update %.1f MiB\n", rssPeakMiB())

	// edits told while the graph is stored: each change is stored at once
	// (SaveDelay), so the next edit arrives while a store is written; the
	// delay is from the change told to the graph holding it
	resetPeak()
	stores0 := g.Stats().Stores
	times, during := times[:0], 0
	var storeTimes []time.Duration
	for i := 0; during < 20 && i < 400; i++ {
		if err := edit(100 + i); err != nil {
			return err
		}
		storing := g.Stats().Storing
		t0 := time.Now()
		g.Changed(update)
		if err := g.Current(ctx); err != nil {
			return err
		}
		d := time.Since(t0)
		if storing {
			during++
			times = append(times, d)
		}
		if st := g.Stats(); st.LastStore > 0 && (len(storeTimes) == 0 || storeTimes[len(storeTimes)-1] != st.LastStore) {
			storeTimes = append(storeTimes, st.LastStore)
		}
		time.Sleep(5 * time.Millisecond) // a person's edits are apart; the store goes on meanwhile
	}
	// the last store of the phase, to its end: its time is the store's
	for st := g.Stats(); st.Storing || st.Stores == stores0; st = g.Stats() {
		time.Sleep(time.Millisecond)
	}
	if st := g.Stats(); len(storeTimes) == 0 || storeTimes[len(storeTimes)-1] != st.LastStore {
		storeTimes = append(storeTimes, st.LastStore)
	}
	stores := g.Stats().Stores - stores0
	if during > 0 {
		fmt.Printf("edit_during_store_n %d\n", during)
		fmt.Printf("edit_during_store_median %s\n", ms(median(times)))
		fmt.Printf("edit_during_store_max %s\n", ms(slicesMax(times)))
	}
	if len(storeTimes) > 0 {
		fmt.Printf("store_median %s\n", ms(median(storeTimes)))
	}
	fmt.Printf("stores %d\n", stores)
	fmt.Printf("rss_store %.1f MiB\n", rssPeakMiB())
	if err := os.WriteFile(abs, orig, 0o644); err != nil {
		return err
	}
	if err := g.Refresh(ctx, update); err != nil {
		return err
	}

	// the repo map, first after a change and next
	resetPeak()
	t0, c0 := time.Now(), cpuTime()
	if _, err = g.RepoMap(ctx, codegraph.RepoMapOptions{Prompt: "fix the parser"}); err != nil {
		return err
	}
	fmt.Printf("repomap_first_wall %.1f ms\n", float64(time.Since(t0).Microseconds())/1000)
	fmt.Printf("repomap_first_cpu %.1f ms\n", float64((cpuTime()-c0).Microseconds())/1000)
	t0, c0 = time.Now(), cpuTime()
	_, _ = g.RepoMap(ctx, codegraph.RepoMapOptions{Prompt: "add a test"})
	fmt.Printf("repomap_next_wall %.1f ms\n", float64(time.Since(t0).Microseconds())/1000)
	fmt.Printf("repomap_next_cpu %.1f ms\n", float64((cpuTime()-c0).Microseconds())/1000)
	fmt.Printf("rss_repomap %.1f MiB\n", rssPeakMiB())

	// a file's query and a symbol's, as agent/codeGraph asks them
	resetPeak()
	t0 = time.Now()
	if _, err := g.CodeGraph(ctx, codegraph.Query{Path: update}); err != nil {
		return err
	}
	fmt.Printf("query_file %s\n", ms(time.Since(t0)))
	t0 = time.Now()
	if _, err := g.CodeGraph(ctx, codegraph.Query{Symbol: o.symbol}); err != nil {
		return err
	}
	fmt.Printf("query_symbol %s\n", ms(time.Since(t0)))
	fmt.Printf("rss_query %.1f MiB\n", rssPeakMiB())

	cancel()
	if err := <-done; err != nil {
		return err
	}
	if fi, err := os.Stat(o.state); err == nil {
		fmt.Printf("stored_size %.1f MiB\n", float64(fi.Size())/(1<<20))
	}
	return nil
}

// load starts from the stored graph: the time from the process's start
// (as close as Go lets it see: main's start) to the first answer, to the
// graph read, and to the walk that checks it.
func load(o options) error {
	start := processStart()
	g, err := newGraph(o)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	q := codegraph.Query{Symbol: o.symbol}
	if o.update != "" {
		q = codegraph.Query{Path: o.update}
	}
	if _, err := g.CodeGraph(ctx, q); err != nil {
		return err
	}
	answer, answerCPU := time.Since(start), cpuTime()
	pprof.StopCPUProfile() // -cpuprofile: the start to the first answer, which load is about
	if err := g.Ready(ctx); err != nil {
		return err
	}
	rssAnswer := rssPeakMiB()
	if err := g.Current(ctx); err != nil {
		return err
	}
	current := time.Since(start)
	fmt.Printf("load_answer %.1f ms\n", float64(answer.Microseconds())/1000)
	fmt.Printf("load_answer_cpu %.1f ms\n", float64(answerCPU.Microseconds())/1000)
	fmt.Printf("load_current %.1f ms\n", float64(current.Microseconds())/1000)
	fmt.Printf("load_current_cpu %.1f ms\n", float64(cpuTime().Microseconds())/1000)
	fmt.Printf("rss_load_answer %.1f MiB\n", rssAnswer)
	fmt.Printf("rss_load %.1f MiB\n", rssPeakMiB())
	fmt.Printf("files %d\n", g.Stats().Files)
	cancel()
	return <-done
}

func effective(workers int) int {
	if workers > 0 {
		return workers
	}
	return runtime.GOMAXPROCS(0)
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration{}, ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func slicesMax(ds []time.Duration) time.Duration {
	m := time.Duration(0)
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

// typicalGo is the parsed Go file at the 90th percentile of size: larger
// than most a person edits, not a generated giant.
func typicalGo(tree string, g *codegraph.Graph) string {
	type sized struct {
		rel  string
		size int64
	}
	var all []sized
	_ = filepath.WalkDir(tree, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(tree, p)
		rel = filepath.ToSlash(rel)
		if f := g.File(rel); f != nil && f.Err == "" {
			all = append(all, sized{rel, f.Size})
		}
		return nil
	})
	if len(all) == 0 {
		return ""
	}
	sort.Slice(all, func(i, j int) bool {
		return all[i].size < all[j].size || (all[i].size == all[j].size && all[i].rel < all[j].rel)
	})
	return all[len(all)*9/10].rel
}
