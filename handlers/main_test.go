package handlers_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

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
	if code == 0 {
		// Every goroutine the servers started has ended with them: a
		// leak fails the package, whichever test left it.
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left after the tests:", err)
			code = 1
		}
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// leakOptions are the goroutines that may outlive the tests: the standard
// library's idle HTTP connections of the tests' fake model and MCP
// servers, which their clients keep for reuse.
var leakOptions = []goleak.Option{
	goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
}
