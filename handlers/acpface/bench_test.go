//go:build unix

package acpface_test

import (
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// The latency of the calls that open a conversation, in process over real
// OS pipes (the process's own start is cmd/agentls's BenchmarkACPStart).

func BenchmarkInitialize(b *testing.B) {
	e := benchEnv(b)
	ctx := testkit.Context(b)
	req := &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: fullCaps}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.agent.Initialize(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewSession opens a session on a workspace whose tracking is
// open already (the second session of a root, and every one after).
func BenchmarkNewSession(b *testing.B) {
	e := benchEnv(b)
	ctx := testkit.Context(b)
	if _, err := e.agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: fullCaps}); err != nil {
		b.Fatal(err)
	}
	if _, err := e.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: e.root}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		s, err := e.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: e.root})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if _, err := e.agent.CloseSession(ctx, &acp.CloseSessionRequest{SessionID: s.SessionID}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkNewSessionFirst opens the first session of a workspace: its
// tracking (session store, intents, trace, heat map) is opened too.
func BenchmarkNewSessionFirst(b *testing.B) {
	e := benchEnv(b)
	ctx := testkit.Context(b)
	if _, err := e.agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: fullCaps}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		root := filepath.Join(b.TempDir(), "w")
		testkit.WriteFiles(b, root, map[string]string{"main.go": mainGo})
		b.StartTimer()
		if _, err := e.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: root}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchEnv(b *testing.B) *env {
	b.Helper()
	return start(b, opts{script: script(nil)})
}
