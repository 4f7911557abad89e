package workforce

import (
	"context"
	"errors"
	"fmt"

	"go.lsp.dev/protocol"

	"github.com/agentls/agentls/rpc"
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
	t.beginWait(rpc.TaskEvent{Kind: rpc.EventAsk, SubtaskID: w.sub.ID, Question: question, Options: options})
	answer, err := ed.Ask(ctx, rpc.AskParams{Question: question, Options: options})
	if errors.Is(err, rpc.ErrUnsupported) {
		actions := make([]protocol.MessageActionItem, len(options))
		for i, o := range options {
			actions[i] = protocol.MessageActionItem{Title: o}
		}
		var item *protocol.MessageActionItem
		item, err = ed.ShowMessageRequest(ctx, protocol.ShowMessageRequestParams{
			Type: protocol.MessageTypeInfo, Message: "agentls asks: " + question, Actions: actions,
		})
		answer = nil
		if item != nil {
			answer = &item.Title
		}
	}
	t.endWait(rpc.TaskEvent{Kind: rpc.EventAnswered, SubtaskID: w.sub.ID, Answer: answer})
	switch {
	case err != nil && ctx.Err() != nil:
		return fail(context.Cause(ctx))
	case errors.Is(err, rpc.ErrTimeout):
		return fail(fmt.Errorf("the user did not answer in time (%w); decide by yourself or finish and say what is open", err))
	case err != nil:
		return fail(fmt.Errorf("the question could not be asked: %w", err))
	case answer == nil:
		return result{content: "The user dismissed the question without answering. Decide by yourself, or finish and say what is open."}
	}
	t.journal.add(rpc.SessionMessage{Role: "user", Text: "Q: " + question + "\nA: " + *answer, TaskID: t.id, SubtaskID: w.sub.ID})
	return result{content: "The user answered: " + *answer}
}
