package workforce

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// askHumanParams are the arguments of ask_human.
type askHumanParams struct {
	Question string   `json:"question"`
	Options  []string `json:"options,omitempty"`
}

func (askHumanParams) shape(s *jsonschema.Schema) { nonEmpty(s, "question") }

var askHumanTool = define("ask_human",
	"Ask the user a question and wait for the answer. Give options when the answer is a choice.",
	func(ctx context.Context, w *worker, p askHumanParams) (result, error) {
		if strings.TrimSpace(p.Question) == "" {
			return result{}, required("ask_human", "question")
		}
		return w.askHuman(ctx, p.Question, p.Options), nil
	})
