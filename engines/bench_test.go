package engines

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// BenchmarkRelayedCall is the sidecar's overhead per call an agent makes:
// the fake agent reads a file b.N times through fs/read_text_file, each
// crossing the pipes both ways, decoded and answered by the client through
// the host. The agent's start is not counted.
func BenchmarkRelayedCall(b *testing.B) {
	root := b.TempDir()
	path := filepath.Join(root, "main.go")
	m := fakeManager(b, enginestest.Step{Read: path, Reads: b.N})
	h := newFakeHost(root)
	h.files[path] = "package main\n\nfunc main() {}\n"
	_, err := m.Run(testkit.Context(b), "fake", Job{Prompt: "read", Root: root, OnStart: func(int, time.Duration) {
		b.ReportAllocs()
		b.ResetTimer()
	}}, h)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
}
