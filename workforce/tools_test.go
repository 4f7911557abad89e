package workforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testkit"
)

// toolHarness is an engine over a workspace whose worker makes, in its
// first turn, the calls a test gives it: they go through the worker's
// dispatcher, as any model's calls do.
type toolHarness struct {
	t        *testing.T
	e        *Engine
	m        *funcModel
	n        *fakeEvents
	root     string
	settings api.Settings

	calls   []clients.ToolCall
	results []clients.ToolResult
}

func newToolHarness(t *testing.T, files map[string]string) *toolHarness {
	t.Helper()
	h := &toolHarness{t: t, settings: settings(), n: &fakeEvents{}}
	h.m = &funcModel{fn: func(_ context.Context, req *clients.Request) (*clients.Response, error) {
		switch {
		case req.Agent == clients.AgentCoordinator:
			return &clients.Response{Text: "one step"}, nil
		case len(req.Messages) == 1:
			return &clients.Response{ToolCalls: h.calls}, nil
		}
		h.results = req.Messages[len(req.Messages)-1].ToolResults
		return finish("done"), nil
	}}
	h.e, h.root = newEngine(t, h.m, h.n, files)
	return h
}

// run has the worker make calls in one turn and returns the run and the
// calls' results in order (none when a call finished the worker).
func (h *toolHarness) run(calls ...clients.ToolCall) (*api.RunResult, []clients.ToolResult) {
	h.t.Helper()
	h.calls, h.results = make([]clients.ToolCall, len(calls)), nil
	for i, c := range calls {
		c.ID = fmt.Sprintf("call_%d", i+1)
		h.calls[i] = c
	}
	res, err := h.e.Run(testkit.Context(h.t), api.RunParams{Prompt: "use the tools"}, h.settings)
	if err != nil {
		h.t.Fatalf("run: %v", err)
	}
	return res, h.results
}

// events are the events of kind of the task taskID, in order.
func (h *toolHarness) events(taskID, kind string) []api.TaskEvent {
	h.n.mu.Lock()
	defer h.n.mu.Unlock()
	var out []api.TaskEvent
	for _, u := range h.n.updates {
		if u.TaskID == taskID && u.Event.Kind == kind {
			out = append(out, u.Event)
		}
	}
	return out
}

// toolCase is one call of a tool and what its result must be.
type toolCase struct {
	name  string
	args  any // marshalled into the arguments; a json.RawMessage is sent as it is
	isErr bool
	says  []string // the result holds each
	path  string   // the path of the toolResult event, when not ""
}

// check makes the calls before (which must succeed), then the cases'
// calls of tool, in one turn and in order, and holds each result to its
// case.
func (h *toolHarness) check(tool string, cases []toolCase, before ...clients.ToolCall) *api.RunResult {
	h.t.Helper()
	calls := make([]clients.ToolCall, len(cases))
	for i, c := range cases {
		raw, ok := c.args.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(c.args); err != nil {
				h.t.Fatal(err)
			}
		}
		calls[i] = clients.ToolCall{Name: tool, Arguments: raw}
	}
	res, results := h.run(append(slices.Clip(before), calls...)...)
	if len(results) != len(before)+len(cases) {
		h.t.Fatalf("%d results for %d calls: %+v", len(results), len(before)+len(cases), res)
	}
	for i, r := range results[:len(before)] {
		if r.IsError {
			h.t.Fatalf("%s %s: %s", before[i].Name, before[i].Arguments, r.Content)
		}
	}
	results = results[len(before):]
	events := h.events(res.TaskID, api.EventToolResult)[len(before):]
	for i, c := range cases {
		h.t.Run(c.name, func(t *testing.T) {
			r := results[i]
			if r.IsError != c.isErr {
				t.Errorf("%s %s: error = %v, want %v:\n%s", tool, calls[i].Arguments, r.IsError, c.isErr, r.Content)
			}
			for _, want := range c.says {
				if !strings.Contains(r.Content, want) {
					t.Errorf("%s %s = %q, want it to say %q", tool, calls[i].Arguments, r.Content, want)
				}
			}
			if c.path != "" && (i >= len(events) || events[i].Path != c.path) {
				t.Errorf("%s %s: the toolResult events are %+v, want path %q for this one", tool, calls[i].Arguments, events, c.path)
			}
		})
	}
	return res
}

// goldenTool is a tool as the model is given it, as its golden file holds
// it.
type goldenTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// TestToolSchemas holds every tool the models are given (the workers' and
// the coordinator's plan) to its golden file, testdata/tools/NAME.json, so
// that a change of a schema or a description is a reviewed diff. With
// -update it rewrites them and removes those of tools that are gone.
func TestToolSchemas(t *testing.T) {
	update := flag.Lookup("update").Value.String() == "true" // testkit's flag
	dir := filepath.Join("testdata", "tools")
	want := map[string]bool{}
	for _, tl := range append(slices.Clip(toolkit()), planTool()) {
		var b bytes.Buffer
		if err := json.Indent(&b, mustJSON(t, goldenTool{tl.Name, tl.Description, tl.Parameters}), "", "  "); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
		want[tl.Name+".json"] = true
		testkit.Golden(t, filepath.Join(dir, tl.Name+".json"), b.String())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		switch {
		case want[e.Name()]:
		case update:
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("%s is the golden file of no tool (-update removes it)", filepath.Join(dir, e.Name()))
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// providerName is what OpenAI and Anthropic accept as a tool's name.
var providerName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// TestToolSchemasAreCompact holds the schemas to what every provider takes
// and the adapter words: an object at the root, no $schema, $id, $defs or
// $ref, a type on every property (Ollama reads it), required properties
// that exist, additionalProperties: false where the decoding refuses
// unknown arguments, and no keyword whose refusal explain has no words for.
func TestToolSchemasAreCompact(t *testing.T) {
	worded := map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true, "description": true, "items": true, "minLength": true}
	for _, tl := range append(slices.Clip(toolkit()), planTool()) {
		t.Run(tl.Name, func(t *testing.T) {
			if !providerName.MatchString(tl.Name) {
				t.Errorf("the name %q is not one the providers accept", tl.Name)
			}
			var root map[string]any
			if err := json.Unmarshal(tl.Parameters, &root); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(tl.Parameters), `"$`) {
				t.Errorf("the schema holds a $ keyword: %s", tl.Parameters)
			}
			if root["type"] != "object" {
				t.Errorf("type = %v, want object", root["type"])
			}
			props, _ := root["properties"].(map[string]any)
			if len(props) == 0 {
				t.Errorf("no properties: %s", tl.Parameters)
			}
			for name, p := range props {
				if typ, _ := p.(map[string]any)["type"].(string); typ == "" {
					t.Errorf("property %s has no type", name)
				}
			}
			req, _ := root["required"].([]any)
			for _, r := range req {
				if _, ok := props[r.(string)]; !ok {
					t.Errorf("%s is required but not a property", r)
				}
			}
			if tl.Name == planToolName {
				// The coordinator's plan is read leniently (validatePlan).
				if _, ok := root["additionalProperties"]; ok {
					t.Errorf("plan's schema closes its properties, which validatePlan does not: %s", tl.Parameters)
				}
				return
			}
			if root["additionalProperties"] != false {
				t.Errorf("additionalProperties = %v, want false: the arguments are decoded strictly", root["additionalProperties"])
			}
			for name, p := range props {
				for k := range p.(map[string]any) {
					if !worded[k] {
						t.Errorf("property %s has %s, which the adapter has no words for", name, k)
					}
				}
			}
		})
	}
}

// TestToolArguments sends every built-in tool, through the worker's
// dispatcher, arguments that do not fit its schema, derived from the
// schema itself: each comes back as an error result that names the field,
// the worker goes on, and nothing runs.
func TestToolArguments(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.txt": "a\n"})
	h.settings.Commands = api.CommandsDeny // a command that ran would say so
	type badCall struct {
		name string
		call clients.ToolCall
		says []string
	}
	var cases []badCall
	add := func(tl *tool, what, raw string, says ...string) {
		cases = append(cases, badCall{tl.spec.Name + " " + what, clients.ToolCall{Name: tl.spec.Name, Arguments: json.RawMessage(raw)}, append([]string{"bad arguments", tl.spec.Name}, says...)})
	}
	for _, tl := range builtins.order {
		tl.ready()
		// Good values of every property, to break one at a time.
		good := goodValue(tl.schema).(map[string]any)
		with := func(k string, v any) string {
			m := map[string]any{}
			for kk, vv := range good {
				m[kk] = vv
			}
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
			return string(mustJSON(t, m))
		}
		add(tl, "given an array", `["x"]`, "are an array, not a JSON object")
		add(tl, "given a number", `7`, "are 7, not a JSON object")
		add(tl, "given a string", `"x"`, "are a string, not a JSON object")
		add(tl, "given broken JSON", `{"`, "are not valid JSON")
		add(tl, "given JSON with more after the object", `{} {}`, "are not valid JSON")
		add(tl, "given an unknown argument", with("colour", "red"), `no argument "colour"`, strings.Join(tl.names(), ", "))
		add(tl, "given an argument in the wrong case", with(strings.ToUpper(tl.names()[0]), "x"), `no argument "`+strings.ToUpper(tl.names()[0])+`"`)
		if req := tl.schema.Required; len(req) > 0 {
			add(tl, "given null", `null`, tl.spec.Name+" needs "+strings.Join(req, " and "))
		}
		for _, k := range tl.schema.Required {
			add(tl, "without "+k, with(k, nil), tl.spec.Name+" needs "+k)
			add(tl, "with a null "+k, with(k, json.RawMessage("null")), tl.spec.Name+" needs "+k)
		}
		for _, k := range tl.names() {
			s, _ := tl.property(k)
			add(tl, "with "+k+" of the wrong type", with(k, wrongValue[s.Type]), tl.spec.Name+"'s "+k+" must be "+kind(s))
			if s.MinLength != nil {
				add(tl, "with an empty "+k, with(k, ""), tl.spec.Name+" needs "+k)
			}
			if s.Items != nil {
				add(tl, "with an item of "+k+" of the wrong type", with(k, []any{goodValue(s.Items), wrongValue[s.Items.Type]}),
					tl.spec.Name+"'s "+k+"[1] must be "+kind(s.Items))
			}
		}
	}
	calls := make([]clients.ToolCall, len(cases))
	for i, c := range cases {
		calls[i] = c.call
	}
	res, results := h.run(calls...)
	if res.State != api.TaskDone || len(results) != len(cases) {
		t.Fatalf("run = %+v with %d results for %d calls", res, len(results), len(cases))
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := results[i]
			if !r.IsError {
				t.Errorf("%s: not an error: %q", c.call.Arguments, r.Content)
			}
			for _, want := range c.says {
				if !strings.Contains(r.Content, want) {
					t.Errorf("%s = %q, want it to say %q", c.call.Arguments, r.Content, want)
				}
			}
		})
	}
	if got := h.events(res.TaskID, api.EventCommandStarted); len(got) != 0 {
		t.Errorf("a command ran: %+v", got)
	}
	if b, err := os.ReadFile(filepath.Join(h.root, "a.txt")); err != nil || string(b) != "a\n" {
		t.Errorf("a.txt = %q, %v", b, err)
	}
}

// goodValue is a value that fits s, a part of a tool's schema: every
// property of an object, one item of an array.
func goodValue(s *jsonschema.Schema) any {
	switch s.Type {
	case "object":
		m := map[string]any{}
		for k, p := range s.Properties {
			m[k] = goodValue(p)
		}
		return m
	case "array":
		return []any{goodValue(s.Items)}
	}
	return map[string]any{"string": "x", "integer": 1, "boolean": true}[s.Type]
}

// wrongValue is, by type, a value of another type.
var wrongValue = map[string]any{"string": 7, "integer": "seven", "boolean": "yes", "array": "x", "object": 7}

func TestDispatcher(t *testing.T) {
	t.Run("tells a worker that calls plan that it is the coordinator's tool", func(t *testing.T) {
		h := newToolHarness(t, nil)
		_, results := h.run(call("plan", map[string]any{"subtasks": []any{}}))
		if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "plan is the coordinator's tool") {
			t.Errorf("results = %+v", results)
		}
	})

	t.Run("lists the tools when a worker calls one that does not exist", func(t *testing.T) {
		h := newToolHarness(t, nil)
		_, results := h.run(call("make_coffee", map[string]any{}))
		if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, `there is no tool "make_coffee"; the tools are read_file, list_files, search_files, find_symbol, find_references, get_diagnostics, write_file, edit_file, delete_file, run_command, ask_human, select_intent, todo, finish`) {
			t.Errorf("results = %+v", results)
		}
	})

	t.Run("gives the model the registry's tools, in order", func(t *testing.T) {
		h := newToolHarness(t, nil)
		h.run()
		reqs := h.m.requests("1")
		if len(reqs) == 0 {
			t.Fatal("no worker request")
		}
		var names []string
		for _, tl := range reqs[0].Tools {
			names = append(names, tl.Name)
		}
		want := []string{"read_file", "list_files", "search_files", "find_symbol", "find_references", "get_diagnostics", "write_file", "edit_file", "delete_file", "run_command", "ask_human", "select_intent", "todo", "finish"}
		if !slices.Equal(names, want) {
			t.Errorf("tools = %v, want %v", names, want)
		}
	})
}

// echoSet is a second set of tools with one tool, mcp__t__echo, that
// answers with its arguments; it records the names it was asked to call.
type echoSet struct{ asked []string }

func (s *echoSet) tools(context.Context, *worker) []clients.Tool {
	return []clients.Tool{
		{Name: "mcp__t__echo", Description: "Echo the arguments.", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "read_file", Description: "A second read_file that must never run."},
	}
}

func (s *echoSet) call(_ context.Context, _ *worker, c clients.ToolCall) (result, bool) {
	s.asked = append(s.asked, c.Name)
	if c.Name != "mcp__t__echo" && c.Name != "read_file" {
		return result{}, false
	}
	return result{content: "echo " + string(c.Arguments)}, true
}

func TestSecondToolSet(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.txt": "alpha\n"})
	src := &echoSet{}
	h.e.extra = src
	_, results := h.run(
		call("mcp__t__echo", map[string]any{"x": 1}),
		call("read_file", map[string]any{"path": "a.txt"}),
		call("mcp__t__gone", map[string]any{}),
	)
	if len(results) != 3 {
		t.Fatalf("results = %+v", results)
	}
	t.Run("offers the set's tools after the registry's, but a name the registry has", func(t *testing.T) {
		tools := h.m.requests("1")[0].Tools
		if len(tools) != len(toolkit())+1 || tools[0].Name != "read_file" || tools[len(toolkit())].Name != "mcp__t__echo" {
			t.Errorf("tools = %+v", tools)
		}
	})
	t.Run("hands the set a call of its tool", func(t *testing.T) {
		if r := results[0]; r.IsError || r.Content != `echo {"x":1}` {
			t.Errorf("result = %+v", r)
		}
	})
	t.Run("consults the registry first, so the set cannot shadow a built-in tool", func(t *testing.T) {
		if r := results[1]; r.IsError || !strings.Contains(r.Content, "alpha") {
			t.Errorf("result = %+v", r)
		}
		if slices.Contains(src.asked, "read_file") {
			t.Errorf("the set was asked for read_file: %v", src.asked)
		}
	})
	t.Run("lists the tools of both when neither has the name", func(t *testing.T) {
		if r := results[2]; !r.IsError || !strings.Contains(r.Content, `there is no tool "mcp__t__gone"`) || !strings.Contains(r.Content, "finish, mcp__t__echo") {
			t.Errorf("result = %+v", r)
		}
	})
}

// FuzzToolArguments: no arguments crash a tool's decoding; what it refuses
// is a bad-arguments error that names the tool in words of its own (never
// the library's, which explain keeps for what it cannot word), and what it
// accepts is an object of the tool's properties with its required ones
// present.
func FuzzToolArguments(f *testing.F) {
	for i, seed := range []string{``, `{}`, `null`, `[]`, `"x"`, `{"path":"a.txt"}`, `{"path":7}`, `{"path":null}`, `{"pattern":"**"}`,
		`{"regex":"(","glob":1}`, `{"path":"a","content":""}`, `{"path":"a","old_string":"x","new_string":"y","replace_all":1}`,
		`{"command":"ls","timeoutMs":1e99}`, `{"question":"q","options":["a",2]}`, `{"intent_id":""}`, `{"summary":"s","x":1}`, `{"PATH":"a"}`, `{"path":"a"} {}`} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, i uint8, raw []byte) {
		tl := builtins.order[int(i)%len(builtins.order)]
		err := tl.decode(raw, tl.params())
		if err != nil {
			if !errors.Is(err, errArgs) || !strings.Contains(err.Error(), tl.spec.Name) {
				t.Fatalf("%s %q: the error %q is not a bad-arguments error naming the tool", tl.spec.Name, raw, err)
			}
			if strings.Contains(err.Error(), "does not fit its schema") {
				t.Fatalf("%s %q: the error %q is not worded", tl.spec.Name, raw, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := json.Unmarshal(raw, &obj); err != nil {
				t.Fatalf("%s accepted %q, which is not an object: %v", tl.spec.Name, raw, err)
			}
		}
		for k := range obj {
			if _, ok := tl.property(k); !ok {
				t.Fatalf("%s accepted %q, with the unknown argument %q", tl.spec.Name, raw, k)
			}
		}
		for _, k := range tl.schema.Required {
			if v, ok := obj[k]; !ok || string(v) == "null" {
				t.Fatalf("%s accepted %q, without %s", tl.spec.Name, raw, k)
			}
		}
	})
}
