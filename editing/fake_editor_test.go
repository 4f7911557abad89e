package editing

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
)

// fakeEditor is an editor over a real directory: it reads open buffers or
// the disk, applies workspace edits to the disk the way an LSP client does,
// and answers approvals from a script. It records every call.
type fakeEditor struct {
	caps api.Caps

	mu       sync.Mutex
	buffers  map[string]string // abs path -> unsaved text
	applied  []api.ApplyWorkspaceEditParams
	waits    []api.Wait
	asked    []api.ShowMessageRequestParams
	answer   string // showMessageRequest answer title; "" dismisses
	refuse   string // non-empty: applyEdit answers applied:false with this reason
	applyErr error  // applyEdit fails with this
	// lax skips CreateFile and DeleteFile and answers applied: true all the
	// same, and puts a text edit to a missing file in a new buffer, as
	// eglot 1.9 does.
	lax bool
	// onAsk runs when showMessageRequest arrives (before it is answered),
	// onApply when applyEdit does (before anything is applied).
	onAsk, onApply func()
	// keep, when set, picks the text edits of a TextDocumentEdit that are
	// applied (by their index), and applyEdit still answers applied: true:
	// a person who accepts some hunks of a proposal.
	keep func(i int) bool
}

func allCaps() api.Caps {
	return api.Caps{ApplyEdit: true, DocumentChanges: true, ChangeAnnotation: true, CreateFile: true, DeleteFile: true, ReadFile: true, ShowMessage: true}
}

func newFakeEditor(caps api.Caps) *fakeEditor {
	return &fakeEditor{caps: caps, buffers: map[string]string{}, answer: actionApply}
}

func (f *fakeEditor) Caps() api.Caps { return f.caps }

func uriPath(t string) (string, error) {
	u, err := url.Parse(t)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("bad uri %q", t)
	}
	return u.Path, nil
}

func (f *fakeEditor) ReadFile(ctx context.Context, path, uri string) (string, error) {
	if !f.caps.ReadFile {
		return "", fmt.Errorf("%s: %w", api.MethodReadFile, api.ErrUnsupported)
	}
	abs, err := uriPath(uri)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	text, ok := f.buffers[abs]
	f.mu.Unlock()
	if ok {
		return text, nil
	}
	b, err := os.ReadFile(abs)
	return string(b), err
}

func (f *fakeEditor) setBuffer(abs, text string) {
	f.mu.Lock()
	f.buffers[abs] = text
	f.mu.Unlock()
}

func (f *fakeEditor) ApplyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams, w api.Wait) (api.ApplyWorkspaceEditResult, error) {
	if !f.caps.ApplyEdit {
		return api.ApplyWorkspaceEditResult{}, fmt.Errorf("%s: %w", api.MethodApplyEdit, api.ErrUnsupported)
	}
	f.mu.Lock()
	f.applied = append(f.applied, p)
	f.waits = append(f.waits, w)
	refuse, applyErr, onApply := f.refuse, f.applyErr, f.onApply
	f.mu.Unlock()
	if onApply != nil {
		onApply()
	}
	if applyErr != nil {
		return api.ApplyWorkspaceEditResult{}, applyErr
	}
	if refuse != "" {
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: refuse}, nil
	}
	if err := f.applyToDisk(p.Edit); err != nil {
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
	}
	return api.ApplyWorkspaceEditResult{Applied: true}, nil
}

func (f *fakeEditor) text(abs string) (string, error) {
	f.mu.Lock()
	text, ok := f.buffers[abs]
	f.mu.Unlock()
	if ok {
		return text, nil
	}
	b, err := os.ReadFile(abs)
	if os.IsNotExist(err) && f.lax {
		f.setBuffer(abs, "") // a new, unsaved buffer
		return "", nil
	}
	return string(b), err
}

func (f *fakeEditor) store(abs, text string) error {
	f.mu.Lock()
	_, open := f.buffers[abs]
	if open {
		f.buffers[abs] = text
	}
	f.mu.Unlock()
	if open {
		return nil
	}
	return os.WriteFile(abs, []byte(text), 0o644)
}

func (f *fakeEditor) applyToDisk(e api.WorkspaceEdit) error {
	for uri, edits := range e.Changes {
		abs, err := uriPath(uri)
		if err != nil {
			return err
		}
		old, err := f.text(abs)
		if err != nil {
			return err
		}
		next, err := applyLSP(old, edits)
		if err != nil {
			return err
		}
		if err := f.store(abs, next); err != nil {
			return err
		}
	}
	for _, dc := range e.DocumentChanges {
		switch {
		case f.lax && (dc.CreateFile != nil || dc.DeleteFile != nil):
			continue
		case dc.CreateFile != nil:
			abs, err := uriPath(dc.CreateFile.URI)
			if err != nil {
				return err
			}
			if _, err := os.Stat(abs); err == nil {
				return fmt.Errorf("%s exists", abs)
			}
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(abs, nil, 0o644); err != nil {
				return err
			}
		case dc.DeleteFile != nil:
			abs, err := uriPath(dc.DeleteFile.URI)
			if err != nil {
				return err
			}
			if err := os.Remove(abs); err != nil {
				return err
			}
		case dc.TextDocumentEdit != nil:
			abs, err := uriPath(dc.TextDocumentEdit.TextDocument.URI)
			if err != nil {
				return err
			}
			old, err := f.text(abs)
			if err != nil {
				return err
			}
			var edits []api.TextEdit
			for i, ae := range dc.TextDocumentEdit.Edits {
				if f.keep == nil || f.keep(i) {
					edits = append(edits, api.TextEdit{Range: ae.Range, NewText: ae.NewText})
				}
			}
			next, err := applyLSP(old, edits)
			if err != nil {
				return err
			}
			if err := f.store(abs, next); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeEditor) ShowMessageRequest(ctx context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	f.mu.Lock()
	f.asked = append(f.asked, p)
	answer, onAsk := f.answer, f.onAsk
	f.mu.Unlock()
	if onAsk != nil {
		onAsk()
	}
	if answer == "" {
		return nil, nil
	}
	return &api.MessageActionItem{Title: answer}, nil
}

// recorder is an Observer that keeps what it hears.
type recorder struct {
	mu       sync.Mutex
	accesses []string // "agent action path"
	blocked  []string // "path: reason"
}

func (r *recorder) Access(who Actor, path, action string) {
	r.mu.Lock()
	r.accesses = append(r.accesses, who.AgentID+" "+action+" "+path)
	r.mu.Unlock()
}

func (r *recorder) Blocked(who Actor, path, reason string) {
	r.mu.Lock()
	r.blocked = append(r.blocked, path+": "+reason)
	r.mu.Unlock()
}

// writeTree creates files (relative path -> content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type env struct {
	root string
	ed   *fakeEditor
	obs  *recorder
	ws   *Workspace
	warn []string
}

// newEnv makes a workspace in a temp dir over a fake editor.
func newEnv(t *testing.T, caps api.Caps, mode string, zones api.Zones, files map[string]string) *env {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	e := &env{root: root, ed: newFakeEditor(caps), obs: &recorder{}}
	if zones.Allow == nil && zones.Deny == nil {
		zones = api.DefaultSettings().Zones
	}
	ws, err := New(Config{
		Root: root, Zones: zones, EditMode: mode, Editor: e.ed, Observer: e.obs,
		Warn: func(ctx context.Context, msg string) { e.warn = append(e.warn, msg) },
	})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	return e
}

func (e *env) agent(mode string) *Agent { return e.ws.Task("t1", "add greet", mode).Agent("1") }

func (e *env) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
