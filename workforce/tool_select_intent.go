package workforce

import (
	"context"
	"errors"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/tracking/intents"
)

// selectIntentParams are the arguments of select_intent.
type selectIntentParams struct {
	IntentID string `json:"intent_id"`
}

func (selectIntentParams) shape(s *jsonschema.Schema) { nonEmpty(s, "intent_id") }

// select_intent returns the intent's context block, and puts the worker's
// writes in the intent's scope from then on.
var selectIntentTool = define("select_intent",
	"Select the intent (from .orchestration/active_intents.yaml) your work belongs to. Returns its scope, constraints and acceptance criteria. Needed before changing files or running commands in a workspace that has intents.",
	func(_ context.Context, w *worker, p selectIntentParams) (result, error) {
		ints := w.t.e.cfg.Tracking.Intents
		in, block, err := ints.Select(p.IntentID)
		if err != nil {
			if errors.Is(err, intents.ErrUnknownIntent) {
				if list, lerr := ints.Intents(); lerr == nil && len(list) == 0 {
					return result{}, errors.New("this workspace has no intents (.orchestration/active_intents.yaml lists none); no intent is needed")
				}
			}
			return result{}, err
		}
		w.intent = in.ID
		w.agent.SetScope(in.Scope)
		w.t.emit(api.TaskEvent{Kind: api.EventIntentSelected, SubtaskID: w.sub.ID, Text: in.ID})
		return result{content: block}, nil
	})
