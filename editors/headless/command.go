package headless

import (
	"context"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/shell"
)

// MaxCommandOutput is the most of a command's output kept (docs/PROTOCOL.md
// §4): past it, the first shell.OutputHead and the last shell.OutputTail
// bytes around a marker saying how many bytes were cut.
const MaxCommandOutput = shell.MaxOutput

// RunShell runs p.Command with `sh -c` in p.Cwd, stdout and stderr combined,
// bounded by p.TimeoutMs (0: unbounded) and by ctx. On either, the whole
// process group is killed; it is killed too if this process dies. Output
// past MaxCommandOutput keeps its head and its tail.
// The command inherits this process's environment but the variables of
// p.UnsetEnv: `agentls run` holds the API keys the sidecar needs, and a
// command the model asked for must not see them.
func RunShell(ctx context.Context, p api.RunCommandParams) api.RunCommandResult {
	return shell.Run(ctx, p.Cwd, p.Command, time.Duration(p.TimeoutMs)*time.Millisecond, p.UnsetEnv)
}
