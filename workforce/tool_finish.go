package workforce

import (
	"context"
	"strings"
)

// finishParams are the arguments of finish.
type finishParams struct {
	Summary string `json:"summary" jsonschema:"minLength=1"`
}

var finishTool = define("finish",
	"End your subtask with a short summary of what you did and found.",
	func(_ context.Context, _ *worker, p finishParams) (result, error) {
		if strings.TrimSpace(p.Summary) == "" {
			return result{}, required("finish", "summary")
		}
		return result{content: "Finished.", finish: true, summary: p.Summary}, nil
	})
