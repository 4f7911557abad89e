package workforce

import "context"

// listFilesParams are the arguments of list_files.
type listFilesParams struct {
	Pattern string `json:"pattern,omitempty" jsonschema:"glob, e.g. \"**/*.go\"; default: every file"`
}

var listFilesTool = define("list_files",
	"List the workspace's files matching a glob (doublestar: ** matches any depth; a pattern without / matches file names at any depth). .git and ignored files are left out.",
	func(ctx context.Context, w *worker, p listFilesParams) (result, error) {
		res, err := w.agent.List(ctx, p.Pattern)
		return result{content: res.Text}, err
	})
