package main

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// TestPositionIndependentBuild runs the binary as Arch, Fedora and Alpine
// build Go programs (-buildmode=pie): it must start, answer initialize and
// keep serving. Dropping the executable's own pages at start-up (as an
// earlier build did to lower idle RSS) discards the relocated pages of such
// a binary, and it crashes at its next call into them.
func TestPositionIndependentBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary again")
	}
	pie := filepath.Join(t.TempDir(), "agentls-pie")
	build := exec.Command("go", "build", "-buildmode=pie", "-o", pie, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("this platform cannot build -buildmode=pie: %v\n%s", err, out)
	}
	ed, err := headless.Start(testkit.Context(t), headless.Options{
		Root:    t.TempDir(),
		Command: []string{pie, "serve"},
		Caps:    headless.FullCapabilities(),
	})
	if err != nil {
		t.Fatalf("the pie build did not start: %v", err)
	}
	defer ed.Close()
	for i := 0; i < 3; i++ {
		var res api.SessionsResult
		if err := ed.Call(testkit.Context(t), api.MethodSessions, api.Empty{}, &res); err != nil {
			t.Fatalf("agent/sessions on the pie build: %v", err)
		}
	}
}
