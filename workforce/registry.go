package workforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/invopop/jsonschema"

	"github.com/agentls/agentls/clients"
)

// The worker's tools (docs/WORKFORCE.md, "The tools"). Each has a file of
// its own, tool_<name>.go, that holds:
//
//   - a params struct, the tool's arguments. Its JSON Schema, what the model
//     is given, is generated from it: the json tag names a property, a field
//     without omitempty is required, jsonschema_description describes it,
//     and a jsonschema tag adds the keywords the adapter enforces
//     (minLength).
//   - the tool's description, beside the struct, in its define call.
//   - the function that does the work, given the decoded params.
//
// define binds the three into a tool, and the registry (builtins) lists the
// tools in the order the model is shown them. The one generic adapter,
// tool.call, decodes the arguments against the schema (an error result that
// names the field when they do not fit it, never a crash), calls the
// function and shapes its result. The schemas are held to golden files
// (testdata/tools, go test ./workforce -run TestToolSchemas -update).

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

// tool is one tool of the registry.
type tool struct {
	spec   clients.Tool
	schema *jsonschema.Schema
	run    func(ctx context.Context, w *worker, raw json.RawMessage) result
	params func() any // a new params value, to decode into
}

// define makes a tool of name, its description and do. do gets the
// arguments decoded into P and held to P's schema. Its result goes to the
// model as it is; an error goes as "Error: …", about the result's path.
func define[P any](name, description string, do func(ctx context.Context, w *worker, p P) (result, error)) *tool {
	tl := &tool{schema: schemaOf[P](false), params: func() any { return new(P) }}
	tl.spec = clients.Tool{Name: name, Description: description, Parameters: marshalSchema(tl.schema)}
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

// schemaOf generates the JSON Schema of P: one tree (no $defs or $ref),
// without $schema and $id, and with additionalProperties: false on every
// object unless open.
func schemaOf[P any](open bool) *jsonschema.Schema {
	r := &jsonschema.Reflector{Anonymous: true, DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: open}
	s := r.Reflect(new(P))
	s.Version = ""
	return s
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

// decode reads raw into p, holding it to the tool's schema: a JSON object
// (none at all counts as {}), no property the schema lacks (names are
// exact), every property of the type the schema gives, every required one
// present and not null, and strings no shorter than their minLength. The
// error names the tool and the field.
func (tl *tool) decode(raw json.RawMessage, p any) error {
	name := tl.spec.Name
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		if !json.Valid(raw) {
			return fmt.Errorf("%w: the arguments of %s are not valid JSON (%v); give a JSON object", errArgs, name, err)
		}
		return fmt.Errorf("%w: the arguments of %s are %s, not a JSON object", errArgs, name, jsonKind(raw))
	}
	var unknown []string
	for k := range obj {
		if _, ok := tl.property(k); !ok {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		what := "no argument " + unknown[0]
		if len(unknown) > 1 {
			what = "no arguments " + strings.Join(unknown, ", ")
		}
		return fmt.Errorf("%w: %s has %s; its arguments are %s", errArgs, name, what, strings.Join(tl.names(), ", "))
	}
	// Every name is a property by now, so encoding/json's case-insensitive
	// matching has nothing to be lenient about.
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
	var missing []string
	for _, k := range tl.schema.Required {
		if v, ok := obj[k]; !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return required(name, missing...)
	}
	for k, s := range tl.properties() {
		if s.MinLength == nil || obj[k] == nil {
			continue
		}
		var v string
		if json.Unmarshal(obj[k], &v) == nil && uint64(utf8.RuneCountInString(v)) < *s.MinLength {
			if *s.MinLength == 1 {
				return required(name, k)
			}
			return fmt.Errorf("%w: %s's %s must be at least %d characters", errArgs, name, k, *s.MinLength)
		}
	}
	return nil
}

// property is the schema of the tool's argument k.
func (tl *tool) property(k string) (*jsonschema.Schema, bool) {
	if tl.schema.Properties == nil {
		return nil, false
	}
	return tl.schema.Properties.Get(k)
}

// properties are the schemas of the tool's arguments, in order.
func (tl *tool) properties() iter.Seq2[string, *jsonschema.Schema] {
	return func(yield func(string, *jsonschema.Schema) bool) {
		if tl.schema.Properties == nil {
			return
		}
		for k, s := range tl.schema.Properties.FromOldest() {
			if !yield(k, s) {
				return
			}
		}
	}
}

// names lists the tool's arguments in the schema's order.
func (tl *tool) names() []string {
	var out []string
	for k := range tl.properties() {
		out = append(out, k)
	}
	return out
}

// jsonKind says what a valid JSON value that is not an object is.
func jsonKind(raw json.RawMessage) string {
	switch bytes.TrimSpace(raw)[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	}
	return "a number"
}

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
		if r.byName[tl.spec.Name] != nil {
			panic("workforce: two tools are named " + tl.spec.Name)
		}
		r.byName[tl.spec.Name] = tl
	}
	return r
}

// specs are the tools as the model is given them.
func (r *registry) specs() []clients.Tool {
	out := make([]clients.Tool, len(r.order))
	for i, tl := range r.order {
		out[i] = tl.spec
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
	writeFileTool,
	editFileTool,
	deleteFileTool,
	runCommandTool,
	askHumanTool,
	selectIntentTool,
	todoTool,
	finishTool,
)

// toolkit is what the worker's model is given of the built-in tools.
var toolkit = builtins.specs()

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
