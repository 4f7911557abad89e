package editing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fsutil"
)

// writeOwn carries out a change on the disk when the editor cannot
// (no workspace/applyEdit, or a delete the client's resourceOperations do
// not hold; a create they do not hold is createOwn's). The disk must still hold old, the text the change was computed
// from: otherwise the change is refused as a conflict. Every write is
// fsutil.Write's: atomic, the file's mode kept, a create exclusive.
func (w *Workspace) writeOwn(rp Path, op, old, next string) error {
	if op != api.OpCreate {
		b, _, err := contain.ReadRegular(rp.Abs, w.limits.FileBytes)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrNotApplied, rp.Rel, err)
		}
		if string(b) != old {
			return fmt.Errorf("%w: %s on disk differs from the text the change was made on (changed meanwhile, or unsaved edits in the editor); read it again", ErrConflict, rp.Rel)
		}
	}
	var err error
	switch op {
	case api.OpCreate:
		err = w.write(rp, next, true)
	case api.OpDelete:
		if err = os.Remove(rp.Abs); err == nil {
			err = fsutil.SyncDir(filepath.Dir(rp.Abs))
		}
	default:
		err = w.write(rp, next, false)
	}
	if err != nil {
		if errors.Is(err, ErrExists) {
			return err
		}
		return fmt.Errorf("%w: writing %s: %w", ErrNotApplied, rp.Rel, err)
	}
	return nil
}

// write replaces rp with data, or with create makes it (and its
// directories) and never replaces a file: one that appeared meanwhile fails
// the write with ErrExists.
func (w *Workspace) write(rp Path, data string, create bool) error {
	err := fsutil.Write(rp.Abs, []byte(data), fsutil.WriteOptions{
		Perm: 0o644, Exclusive: create, MkdirAll: create, Rename: w.renameFn,
	})
	if create && errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s appeared meanwhile; read it before changing it", ErrExists, rp.Rel)
	}
	return err
}

// createOwn creates rp on disk with data, atomically and exclusively, with
// the directories it lacks, for a client that cannot create files through
// an edit. undo takes the file and those directories away again, as long
// as they are as createOwn left them.
func (w *Workspace) createOwn(rp Path, data string) (undo func(), err error) {
	var dirs []string // missing directories, deepest first
	for d := filepath.Dir(rp.Abs); d != w.root && len(d) > len(w.root); d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		dirs = append(dirs, d)
	}
	if err := w.write(rp, data, true); err != nil {
		if errors.Is(err, ErrExists) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: creating %s: %w", ErrNotApplied, rp.Rel, err)
	}
	made, err := os.Lstat(rp.Abs)
	if err != nil {
		return nil, fmt.Errorf("%w: creating %s: %w", ErrNotApplied, rp.Rel, err)
	}
	return func() {
		// Only the file made here goes: one an editor saved over it
		// meanwhile is no longer ours to remove.
		if fi, err := os.Lstat(rp.Abs); err == nil && os.SameFile(fi, made) {
			if b, err := os.ReadFile(rp.Abs); err == nil && string(b) == data {
				os.Remove(rp.Abs)
			}
		}
		for _, d := range dirs {
			if os.Remove(d) != nil { // not empty: something else lives there now
				break
			}
		}
	}, nil
}

// checkDisk makes sure an editor that answered applied: true to a
// CreateFile or DeleteFile did it on disk: a client may claim so and keep
// the new file in an unsaved buffer, or the old one on disk.
func (w *Workspace) checkDisk(rp Path, op string) error {
	_, err := os.Lstat(rp.Abs)
	switch {
	case op == api.OpCreate && err != nil:
		return fmt.Errorf("%w: the editor answered that it created %s, but there is no such file on disk", ErrNotApplied, rp.Rel)
	case op == api.OpDelete && err == nil:
		return fmt.Errorf("%w: the editor answered that it deleted %s, but the file is still on disk", ErrNotApplied, rp.Rel)
	}
	return nil
}
