package workforce

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// runCommandParams are the arguments of run_command.
type runCommandParams struct {
	Command   string `json:"command"`
	TimeoutMs int64  `json:"timeoutMs,omitempty" jsonschema:"time limit in milliseconds"`
}

func (runCommandParams) shape(s *jsonschema.Schema) { nonEmpty(s, "command") }

var runCommandTool = define("run_command",
	"Run a shell command (sh -c) in the workspace root and return its exit code and output (stdout and stderr; long output is cut in the middle). It may need the user's approval.",
	func(ctx context.Context, w *worker, p runCommandParams) (result, error) {
		if strings.TrimSpace(p.Command) == "" {
			return result{}, required("run_command", "command")
		}
		if err := w.gate("run_command", ""); err != nil {
			return result{}, err
		}
		return w.runCommand(ctx, p.Command, p.TimeoutMs), nil
	})
