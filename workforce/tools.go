package workforce

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/tracking/intents"
	"github.com/agentls/agentls/tracking/trace"
)

// The tools the model is given (docs/WORKFORCE.md). Their names are fixed: scripts use them.
var planTool = clients.Tool{
	Name:        "plan",
	Description: "Submit the plan: the subtasks workers will carry out. Subtasks without dependencies between them run in parallel.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"subtasks":{"type":"array","minItems":1,"items":{"type":"object","properties":{` +
		`"id":{"type":"string","description":"short unique id, e.g. \"1\""},` +
		`"content":{"type":"string","description":"what to do, written so a worker can do it on its own"},` +
		`"dependsOn":{"type":"array","items":{"type":"string"},"description":"ids of subtasks that must be done first"},` +
		`"role":{"type":"string","description":"optional role of the worker, e.g. \"tester\""}},"required":["id","content"]}}},"required":["subtasks"]}`),
}

var toolkit = []clients.Tool{
	{Name: "read_file", Description: "Read a text file as the editor has it (unsaved changes included). Lines are numbered from 1; long files are shown in parts: use offset and limit to read on.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"workspace-relative path"},"offset":{"type":"integer","description":"first line to show, from 1"},"limit":{"type":"integer","description":"number of lines to show"}},"required":["path"]}`)},
	{Name: "list_files", Description: "List the workspace's files matching a glob (doublestar: ** matches any depth; a pattern without / matches file names at any depth). .git and ignored files are left out.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"glob, e.g. \"**/*.go\"; default: every file"}}}`)},
	{Name: "search_files", Description: "Search the workspace's text files for a regular expression (RE2 syntax). Returns path:line: text.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"regex":{"type":"string"},"glob":{"type":"string","description":"only files matching this glob"}},"required":["regex"]}`)},
	{Name: "write_file", Description: "Create a file with this content, or replace the whole content of a file you have read.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`)},
	{Name: "edit_file", Description: "Replace old_string with new_string in a file you have read. old_string must occur exactly once (include enough surrounding lines), unless replace_all is true.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"]}`)},
	{Name: "delete_file", Description: "Delete a file you have read.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "run_command", Description: "Run a shell command (sh -c) in the workspace root and return its exit code and output (stdout and stderr; long output is cut in the middle). It may need the user's approval.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeoutMs":{"type":"integer","description":"time limit in milliseconds"}},"required":["command"]}`)},
	{Name: "ask_human", Description: "Ask the user a question and wait for the answer. Give options when the answer is a choice.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"options":{"type":"array","items":{"type":"string"}}},"required":["question"]}`)},
	{Name: "select_intent", Description: "Select the intent (from .orchestration/active_intents.yaml) your work belongs to. Returns its scope, constraints and acceptance criteria. Needed before changing files or running commands in a workspace that has intents.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"intent_id":{"type":"string"}},"required":["intent_id"]}`)},
	{Name: "finish", Description: "End your subtask with a short summary of what you did and found.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`)},
}

// result is what one tool call gave back.
type result struct {
	content string
	isErr   bool
	finish  bool
	summary string
	path    string // the file it was about, for the event
}

func fail(err error) result { return result{content: "Error: " + err.Error(), isErr: true} }

// errArgs: the arguments do not fit the tool.
var errArgs = errors.New("bad arguments")

// decode reads a tool's arguments, refusing unknown fields so a misspelt
// argument is told to the model rather than silently ignored.
func decode(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errArgs, err)
	}
	return nil
}

func required(tool string, fields ...string) error {
	return fmt.Errorf("%w: %s needs %s", errArgs, tool, strings.Join(fields, " and "))
}

// call runs one tool call and tells the person (toolCall, toolResult).
func (w *worker) call(ctx context.Context, c clients.ToolCall) result {
	w.toolMu.Lock()
	defer w.toolMu.Unlock()
	t := w.t
	w.calls++
	id := w.sub.ID + "/" + strconv.Itoa(w.calls)
	ctx = withCall(ctx, Call{TaskID: t.id, SubtaskID: w.sub.ID, ID: id, Tool: c.Name, Arguments: c.Arguments})
	t.emit(api.TaskEvent{Kind: api.EventToolCall, SubtaskID: w.sub.ID, CallID: id, Tool: c.Name, Arguments: c.Arguments})
	t.journal.add(api.SessionMessage{Role: "tool", Text: c.Name + " " + oneLine(string(c.Arguments), 300), TaskID: t.id, SubtaskID: w.sub.ID})
	r := w.dispatch(ctx, c)
	// What a tool gives back goes to the model, the person and the logs:
	// no secret in it (a file or a command's output may hold one).
	r.content, r.summary = t.e.cfg.Redactor.String(r.content), t.e.cfg.Redactor.String(r.summary)
	ok := !r.isErr
	t.emit(api.TaskEvent{Kind: api.EventToolResult, SubtaskID: w.sub.ID, CallID: id, Tool: c.Name, OK: &ok, Path: r.path, Summary: oneLine(r.content, 200)})
	if r.isErr {
		w.log.Debug("tool failed", zap.String("tool", c.Name), zap.String("error", r.content))
	}
	return r
}

func (w *worker) dispatch(ctx context.Context, c clients.ToolCall) result {
	if strings.HasPrefix(c.Name, api.MCPToolPrefix) {
		return w.mcpCall(ctx, c)
	}
	switch c.Name {
	case "read_file":
		var a struct {
			Path   string `json:"path"`
			Offset int    `json:"offset"`
			Limit  int    `json:"limit"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.Path == "" {
			return fail(required(c.Name, "path"))
		}
		res, err := w.agent.Read(ctx, a.Path, a.Offset, a.Limit)
		if err != nil {
			return withPath(fail(err), a.Path)
		}
		return result{content: res.Text, path: res.Path}
	case "list_files":
		var a struct {
			Pattern string `json:"pattern"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		res, err := w.agent.List(ctx, a.Pattern)
		if err != nil {
			return fail(err)
		}
		return result{content: res.Text}
	case "search_files":
		var a struct {
			Regex string `json:"regex"`
			Glob  string `json:"glob"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.Regex == "" {
			return fail(required(c.Name, "regex"))
		}
		res, err := w.agent.Search(ctx, a.Regex, a.Glob)
		if err != nil {
			return fail(err)
		}
		return result{content: res.Text}
	case "write_file":
		var a struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.Path == "" || a.Content == nil {
			return fail(required(c.Name, "path", "content"))
		}
		return w.change(c.Name, a.Path, func() (editing.Change, error) { return w.agent.Write(ctx, a.Path, *a.Content) })
	case "edit_file":
		var a struct {
			Path       string  `json:"path"`
			OldString  *string `json:"old_string"`
			NewString  *string `json:"new_string"`
			ReplaceAll bool    `json:"replace_all"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.Path == "" || a.OldString == nil || a.NewString == nil {
			return fail(required(c.Name, "path", "old_string", "new_string"))
		}
		return w.change(c.Name, a.Path, func() (editing.Change, error) {
			return w.agent.Edit(ctx, a.Path, *a.OldString, *a.NewString, a.ReplaceAll)
		})
	case "delete_file":
		var a struct {
			Path string `json:"path"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.Path == "" {
			return fail(required(c.Name, "path"))
		}
		return w.change(c.Name, a.Path, func() (editing.Change, error) { return w.agent.Delete(ctx, a.Path) })
	case "run_command":
		var a struct {
			Command   string `json:"command"`
			TimeoutMs int64  `json:"timeoutMs"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if strings.TrimSpace(a.Command) == "" {
			return fail(required(c.Name, "command"))
		}
		if err := w.gate(c.Name, ""); err != nil {
			return fail(err)
		}
		return w.runCommand(ctx, a.Command, a.TimeoutMs)
	case "ask_human":
		var a struct {
			Question string   `json:"question"`
			Options  []string `json:"options"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if strings.TrimSpace(a.Question) == "" {
			return fail(required(c.Name, "question"))
		}
		return w.askHuman(ctx, a.Question, a.Options)
	case "select_intent":
		var a struct {
			IntentID string `json:"intent_id"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if a.IntentID == "" {
			return fail(required(c.Name, "intent_id"))
		}
		return w.selectIntent(a.IntentID)
	case "finish":
		var a struct {
			Summary string `json:"summary"`
		}
		if err := decode(c.Arguments, &a); err != nil {
			return fail(err)
		}
		if strings.TrimSpace(a.Summary) == "" {
			return fail(required(c.Name, "summary"))
		}
		return result{content: "Finished.", finish: true, summary: a.Summary}
	case "plan":
		return fail(errors.New("plan is the coordinator's tool; carry out your subtask with the other tools"))
	}
	return fail(fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(w.toolNames(), ", ")))
}

func withPath(r result, p string) result {
	r.path = p
	return r
}

// gate is the intent gatekeeper for a mutating tool; path is the
// workspace-relative path it writes ("" for run_command).
func (w *worker) gate(tool, path string) error {
	err := w.t.e.cfg.Tracking.Intents.Check(w.intent, tool, path, w.tracker)
	if err != nil && path != "" {
		w.t.emit(api.TaskEvent{Kind: api.EventBlocked, SubtaskID: w.sub.ID, Path: path, Reason: err.Error()})
	}
	return err
}

// change runs a file change through the gate and editing, records it in the
// run's changes and, when applied, in the trace.
func (w *worker) change(tool, p string, do func() (editing.Change, error)) result {
	t := w.t
	rel := p
	if rp, err := t.edit.Resolve(p); err == nil {
		rel = rp.Rel
	}
	if err := w.gate(tool, rel); err != nil {
		return withPath(fail(err), rel)
	}
	ch, err := do()
	if ch.Operation != "" {
		c := ch.RPC()
		kind := api.EventChangeApplied
		if !ch.Applied {
			kind = api.EventChangeRejected
		}
		t.mutate(func() []api.TaskEvent {
			t.changes = append(t.changes, c)
			return []api.TaskEvent{{Kind: kind, SubtaskID: w.sub.ID, Path: c.Path, Reason: ch.Reason}}
		})
	}
	if err != nil {
		if errors.Is(err, editing.ErrRejected) || errors.Is(err, editing.ErrNotApplied) {
			return withPath(result{content: "Not applied: " + err.Error() + ". The file is unchanged.", isErr: true}, ch.Path)
		}
		return withPath(fail(err), ch.Path)
	}
	w.trace(ch)
	return result{content: ch.Text, path: ch.Path}
}

// trace records an applied change in the trace log (when it is on).
func (w *worker) trace(ch editing.Change) {
	t := w.t
	spans := make([]trace.Span, len(ch.Spans))
	for i, s := range ch.Spans {
		spans[i] = trace.Span{Start: s.Start, End: s.End}
	}
	var content []byte
	if ch.Operation != api.OpDelete {
		content = []byte(ch.NewContent)
	}
	_, err := t.e.cfg.Tracking.RecordChange(trace.Change{
		Path: ch.Path, Operation: ch.Operation, Content: content, Spans: spans,
		IntentID: w.intent, SessionID: t.sessionID, TaskID: t.id, SubtaskID: w.sub.ID, Model: t.spec,
	})
	if err != nil {
		w.log.Warn("trace not written", zap.String("path", ch.Path), zap.Error(err))
		t.warn(fmt.Sprintf("agentls: the change to %s was made but could not be written to the trace: %v", ch.Path, err))
	}
}

// selectIntent is select_intent: the intent's context block, and its scope
// on the worker's writes from now on.
func (w *worker) selectIntent(id string) result {
	in, block, err := w.t.e.cfg.Tracking.Intents.Select(id)
	if err != nil {
		if errors.Is(err, intents.ErrUnknownIntent) {
			if list, lerr := w.t.e.cfg.Tracking.Intents.Intents(); lerr == nil && len(list) == 0 {
				return fail(errors.New("this workspace has no intents (.orchestration/active_intents.yaml lists none); no intent is needed"))
			}
		}
		return fail(err)
	}
	w.intent = in.ID
	w.agent.SetScope(in.Scope)
	w.t.emit(api.TaskEvent{Kind: api.EventIntentSelected, SubtaskID: w.sub.ID, Text: in.ID})
	return result{content: block}
}
