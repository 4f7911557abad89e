//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// BenchmarkACPStart is what an ACP client waits for: agentls acp started
// as a process, its initialize answered (process start included), a
// session opened on a workspace (its tracking opened), and the memory the
// process then holds idle (VmRSS). It reports each as a metric per start.
func BenchmarkACPStart(b *testing.B) {
	root := filepath.Join(b.TempDir(), "w")
	testkit.WriteFiles(b, root, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	env := append(os.Environ(), "AGENTLS_MODEL=anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY=sk-ant-bench-0123456789",
		"AGENTLS_STATE_DIR="+filepath.Join(b.TempDir(), "state"))
	var initTotal, sessionTotal time.Duration
	var rssTotal int64
	n := 0
	for b.Loop() {
		cmd := exec.Command(binary, "acp")
		cmd.Env = env
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		conn := acp.NewConn(acp.NewStream(stdout, stdin, nil), nil)
		go func() { _ = conn.Serve(context.Background(), acp.ServeClient(acp.UnimplementedClient{}, nil)) }()
		agent := acp.NewAgentConn(conn, acp.DefaultTimeouts())
		ctx := testkit.Context(b)
		if _, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			b.Fatal(err)
		}
		initTotal += time.Since(start)
		t0 := time.Now()
		if _, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: root}); err != nil {
			b.Fatal(err)
		}
		sessionTotal += time.Since(t0)
		rss, err := vmRSS(cmd.Process.Pid)
		if err != nil {
			b.Fatal(err)
		}
		rssTotal += rss
		n++
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		_ = conn.Close()
	}
	b.ReportMetric(float64(initTotal.Microseconds())/float64(n)/1000, "initialize-ms")
	b.ReportMetric(float64(sessionTotal.Microseconds())/float64(n)/1000, "session/new-ms")
	b.ReportMetric(float64(rssTotal)/float64(n)/(1<<20), "idle-RSS-MiB")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkACPIdle is what an idle agentls acp holds, as docs/BENCHMARKS.md
// reports it: its private memory (RssAnon) and the pages of its executable
// and libraries it has touched (RssFile), 2 s after session/new answered
// and 2 s after its first prompt did (the scripted model, a one-file
// workspace). The waits are the measurement, not a synchronisation: what
// a process holds once the work of an answer has settled.
func BenchmarkACPIdle(b *testing.B) {
	var sum [4]int64
	n := 0
	for b.Loop() {
		root := filepath.Join(b.TempDir(), "w")
		testkit.WriteFiles(b, root, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
		sp := filepath.Join(b.TempDir(), "script.json")
		if err := os.WriteFile(sp, []byte(greetScript), 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(binary, "acp")
		cmd.Env = append(os.Environ(), "AGENTLS_MODEL=script:"+sp, "AGENTLS_STATE_DIR="+filepath.Join(b.TempDir(), "state"))
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		c := &goClient{changed: make(chan struct{})}
		conn := acp.NewConn(acp.NewStream(stdout, stdin, nil), nil)
		go func() { _ = conn.Serve(context.Background(), acp.ServeClient(c, nil)) }()
		agent := acp.NewAgentConn(conn, acp.DefaultTimeouts())
		ctx := testkit.Context(b)
		if _, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1}); err != nil {
			b.Fatal(err)
		}
		s, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: root})
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		anon, file := rssParts(b, cmd.Process.Pid)
		if _, err := agent.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: []acp.ContentBlock{acp.Text("Add a greet function")}}); err != nil {
			b.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		anon2, file2 := rssParts(b, cmd.Process.Pid)
		for i, v := range []int64{anon, file, anon2, file2} {
			sum[i] += v
		}
		n++
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		_ = conn.Close()
	}
	for i, name := range []string{"new-RssAnon-MiB", "new-RssFile-MiB", "prompt-RssAnon-MiB", "prompt-RssFile-MiB"} {
		b.ReportMetric(float64(sum[i])/float64(n)/(1<<20), name)
	}
	b.ReportMetric(0, "ns/op")
}

// rssParts is a process's RssAnon and RssFile, from /proc.
func rssParts(b *testing.B, pid int) (anon, file int64) {
	b.Helper()
	f, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		for name, into := range map[string]*int64{"RssAnon:": &anon, "RssFile:": &file} {
			if rest, ok := strings.CutPrefix(sc.Text(), name); ok {
				kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				if err != nil {
					b.Fatal(err)
				}
				*into = kb << 10
			}
		}
	}
	return anon, file
}

// vmRSS is the resident memory of a process, from /proc.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
