package handlers_test

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives every test a state directory of its own: the code graph
// is kept there from initialize on, and a test must never write the
// user's.
func TestMain(m *testing.M) {
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
