package handlers_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/agentls/agentls/engines/enginestest"
)

// TestMain gives every test a state directory of its own: the code graph
// is kept there from initialize on, and a test must never write the
// user's. The test binary is also the fake ACP agent of the engine tests
// (enginestest.ServeFakeAgent plays it in the processes they start).
func TestMain(m *testing.M) {
	enginestest.ServeFakeAgent()
	dir, err := os.MkdirTemp("", "agentls-handlers-state")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.Setenv("AGENTLS_STATE_DIR", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
