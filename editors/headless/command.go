package headless

import (
	"context"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/shell"
)

// MaxCommandOutput is where a command's output is cut (docs/PROTOCOL.md §4).
const MaxCommandOutput = shell.MaxOutput

// RunShell runs p.Command with `sh -c` in p.Cwd, stdout and stderr combined,
// bounded by p.TimeoutMs (0: unbounded) and by ctx. On either, the whole
// process group is killed. Output past MaxCommandOutput is cut with a note.
// The command inherits this process's environment but the variables of
// p.UnsetEnv: `agentls run` holds the API keys the sidecar needs, and a
// command the model asked for must not see them.
func RunShell(ctx context.Context, p api.RunCommandParams) api.RunCommandResult {
	return shell.Run(ctx, p.Cwd, p.Command, time.Duration(p.TimeoutMs)*time.Millisecond, p.UnsetEnv)
}
