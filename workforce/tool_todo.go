package workforce

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
)

// Bounds of a worker's checklist.
const (
	maxTodos       = 50
	maxTodoContent = 500
)

// todoParams are the arguments of todo.
type todoParams struct {
	Todos []todoItem `json:"todos" jsonschema:"The whole checklist, in order; it replaces the one before. An empty list clears it."`
}

type todoItem struct {
	Content string `json:"content" jsonschema:"One step, said briefly."`
	Status  string `json:"status" jsonschema:"pending, in_progress or done."`
}

// todo keeps the worker's checklist: the subtask's todos, shown to the
// person under the subtask (a todos event), and given back to the model.
var todoTool = define("todo",
	"Keep a checklist of the steps of your subtask: give the whole list each time, with each step's status (pending, in_progress or done); keep one step in_progress while you work on it and mark it done when it is. The person sees it under your subtask. Use it for a subtask of three steps or more.",
	func(_ context.Context, w *worker, p todoParams) (result, error) {
		todos, err := checkTodos(p.Todos)
		if err != nil {
			return result{}, err
		}
		t := w.t
		t.mutate(func() []api.TaskEvent {
			if s := t.findLocked(w.sub.ID); s != nil {
				s.Todos = todos
			}
			return []api.TaskEvent{{Kind: api.EventTodos, SubtaskID: w.sub.ID, Todos: todos}}
		})
		return result{content: renderTodos(todos)}, nil
	})

// checkTodos holds a checklist to its bounds, and returns it as the
// protocol has it (never nil, so that an empty list reads as cleared).
func checkTodos(items []todoItem) ([]api.Todo, error) {
	if len(items) > maxTodos {
		return nil, fmt.Errorf("%w: todo takes at most %d steps, not %d: merge some", errArgs, maxTodos, len(items))
	}
	todos := make([]api.Todo, 0, len(items))
	for i, it := range items {
		content := strings.TrimSpace(it.Content)
		switch {
		case content == "":
			return nil, fmt.Errorf("%w: todo's todos[%d] needs content", errArgs, i)
		case utf8.RuneCountInString(content) > maxTodoContent:
			return nil, fmt.Errorf("%w: todo's todos[%d].content is more than %d characters: say it briefly", errArgs, i, maxTodoContent)
		}
		switch it.Status {
		case api.TodoPending, api.TodoInProgress, api.TodoDone:
		default:
			return nil, fmt.Errorf("%w: todo's todos[%d].status is %q, not pending, in_progress or done", errArgs, i, it.Status)
		}
		todos = append(todos, api.Todo{Content: content, Status: it.Status})
	}
	return todos, nil
}

// renderTodos is the checklist as the model reads it back.
func renderTodos(todos []api.Todo) string {
	if len(todos) == 0 {
		return "The checklist is empty."
	}
	var b strings.Builder
	done := 0
	for _, td := range todos {
		mark := "[ ]"
		switch td.Status {
		case api.TodoDone:
			mark = "[x]"
			done++
		case api.TodoInProgress:
			mark = "[>]"
		}
		fmt.Fprintf(&b, "%s %s\n", mark, td.Content)
	}
	fmt.Fprintf(&b, "%d of %d done.", done, len(todos))
	return b.String()
}
