package workforce

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/codegraph"
)

// findSymbolParams are the arguments of find_symbol.
type findSymbolParams struct {
	Name string `json:"name" jsonschema:"a name, or Container.Name for a method or member (e.g. Server.Run), or package.Name for a Go package's (e.g. io.Reader)"`
	Path string `json:"path,omitempty" jsonschema:"only definitions in this file; or, in a file that uses the name without defining it, the definitions it means there"`
}

func (findSymbolParams) shape(s *jsonschema.Schema) { nonEmpty(s, "name") }

// findLimit bounds the definitions or references one call lists.
const (
	findSymbolLimit     = 20
	findReferencesLimit = 100
)

var findSymbolTool = define("find_symbol",
	"Find where a function, method, type, variable or constant is defined, from the workspace's code graph: path:lines, kind, and the definition's first line. With the path of a file that uses the name, the definitions it means there, as the editor's language server (or else the code graph) resolves them.",
	func(ctx context.Context, w *worker, p findSymbolParams) (result, error) {
		g, err := w.graph()
		if err != nil {
			return result{}, err
		}
		defs, total, err := g.FindSymbol(ctx, p.Name, p.Path, findSymbolLimit)
		if err != nil {
			return result{}, graphErr(err)
		}
		if total == 0 {
			return result{content: fmt.Sprintf("No definition of %s in the code graph. Try search_files for the text.", p.Name)}, nil
		}
		var b strings.Builder
		found := map[codegraph.Provenance]bool{}
		for _, d := range defs {
			qual := d.Name
			if d.Container != "" {
				qual = d.Container + "." + d.Name
			}
			fmt.Fprintf(&b, "%s:%d-%d: %s %s", d.Path, d.Start.Line+1, d.End.Line+1, d.Kind, qual)
			if d.Provenance != 0 {
				fmt.Fprintf(&b, " [%s]", d.Provenance)
				found[d.Provenance] = true
			}
			if d.Line != "" {
				fmt.Fprintf(&b, ": %s", d.Line)
			}
			b.WriteByte('\n')
		}
		if total > len(defs) {
			fmt.Fprintf(&b, "… and %d more definitions not shown (the first %d of %d are); give path to narrow.\n", total-len(defs), len(defs), total)
		}
		if len(found) > 0 {
			fmt.Fprintf(&b, "What %s means in %s ", p.Name, p.Path)
			b.WriteString(provenanceLegend(found))
		}
		return result{content: b.String()}, nil
	})

// graph is the workspace's code graph, or an error saying there is none.
func (w *worker) graph() (*codegraph.Graph, error) {
	if g := w.t.e.cfg.Graph; g != nil {
		return g, nil
	}
	return nil, errors.New("the code graph is not available in this session; use search_files")
}

// graphErr words the graph's errors for the model.
func graphErr(err error) error {
	if errors.Is(err, codegraph.ErrNotFound) {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), codegraph.ErrNotFound.Error()+": "))
	}
	return err
}
