// Command driver is agentls's transport benchmark. It spawns JSON-RPC servers
// that speak the LSP base protocol on stdio and answer initialize,
// initialized, agent/ping {data} → {data}, shutdown and exit, and measures
// them side by side, rounds interleaved (A B C, A B C, …):
//
//   - agent/ping sequential: requests/s and p50/p99 latency;
//   - 64 requests in flight (pipelined, 64 kept outstanding): requests/s;
//   - 1 MiB payload round trips (data is a 1 MiB JSON string, the echo is
//     checked): round trips/s;
//   - spawn to the initialize reply: ms, median of several spawns;
//   - VmRSS idle (after initialize) and after the 1 MiB traffic, and VmHWM,
//     from /proc/<pid>/status;
//   - the server's CPU time per operation, from /proc/<pid>/task/*/schedstat.
//
// It prints a line per server per round, then a table of medians over the
// rounds with each server's ratio to the baseline, and the verdict on the
// targets for the server under test. The driver keeps itself out of the way:
// its own framing with a reused buffer, requests encoded once, replies
// scanned without reflection, and in the pipelined figure one goroutine
// writing (coalescing) while another reads.
//
// Usage:
//
//	driver -server 'vscode-jsonrpc=node bench/wire/node/server.js' \
//	       -server 'jsonrpc2=.cache/bench-wire/stockserver' \
//	       -server 'agentls=bin/agentls serve' [-rounds 5] [-markdown FILE]
//
// scripts/bench-wire.sh builds and runs all three.
//
// A figure is reported only for replies that were checked: every echo is
// compared with what was sent, and a server that answers wrongly, exits or
// stalls past its bound fails the run with the end of its stderr. Every
// server the driver started is killed and waited for before it exits.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// serverFlags collects repeated -server NAME=COMMAND flags.
type serverFlags []serverSpec

func (s *serverFlags) String() string {
	names := make([]string, len(*s))
	for i, spec := range *s {
		names[i] = spec.Name
	}
	return strings.Join(names, ",")
}

func (s *serverFlags) Set(v string) error {
	name, command, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return errors.New("want NAME=COMMAND")
	}
	argv, err := splitCommand(command)
	if err != nil {
		return err
	}
	if len(argv) == 0 {
		return fmt.Errorf("server %s: empty command", name)
	}
	for _, spec := range *s {
		if spec.Name == name {
			return fmt.Errorf("server %s given twice", name)
		}
	}
	*s = append(*s, serverSpec{Name: name, Argv: argv})
	return nil
}

// splitCommand splits a command line into words: blanks separate words,
// single quotes keep everything literally, double quotes keep blanks, and a
// backslash outside single quotes escapes the next character.
func splitCommand(s string) ([]string, error) {
	var (
		words   []string
		cur     strings.Builder
		inWord  bool
		quote   rune
		escaped bool
	)
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if r == '"' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, fmt.Errorf("unterminated quote or escape in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("driver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		servers      serverFlags
		cfg          config
		baseline     = fs.String("baseline", "vscode-jsonrpc", "the server the ratios are taken to")
		targetName   = fs.String("target", "agentls", "the server whose targets are checked")
		markdown     = fs.String("markdown", "", "also write the results as Markdown to this file")
		note         = fs.String("note", "", "a line about the setup (versions) for the Markdown report")
		requireGoals = fs.Bool("require-targets", false, "exit 3 when the target server misses a target")
	)
	fs.Var(&servers, "server", "NAME=COMMAND of a server to measure (repeat; the order is the column order)")
	fs.IntVar(&cfg.rounds, "rounds", 5, "rounds; each round measures every server once, in order")
	fs.IntVar(&cfg.warmup, "warmup", 2000, "agent/ping sent before the timed figures of a round")
	fs.IntVar(&cfg.pings, "pings", 10000, "sequential agent/ping per round")
	fs.IntVar(&cfg.inflight, "inflight", 50000, "agent/ping answered per round in the pipelined figure")
	fs.IntVar(&cfg.window, "window", 64, "requests kept outstanding in the pipelined figure")
	fs.IntVar(&cfg.payloads, "payloads", 40, "payload round trips per round")
	fs.IntVar(&cfg.payloadSize, "payload-size", 1<<20, "bytes of the payload string")
	fs.IntVar(&cfg.spawns, "spawns", 5, "spawns per round timed from spawn to the initialize reply")
	fs.DurationVar(&cfg.figureLimit, "figure-timeout", 2*time.Minute, "a figure that takes longer kills its server and fails it")
	fs.DurationVar(&cfg.stopLimit, "stop-timeout", 10*time.Second, "time a server has to exit after shutdown and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "driver: unexpected argument %q (servers are given with -server)\n", fs.Arg(0))
		return 2
	}
	if len(servers) == 0 {
		fmt.Fprintln(stderr, "driver: no server to measure: give at least one -server NAME=COMMAND")
		return 2
	}
	for _, c := range []struct {
		name string
		v    int
	}{{"rounds", cfg.rounds}, {"pings", cfg.pings}, {"inflight", cfg.inflight}, {"window", cfg.window},
		{"payloads", cfg.payloads}, {"payload-size", cfg.payloadSize}, {"spawns", cfg.spawns}} {
		if c.v <= 0 {
			fmt.Fprintf(stderr, "driver: -%s %d: must be positive\n", c.name, c.v)
			return 2
		}
	}
	if cfg.warmup < 0 {
		fmt.Fprintf(stderr, "driver: -warmup %d: must not be negative\n", cfg.warmup)
		return 2
	}
	cfg.payloadBytes = payload(cfg.payloadSize)

	res := &results{
		servers:  servers,
		samples:  make([][]sample, len(servers)),
		errs:     make([]error, len(servers)),
		baseline: -1,
		target:   -1,
	}
	for i, s := range servers {
		if s.Name == *baseline {
			res.baseline = i
		}
		if s.Name == *targetName {
			res.target = i
		}
	}
	if res.baseline < 0 {
		fmt.Fprintf(stdout, "note: baseline %s is not among the servers: no ratios\n", *baseline)
	}
	fmt.Fprintf(stdout, "%s\n", machine())
	loadBefore := loadAverage()
	for round := range cfg.rounds {
		fmt.Fprintf(stdout, "round %d/%d (load average %s)\n", round+1, cfg.rounds, loadAverage())
		got := make([]sample, len(servers))
		for i, spec := range servers {
			if res.errs[i] != nil {
				continue
			}
			s, err := runRound(spec, &cfg)
			if err != nil {
				res.errs[i] = fmt.Errorf("round %d: %w", round+1, err)
				fmt.Fprintf(stdout, "  %-22s FAILED: %v\n", spec.Name, err)
				continue
			}
			got[i] = s
			res.samples[i] = append(res.samples[i], s)
		}
		base := newSample()
		if res.baseline >= 0 && res.errs[res.baseline] == nil {
			base = got[res.baseline]
		}
		for i, spec := range servers {
			if res.errs[i] == nil {
				fmt.Fprintln(stdout, roundLine(spec.Name, got[i], base, i == res.baseline))
			}
		}
	}

	rows := res.table()
	fmt.Fprintf(stdout, "\nmedians of %d rounds; (Nx) is the median of the per-round ratios to %s: above 1 is faster for rates, below 1 is less for times and memory\n\n", cfg.rounds, *baseline)
	writeText(stdout, rows)
	failed := false
	for i, err := range res.errs {
		if err != nil {
			failed = true
			fmt.Fprintf(stdout, "\n%s stopped: %v\n", servers[i].Name, err)
		}
	}
	if *markdown != "" {
		load := fmt.Sprintf("load average %s before, %s after (other work on the machine makes the rounds disagree)", loadBefore, loadAverage())
		if err := writeReport(*markdown, res, rows, &cfg, *note, load); err != nil {
			fmt.Fprintf(stderr, "driver: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "\nMarkdown written to %s\n", *markdown)
	}
	switch {
	case failed:
		return 1
	case *requireGoals && res.missed():
		return 3
	}
	return 0
}

// missed reports whether the target server missed any target.
func (r *results) missed() bool {
	if r.target < 0 {
		return false
	}
	rows := r.table()
	last := len(rows[0]) - 1
	for _, row := range rows[1:] {
		if strings.HasPrefix(row[last], "missed") {
			return true
		}
	}
	return false
}

// machine describes the machine the figures come from.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := ""
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = " " + strings.TrimSpace(string(data))
	}
	return fmt.Sprintf("machine: %d cores, %s, %s/%s%s; driver built with %s",
		runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, kernel, runtime.Version())
}

// writeReport writes the Markdown report: setup, medians, per-round ratios.
func writeReport(path string, r *results, rows [][]string, cfg *config, note, load string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Transport benchmark, %s, %d rounds interleaved.\n\n", time.Now().UTC().Format("2006-01-02"), cfg.rounds)
	fmt.Fprintf(&b, "- %s\n", machine())
	fmt.Fprintf(&b, "- %s\n", load)
	if note != "" {
		fmt.Fprintf(&b, "- %s\n", note)
	}
	fmt.Fprintf(&b, "- per round: %d warm-up pings, %d sequential pings, %d pings with %d in flight, %d round trips of a %d-byte string, %d spawns\n",
		cfg.warmup, cfg.pings, cfg.inflight, cfg.window, cfg.payloads, cfg.payloadSize, cfg.spawns)
	for _, s := range r.servers {
		fmt.Fprintf(&b, "- %s: `%s`\n", s.Name, strings.Join(s.Argv, " "))
	}
	b.WriteString("\nMedians of the rounds; (Nx) is the median of the per-round ratios to the baseline: above 1 is faster for rates, below 1 is less for times and memory.\n\n")
	writeMarkdown(&b, rows)
	if rr := r.roundRatios(); rr != nil {
		b.WriteString("\nRatios to the baseline, per round:\n\n")
		writeMarkdown(&b, rr)
	}
	for i, err := range r.errs {
		if err != nil {
			fmt.Fprintf(&b, "\n%s stopped: %s\n", r.servers[i].Name, strings.SplitN(err.Error(), "\n", 2)[0])
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write markdown: %w", err)
	}
	return nil
}

// loadAverage is the 1, 5 and 15 minute load average, or "n/a".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}
