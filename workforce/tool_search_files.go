package workforce

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"
)

// searchFilesParams are the arguments of search_files.
type searchFilesParams struct {
	Regex string `json:"regex"`
	Glob  string `json:"glob,omitempty" jsonschema:"only files matching this glob"`
}

func (searchFilesParams) shape(s *jsonschema.Schema) { nonEmpty(s, "regex") }

var searchFilesTool = define("search_files",
	"Search the workspace's text files for a regular expression (RE2 syntax). Returns path:line: text.",
	func(ctx context.Context, w *worker, p searchFilesParams) (result, error) {
		res, err := w.agent.Search(ctx, p.Regex, p.Glob)
		return result{content: res.Text}, err
	})
