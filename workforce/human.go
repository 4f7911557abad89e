package workforce

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentls/agentls/api"
)

// askHuman is ask_human: agent/ask where the editor has it, else
// window/showMessageRequest with the options as actions. The task is
// waiting meanwhile; agent/stop ends the wait.
func (w *worker) askHuman(ctx context.Context, question string, options []string) result {
	t := w.t
	ed := t.e.cfg.Editor
	if !ed.Caps().Ask && len(options) == 0 {
		return fail(errors.New("this editor can only take an answer from a list: ask again with options"))
	}
	t.beginWait(api.TaskEvent{Kind: api.EventAsk, SubtaskID: w.sub.ID, Question: question, Options: options})
	t.out.flush(ctx) // the editor shows the ask event, and what led to it, before the question
	answer, err := ed.Ask(ctx, api.AskParams{Question: question, Options: options})
	if errors.Is(err, api.ErrUnsupported) {
		actions := make([]api.MessageActionItem, len(options))
		for i, o := range options {
			actions[i] = api.MessageActionItem{Title: o}
		}
		var item *api.MessageActionItem
		item, err = ed.ShowMessageRequest(ctx, api.ShowMessageRequestParams{
			Type: api.MessageTypeInfo, Message: "agentls asks: " + question, Actions: actions,
		})
		answer = nil
		if item != nil {
			answer = &item.Title
		}
	}
	t.endWait(api.TaskEvent{Kind: api.EventAnswered, SubtaskID: w.sub.ID, Answer: answer})
	switch {
	case err != nil && ctx.Err() != nil:
		return fail(context.Cause(ctx))
	case errors.Is(err, api.ErrTimeout):
		return fail(fmt.Errorf("the user did not answer in time (%w); decide by yourself or finish and say what is open", err))
	case err != nil:
		return fail(fmt.Errorf("the question could not be asked: %w", err))
	case answer == nil:
		return result{content: "The user dismissed the question without answering. Decide by yourself, or finish and say what is open."}
	}
	t.journal.add(api.SessionMessage{Role: "user", Text: "Q: " + question + "\nA: " + *answer, TaskID: t.id, SubtaskID: w.sub.ID})
	return result{content: "The user answered: " + *answer}
}
