// Package headlesstest is the editor of unit tests: an in-process fake that
// answers, at once, the reverse calls the sidecar's packages make through
// their Editor interfaces (editing.Editor and workforce.Editor), from a real
// directory. It reads and edits files with headless.Workspace, the very
// applier of the headless editor that the end-to-end tests drive over real
// pipes, so a unit test and an end-to-end test see an edit applied the same
// way: all or nothing, open buffers first, stale versions refused.
//
// It has the capabilities it is given and no other: a call it lacks the
// capability for fails with api.ErrUnsupported, as *rpc.Editor does, so the
// sidecar's fallbacks run, and it performs the resource operations its
// capabilities declare. A person's answers are scripted (SetAnswer),
// workspace edits can be refused, failed or only pretended (Refuse,
// FailApply, Pretend), something can happen while a question or an edit is
// pending (OnAsk, OnApply), its language servers' diagnostics are what a
// test sets (SetDiagnostics, OnDiagnostics), and every edit, wait and
// question is recorded in order.
//
// An Editor is safe for concurrent use.
package headlesstest

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/fileuri"
)

// Editor is an in-process editor over a real directory.
type Editor struct {
	caps api.Caps
	ws   *headless.Workspace

	mu        sync.Mutex
	answer    string // the person's answer; "" dismisses
	answerSet bool   // false: the first action or option is chosen
	refuse    string // non-empty: applyEdit answers applied false with it
	applyErr  error  // applyEdit fails with this
	onAsk     func() // runs when showMessageRequest arrives
	onApply   func() // runs when applyEdit arrives
	keep      func(i int) bool
	applied   []api.ApplyWorkspaceEditParams
	waits     []api.Wait
	asked     []api.ShowMessageRequestParams
	diags     map[string][]api.Diagnostic // by absolute path
	onDiags   func(api.DiagnosticsParams)
}

// New returns an editor with capabilities caps over the directory root.
func New(root string, caps api.Caps) *Editor {
	e := &Editor{caps: caps, ws: headless.NewWorkspace(root)}
	var ops []string
	for _, op := range []string{api.OpCreate, api.OpDelete} {
		if caps.ResourceOperation(op) {
			ops = append(ops, op)
		}
	}
	e.ws.SetResourceOperations(ops, false)
	return e
}

// AllCaps are the capabilities of an editor that supports everything the
// sidecar can use but diagnostics: an editor that declares them is waited
// for after each edit of a file of a known language, so a test that wants
// them adds Diagnostics and sets them (SetDiagnostics).
func AllCaps() api.Caps {
	return api.Caps{ApplyEdit: true, DocumentChanges: true, ChangeAnnotation: true, CreateFile: true, DeleteFile: true,
		WorkDoneProgress: true, ShowMessage: true, ReadFile: true, RunCommand: true, Ask: true}
}

// Root is the editor's workspace directory (absolute, symlinks resolved).
func (e *Editor) Root() string { return e.ws.Root() }

// Caps returns the capabilities the editor was made with.
func (e *Editor) Caps() api.Caps { return e.caps }

// OpenBuffer opens a buffer over path (absolute or workspace-relative) with
// unsaved text: reads answer from it and edits change it.
func (e *Editor) OpenBuffer(path, text string) { e.ws.OpenBuffer(path, text) }

// CloseBuffer closes path's buffer, dropping its unsaved text.
func (e *Editor) CloseBuffer(path string) { e.ws.CloseBuffer(path) }

// SetDiagnostics makes ds the diagnostics of path (absolute or
// workspace-relative; nil: none), as a language server would publish
// them: agent/diagnostics answers them from then on.
func (e *Editor) SetDiagnostics(path string, ds []api.Diagnostic) {
	abs := e.abs(path)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.diags == nil {
		e.diags = map[string][]api.Diagnostic{}
	}
	if len(ds) == 0 {
		delete(e.diags, abs)
		return
	}
	e.diags[abs] = append([]api.Diagnostic(nil), ds...)
}

// OnDiagnostics runs f when agent/diagnostics has been answered (the
// answer made, not yet returned): a language server that publishes again
// right after the editor answered.
func (e *Editor) OnDiagnostics(f func(api.DiagnosticsParams)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onDiags = f
}

// abs is path made absolute under the root.
func (e *Editor) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(e.ws.Root(), filepath.FromSlash(path))
}

// SetAnswer makes the person answer every question with title: the action
// so titled of window/showMessageRequest, the text of agent/ask. "" makes
// them dismiss it. Until it is called, the first action or option is chosen
// (nothing when there is none).
func (e *Editor) SetAnswer(title string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.answer, e.answerSet = title, true
}

// Refuse makes workspace/applyEdit answer applied false with reason (""
// applies again).
func (e *Editor) Refuse(reason string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.refuse = reason
}

// FailApply makes workspace/applyEdit fail with err, as a broken connection
// would (nil applies again).
func (e *Editor) FailApply(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.applyErr = err
}

// Pretend makes the editor claim resource operations it does not do, as
// eglot 1.9 does: every CreateFile and DeleteFile is skipped and the edit
// still reported applied, and a text edit to a missing file opens a new,
// unsaved buffer.
func (e *Editor) Pretend() { e.ws.SetResourceOperations(nil, true) }

// OnAsk runs f when window/showMessageRequest arrives, before it is
// answered: the person doing something while they decide.
func (e *Editor) OnAsk(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onAsk = f
}

// OnApply runs f when workspace/applyEdit arrives, before anything is
// applied.
func (e *Editor) OnApply(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.onApply = f
}

// KeepTextEdits makes applyEdit apply, of each document's text edits, only
// those keep picks by their index, and still answer applied: true: a
// person who accepts some hunks of a proposal. nil applies everything.
func (e *Editor) KeepTextEdits(keep func(i int) bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keep = keep
}

// Applied returns the params of every workspace/applyEdit so far, in order,
// whether or not it was applied.
func (e *Editor) Applied() []api.ApplyWorkspaceEditParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]api.ApplyWorkspaceEditParams(nil), e.applied...)
}

// Waits returns how long the sidecar was ready to wait for each
// workspace/applyEdit, in order.
func (e *Editor) Waits() []api.Wait {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]api.Wait(nil), e.waits...)
}

// Asked returns every window/showMessageRequest so far, in order.
func (e *Editor) Asked() []api.ShowMessageRequestParams {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]api.ShowMessageRequestParams(nil), e.asked...)
}

// ReadFile answers agent/readFile: the file the uri names (else the
// workspace-relative path), from its open buffer or the disk.
func (e *Editor) ReadFile(_ context.Context, path, uri string) (string, error) {
	if !e.caps.ReadFile {
		return "", fmt.Errorf("%s: %w", api.MethodReadFile, api.ErrUnsupported)
	}
	if uri != "" {
		abs, err := fileuri.ToPath(uri)
		if err != nil {
			return "", err
		}
		path = abs
	}
	return e.ws.Read(path)
}

// ApplyEdit answers workspace/applyEdit: it records the edit, then refuses
// or fails it as scripted, or applies it all or nothing.
func (e *Editor) ApplyEdit(_ context.Context, p api.ApplyWorkspaceEditParams, w api.Wait) (api.ApplyWorkspaceEditResult, error) {
	if !e.caps.ApplyEdit {
		return api.ApplyWorkspaceEditResult{}, fmt.Errorf("%s: %w", api.MethodApplyEdit, api.ErrUnsupported)
	}
	e.mu.Lock()
	e.applied = append(e.applied, p)
	e.waits = append(e.waits, w)
	refuse, applyErr, onApply, keep := e.refuse, e.applyErr, e.onApply, e.keep
	e.mu.Unlock()
	if onApply != nil {
		onApply()
	}
	switch {
	case applyErr != nil:
		return api.ApplyWorkspaceEditResult{}, applyErr
	case refuse != "":
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: refuse}, nil
	}
	if keep != nil {
		accepted, err := headless.AcceptTextEdits(func(_ string, i int) bool { return keep(i) })(context.Background(), p)
		if err != nil {
			return api.ApplyWorkspaceEditResult{}, err
		}
		p.Edit = *accepted
	}
	return e.ws.Apply(p.Edit), nil
}

// ShowMessageRequest answers window/showMessageRequest with the scripted
// answer (SetAnswer), else the first action.
func (e *Editor) ShowMessageRequest(_ context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	e.mu.Lock()
	e.asked = append(e.asked, p)
	onAsk := e.onAsk
	e.mu.Unlock()
	if onAsk != nil {
		onAsk()
	}
	titles := make([]string, len(p.Actions))
	for i, a := range p.Actions {
		titles[i] = a.Title
	}
	title := e.choose(titles)
	if title == nil {
		return nil, nil
	}
	return &api.MessageActionItem{Title: *title}, nil
}

// Ask answers agent/ask with the scripted answer (SetAnswer), else the
// first option; nil is a dismissed question.
func (e *Editor) Ask(_ context.Context, p api.AskParams) (*string, error) {
	if !e.caps.Ask {
		return nil, fmt.Errorf("%s: %w", api.MethodAsk, api.ErrUnsupported)
	}
	return e.choose(p.Options), nil
}

// choose is the person's answer among options: the scripted one, else the
// first option; nil when they dismiss the question.
func (e *Editor) choose(options []string) *string {
	e.mu.Lock()
	answer, set := e.answer, e.answerSet
	e.mu.Unlock()
	switch {
	case !set && len(options) > 0:
		return &options[0]
	case !set || answer == "":
		return nil
	}
	return &answer
}

// RunCommand answers agent/runCommand by running the command as the
// headless editor does (headless.RunShell).
func (e *Editor) RunCommand(ctx context.Context, p api.RunCommandParams) (api.RunCommandResult, error) {
	if !e.caps.RunCommand {
		return api.RunCommandResult{}, fmt.Errorf("%s: %w", api.MethodRunCommand, api.ErrUnsupported)
	}
	return headless.RunShell(ctx, p), nil
}

// Diagnostics answers agent/diagnostics from the diagnostics set
// (SetDiagnostics): of the files p.URIs name, each listed even with none,
// else of every file that has some.
func (e *Editor) Diagnostics(_ context.Context, p api.DiagnosticsParams) (api.DiagnosticsResult, error) {
	if !e.caps.Diagnostics {
		return api.DiagnosticsResult{}, fmt.Errorf("%s: %w", api.MethodDiagnostics, api.ErrUnsupported)
	}
	res, err := e.diagnostics(p)
	e.mu.Lock()
	onDiags := e.onDiags
	e.mu.Unlock()
	if onDiags != nil {
		onDiags(p)
	}
	return res, err
}

func (e *Editor) diagnostics(p api.DiagnosticsParams) (api.DiagnosticsResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	res := api.DiagnosticsResult{Items: []api.DocumentDiagnostics{}}
	if len(p.URIs) == 0 {
		for _, abs := range slices.Sorted(maps.Keys(e.diags)) {
			res.Items = append(res.Items, api.DocumentDiagnostics{URI: fileuri.FromPath(abs), Diagnostics: slices.Clone(e.diags[abs])})
		}
		return res, nil
	}
	for _, uri := range p.URIs {
		abs, err := fileuri.ToPath(uri)
		if err != nil {
			return api.DiagnosticsResult{}, err
		}
		ds := slices.Clone(e.diags[filepath.Clean(abs)])
		if ds == nil {
			ds = []api.Diagnostic{}
		}
		res.Items = append(res.Items, api.DocumentDiagnostics{URI: uri, Diagnostics: ds})
	}
	return res, nil
}

// WorkDoneProgressCreate accepts every token.
func (e *Editor) WorkDoneProgressCreate(context.Context, *api.ProgressToken) error {
	if !e.caps.WorkDoneProgress {
		return fmt.Errorf("%s: %w", api.MethodWorkDoneProgressCreate, api.ErrUnsupported)
	}
	return nil
}
