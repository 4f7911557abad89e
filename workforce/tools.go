package workforce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
)

// call runs one tool call and tells the person (toolCall, toolResult).
func (w *worker) call(ctx context.Context, c clients.ToolCall) result {
	w.toolMu.Lock()
	defer w.toolMu.Unlock()
	t := w.t
	w.calls++
	id := w.sub.ID + "/" + strconv.Itoa(w.calls)
	ctx = withCall(ctx, Call{TaskID: t.id, SubtaskID: w.sub.ID, ID: id, Tool: c.Name, Arguments: c.Arguments})
	t.emit(api.TaskEvent{Kind: api.EventToolCall, SubtaskID: w.sub.ID, CallID: id, Tool: c.Name, Arguments: c.Arguments})
	t.journal.add(api.SessionMessage{Role: "tool", Text: c.Name + " " + oneLine(string(c.Arguments), 300), TaskID: t.id, SubtaskID: w.sub.ID,
		Tool: c.Name, CallID: id, Arguments: clipArguments(c.Arguments, 200)})
	r := w.dispatch(ctx, c)
	// What a tool gives back goes to the model, the person and the logs:
	// no secret in it (a file or a command's output may hold one).
	r.content, r.summary = t.e.cfg.Redactor.String(r.content), t.e.cfg.Redactor.String(r.summary)
	ok := !r.isErr
	summary, output := oneLine(r.content, 200), excerpt(r.content, api.ToolOutputLines, api.ToolOutputBytes)
	if output == summary {
		output = "" // one line: the summary says it all
	}
	t.emit(api.TaskEvent{Kind: api.EventToolResult, SubtaskID: w.sub.ID, CallID: id, Tool: c.Name, OK: &ok, Path: r.path, Summary: summary, Output: output})
	if r.isErr {
		w.log.Debug("tool failed", zap.String("tool", c.Name), zap.String("error", r.content))
	}
	return r
}

// dispatch runs one tool call: a tool of the registry, else one of the
// engine's second set (the MCP tools), else an error that lists the tools.
func (w *worker) dispatch(ctx context.Context, c clients.ToolCall) result {
	if tl := builtins.byName[c.Name]; tl != nil {
		return tl.run(ctx, w, c.Arguments)
	}
	if src := w.t.e.extra; src != nil {
		if r, ok := src.call(ctx, w, c); ok {
			return r
		}
	}
	if c.Name == planToolName {
		return fail(errors.New("plan is the coordinator's tool; carry out your subtask with the other tools"))
	}
	return fail(fmt.Errorf("there is no tool %q; the tools are %s", c.Name, strings.Join(w.toolNames(), ", ")))
}

// offer lists the tools of the worker's next turn: the registry's, then
// those of the second set, if the engine has one, but a name already
// offered (the providers refuse two tools of one name).
func (w *worker) offer(ctx context.Context) []clients.Tool {
	w.offered = toolkit()
	if src := w.t.e.extra; src != nil {
		w.offered = slices.Clip(toolkit())
		for _, tl := range src.tools(ctx, w) {
			if !slices.ContainsFunc(w.offered, func(o clients.Tool) bool { return o.Name == tl.Name }) {
				w.offered = append(w.offered, tl)
			}
		}
	}
	return w.offered
}

// toolNames lists the tools of the worker's last turn.
func (w *worker) toolNames() []string {
	list := w.offered
	if list == nil {
		list = toolkit()
	}
	names := make([]string, len(list))
	for i, tl := range list {
		names[i] = tl.Name
	}
	return names
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
	r, _ := w.changeOf(tool, p, nil, do)
	return r
}

// edit is change for edit_file and write_file: an applied change's result
// says what it did to the diagnostics (diagnostics.go).
func (w *worker) edit(ctx context.Context, tool, p string, do func() (editing.Change, error)) result {
	var before *diagBefore
	defer func() { before.done() }()
	r, ch := w.changeOf(tool, p, func(rp editing.Path) { before = w.diagnosticsBefore(ctx, rp) }, do)
	if before == nil || r.isErr || !ch.Applied || ch.Held || ch.Operation == api.OpDelete {
		return r
	}
	if text := w.diagnosticsAfter(ctx, before, ch); text != "" {
		r.content += "\n\n" + text
	}
	return r
}

// changeOf is change, which also returns the change made; first, when set,
// is called once the gate has let the change through, before it is made.
func (w *worker) changeOf(tool, p string, first func(rp editing.Path), do func() (editing.Change, error)) (result, editing.Change) {
	t := w.t
	rel := p
	rp, rerr := t.edit.Resolve(p)
	if rerr == nil {
		rel = rp.Rel
	}
	if err := w.gate(tool, rel); err != nil {
		return withPath(fail(err), rel), editing.Change{}
	}
	if first != nil && rerr == nil && rp.Rel != "." {
		first(rp)
	}
	ch, err := do()
	if ch.Operation != "" {
		c := ch.RPC()
		kind := api.EventChangeApplied
		switch {
		case !ch.Applied:
			kind = api.EventChangeRejected
		case ch.Held:
			kind = api.EventChangeHeld // in the run's changes once reviewed
		}
		if ch.Applied {
			t.changeEpoch.Add(1)
		}
		t.mutate(func() []api.TaskEvent {
			if !ch.Held {
				t.changes = append(t.changes, c)
			}
			return []api.TaskEvent{{Kind: kind, SubtaskID: w.sub.ID, Path: c.Path, Reason: ch.Reason}}
		})
	}
	if err != nil {
		if errors.Is(err, editing.ErrRejected) || errors.Is(err, editing.ErrNotApplied) {
			return withPath(result{content: "Not applied: " + notApplied(err) + ". The file is unchanged.", isErr: true}, ch.Path), ch
		}
		return withPath(fail(err), ch.Path), ch
	}
	w.trace(ch)
	return result{content: ch.Text, path: ch.Path}, ch
}

// notApplied is why a change was not applied, without the words "not
// applied" its error begins with (the result says them once).
func notApplied(err error) string {
	msg := err.Error()
	prefix := editing.ErrNotApplied.Error() + ": "
	if len(msg) > len(prefix) && strings.EqualFold(msg[:len(prefix)], prefix) {
		return msg[len(prefix):]
	}
	return msg
}

// trace records an applied change in the trace log (when it is on), or,
// held in review mode, keeps it until the review says what landed.
func (w *worker) trace(ch editing.Change) {
	w.t.landed(w.sub.ID, w.intent, ch)
}

// excerpt is the head of text as a person reads it: its first lines (at
// most lines of them, and bytes bytes, never cutting a character), and a
// last line saying how much was left out.
func excerpt(text string, lines, bytes int) string {
	text = strings.TrimRight(text, "\n")
	total := strings.Count(text, "\n") + 1
	end, n := 0, 0
	for end < len(text) && n < lines {
		i := strings.IndexByte(text[end:], '\n')
		next := len(text)
		if i >= 0 {
			next = end + i + 1
		}
		if next > bytes {
			if n == 0 { // one long line: cut it
				next = bytes
				for next > 0 && !utf8.RuneStart(text[next]) {
					next--
				}
				end, n = next, 1
			}
			break
		}
		end, n = next, n+1
	}
	if end >= len(text) {
		return text
	}
	head := strings.TrimRight(text[:end], "\n")
	switch left := total - n; {
	case left == 1:
		return head + "\n… 1 more line"
	case left > 1:
		return head + fmt.Sprintf("\n… %d more lines", left)
	}
	return head + " …"
}

// clipArguments is a call's arguments as its session keeps them: every
// string longer than n bytes cut (a file's new content, an edit's
// strings), the rest as it was; nil when they are not a JSON object.
func clipArguments(raw json.RawMessage, n int) json.RawMessage {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil || args == nil {
		return nil
	}
	for k, v := range args {
		if s, ok := v.(string); ok && len(s) > n {
			args[k] = clip(s, n)
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	return b
}
