package workforce

import (
	"context"
	"encoding/json"
)

// Call names the tool call of a worker that a reverse call is made for:
// the read_file that reads through the editor, the edit_file whose edit it
// applies, the run_command it runs or asks approval for, the ask_human it
// asks. The Editor finds it in the context of each of its calls (CallOf),
// so a face that shows tool calls (the ACP agent) can tie a question, a
// diff or a terminal to the call it belongs to. ID is the callId of the
// call's toolCall and toolResult events.
type Call struct {
	TaskID    string
	SubtaskID string
	// ID is unique within the task: the subtask's id, "/", and the call's
	// number within the subtask (from 1).
	ID        string
	Tool      string
	Arguments json.RawMessage
}

type callKey struct{}

func withCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallOf returns the tool call ctx was made for, if any: reverse calls
// made outside a tool call (a task's progress, a review at its end) have
// none.
func CallOf(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}
