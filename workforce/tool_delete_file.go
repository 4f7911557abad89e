package workforce

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/editing"
)

// deleteFileParams are the arguments of delete_file.
type deleteFileParams struct {
	Path string `json:"path"`
}

func (deleteFileParams) shape(s *jsonschema.Schema) { nonEmpty(s, "path") }

var deleteFileTool = define("delete_file",
	"Delete a file you have read.",
	func(ctx context.Context, w *worker, p deleteFileParams) (result, error) {
		return w.change("delete_file", p.Path, func() (editing.Change, error) { return w.agent.Delete(ctx, p.Path) }), nil
	})
