package workforce

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// planArgs are the arguments of plan, the coordinator's one tool
// (docs/WORKFORCE.md, tools). They are read leniently (validatePlan), so
// the schema allows properties it does not name.
type planArgs struct {
	Subtasks []planSubtask `json:"subtasks"`
}

func (planArgs) shape(s *jsonschema.Schema) {
	subtasks := s.Properties["subtasks"]
	subtasks.MinItems = jsonschema.Ptr(1)
	nonEmpty(subtasks.Items, "id", "content")
	open(s)
}

// planSubtask is one subtask of a plan.
type planSubtask struct {
	ID        string   `json:"id" jsonschema:"short unique id, e.g. \"1\""`
	Content   string   `json:"content" jsonschema:"what to do, written so a worker can do it on its own"`
	DependsOn []string `json:"dependsOn,omitempty" jsonschema:"ids of subtasks that must be done first"`
	Role      string   `json:"role,omitempty" jsonschema:"optional role of the worker, e.g. \"tester\""`
	Engine    string   `json:"engine,omitempty" jsonschema:"optional: the external agent to run this subtask on, one of the engines the instructions list; leave it out for agentls's own worker"`
}

// planToolName is the coordinator's one tool.
const planToolName = "plan"

// planTool is the coordinator's tool, made on first use.
var planTool = sync.OnceValue(func() clients.Tool {
	return clients.Tool{
		Name:        planToolName,
		Description: "Submit the plan: the subtasks workers will carry out. Subtasks without dependencies between them run in parallel.",
		Parameters:  marshalSchema(schemaOf[planArgs]()),
	}
})

// validatePlan checks a plan: at least one and at most MaxSubtasks
// subtasks, unique non-empty ids, content, known dependencies, no cycle.
func (t *task) validatePlan(raw json.RawMessage) ([]*subtask, error) {
	var args planArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("arguments are not {subtasks: [{id, content, dependsOn?, role?}]}: %v", err)
	}
	if len(args.Subtasks) == 0 {
		return nil, errors.New("subtasks is empty")
	}
	if max := t.e.cfg.MaxSubtasks; len(args.Subtasks) > max {
		return nil, fmt.Errorf("%d subtasks; at most %d are allowed, merge some", len(args.Subtasks), max)
	}
	subs := make([]*subtask, 0, len(args.Subtasks))
	ids := map[string]bool{}
	for i, a := range args.Subtasks {
		id := strings.TrimSpace(a.ID)
		switch {
		case id == "":
			return nil, fmt.Errorf("subtask %d has no id", i+1)
		case ids[id]:
			return nil, fmt.Errorf("id %q is used twice", id)
		case strings.TrimSpace(a.Content) == "":
			return nil, fmt.Errorf("subtask %q has no content", id)
		}
		ids[id] = true
		deps := []string{}
		for _, d := range a.DependsOn {
			d = strings.TrimSpace(d)
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		engine := strings.TrimSpace(a.Engine)
		if t.params.Engine == "" {
			if err := t.e.checkEngine(engine); err != nil {
				return nil, fmt.Errorf("subtask %q: %v; the engines are %s (or none, for agentls's own worker)", id, err, t.engineList())
			}
		}
		subs = append(subs, &subtask{Subtask: api.Subtask{ID: id, Content: a.Content, State: api.SubtaskPending, DependsOn: deps, Role: a.Role, Engine: engine}})
	}
	for _, s := range subs {
		for _, d := range s.DependsOn {
			switch {
			case d == s.ID:
				return nil, fmt.Errorf("subtask %q depends on itself", s.ID)
			case !ids[d]:
				return nil, fmt.Errorf("subtask %q depends on %q, which is not in the plan", s.ID, d)
			}
		}
	}
	if cycle := findCycle(subs); cycle != nil {
		return nil, fmt.Errorf("the dependencies form a cycle: %s", strings.Join(cycle, " → "))
	}
	return subs, nil
}

// findCycle returns the ids of a dependency cycle, or nil.
func findCycle(subs []*subtask) []string {
	deps := map[string][]string{}
	for _, s := range subs {
		deps[s.ID] = s.DependsOn
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		stack = append(stack, id)
		for _, d := range deps[id] {
			switch color[d] {
			case grey:
				i := slices.Index(stack, d)
				return append(append([]string{}, stack[i:]...), d)
			case white:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, s := range subs {
		if color[s.ID] == white {
			if c := visit(s.ID); c != nil {
				return c
			}
		}
	}
	return nil
}
