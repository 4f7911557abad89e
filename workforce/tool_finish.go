package workforce

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// finishParams are the arguments of finish.
type finishParams struct {
	Summary string `json:"summary"`
}

func (finishParams) shape(s *jsonschema.Schema) { nonEmpty(s, "summary") }

var finishTool = define("finish",
	"End your subtask with a short summary of what you did and found.",
	func(_ context.Context, _ *worker, p finishParams) (result, error) {
		if strings.TrimSpace(p.Summary) == "" {
			return result{}, required("finish", "summary")
		}
		return result{content: "Finished.", finish: true, summary: p.Summary}, nil
	})
