package workforce

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// findReferencesParams are the arguments of find_references.
type findReferencesParams struct {
	Name string `json:"name" jsonschema:"the definition: a name, or Container.Name (e.g. Server.Run)"`
	Path string `json:"path,omitempty" jsonschema:"the file that defines it, when the name is defined in several"`
}

func (findReferencesParams) shape(s *jsonschema.Schema) { nonEmpty(s, "name") }

var findReferencesTool = define("find_references",
	"Find where a definition is used, from the workspace's code graph: each call and reference as path:line:column, the definition it is in, and the line.",
	func(ctx context.Context, w *worker, p findReferencesParams) (result, error) {
		g, err := w.graph()
		if err != nil {
			return result{}, err
		}
		refs, more, err := g.References(ctx, p.Name, p.Path, findReferencesLimit)
		if err != nil {
			return result{}, graphErr(err)
		}
		if len(refs) == 0 {
			return result{content: fmt.Sprintf("No references to %s in the code graph.", p.Name)}, nil
		}
		var b strings.Builder
		for _, r := range refs {
			kind := "ref"
			if r.Call {
				kind = "call"
			}
			fmt.Fprintf(&b, "%s:%d:%d: %s", r.Path, r.Pos.Line+1, r.Pos.Col+1, kind)
			if r.In != "" {
				fmt.Fprintf(&b, " in %s", r.In)
			}
			if r.Line != "" {
				fmt.Fprintf(&b, ": %s", r.Line)
			}
			b.WriteByte('\n')
		}
		if more {
			fmt.Fprintf(&b, "… more references not shown (the first %d are); give path to narrow.\n", len(refs))
		}
		return result{content: b.String()}, nil
	})
