package editing

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fsutil"
)

// writeOwn carries out a change on the disk when the editor cannot
// (no workspace/applyEdit, or no documentChanges for a create or delete).
// The disk must still hold old, the text the change was computed from:
// otherwise the change is refused as a conflict.
func (w *Workspace) writeOwn(rp Path, op, old, next string) error {
	if op != api.OpCreate {
		b, err := os.ReadFile(rp.Abs)
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
		if err = os.MkdirAll(filepath.Dir(rp.Abs), 0o755); err == nil {
			err = w.writeAtomic(rp.Abs, next, true)
		}
	case api.OpDelete:
		err = os.Remove(rp.Abs)
	default:
		err = w.writeAtomic(rp.Abs, next, false)
	}
	if err != nil {
		if errors.Is(err, ErrExists) {
			return err
		}
		return fmt.Errorf("%w: writing %s: %w", ErrNotApplied, rp.Rel, err)
	}
	return nil
}

// writeAtomic replaces (or, with create, creates) the file abs with data so
// that a reader sees the old file or the new one, never a mix, and a crash
// leaves the old file whole: the data goes to a temporary file in the same
// directory, is synced, gets the old file's mode, and is renamed over abs
// (linked, for a create, so an existing file is never clobbered); then the
// directory is synced.
func (w *Workspace) writeAtomic(abs, data string, create bool) (err error) {
	dir := filepath.Dir(abs)
	mode := fs.FileMode(0o644)
	if !create {
		fi, err := os.Stat(abs)
		if err != nil {
			return err
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".agentls-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.WriteString(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if create {
		err = os.Link(tmp, abs)
		switch {
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("%w: %s appeared meanwhile", ErrExists, abs)
		case err != nil:
			// no hard links here: check, then rename
			if _, serr := os.Lstat(abs); serr == nil {
				return fmt.Errorf("%w: %s appeared meanwhile", ErrExists, abs)
			}
			if err = w.renameFn(tmp, abs); err != nil {
				return err
			}
		default:
			os.Remove(tmp)
		}
	} else if err = w.renameFn(tmp, abs); err != nil {
		return err
	}
	return fsutil.SyncDir(dir)
}
