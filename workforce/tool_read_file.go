package workforce

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
)

// readFileParams are the arguments of read_file.
type readFileParams struct {
	Path   string `json:"path" jsonschema:"workspace-relative path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to show, from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"number of lines to show"`
}

func (readFileParams) shape(s *jsonschema.Schema) { nonEmpty(s, "path") }

var readFileTool = define("read_file",
	"Read a text file as the editor has it (unsaved changes included). Lines are numbered from 1; long files are shown in parts: use offset and limit to read on.",
	func(ctx context.Context, w *worker, p readFileParams) (result, error) {
		res, err := w.agent.Read(ctx, p.Path, p.Offset, p.Limit)
		if err != nil {
			return result{path: p.Path}, err
		}
		return result{content: res.Text, path: res.Path}, nil
	})
