package workforce

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/editing"
)

// writeFileParams are the arguments of write_file. content may be empty:
// an empty file.
type writeFileParams struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func (writeFileParams) shape(s *jsonschema.Schema) { nonEmpty(s, "path") }

var writeFileTool = define("write_file",
	"Create a file with this content, or replace the whole content of a file you have read.",
	func(ctx context.Context, w *worker, p writeFileParams) (result, error) {
		return w.edit(ctx, "write_file", p.Path, func() (editing.Change, error) { return w.agent.Write(ctx, p.Path, p.Content) }), nil
	})
