// Command fakeagent is the fake ACP agent of package enginestest as a
// program of its own, for the editor plugins' suites: they configure it as
// an engine ({"command": ["fakeagent"], "env": {"AGENTLS_FAKE_AGENT":
// "[steps…]"}}), and it plays the steps (enginestest.Step, as JSON) at each
// prompt. Without AGENTLS_FAKE_AGENT it says so and exits 2.
package main

import (
	"fmt"
	"os"

	"github.com/agentls/agentls/engines/enginestest"
)

func main() {
	enginestest.ServeFakeAgent()
	fmt.Fprintln(os.Stderr, "fakeagent: set AGENTLS_FAKE_AGENT to a JSON array of steps (engines/enginestest.Step)")
	os.Exit(2)
}
