package main

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// figID names a figure of the benchmark.
type figID int

const (
	figPing figID = iota
	figPingP50
	figPingP99
	figInflight
	figPayload
	figSpawn
	figRSSIdle
	figRSSAfter
	figHWM
	figCPUPing
	figCPUInflight
	figCPUPayload
	numFigs
)

// figInfo says how a figure reads: its label and unit, which way is better,
// and how many decimals it deserves.
type figInfo struct {
	label        string
	short        string // for the per-round lines
	higherBetter bool
	decimals     int
}

var figs = [numFigs]figInfo{
	figPing:        {"agent/ping sequential (req/s)", "ping/s", true, 0},
	figPingP50:     {"agent/ping p50 latency (µs)", "p50µs", false, 1},
	figPingP99:     {"agent/ping p99 latency (µs)", "p99µs", false, 1},
	figInflight:    {"64 in flight (req/s)", "64fl/s", true, 0},
	figPayload:     {"1 MiB round trips (/s)", "1MiB/s", true, 1},
	figSpawn:       {"spawn to initialize reply (ms)", "spawn-ms", false, 2},
	figRSSIdle:     {"RSS idle after initialize (MB)", "rss-idle", false, 1},
	figRSSAfter:    {"RSS after 1 MiB traffic (MB)", "rss-after", false, 1},
	figHWM:         {"VmHWM, peak RSS (MB)", "hwm", false, 1},
	figCPUPing:     {"server CPU per sequential ping (µs)", "cpu/ping", false, 1},
	figCPUInflight: {"server CPU per in-flight ping (µs)", "cpu/fl", false, 1},
	figCPUPayload:  {"server CPU per 1 MiB round trip (µs)", "cpu/1MiB", false, 0},
}

// target is one goal of the benchmark for the server under test: a ratio to
// the baseline at least min, or a value at most max (below max when strict).
type target struct {
	fig    figID
	ratio  bool
	limit  float64
	strict bool
	text   string
}

var targets = []target{
	{figPing, true, 2, false, "≥2x"},
	{figPingP99, false, 200, true, "<200 µs"},
	{figInflight, true, 3, false, "≥3x"},
	{figPayload, true, 1.5, false, "≥1.5x"},
	{figSpawn, false, 10, false, "≤10 ms"},
	{figRSSIdle, false, 10, false, "≤10 MB"},
	{figRSSAfter, false, 30, false, "≤30 MB"},
}

// verdict says whether v (and its ratio to the baseline) meets t.
func (t target) verdict(v, ratio float64) string {
	x := v
	if t.ratio {
		x = ratio
	}
	if math.IsNaN(x) {
		return "n/a"
	}
	ok := x <= t.limit
	switch {
	case t.ratio:
		ok = x >= t.limit
	case t.strict:
		ok = x < t.limit
	}
	if ok {
		return "met"
	}
	if t.ratio {
		return fmt.Sprintf("missed (%.2fx)", x)
	}
	return fmt.Sprintf("missed by %.0f%%", (x/t.limit-1)*100)
}

// results are the samples of a run, per server, in the order of the servers.
type results struct {
	servers  []serverSpec
	samples  [][]sample // [server][round]
	errs     []error    // the error that stopped a server, if any
	baseline int        // index of the baseline server, -1 when absent
	target   int        // index of the server the targets apply to, -1 when absent
}

// medians returns the median over rounds of each figure of server i.
func (r *results) medians(i int) sample {
	out := newSample()
	for f := range numFigs {
		vals := make([]float64, 0, len(r.samples[i]))
		for _, s := range r.samples[i] {
			vals = append(vals, s[f])
		}
		out[f] = median(vals)
	}
	return out
}

// pairedRatio is the median over rounds of server i's figure f divided by the
// baseline's in the same round. Rounds are interleaved, so a slow spell of
// the machine weighs on both sides of each ratio; the median of the ratios
// keeps that out better than the ratio of the medians. A server that failed
// stops, so round k is index k of both sample lists.
func (r *results) pairedRatio(i int, f figID) float64 {
	if r.baseline < 0 {
		return math.NaN()
	}
	n := min(len(r.samples[i]), len(r.samples[r.baseline]))
	rs := make([]float64, 0, n)
	for k := range n {
		rs = append(rs, ratio(r.samples[i][k][f], r.samples[r.baseline][k][f]))
	}
	return median(rs)
}

func ratio(v, base float64) float64 {
	if math.IsNaN(v) || math.IsNaN(base) || base == 0 {
		return math.NaN()
	}
	return v / base
}

func formatValue(f figID, v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", figs[f].decimals, v)
}

// cell is a figure's value with its ratio to the baseline, e.g. "1234 (1.65x)".
func cell(f figID, v, base float64, isBaseline bool) string {
	return cellRatio(f, v, ratio(v, base), isBaseline)
}

func cellRatio(f figID, v, r float64, isBaseline bool) string {
	s := formatValue(f, v)
	if !isBaseline && !math.IsNaN(r) {
		s += fmt.Sprintf(" (%.2fx)", r)
	}
	return s
}

// roundLine is the one-line summary of a server's round.
func roundLine(name string, s, base sample, isBaseline bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-22s", name)
	for _, f := range []figID{figPing, figPingP50, figPingP99, figInflight, figPayload, figSpawn, figRSSIdle, figRSSAfter} {
		fmt.Fprintf(&b, " %s %s", figs[f].short, cell(f, s[f], base[f], isBaseline))
	}
	return b.String()
}

// table builds the final table: a row per figure, a column per server with
// the median over rounds and the median of its per-round ratios to the
// baseline, and the targets of the server under test.
func (r *results) table() [][]string {
	head := []string{"figure (median of rounds)"}
	for i, s := range r.servers {
		h := s.Name
		if i == r.baseline {
			h += " (baseline)"
		}
		head = append(head, h)
	}
	if r.target >= 0 {
		head = append(head, "target for "+r.servers[r.target].Name, "verdict")
	}
	rows := [][]string{head}
	med := make([]sample, len(r.servers))
	for i := range r.servers {
		med[i] = r.medians(i)
	}
	for f := range numFigs {
		row := []string{figs[f].label}
		for i := range r.servers {
			if len(r.samples[i]) == 0 {
				row = append(row, "failed")
				continue
			}
			row = append(row, cellRatio(f, med[i][f], r.pairedRatio(i, f), i == r.baseline))
		}
		if r.target >= 0 {
			goal, verdict := "", ""
			for _, t := range targets {
				if t.fig == f {
					goal = t.text
					verdict = t.verdict(med[r.target][f], r.pairedRatio(r.target, f))
					if len(r.samples[r.target]) == 0 {
						verdict = "n/a"
					}
				}
			}
			row = append(row, goal, verdict)
		}
		rows = append(rows, row)
	}
	return rows
}

// writeText prints rows as an aligned plain-text table.
func writeText(w io.Writer, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for n, row := range rows {
		var b strings.Builder
		for i, c := range row {
			pad := widths[i] - len([]rune(c))
			if i == 0 {
				b.WriteString(c + strings.Repeat(" ", pad))
			} else {
				b.WriteString("  " + strings.Repeat(" ", pad) + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		if n == 0 {
			total := 0
			for _, wd := range widths {
				total += wd + 2
			}
			fmt.Fprintln(w, strings.Repeat("-", total-2))
		}
	}
}

// writeMarkdown prints rows as a Markdown table.
func writeMarkdown(w io.Writer, rows [][]string) {
	for n, row := range rows {
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
		if n == 0 {
			seps := make([]string, len(row))
			for i := range seps {
				seps[i] = "---"
				if i > 0 {
					seps[i] = "---:"
				}
			}
			fmt.Fprintln(w, "|"+strings.Join(seps, "|")+"|")
		}
	}
}

// roundRatios builds the per-round ratios of the throughput figures to the
// baseline, the table the issue asks to see per round.
func (r *results) roundRatios() [][]string {
	if r.baseline < 0 {
		return nil
	}
	head := []string{"round"}
	for i, s := range r.servers {
		if i == r.baseline {
			continue
		}
		for _, f := range []figID{figPing, figInflight, figPayload} {
			head = append(head, s.Name+" "+figs[f].short)
		}
	}
	rows := [][]string{head}
	for round := range r.samples[r.baseline] {
		row := []string{fmt.Sprint(round + 1)}
		base := r.samples[r.baseline][round]
		for i := range r.servers {
			if i == r.baseline {
				continue
			}
			for _, f := range []figID{figPing, figInflight, figPayload} {
				c := "n/a"
				if round < len(r.samples[i]) {
					if x := ratio(r.samples[i][round][f], base[f]); !math.IsNaN(x) {
						c = fmt.Sprintf("%.2fx", x)
					}
				}
				row = append(row, c)
			}
		}
		rows = append(rows, row)
	}
	row := []string{"median"}
	for i := range r.servers {
		if i == r.baseline {
			continue
		}
		for _, f := range []figID{figPing, figInflight, figPayload} {
			c := "n/a"
			if x := r.pairedRatio(i, f); !math.IsNaN(x) {
				c = fmt.Sprintf("%.2fx", x)
			}
			row = append(row, c)
		}
	}
	return append(rows, row)
}
