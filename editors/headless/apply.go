package headless

import (
	"context"
	"fmt"
	"os"
	"sort"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/lsppos"
)

// staged is a file's state while an edit is being checked: nothing touches
// the disk or a buffer until every change of the edit has been checked.
type staged struct {
	path    string
	exists  bool
	text    string
	buffer  bool // an open buffer, edited in place
	opened  bool // a new buffer for a missing file (SkipUndeclaredResourceOps)
	version int32
	touched bool
}

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
// checked against the current state first (stale versions, files that must
// or must not exist, overlapping edits, paths outside the workspace), and
// only then is anything written, each file atomically. An edit that cannot
// be applied is a result with Applied false, the reason and the index of
// the failed change.
func (w *Workspace) Apply(edit api.WorkspaceEdit) api.ApplyWorkspaceEditResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	files := map[string]*staged{}
	var order []*staged
	// load stages the file uri names, once per edit.
	load := func(uri string) (*staged, error) {
		path, err := fileuri.ToPath(uri)
		if err != nil {
			return nil, err
		}
		if f, ok := files[path]; ok {
			return f, nil
		}
		if !w.inside(path) {
			return nil, fmt.Errorf("%s is outside the workspace", path)
		}
		f := &staged{path: path}
		if b, ok := w.buffers[path]; ok {
			f.exists, f.text, f.buffer, f.version = true, b.text, true, b.version
		} else if data, err := os.ReadFile(path); err == nil {
			f.exists, f.text = true, string(data)
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		files[path] = f
		order = append(order, f)
		return f, nil
	}
	fail := func(i int, format string, args ...any) api.ApplyWorkspaceEditResult {
		idx := uint32(i)
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: fmt.Sprintf(format, args...), FailedChange: &idx}
	}
	type textChange struct {
		uri     string
		version *int32
		edits   []api.TextEdit
	}
	var changes []any
	if len(edit.DocumentChanges) > 0 {
		for _, dc := range edit.DocumentChanges {
			switch {
			case dc.TextDocumentEdit != nil:
				tc := textChange{uri: dc.TextDocumentEdit.TextDocument.URI, version: dc.TextDocumentEdit.TextDocument.Version}
				for _, ed := range dc.TextDocumentEdit.Edits {
					tc.edits = append(tc.edits, api.TextEdit{Range: ed.Range, NewText: ed.NewText})
				}
				changes = append(changes, tc)
			case dc.CreateFile != nil:
				changes = append(changes, *dc.CreateFile)
			case dc.DeleteFile != nil:
				changes = append(changes, *dc.DeleteFile)
			}
		}
	} else {
		uris := make([]string, 0, len(edit.Changes))
		for uri := range edit.Changes {
			uris = append(uris, uri)
		}
		sort.Strings(uris)
		for _, uri := range uris {
			changes = append(changes, textChange{uri: uri, edits: edit.Changes[uri]})
		}
	}
	for i, c := range changes {
		switch c := c.(type) {
		case textChange:
			f, err := load(c.uri)
			if err != nil {
				return fail(i, "%v", err)
			}
			if !f.exists && w.pretend {
				f.exists, f.buffer, f.opened = true, true, true
			}
			if !f.exists {
				return fail(i, "%s does not exist", c.uri)
			}
			if c.version != nil && (!f.buffer || *c.version != f.version) {
				have := "not open"
				if f.buffer {
					have = fmt.Sprintf("at version %d", f.version)
				}
				return fail(i, "stale edit: %s is %s, the edit is for version %d", c.uri, have, *c.version)
			}
			text, err := ApplyTextEdits(f.text, c.edits)
			if err != nil {
				return fail(i, "%s: %v", c.uri, err)
			}
			f.text, f.touched = text, true
		case api.CreateFile:
			if skip, err := w.undeclared(api.OpCreate); skip {
				continue
			} else if err != nil {
				return fail(i, "%v", err)
			}
			f, err := load(c.URI)
			if err != nil {
				return fail(i, "%v", err)
			}
			overwrite := c.Options != nil && c.Options.Overwrite
			ignore := c.Options != nil && c.Options.IgnoreIfExists
			if f.exists && !overwrite {
				if ignore {
					continue
				}
				return fail(i, "%s already exists", c.URI)
			}
			f.exists, f.text, f.touched = true, "", true
		case api.DeleteFile:
			if skip, err := w.undeclared(api.OpDelete); skip {
				continue
			} else if err != nil {
				return fail(i, "%v", err)
			}
			f, err := load(c.URI)
			if err != nil {
				return fail(i, "%v", err)
			}
			if !f.exists {
				if c.Options != nil && c.Options.IgnoreIfNotExists {
					continue
				}
				return fail(i, "%s does not exist", c.URI)
			}
			f.exists, f.text, f.touched = false, "", true
		}
	}
	for _, f := range order {
		if !f.touched {
			continue
		}
		if f.opened {
			w.buffers[f.path] = &buffer{text: f.text, version: 1}
			continue
		}
		if f.buffer {
			if !f.exists {
				delete(w.buffers, f.path)
				if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
					return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}
				}
				continue
			}
			b := w.buffers[f.path]
			b.text = f.text
			b.version++
			continue
		}
		if !f.exists {
			if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
				return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}
			}
			continue
		}
		if err := WriteFileAtomic(f.path, []byte(f.text)); err != nil {
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}
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
