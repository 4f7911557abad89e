package engines

import (
	"fmt"
	"os"
	"slices"

	"github.com/agentls/agentls/internal/shell"
)

// process is an agent's process, supervised by internal/shell: in a
// process group of its own (with a watchdog that kills it when the sidecar
// dies, even by kill -9), its stdin and stdout the ACP connection, the end
// of its stderr kept for errors.
type process = shell.Proc

// startProcess starts argv in dir with env, in a new process group.
func startProcess(argv []string, dir string, env []string) (*process, error) {
	return shell.Start(shell.ProcSpec{Argv: argv, Dir: dir, Env: env})
}

// exitError describes how the process ended, with the end of its stderr;
// nil while it runs.
func exitError(p *process) error {
	if r := p.ExitReason(); r != "" {
		return fmt.Errorf("%s", r)
	}
	return nil
}

// environ is the agent's environment: agentls's, without the secrets
// (unset) but the engine's own keys, then the entry's env with ${NAME}
// taken from agentls's environment.
func environ(base []string, unset, keys []string, extra map[string]string) []string {
	drop := slices.DeleteFunc(slices.Clone(unset), func(n string) bool { return slices.Contains(keys, n) })
	return shell.Environ(base, drop, extra)
}

// osEnviron is the sidecar's environment (tests replace nothing here; the
// Manager takes its own).
var osEnviron = os.Environ
