package workforce

import "context"

// searchFilesParams are the arguments of search_files.
type searchFilesParams struct {
	Regex string `json:"regex" jsonschema:"minLength=1"`
	Glob  string `json:"glob,omitempty" jsonschema_description:"only files matching this glob"`
}

var searchFilesTool = define("search_files",
	"Search the workspace's text files for a regular expression (RE2 syntax). Returns path:line: text.",
	func(ctx context.Context, w *worker, p searchFilesParams) (result, error) {
		res, err := w.agent.Search(ctx, p.Regex, p.Glob)
		return result{content: res.Text}, err
	})
