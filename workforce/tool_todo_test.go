package workforce

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestTodo(t *testing.T) {
	steps := func(pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i+1 < len(pairs); i += 2 {
			out = append(out, map[string]any{"content": pairs[i], "status": pairs[i+1]})
		}
		return out
	}
	t.Run("refuses a checklist it cannot show, and keeps the one in force", func(t *testing.T) {
		h := newToolHarness(t, nil)
		many := make([]map[string]any, maxTodos+1)
		for i := range many {
			many[i] = map[string]any{"content": "step", "status": "pending"}
		}
		res := h.check("todo", []toolCase{
			{name: "a valid list first", args: map[string]any{"todos": steps("Read main.go", "done", "Add greet", "in_progress")}, says: []string{"[x] Read main.go\n[>] Add greet\n1 of 2 done."}},
			{name: "no todos", args: map[string]any{}, isErr: true, says: []string{"todo needs todos"}},
			{name: "a blank step", args: map[string]any{"todos": steps(" ", "pending")}, isErr: true, says: []string{"todos[0] needs content"}},
			{name: "a step without a status", args: map[string]any{"todos": []any{map[string]any{"content": "a"}}}, isErr: true, says: []string{"todo's todos[0] needs status"}},
			{name: "a step with a property it has not", args: map[string]any{"todos": []any{map[string]any{"content": "a", "status": "done", "priority": 1}}}, isErr: true, says: []string{`todo's todos[0] has no property "priority"; its properties are content, status`}},
			{name: "a step that is not an object", args: map[string]any{"todos": []any{map[string]any{"content": "a", "status": "done"}, "b"}}, isErr: true, says: []string{"todo's todos[1] must be an object, not a string"}},
			{name: "a step whose content is not a string", args: map[string]any{"todos": []any{map[string]any{"content": 7, "status": "done"}}}, isErr: true, says: []string{"todo's todos[0].content must be a string, not 7"}},
			{name: "an unknown status", args: map[string]any{"todos": steps("a", "pending", "b", "started")}, isErr: true, says: []string{`todos[1].status is "started", not pending, in_progress or done`}},
			{name: "a step too long", args: map[string]any{"todos": steps(strings.Repeat("x", maxTodoContent+1), "pending")}, isErr: true, says: []string{"more than 500 characters"}},
			{name: "too many steps", args: map[string]any{"todos": many}, isErr: true, says: []string{"at most 50 steps, not 51"}},
		})
		want := []api.Todo{{Content: "Read main.go", Status: "done"}, {Content: "Add greet", Status: "in_progress"}}
		if len(res.Subtasks) != 1 || !reflect.DeepEqual(res.Subtasks[0].Todos, want) {
			t.Errorf("subtasks = %+v", res.Subtasks)
		}
	})
	t.Run("sets the subtask's todos and sends each list whole in a todos event", func(t *testing.T) {
		h := newToolHarness(t, nil)
		res, results := h.run(
			call("todo", map[string]any{"todos": steps("Add greet", "in_progress", "Test greet", "pending")}),
			call("todo", map[string]any{"todos": steps("Add greet", "done", "Test greet", "in_progress")}),
		)
		if len(results) != 2 || results[1].Content != "[x] Add greet\n[>] Test greet\n1 of 2 done." {
			t.Fatalf("results = %+v", results)
		}
		evs := h.events(res.TaskID, api.EventTodos)
		if len(evs) != 2 || evs[0].SubtaskID != "1" || evs[1].Todos[0].Status != api.TodoDone || evs[1].Todos[1].Status != api.TodoInProgress {
			t.Errorf("events = %+v", evs)
		}
		if got := res.Subtasks[0].Todos; len(got) != 2 || got[1] != (api.Todo{Content: "Test greet", Status: api.TodoInProgress}) {
			t.Errorf("todos = %+v", got)
		}
	})
	t.Run("clears the list with an empty one", func(t *testing.T) {
		h := newToolHarness(t, nil)
		res, results := h.run(
			call("todo", map[string]any{"todos": steps("Add greet", "pending")}),
			call("todo", map[string]any{"todos": []any{}}),
		)
		if results[1].Content != "The checklist is empty." || len(res.Subtasks[0].Todos) != 0 {
			t.Errorf("results %+v, todos %+v", results, res.Subtasks[0].Todos)
		}
		if evs := h.events(res.TaskID, api.EventTodos); len(evs) != 2 || len(evs[1].Todos) != 0 {
			t.Errorf("events = %+v", evs)
		}
	})
}
