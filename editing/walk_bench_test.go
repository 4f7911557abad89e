package editing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
)

// benchTree writes a repository-like tree under root: 20 packages of 5
// directories with 10 Go files each (1000 visible files of about 1.5 KiB),
// a .gitignore at the root and in every package, an ignored node_modules
// and build output (2000 files the walks must not enter), and a .git
// directory with 500 objects.
func benchTree(tb testing.TB, root string) {
	tb.Helper()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	var body strings.Builder
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&body, "func helper%d(x int) int { return x + %d } // some words here\n", i, i)
	}
	write(".gitignore", "node_modules/\n/build\n*.log\n!important.log\n")
	for p := 0; p < 20; p++ {
		write(fmt.Sprintf("pkg%02d/.gitignore", p), "gen/\n*.tmp\n")
		for d := 0; d < 5; d++ {
			for f := 0; f < 10; f++ {
				write(fmt.Sprintf("pkg%02d/d%d/f%d.go", p, d, f),
					fmt.Sprintf("package d%d\n\n// File%d%d%d is here.\n%s", d, p, d, f, body.String()))
			}
		}
		write(fmt.Sprintf("pkg%02d/gen/gen.go", p), "package gen\n")
		write(fmt.Sprintf("pkg%02d/x.tmp", p), "tmp\n")
	}
	for i := 0; i < 1000; i++ {
		write(fmt.Sprintf("node_modules/m%d/index.js", i), "module.exports = 1\n")
		write(fmt.Sprintf("build/o%d/out.go", i), "package out\n")
	}
	for i := 0; i < 500; i++ {
		write(fmt.Sprintf(".git/objects/%02x/%038d", i%256, i), "blob\n")
	}
}

// BenchmarkWalk measures list_files and search_files over benchTree: the
// whole walk (ignore files read, zones checked, every entry judged). Besides
// the wall time it reports cpu-ns/op, the CPU time of the process per walk,
// which other work on a shared machine disturbs less.
func BenchmarkWalk(b *testing.B) {
	root := b.TempDir()
	benchTree(b, root)
	ws, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps()),
		Zones: api.Zones{Deny: []string{"**/.git/**", "pkg19/**"}},
		// Count every match, so each walk goes to the end.
		Limits: Limits{ListEntries: 100000, SearchMatches: 100000}})
	if err != nil {
		b.Fatal(err)
	}
	a := ws.Task("t", "bench", api.EditApply).Agent("1")
	ctx := context.Background()
	for _, c := range []struct {
		name, pattern string
		want          int
	}{
		{"list_all", "", 19*51 + 1},
		{"list_go", "*.go", 19 * 50},
		{"list_one_dir", "pkg03/**", 51},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			defer reportCPU(b, &n)()
			for b.Loop() {
				n++
				r, err := a.List(ctx, c.pattern)
				if err != nil || len(r.Paths) != c.want {
					b.Fatalf("List(%q) = %d paths, %v; want %d", c.pattern, len(r.Paths), err, c.want)
				}
			}
		})
	}
	for _, c := range []struct {
		name, regex, glob string
		want              int
	}{
		{"search_rare", `File312\b`, "", 1},
		{"search_common", `helper3\(`, "*.go", 19 * 50},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			defer reportCPU(b, &n)()
			for b.Loop() {
				n++
				r, err := a.Search(ctx, c.regex, c.glob)
				if err != nil || len(r.Matches) != c.want {
					b.Fatalf("Search(%q, %q) = %d matches, %v; want %d", c.regex, c.glob, len(r.Matches), err, c.want)
				}
			}
		})
	}
}

// reportCPU starts measuring CPU time; the function it returns reports it
// per op (*n of them), where the platform can measure it.
func reportCPU(b *testing.B, n *int) func() {
	start, ok := cpuTime()
	return func() {
		end, ok2 := cpuTime()
		if ok && ok2 && *n > 0 {
			b.ReportMetric(float64(end-start)/float64(*n), "cpu-ns/op")
		}
	}
}
