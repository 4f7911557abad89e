package workforce

import (
	"context"
	"testing"

	"github.com/agentls/agentls/api"
)

// askEditor has agent/ask when ask is set, and answers with the last
// option, or "blue" when there is none. It records the questions.
type askEditor struct {
	Editor
	ask   bool
	asked []api.AskParams
}

func (e *askEditor) Caps() api.Caps {
	c := e.Editor.Caps()
	c.Ask = e.ask
	return c
}

func (e *askEditor) Ask(_ context.Context, p api.AskParams) (*string, error) {
	e.asked = append(e.asked, p)
	a := "blue"
	if len(p.Options) > 0 {
		a = p.Options[len(p.Options)-1]
	}
	return &a, nil
}

func TestAskHuman(t *testing.T) {
	t.Run("with agent/ask", func(t *testing.T) {
		h := newToolHarness(t, nil)
		ed := &askEditor{Editor: h.e.cfg.Editor, ask: true}
		h.e.cfg.Editor = ed
		h.check("ask_human", []toolCase{
			{name: "asks a question and gives the answer", args: map[string]any{"question": "Which colour?"}, says: []string{"The user answered: blue"}},
			{name: "asks a question with options", args: map[string]any{"question": "Tabs?", "options": []string{"yes", "no"}}, says: []string{"The user answered: no"}},
			{name: "refuses a blank question", args: map[string]any{"question": " "}, isErr: true, says: []string{"ask_human needs question"}},
			{name: "refuses options that are not strings", args: map[string]any{"question": "Tabs?", "options": []int{1, 2}}, isErr: true, says: []string{"ask_human's options[0] must be a string, not 1"}},
			{name: "refuses options that are not an array", args: map[string]any{"question": "Tabs?", "options": "yes, no"}, isErr: true, says: []string{"ask_human's options must be an array of strings, not a string"}},
		})
		if len(ed.asked) != 2 || ed.asked[1].Question != "Tabs?" || len(ed.asked[1].Options) != 2 {
			t.Errorf("the editor was asked %+v", ed.asked)
		}
	})

	t.Run("without agent/ask", func(t *testing.T) {
		h := newToolHarness(t, nil)
		h.e.cfg.Editor = &askEditor{Editor: h.e.cfg.Editor}
		h.check("ask_human", []toolCase{
			{name: "refuses a question without options", args: map[string]any{"question": "Which colour?"}, isErr: true, says: []string{"ask again with options"}},
		})
	})
}
