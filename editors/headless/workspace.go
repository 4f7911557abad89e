package headless

import (
	"path/filepath"
	"sync"

	"github.com/agentls/agentls/internal/contain"
)

// Workspace is what an editor holds of a workspace: its directory and the
// buffers open over it, by absolute path. It reads a file as an editor does
// (an open buffer first, then the disk) and applies workspace edits all or
// nothing (Apply). The Editor answers the server's reverse calls from one;
// the in-process fake of package headlesstest shares it, so that the unit
// tests and the end-to-end tests apply edits the same way.
//
// It is safe for concurrent use; each method holds it for its whole call, so
// an edit is applied whole before a read sees it.
type Workspace struct {
	root string

	mu      sync.Mutex
	buffers map[string]*buffer
	ops     []string // the resource operations the editor performs
	pretend bool     // skip the others and report the edit applied
}

type buffer struct {
	text    string
	version int32
}

// NewWorkspace returns the workspace in directory root with no buffer open.
// The root is made absolute and its symlinks resolved where it exists.
func NewWorkspace(root string) *Workspace {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return &Workspace{root: root, buffers: map[string]*buffer{}}
}

// SetResourceOperations says which resource operations of a workspace edit
// the editor performs (api.OpCreate, api.OpDelete; none until it is called)
// and what it does with another: with pretend it skips it and still reports
// the edit applied, and opens a new buffer for a text edit to a missing
// file, as eglot 1.9 does; without, the edit fails.
func (w *Workspace) SetResourceOperations(ops []string, pretend bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ops, w.pretend = append([]string(nil), ops...), pretend
}

// Root is the workspace directory.
func (w *Workspace) Root() string { return w.root }

// Abs returns the absolute path of a workspace-relative path ("/"
// separators); an absolute path is cleaned.
func (w *Workspace) Abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(w.root, filepath.FromSlash(path))
}

// OpenBuffer opens a buffer for path (absolute or workspace-relative) with
// text that differs from the disk (unsaved edits), at version 1. Reads
// answer from it and edits change it, its version rising by one per edit.
func (w *Workspace) OpenBuffer(path, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buffers[w.Abs(path)] = &buffer{text: text, version: 1}
}

// CloseBuffer closes path's buffer, dropping its unsaved text.
func (w *Workspace) CloseBuffer(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.buffers, w.Abs(path))
}

// Buffer returns an open buffer's text and version.
func (w *Workspace) Buffer(path string) (text string, version int32, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.buffers[w.Abs(path)]
	if !ok {
		return "", 0, false
	}
	return b.text, b.version, true
}

// SetBufferVersion changes an open buffer's version, as further typing in a
// real editor would.
func (w *Workspace) SetBufferVersion(path string, v int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if b, ok := w.buffers[w.Abs(path)]; ok {
		b.version = v
	}
}

// Read returns path's text: its open buffer's, else the disk's.
func (w *Workspace) Read(path string) (string, error) {
	abs := w.Abs(path)
	w.mu.Lock()
	b, ok := w.buffers[abs]
	var text string
	if ok {
		text = b.text
	}
	w.mu.Unlock()
	if ok {
		return text, nil
	}
	// An editor reads files, never a FIFO or a device.
	data, _, err := contain.ReadRegular(abs, 0)
	return string(data), err
}
