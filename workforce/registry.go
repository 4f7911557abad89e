package workforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentls/agentls/clients"
)

// The worker's tools (docs/WORKFORCE.md, "The tools"). Each has a file of
// its own, tool_<name>.go, that holds:
//
//   - a params struct, the tool's arguments. Its JSON Schema, what the model
//     is given, is generated from it by github.com/google/jsonschema-go: the
//     json tag names a property, a field without omitempty is required, and
//     the jsonschema tag describes it. What a tag cannot say (minLength) the
//     struct's shape method sets on the generated schema (shaper).
//   - the tool's description, beside the struct, in its define call.
//   - the function that does the work, given the decoded params.
//
// define binds the three into a tool, and the registry (builtins) lists the
// tools in the order the model is shown them. The one generic adapter,
// tool.run, has the same library hold the arguments to the schema (an
// error result that names the field when they do not fit it, never a
// crash), decodes them, calls the function and shapes its result. The
// schemas are held to golden files (testdata/tools, go test ./workforce
// -run TestToolSchemas -update).

// result is what one tool call gave back.
type result struct {
	content string
	isErr   bool
	finish  bool
	summary string
	path    string // the file it was about, for the event
	images  []clients.Image
}

func fail(err error) result { return result{content: "Error: " + err.Error(), isErr: true} }

func withPath(r result, p string) result {
	r.path = p
	return r
}

// errArgs: the arguments do not fit the tool.
var errArgs = errors.New("bad arguments")

func required(tool string, fields ...string) error {
	return fmt.Errorf("%w: %s needs %s", errArgs, tool, strings.Join(fields, " and "))
}

// tool is one tool of the registry. Its schema is made on first use
// (ready), not when the package loads: reflecting over the params types
// and resolving their schemas is work, and memory, a process that never
// runs a worker (agentls version, an idle editor) does without.
type tool struct {
	name   string
	run    func(ctx context.Context, w *worker, raw json.RawMessage) result
	params func() any // a new params value, to decode into

	once     sync.Once
	build    func() (*jsonschema.Schema, clients.Tool)
	spec     clients.Tool
	schema   *jsonschema.Schema
	resolved *jsonschema.Resolved // schema, ready to validate with
}

// ready makes the tool's schema, once, and returns the tool.
func (tl *tool) ready() *tool {
	tl.once.Do(func() {
		tl.schema, tl.spec = tl.build()
		tl.resolved = resolve(tl.schema)
	})
	return tl
}

// define makes a tool of name, its description and do. do gets the
// arguments decoded into P and held to P's schema. Its result goes to the
// model as it is; an error goes as "Error: …", about the result's path.
func define[P any](name, description string, do func(ctx context.Context, w *worker, p P) (result, error)) *tool {
	tl := &tool{name: name, params: func() any { return new(P) }}
	tl.build = func() (*jsonschema.Schema, clients.Tool) {
		s := schemaOf[P]()
		return s, clients.Tool{Name: name, Description: description, Parameters: marshalSchema(s)}
	}
	tl.run = func(ctx context.Context, w *worker, raw json.RawMessage) result {
		var p P
		if err := tl.decode(raw, &p); err != nil {
			return fail(err)
		}
		r, err := do(ctx, w, p)
		if err != nil {
			return withPath(fail(err), r.path)
		}
		return r
	}
	return tl
}

// shaper is a params type that sets on its generated schema what its tags
// cannot say: minLength (nonEmpty), minItems, objects left open (open).
type shaper interface{ shape(s *jsonschema.Schema) }

// schemaOf generates the JSON Schema of P with jsonschema.For: one tree
// (no $defs or $ref), without $schema and $id, additionalProperties: false
// on every object, then P's shape. What the library types as nullable (a
// slice, since encoding/json writes a nil one as null) is given its one
// type: an argument has a value or is left out, and null counts as left
// out (decode). A type the library cannot represent is a bug of this
// package, which every test of it shows (the package does not load).
func schemaOf[P any]() *jsonschema.Schema {
	s, err := jsonschema.For[P](nil)
	if err != nil {
		panic(fmt.Sprintf("workforce: the params type %T has no JSON Schema: %v", *new(P), err))
	}
	walk(s, func(s *jsonschema.Schema) {
		if len(s.Types) == 2 && s.Types[0] == "null" {
			s.Type, s.Types = s.Types[1], nil
		}
	})
	if sh, ok := any(*new(P)).(shaper); ok {
		sh.shape(s)
	}
	return s
}

// walk calls f on s and every schema under it, parents first. It goes
// where the schemas schemaOf generates have parts: properties and items.
func walk(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	if s == nil {
		return
	}
	f(s)
	for _, k := range s.PropertyOrder {
		walk(s.Properties[k], f)
	}
	walk(s.Items, f)
}

// nonEmpty sets minLength 1 on the string properties names of the object
// schema s: arguments that must not be empty. A name that is not a string
// property of s is a bug of the params type, shown at once.
func nonEmpty(s *jsonschema.Schema, names ...string) {
	for _, n := range names {
		p := s.Properties[n]
		if p == nil || p.Type != "string" {
			panic(fmt.Sprintf("workforce: nonEmpty(%q): not a string property of the schema", n))
		}
		p.MinLength = jsonschema.Ptr(1)
	}
}

// open lets every object of s have properties it does not name: it drops
// the additionalProperties: false that jsonschema.For gives a struct.
func open(s *jsonschema.Schema) {
	walk(s, func(s *jsonschema.Schema) {
		if s.Type == "object" {
			s.AdditionalProperties = nil
		}
	})
}

// resolve readies a generated schema for validation. It cannot fail for a
// schema of a Go type; if it does, that is a bug of this package.
func resolve(s *jsonschema.Schema) *jsonschema.Resolved {
	rs, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("workforce: a tool's schema does not resolve: %v", err))
	}
	return rs
}

// marshalSchema is the schema as the providers are sent it. The schema is
// generated from a Go type: failing to marshal it is a bug of the type,
// which TestToolSchemas shows.
func marshalSchema(s *jsonschema.Schema) json.RawMessage {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("workforce: a tool's schema does not marshal: %v", err))
	}
	return b
}

// decode holds raw to the tool's schema and reads it into p. No arguments
// at all, or null, count as {}, and an argument given as null as one left
// out (models send null for an optional argument they do not use). The
// library judges the rest (Resolved.Validate: a JSON object, no property
// the schema lacks, names exact, each of its type, the required ones
// present, strings no shorter than their minLength); when it refuses them,
// explain says why, naming the tool and the field.
func (tl *tool) decode(raw json.RawMessage, p any) error {
	tl.ready()
	name := tl.name
	if b := bytes.TrimSpace(raw); len(b) == 0 || string(b) == "null" {
		raw = json.RawMessage("{}")
	}
	var args any
	if err := json.Unmarshal(raw, &args); err != nil {
		return fmt.Errorf("%w: the arguments of %s are not valid JSON (%v); give a JSON object", errArgs, name, err)
	}
	if obj, ok := args.(map[string]any); ok {
		for k, v := range obj {
			if _, known := tl.schema.Properties[k]; known && v == nil {
				delete(obj, k)
			}
		}
	}
	if err := tl.resolved.Validate(args); err != nil {
		return fmt.Errorf("%w: %s", errArgs, explain(name, "", tl.schema, args, err))
	}
	// Every name is a property by now, so encoding/json's case-insensitive
	// matching has nothing to be lenient about. What is left for it to
	// refuse is a number the Go type cannot hold.
	if err := json.Unmarshal(raw, p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			field, _, _ := strings.Cut(te.Field, ".")
			if s, ok := tl.property(field); ok {
				return fmt.Errorf("%w: %s's %s must be %s, not %s", errArgs, name, field, kind(s), te.Value)
			}
		}
		return fmt.Errorf("%w: %s: %v", errArgs, name, err)
	}
	return nil
}

// explain says why the library refused v (err), the value at path of the
// tool's arguments (the arguments themselves at ""), which s is the
// schema of. It asks the library about each part of v in turn, goes down
// to the first part refused, and words what that part's schema asks for:
// arguments that are not a JSON object, a property the schema lacks, a
// required one missing or empty, a value of the wrong type; what it has
// no words for, the library's own say.
func explain(tool, path string, s *jsonschema.Schema, v any, err error) string {
	subject := tool
	if path != "" {
		subject = tool + "'s " + path
	}
	if check(&jsonschema.Schema{Type: s.Type, Types: s.Types}, v) != nil {
		if path == "" {
			return fmt.Sprintf("the arguments of %s are %s, not a JSON object", tool, describe(v))
		}
		return fmt.Sprintf("%s must be %s, not %s", subject, kind(s), describe(v))
	}
	switch v := v.(type) {
	case map[string]any:
		var unknown []string
		for k := range v {
			if s.Properties[k] == nil && s.AdditionalProperties != nil {
				unknown = append(unknown, strconv.Quote(k))
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			one, many := "argument", "arguments"
			if path != "" {
				one, many = "property", "properties"
			}
			what := "no " + one + " " + unknown[0]
			if len(unknown) > 1 {
				what = "no " + many + " " + strings.Join(unknown, ", ")
			}
			return fmt.Sprintf("%s has %s; its %s are %s", subject, what, many, strings.Join(s.PropertyOrder, ", "))
		}
		var needs []string
		for _, k := range s.PropertyOrder {
			ps := s.Properties[k]
			pv, given := v[k]
			switch {
			case !given:
				if slices.Contains(s.Required, k) {
					needs = append(needs, k)
				}
			case check(ps, pv) == nil:
			case pv == "" && ps.MinLength != nil && *ps.MinLength == 1:
				needs = append(needs, k)
			default:
				return explain(tool, join(path, k), ps, pv, nil)
			}
		}
		if len(needs) > 0 {
			return subject + " needs " + strings.Join(needs, " and ")
		}
	case []any:
		for i, item := range v {
			if s.Items != nil && check(s.Items, item) != nil {
				return explain(tool, fmt.Sprintf("%s[%d]", path, i), s.Items, item, nil)
			}
		}
	}
	if err == nil {
		err = check(s, v)
	}
	if path == "" {
		return fmt.Sprintf("the arguments of %s do not fit its schema: %v", tool, err)
	}
	return fmt.Sprintf("%s does not fit its schema: %v", subject, err)
}

// check has the library validate v against s, a part of a tool's schema.
func check(s *jsonschema.Schema, v any) error {
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	return rs.Validate(v)
}

// join is the path of the property k of the object at path.
func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// describe says what a JSON value is, for an error: null, true and
// numbers as they are, a string, an array or an object by kind (their
// content may be long).
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// property is the schema of the tool's argument k.
func (tl *tool) property(k string) (*jsonschema.Schema, bool) {
	s, ok := tl.ready().schema.Properties[k]
	return s, ok
}

// names lists the tool's arguments in the schema's order.
func (tl *tool) names() []string { return slices.Clone(tl.ready().schema.PropertyOrder) }

// kind says what a value of schema s is, for an error: "a string", "an
// array of strings".
func kind(s *jsonschema.Schema) string {
	switch s.Type {
	case "string":
		return "a string"
	case "integer":
		return "an integer"
	case "number":
		return "a number"
	case "boolean":
		return "true or false"
	case "object":
		return "an object"
	case "array":
		if s.Items != nil && s.Items.Type != "" {
			return "an array of " + strings.TrimPrefix(strings.TrimPrefix(kind(s.Items), "an "), "a ") + "s"
		}
		return "an array"
	case "":
		if len(s.Types) > 0 {
			return "of type " + strings.Join(s.Types, " or ")
		}
		return "any JSON value"
	}
	return "of type " + s.Type
}

// registry is a set of tools by name, in the order the model is shown them.
type registry struct {
	order  []*tool
	byName map[string]*tool
}

// newRegistry lists tools, whose names must be unique: two tools of one
// name are a bug of this package, which TestToolSchemas shows.
func newRegistry(tools ...*tool) *registry {
	r := &registry{order: tools, byName: make(map[string]*tool, len(tools))}
	for _, tl := range tools {
		if r.byName[tl.name] != nil {
			panic("workforce: two tools are named " + tl.name)
		}
		r.byName[tl.name] = tl
	}
	return r
}

// specs are the tools as the model is given them.
func (r *registry) specs() []clients.Tool {
	out := make([]clients.Tool, len(r.order))
	for i, tl := range r.order {
		out[i] = tl.ready().spec
	}
	return out
}

// builtins are the worker's own tools, in the order the model is shown
// them. A tool's file defines it; this list is where it is registered.
var builtins = newRegistry(
	readFileTool,
	listFilesTool,
	searchFilesTool,
	findSymbolTool,
	findReferencesTool,
	getDiagnosticsTool,
	writeFileTool,
	editFileTool,
	deleteFileTool,
	runCommandTool,
	askHumanTool,
	selectIntentTool,
	todoTool,
	finishTool,
)

// toolkit is what the worker's model is given of the built-in tools, made
// on first use.
var toolkit = sync.OnceValue(builtins.specs)

// toolSet is a second set of tools for workers, after the registry: the
// MCP servers' tools (mcpTools). The registry is consulted first, so a set
// can neither shadow nor duplicate a built-in tool.
type toolSet interface {
	// tools lists the set's tools for w's next turn; ctx bounds any wait
	// (servers that start on their first need).
	tools(ctx context.Context, w *worker) []clients.Tool
	// call runs c for w when the set has the tool c names (handled: true),
	// or reports that it has none of that name (handled: false).
	call(ctx context.Context, w *worker, c clients.ToolCall) (r result, handled bool)
}
