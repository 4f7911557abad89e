package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// stockServer is the stock jsonrpc2 echo server, built once by TestMain.
var stockServer string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "benchwire")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	stockServer = filepath.Join(dir, "stockserver")
	build := exec.Command(goTool, "build", "-o", stockServer, "../stockserver")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the stock server: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// smallConfig takes every figure with a few requests.
func smallConfig() *config {
	return &config{
		rounds: 1, warmup: 10, pings: 200, inflight: 500, window: 64,
		payloads: 3, payloadSize: 1 << 20, spawns: 2,
		figureLimit: time.Minute, stopLimit: 10 * time.Second,
		payloadBytes: payload(1 << 20),
	}
}

func TestRoundAgainstTheStockServer(t *testing.T) {
	s, err := runRound(serverSpec{Name: "jsonrpc2", Argv: []string{stockServer}}, smallConfig())
	if err != nil {
		t.Fatal(err)
	}
	for f := range numFigs {
		v := s[f]
		if runtime.GOOS != "linux" && math.IsNaN(v) {
			continue // memory and CPU come from /proc
		}
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			t.Errorf("%s = %v, want a positive figure", figs[f].label, v)
		}
	}
	if s[figPingP99] < s[figPingP50] {
		t.Errorf("p99 %v below p50 %v", s[figPingP99], s[figPingP50])
	}
	if runtime.GOOS == "linux" && s[figHWM] < s[figRSSAfter] {
		t.Errorf("VmHWM %v below VmRSS %v", s[figHWM], s[figRSSAfter])
	}
}

func TestRun(t *testing.T) {
	small := []string{"-rounds", "2", "-warmup", "0", "-pings", "100", "-inflight", "256",
		"-payloads", "2", "-payload-size", "65536", "-spawns", "1"}

	t.Run("prints rounds and a table with ratios and writes the Markdown", func(t *testing.T) {
		md := filepath.Join(t.TempDir(), "wire.md")
		var out, errOut bytes.Buffer
		args := append([]string{"-server", "base=" + stockServer, "-server", "agentls=" + stockServer,
			"-baseline", "base", "-markdown", md}, small...)
		if code := run(args, &out, &errOut); code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
		}
		for _, want := range []string{"round 1/2", "round 2/2", "agent/ping sequential (req/s)", "base (baseline)", "x)", "target for agentls", "≥3x"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, &out)
			}
		}
		data, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| figure (median of rounds) | base (baseline) | agentls |", "|---|", "Ratios to the baseline, per round", "machine: "} {
			if !strings.Contains(string(data), want) {
				t.Errorf("Markdown lacks %q:\n%s", want, data)
			}
		}
	})

	t.Run("a missed target exits 3 when targets are required", func(t *testing.T) {
		// The same server as its own baseline cannot be 3x as fast as itself.
		var out, errOut bytes.Buffer
		args := append([]string{"-server", "base=" + stockServer, "-server", "agentls=" + stockServer,
			"-baseline", "base", "-require-targets"}, small...)
		if code := run(args, &out, &errOut); code != 3 {
			t.Fatalf("exit %d, want 3\n%s", code, &out)
		}
		if !strings.Contains(out.String(), "missed") {
			t.Errorf("output shows no missed target:\n%s", &out)
		}
	})

	t.Run("a server that dies is reported and the others are still measured", func(t *testing.T) {
		var out, errOut bytes.Buffer
		args := append([]string{"-server", "jsonrpc2=" + stockServer, "-server", "dead=false"}, small...)
		if code := run(args, &out, &errOut); code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, &out)
		}
		if !strings.Contains(out.String(), "dead                   FAILED") || !strings.Contains(out.String(), "dead stopped: round 1") {
			t.Errorf("output does not report the dead server:\n%s", &out)
		}
		if !strings.Contains(out.String(), "  jsonrpc2               ping/s") {
			t.Errorf("output lacks the rounds of the live server:\n%s", &out)
		}
	})

	t.Run("a server that echoes the requests back is refused", func(t *testing.T) {
		if _, err := exec.LookPath("cat"); err != nil {
			t.Skip("no cat")
		}
		var out, errOut bytes.Buffer
		if code := run(append([]string{"-server", "parrot=cat"}, small...), &out, &errOut); code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, &out)
		}
		if !strings.Contains(out.String(), `unexpected request "initialize"`) {
			t.Errorf("output does not say why:\n%s", &out)
		}
	})

	t.Run("a server that never answers is killed at the figure timeout", func(t *testing.T) {
		if _, err := exec.LookPath("sleep"); err != nil {
			t.Skip("no sleep")
		}
		var out, errOut bytes.Buffer
		args := append([]string{"-server", "mute=sleep 60", "-figure-timeout", "300ms"}, small...)
		if code := run(args, &out, &errOut); code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, &out)
		}
		if !strings.Contains(out.String(), "initialize did not finish within 300ms") {
			t.Errorf("output does not say why:\n%s", &out)
		}
	})

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{},
			{"-server", "noequals"},
			{"-server", "a=x", "-server", "a=y"},
			{"-server", "a=x", "-rounds", "0"},
			{"-server", "a=x", "stray"},
		} {
			var out, errOut bytes.Buffer
			if code := run(args, &out, &errOut); code != 2 {
				t.Errorf("run(%q) exit %d, want 2", args, code)
			}
		}
	})
}
