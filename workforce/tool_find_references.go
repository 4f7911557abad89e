package workforce

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/codegraph"
)

// findReferencesParams are the arguments of find_references.
type findReferencesParams struct {
	Name string `json:"name" jsonschema:"the definition: a name, or Container.Name (e.g. Server.Run), or package.Name for a Go package's (e.g. io.Reader)"`
	Path string `json:"path,omitempty" jsonschema:"the file that defines it, when the name is defined in several"`
}

func (findReferencesParams) shape(s *jsonschema.Schema) { nonEmpty(s, "name") }

var findReferencesTool = define("find_references",
	"Find where a definition is used: each call and reference as path:line:column, the definition it is in, how it was found and the line. The editor's language server answers when it can; else the workspace's code graph, which marks what it only guesses by the name.",
	func(ctx context.Context, w *worker, p findReferencesParams) (result, error) {
		g, err := w.graph()
		if err != nil {
			return result{}, err
		}
		refs, total, err := g.References(ctx, p.Name, p.Path, findReferencesLimit)
		if err != nil {
			return result{}, graphErr(err)
		}
		if total == 0 {
			return result{content: fmt.Sprintf("No references to %s in the code graph.", p.Name)}, nil
		}
		var b strings.Builder
		found := map[codegraph.Provenance]bool{}
		for _, r := range refs {
			kind := "ref"
			if r.Call {
				kind = "call"
			}
			fmt.Fprintf(&b, "%s:%d:%d: %s", r.Path, r.Pos.Line+1, r.Pos.Col+1, kind)
			if r.In != "" {
				fmt.Fprintf(&b, " in %s", r.In)
			}
			fmt.Fprintf(&b, " [%s]", r.Provenance)
			found[r.Provenance] = true
			if r.Line != "" {
				fmt.Fprintf(&b, ": %s", r.Line)
			}
			b.WriteByte('\n')
		}
		if total > len(refs) {
			fmt.Fprintf(&b, "… and %d more references not shown (the first %d of %d are); give path to narrow.\n", total-len(refs), len(refs), total)
		}
		b.WriteString(provenanceLegend(found))
		return result{content: b.String()}, nil
	})

// provenanceLegend says what the provenance marks that appear mean.
func provenanceLegend(found map[codegraph.Provenance]bool) string {
	var parts []string
	if found[codegraph.ByLSP] {
		parts = append(parts, "[lsp] from the editor's language server")
	}
	if found[codegraph.Resolved] {
		parts = append(parts, "[resolved] resolved by the code graph")
	}
	if found[codegraph.ByName] {
		parts = append(parts, "[name] a guess by the name alone: it may mean another definition so named")
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, "; ") + ")\n"
}
