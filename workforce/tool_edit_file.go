package workforce

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/editing"
)

// editFileParams are the arguments of edit_file. new_string may be empty:
// old_string is deleted.
type editFileParams struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

func (editFileParams) shape(s *jsonschema.Schema) { nonEmpty(s, "path") }

var editFileTool = define("edit_file",
	"Replace old_string with new_string in a file you have read. old_string must occur exactly once (include enough surrounding lines), unless replace_all is true.",
	func(ctx context.Context, w *worker, p editFileParams) (result, error) {
		return w.edit(ctx, "edit_file", p.Path, func() (editing.Change, error) {
			return w.agent.Edit(ctx, p.Path, p.OldString, p.NewString, p.ReplaceAll)
		}), nil
	})
