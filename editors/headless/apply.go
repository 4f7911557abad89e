package headless

import (
	"context"
	"fmt"
	"os"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/lsppos"
	"github.com/agentls/agentls/internal/wsedit"
)

// applyEdit answers workspace/applyEdit: an edit that needs confirmation
// goes to the ConfirmEdits function first (refused without one), then the
// workspace applies it.
func (e *Editor) applyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams) (api.ApplyWorkspaceEditResult, error) {
	if needsConfirmation(p.Edit) {
		e.mu.Lock()
		review := e.review
		e.mu.Unlock()
		var accepted *api.WorkspaceEdit
		if review != nil {
			var err error
			if accepted, err = review(ctx, p); err != nil {
				return api.ApplyWorkspaceEditResult{}, err
			}
		}
		if accepted == nil {
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the user rejected the change"}, nil
		}
		p.Edit = *accepted
	}
	return e.ws.Apply(p.Edit), nil
}

// Apply applies a workspace edit all or nothing, as the LSP specification
// asks of an editor that reports failureHandling "abort": every change is
// checked against the current state first (wsedit.Stage: stale versions,
// files that must or must not exist, overlapping edits, paths outside the
// workspace), and only then is anything written, each file atomically. An
// edit that cannot be applied is a result with Applied false, the reason
// and the index of the failed change.
func (w *Workspace) Apply(edit api.WorkspaceEdit) api.ApplyWorkspaceEditResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	load := func(uri string) (*wsedit.File, error) {
		path, err := fileuri.ToPath(uri)
		if err != nil {
			return nil, err
		}
		if !w.inside(path) {
			return nil, fmt.Errorf("%s is outside the workspace", path)
		}
		f := &wsedit.File{Data: path}
		if b, ok := w.buffers[path]; ok {
			v := b.version
			f.Existed, f.Old, f.Version = true, b.text, &v
		} else if data, _, err := contain.ReadRegular(path, 0); err == nil {
			f.Existed, f.Old = true, string(data)
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		return f, nil
	}
	files, failed := wsedit.Stage(edit, load, wsedit.Options{Resource: w.undeclared, OpenMissing: w.pretend, CheckVersions: true})
	if failed != nil {
		return *failed
	}
	for _, f := range files {
		if !f.Touched {
			continue
		}
		path := f.Data.(string)
		b, open := w.buffers[path]
		switch {
		case f.Opened:
			w.buffers[path] = &buffer{text: f.Text, version: 1}
		case !f.Exists:
			delete(w.buffers, path)
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}
			}
		case open:
			b.text = f.Text
			b.version++
		default:
			if err := WriteFileAtomic(path, []byte(f.Text)); err != nil {
				return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}
			}
		}
	}
	return api.ApplyWorkspaceEditResult{Applied: true}
}

// undeclared tells what to do with a resource operation of kind op: go on
// (one the editor performs), skip it (another, when it pretends) or refuse
// it.
func (w *Workspace) undeclared(op string) (skip bool, err error) {
	for _, k := range w.ops {
		if k == op {
			return false, nil
		}
	}
	if w.pretend {
		return true, nil
	}
	return false, fmt.Errorf("resource operation %q is not in the resourceOperations this editor declared", op)
}

func needsConfirmation(we api.WorkspaceEdit) bool {
	for _, a := range we.ChangeAnnotations {
		if a.NeedsConfirmation {
			return true
		}
	}
	return false
}

// inside reports whether path is in the workspace, where its symlinks
// lead included (contain).
func (w *Workspace) inside(path string) bool {
	d, err := contain.New(w.root)
	if err != nil {
		_, ok := contain.Within(w.root, path)
		return ok
	}
	_, err = d.Resolve(path)
	return err == nil
}

// WriteFileAtomic replaces path with data so that a reader (or a crash) sees
// either the old file or the new one, never a part. An existing file's mode
// is kept; a new one gets 0644. Missing parent directories are created.
func WriteFileAtomic(path string, data []byte) error {
	return fsutil.Write(path, data, fsutil.WriteOptions{Perm: 0o644, MkdirAll: true})
}

// ApplyTextEdits applies LSP text edits to text as an LSP client must
// (lsppos.ApplyEdits).
func ApplyTextEdits(text string, edits []api.TextEdit) (string, error) {
	return lsppos.ApplyEdits(text, edits)
}
