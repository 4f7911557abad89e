package editing

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genFile returns a Go-like file of n lines: mostly distinct statements with
// the braces and blank lines that make real code repetitive.
func genFile(n int, seed int64) string {
	rng := rand.New(rand.NewSource(seed))
	var sb strings.Builder
	for i := 0; i < n; i++ {
		switch {
		case i%12 == 0:
			fmt.Fprintf(&sb, "func f%d(x int) int {\n", i)
		case i%12 == 10:
			sb.WriteString("}\n")
		case i%12 == 11:
			sb.WriteString("\n")
		case i%12 == 5:
			sb.WriteString("\tif x > 0 {\n")
		case i%12 == 7:
			sb.WriteString("\t}\n")
		default:
			fmt.Fprintf(&sb, "\tx += %d // %08x\n", i, rng.Uint32())
		}
	}
	return sb.String()
}

// mutate changes about k lines of text at random places, each replaced,
// deleted or preceded by a new line, in one pass.
func mutate(rng *rand.Rand, text string, k int) string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		if k == 0 {
			return text
		}
		return "new\n"
	}
	p := float64(k) / float64(len(lines))
	var sb strings.Builder
	for _, l := range lines {
		if rng.Float64() >= p {
			sb.WriteString(l)
			continue
		}
		switch rng.Intn(4) {
		case 0:
			fmt.Fprintf(&sb, "\tinserted(%d)\n", rng.Int())
			sb.WriteString(l)
		case 1:
		default:
			fmt.Fprintf(&sb, "\tchanged(%d)\n", rng.Int())
		}
	}
	return sb.String()
}

// benchPair returns a file of n lines and a copy with changes on k of them.
func benchPair(n, k int) (string, string) {
	old := genFile(n, 1)
	return old, mutate(rand.New(rand.NewSource(2)), old, k)
}

// repetitivePair returns n lines drawn from five, so no line is unique and
// only the bounded Myers search can align them, and a copy with k changes.
func repetitivePair(n, k int) (string, string) {
	rng := rand.New(rand.NewSource(3))
	atoms := []string{"}\n", "\n", "\treturn nil\n", "\t}\n", "x\n"}
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(atoms[rng.Intn(len(atoms))])
	}
	old := sb.String()
	lines := strings.SplitAfter(old, "\n")
	for ; k > 0; k-- {
		lines[rng.Intn(len(lines)-1)] = atoms[rng.Intn(len(atoms))]
	}
	return old, strings.Join(lines, "")
}

var benchCases = []struct {
	name  string
	lines int
	pair  func() (string, string)
}{
	{"10k_lines_10_changes", 10_000, func() (string, string) { return benchPair(10_000, 10) }},
	{"10k_lines_10pct", 10_000, func() (string, string) { return benchPair(10_000, 1_000) }},
	{"10k_lines_all_changed", 10_000, func() (string, string) { return benchPair(10_000, 10_000) }},
	{"50k_lines_10pct", 50_000, func() (string, string) { return benchPair(50_000, 5_000) }},
	{"100k_lines_10pct", 100_000, func() (string, string) { return benchPair(100_000, 10_000) }},
	{"100k_lines_all_changed", 100_000, func() (string, string) { return benchPair(100_000, 100_000) }},
	{"100k_lines_repetitive_10pct", 100_000, func() (string, string) { return repetitivePair(100_000, 10_000) }},
}

// BenchmarkDiff measures the whole change computation an edit costs: the
// line diff, the UTF-16 TextEdits (refined to words) and the unified diff.
// Besides the wall time it reports cpu-ns/op, the CPU time of the process
// per change, steadier on a shared machine.
func BenchmarkDiff(b *testing.B) {
	for _, c := range benchCases {
		old, new := c.pair()
		if dir := os.Getenv("AGENTLS_BENCH_DIFF_DIR"); dir != "" {
			// scripts/bench-diff.sh compares with git diff on the same files
			_ = os.WriteFile(filepath.Join(dir, c.name+".old"), []byte(old), 0o644)
			_ = os.WriteFile(filepath.Join(dir, c.name+".new"), []byte(new), 0o644)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			defer reportCPU(b, &n)()
			for b.Loop() {
				n++
				d := ComputeDiff(old, new)
				_ = d.TextEdits()
				_ = d.Unified("a/f", "b/f")
			}
		})
	}
}

func TestBenchInputsDiffExactly(t *testing.T) {
	for _, c := range benchCases {
		if testing.Short() && c.lines > 10_000 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			old, new := c.pair()
			checkDiff(t, old, new)
		})
	}
}
