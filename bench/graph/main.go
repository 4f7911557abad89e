// Command graph measures the code graph on a tree (docs/BENCHMARKS.md,
// scripts/bench-graph.sh): a full index with every core, the heap and the
// resident memory after it, the incremental update of one changed file,
// and the start of a second process from the stored graph; with -mode
// refs, how true its Go references are against an oracle (refs.go). It
// prints one "name value unit" line per figure.
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
	state := flag.String("state", "", "the state file (default: a temporary one, removed)")
	workers := flag.Int("workers", 0, "parsing goroutines (0: GOMAXPROCS)")
	mode := flag.String("mode", "index", "index: build from nothing, store, update one file; load: start from the stored graph; refs: the references' precision and recall against go/ast")
	drawn := flag.Int("names", 20, "refs: how many exported names to draw besides fmt.Errorf, io.Reader and strings.Builder")
	seed := flag.Uint64("seed", 1, "refs: the seed of the draw")
	update := flag.String("update", "", "the workspace-relative file to change for the update figure (default: the Go file at the 90th percentile of size)")
	profile := flag.String("cpuprofile", "", "write a CPU profile here")
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
	}
	var err error
	switch *mode {
	case "index":
		err = index(*tree, stateFile, *workers, *update)
	case "load":
		err = load(*tree, stateFile, *workers)
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "graph:", err)
	os.Exit(1)
}

func newGraph(tree, state string, workers int) (*codegraph.Graph, error) {
	return codegraph.New(codegraph.Config{Root: tree, StateFile: state, Workers: workers, SaveDelay: time.Hour})
}

func index(tree, state string, workers int, update string) error {
	g, err := newGraph(tree, state, workers)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	cpu0 := cpuTime()
	start := time.Now()
	go func() { done <- g.Run(ctx) }()
	if err := g.Current(ctx); err != nil {
		return err
	}
	wall, cpu := time.Since(start), cpuTime()-cpu0
	st := g.Stats()
	fmt.Printf("workers %d\n", effective(workers))
	fmt.Printf("files %d\n", st.Files)
	fmt.Printf("definitions %d\n", st.Symbols)
	fmt.Printf("index_wall %.3f s\n", wall.Seconds())
	fmt.Printf("index_cpu %.3f s\n", cpu.Seconds())
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("heap_after_index %.1f MiB\n", float64(ms.HeapAlloc)/(1<<20))
	fmt.Printf("rss_peak %.1f MiB\n", rssPeakMiB())
	// the incremental update of one file, 20 times, the file's text
	// changing each time
	if update == "" {
		update = typicalGo(tree, g)
	}
	if update != "" {
		abs := filepath.Join(tree, filepath.FromSlash(update))
		orig, err := os.ReadFile(abs)
		if err != nil {
			return err
		}
		defer os.WriteFile(abs, orig, 0o644)
		var times []time.Duration
		for i := 0; i < 20; i++ {
			text := append(append([]byte{}, orig...), []byte("\nfunc benchAdded"+strconv.Itoa(i)+"() {}\n")...)
			if err := os.WriteFile(abs, text, 0o644); err != nil {
				return err
			}
			t0 := time.Now()
			if err := g.Refresh(ctx, update); err != nil {
				return err
			}
			times = append(times, time.Since(t0))
		}
		if err := os.WriteFile(abs, orig, 0o644); err != nil {
			return err
		}
		if err := g.Refresh(ctx, update); err != nil {
			return err
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		fmt.Printf("update_file %s (%d bytes)\n", update, len(orig))
		fmt.Printf("update_median %.2f ms\n", float64(times[len(times)/2].Microseconds())/1000)
		fmt.Printf("update_max %.2f ms\n", float64(times[len(times)-1].Microseconds())/1000)
	}
	t0, c0 := time.Now(), cpuTime()
	_, err = g.RepoMap(ctx, codegraph.RepoMapOptions{Prompt: "fix the parser"})
	if err != nil {
		return err
	}
	fmt.Printf("repomap_first_wall %.1f ms\n", float64(time.Since(t0).Microseconds())/1000)
	fmt.Printf("repomap_first_cpu %.1f ms\n", float64((cpuTime()-c0).Microseconds())/1000)
	t0, c0 = time.Now(), cpuTime()
	_, _ = g.RepoMap(ctx, codegraph.RepoMapOptions{Prompt: "add a test"})
	fmt.Printf("repomap_next_wall %.1f ms\n", float64(time.Since(t0).Microseconds())/1000)
	fmt.Printf("repomap_next_cpu %.1f ms\n", float64((cpuTime()-c0).Microseconds())/1000)
	cancel()
	if err := <-done; err != nil {
		return err
	}
	fi, err := os.Stat(state)
	if err == nil {
		fmt.Printf("stored_size %.1f MiB\n", float64(fi.Size())/(1<<20))
	}
	return nil
}

func load(tree, state string, workers int) error {
	start := time.Now()
	g, err := newGraph(tree, state, workers)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	if err := g.Ready(ctx); err != nil {
		return err
	}
	ready, readyCPU := time.Since(start), cpuTime()
	if err := g.Current(ctx); err != nil {
		return err
	}
	current := time.Since(start)
	fmt.Printf("load_ready %.1f ms\n", float64(ready.Microseconds())/1000)
	fmt.Printf("load_ready_cpu %.1f ms\n", float64(readyCPU.Microseconds())/1000)
	fmt.Printf("load_current_cpu %.1f ms\n", float64(cpuTime().Microseconds())/1000)
	fmt.Printf("load_current %.1f ms\n", float64(current.Microseconds())/1000)
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

func rssPeakMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
