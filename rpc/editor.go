package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agentls/agentls/api"
)

// Caller is the part of a connection the Editor and Notifier need. *Conn
// satisfies it; tests may use their own.
type Caller interface {
	// Call sends a request and waits for its reply. When ctx ends first, it
	// sends $/cancelRequest for the call and returns ctx's error.
	Call(ctx context.Context, method string, params, result any) error
	// Notify sends a notification.
	Notify(ctx context.Context, method string, params any) error
}

// Editor makes the typed reverse calls of docs/PROTOCOL.md §4. Each call is bounded
// by its timeout, is cancelled with $/cancelRequest when ctx ends, and fails
// with an error wrapping api.ErrUnsupported when the client did not advertise the
// capability, so the caller can take the fallback of docs/PROTOCOL.md §4. Safe for
// concurrent use.
type Editor struct {
	conn     Caller
	caps     atomic.Pointer[api.Caps]
	timeouts atomic.Pointer[api.Timeouts]
}

// NewEditor returns an Editor over conn for a client with caps.
func NewEditor(conn Caller, caps api.Caps, t api.Timeouts) *Editor {
	e := &Editor{conn: conn}
	e.caps.Store(&caps)
	e.SetTimeouts(t)
	return e
}

// Caps returns the client's capabilities.
func (e *Editor) Caps() api.Caps { return *e.caps.Load() }

// SetCaps replaces the client's capabilities (initialize sets them once).
func (e *Editor) SetCaps(c api.Caps) { e.caps.Store(&c) }

// Timeouts returns the bounds in force.
func (e *Editor) Timeouts() api.Timeouts { return *e.timeouts.Load() }

// SetTimeouts changes the bounds for calls made afterwards.
func (e *Editor) SetTimeouts(t api.Timeouts) { e.timeouts.Store(&t) }

// ReadFile asks for a file's text as the editor has it: the open buffer with
// unsaved edits, else the disk.
func (e *Editor) ReadFile(ctx context.Context, path, uri string) (string, error) {
	if !e.Caps().ReadFile {
		return "", fmt.Errorf("%s: %w", api.MethodReadFile, api.ErrUnsupported)
	}
	var res api.ReadFileResult
	err := e.call(ctx, e.Timeouts().ReverseCall(), api.MethodReadFile, api.ReadFileParams{Path: path, URI: uri}, &res)
	return res.Content, err
}

// RunCommand asks the editor to run a shell command in cwd. The call is
// bounded by the command's own timeout plus the reverse-call margin.
func (e *Editor) RunCommand(ctx context.Context, p api.RunCommandParams) (api.RunCommandResult, error) {
	if !e.Caps().RunCommand {
		return api.RunCommandResult{}, fmt.Errorf("%s: %w", api.MethodRunCommand, api.ErrUnsupported)
	}
	var res api.RunCommandResult
	bound := time.Duration(p.TimeoutMs)*time.Millisecond + e.Timeouts().ReverseCall()
	err := e.call(ctx, bound, api.MethodRunCommand, p, &res)
	return res, err
}

// Ask puts a question to the person. A nil answer means dismissed.
func (e *Editor) Ask(ctx context.Context, p api.AskParams) (*string, error) {
	if !e.Caps().Ask {
		return nil, fmt.Errorf("%s: %w", api.MethodAsk, api.ErrUnsupported)
	}
	var res api.AskResult
	err := e.call(ctx, e.Timeouts().Human(), api.MethodAsk, p, &res)
	return res.Answer, err
}

// References asks the editor's language server where the definition at a
// position is referred to (agent/references). A nil answer means the editor
// has no language server for the document.
func (e *Editor) References(ctx context.Context, p api.ReferenceParams) ([]api.Location, error) {
	if !e.Caps().References {
		return nil, fmt.Errorf("%s: %w", api.MethodReferences, api.ErrUnsupported)
	}
	return e.locations(ctx, api.MethodReferences, p)
}

// Definition asks the editor's language server where what the name at a
// position names is defined (agent/definition). A nil answer means the
// editor has no language server for the document.
func (e *Editor) Definition(ctx context.Context, p api.TextDocumentPositionParams) ([]api.Location, error) {
	if !e.Caps().Definition {
		return nil, fmt.Errorf("%s: %w", api.MethodDefinition, api.ErrUnsupported)
	}
	return e.locations(ctx, api.MethodDefinition, p)
}

// Diagnostics asks the editor for the diagnostics its language servers
// published (agent/diagnostics): of p.URIs, or of every document when none
// is named. A null answer reads as none. The call is bounded by the
// reverse-call timeout.
func (e *Editor) Diagnostics(ctx context.Context, p api.DiagnosticsParams) (api.DiagnosticsResult, error) {
	if !e.Caps().Diagnostics {
		return api.DiagnosticsResult{}, fmt.Errorf("%s: %w", api.MethodDiagnostics, api.ErrUnsupported)
	}
	var raw json.RawMessage
	if err := e.call(ctx, e.Timeouts().ReverseCall(), api.MethodDiagnostics, p, &raw); err != nil {
		return api.DiagnosticsResult{}, err
	}
	var res api.DiagnosticsResult
	if b := bytes.TrimSpace(raw); len(b) == 0 || bytes.Equal(b, []byte("null")) {
		return res, nil
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return api.DiagnosticsResult{}, fmt.Errorf("%s: the answer is not {\"items\": [{uri, diagnostics}]}: %w", api.MethodDiagnostics, err)
	}
	return res, nil
}

// locations makes a call answered with LSP locations: null, a Location, or
// a list of Locations or LocationLinks (read as their target's name).
func (e *Editor) locations(ctx context.Context, method string, params any) ([]api.Location, error) {
	var raw json.RawMessage
	if err := e.call(ctx, e.Timeouts().ReverseCall(), method, params, &raw); err != nil {
		return nil, err
	}
	locs, err := decodeLocations(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	return locs, nil
}

// decodeLocations reads an answer of LSP locations; nil for null.
func decodeLocations(raw json.RawMessage) ([]api.Location, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	type link struct {
		api.Location
		TargetURI            string     `json:"targetUri"`
		TargetSelectionRange *api.Range `json:"targetSelectionRange"`
		TargetRange          *api.Range `json:"targetRange"`
	}
	var list []link
	if raw[0] == '{' {
		var one link
		if err := json.Unmarshal(raw, &one); err != nil {
			return nil, fmt.Errorf("the answer is not a Location: %w", err)
		}
		list = []link{one}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("the answer is not a list of Locations: %w", err)
	}
	out := make([]api.Location, 0, len(list))
	for _, l := range list {
		switch {
		case l.URI != "":
			out = append(out, l.Location)
		case l.TargetURI != "" && l.TargetSelectionRange != nil:
			out = append(out, api.Location{URI: l.TargetURI, Range: *l.TargetSelectionRange})
		case l.TargetURI != "" && l.TargetRange != nil:
			out = append(out, api.Location{URI: l.TargetURI, Range: *l.TargetRange})
		}
	}
	return out, nil
}

// ApplyEdit asks the editor to apply a workspace edit. w is api.Human when a
// person confirms it (propose mode).
func (e *Editor) ApplyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams, w api.Wait) (api.ApplyWorkspaceEditResult, error) {
	if !e.Caps().ApplyEdit {
		return api.ApplyWorkspaceEditResult{}, fmt.Errorf("%s: %w", api.MethodApplyEdit, api.ErrUnsupported)
	}
	bound := e.Timeouts().ReverseCall()
	if w == api.Human {
		bound = e.Timeouts().Human()
	}
	var res api.ApplyWorkspaceEditResult
	err := e.call(ctx, bound, api.MethodApplyEdit, p, &res)
	return res, err
}

// ShowMessageRequest shows a message with actions and returns the chosen one,
// or nil when the person dismissed it. It waits on a person.
func (e *Editor) ShowMessageRequest(ctx context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	if p.Actions == nil {
		p.Actions = []api.MessageActionItem{}
	}
	var res *api.MessageActionItem
	err := e.call(ctx, e.Timeouts().Human(), api.MethodShowMessageRequest, p, &res)
	return res, err
}

// WorkDoneProgressCreate asks the editor to create a progress token.
func (e *Editor) WorkDoneProgressCreate(ctx context.Context, token *api.ProgressToken) error {
	if !e.Caps().WorkDoneProgress {
		return fmt.Errorf("%s: %w", api.MethodWorkDoneProgressCreate, api.ErrUnsupported)
	}
	return e.call(ctx, e.Timeouts().ReverseCall(), api.MethodWorkDoneProgressCreate, api.WorkDoneProgressCreateParams{Token: token}, nil)
}

// call bounds one reverse call. bound 0 means unbounded.
func (e *Editor) call(ctx context.Context, bound time.Duration, method string, params, result any) error {
	if bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, bound, fmt.Errorf("%s: %w (%s)", method, api.ErrTimeout, bound))
		defer cancel()
	}
	err := e.conn.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		if cause := context.Cause(ctx); errors.Is(cause, api.ErrTimeout) {
			return cause
		}
	}
	return fmt.Errorf("%s: %w", method, err)
}

// Notifier sends the notifications of docs/PROTOCOL.md §5. Safe for concurrent use;
// notifications leave in the order their calls return.
type Notifier struct {
	conn Caller
}

// NewNotifier returns a Notifier over conn.
func NewNotifier(conn Caller) *Notifier { return &Notifier{conn: conn} }

// TaskUpdate sends agent/taskUpdate.
func (n *Notifier) TaskUpdate(ctx context.Context, p *api.TaskUpdateParams) error {
	return n.conn.Notify(ctx, api.MethodTaskUpdate, p)
}

// HeatUpdate sends agent/heatUpdate.
func (n *Notifier) HeatUpdate(ctx context.Context, p *api.HeatUpdateParams) error {
	return n.conn.Notify(ctx, api.MethodHeatUpdate, p)
}

// Progress sends $/progress.
func (n *Notifier) Progress(ctx context.Context, p *api.ProgressParams) error {
	return n.conn.Notify(ctx, api.MethodProgress, p)
}

// LogMessage sends window/logMessage.
func (n *Notifier) LogMessage(ctx context.Context, typ api.MessageType, msg string) error {
	return n.conn.Notify(ctx, api.MethodLogMessage, &api.LogMessageParams{Type: typ, Message: msg})
}

// ShowMessage sends window/showMessage.
func (n *Notifier) ShowMessage(ctx context.Context, typ api.MessageType, msg string) error {
	return n.conn.Notify(ctx, api.MethodShowMessage, &api.ShowMessageParams{Type: typ, Message: msg})
}
