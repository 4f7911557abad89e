// Package fsutil holds the disk writes agentls relies on: a whole-file
// write that is atomic (readers see the old or the new file, never a part;
// a crash leaves the old file whole), optionally an exclusive create that
// never replaces a file, and a line append that is one write under an
// exclusive lock (concurrent appenders, even in other processes, never
// interleave a line). It also names the temporary files of those writes in
// one scheme and removes the ones a crash left (temp.go).
//
// Every write is fsynced before it returns, so what it reports written
// survives a crash; a write that fails leaves the file as it was. The
// functions are safe for concurrent use, from goroutines and processes.
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteOptions tune Write. The zero value replaces or creates the file with
// mode 0644 in an existing directory.
type WriteOptions struct {
	// Perm is the mode of a new file (0: 0644). A replaced file keeps its
	// own mode.
	Perm fs.FileMode
	// Exclusive creates the file and never replaces one: when path exists,
	// or appears while the data is written, Write fails with an error
	// wrapping fs.ErrExist and leaves that file alone.
	Exclusive bool
	// MkdirAll creates the missing parent directories, with mode DirPerm
	// (0: 0755).
	MkdirAll bool
	DirPerm  fs.FileMode
	// Rename stands in for os.Rename, the step that makes a replacement
	// visible: tests interrupt a write there.
	Rename func(oldpath, newpath string) error
}

// Write writes data to path atomically: the data goes to a temporary file
// in the same directory (named by TempName's scheme and locked while it is
// written, so RemoveTemps and SweepTemps leave it alone), is fsynced, gets
// its mode, and is renamed over path — or, for an exclusive create,
// hard-linked to path, which fails rather than replace a file; then the
// directory is fsynced. On any failure the temporary file is removed and
// path is as it was.
func Write(path string, data []byte, o WriteOptions) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	rename := o.Rename
	if rename == nil {
		rename = os.Rename
	}
	if o.MkdirAll {
		dirPerm := o.DirPerm
		if dirPerm == 0 {
			dirPerm = 0o755
		}
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if o.Exclusive {
		if _, err := os.Lstat(path); err == nil {
			return fmt.Errorf("write %s: %w", path, fs.ErrExist)
		}
	} else if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if !closed {
			unlock(f)
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if err = lock(f); err != nil {
		return fmt.Errorf("write %s: lock: %w", path, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	// The lock is held until the file is in place: a sweep that sees the
	// temporary name meanwhile leaves it alone.
	beforeLastStep()
	if o.Exclusive {
		err = link(tmp, path, rename)
	} else {
		err = rename(tmp, path)
	}
	unlock(f)
	cerr := f.Close()
	closed = true
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if o.Exclusive {
		os.Remove(tmp) // path holds the data under its own name now
	}
	if cerr != nil {
		return fmt.Errorf("write %s: %w", path, cerr)
	}
	return SyncDir(dir)
}

// beforeLastStep runs just before a write puts its data in place: tests
// make a file appear there.
var beforeLastStep = func() {}

// link puts the complete temporary file tmp at path unless path exists. A
// file system without hard links gets a check and a rename, which a file
// appearing in between could lose to; every common local file system has
// them.
func link(tmp, path string, rename func(string, string) error) error {
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("it appeared meanwhile: %w", fs.ErrExist)
	}
	if _, serr := os.Lstat(path); serr == nil {
		return fmt.Errorf("it appeared meanwhile: %w", fs.ErrExist)
	}
	return rename(tmp, path)
}

// WriteAtomic replaces or creates path with data (Write with Perm alone):
// an existing file's mode is kept; a new one gets perm.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	return Write(path, data, WriteOptions{Perm: perm})
}

// SyncDir fsyncs a directory so that a rename or a new file in it survives a
// power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// AppendLine appends line (which must end in "\n" and hold no other
// newline) to path with O_APPEND, under an exclusive advisory lock, in one
// write, then fsyncs. When the file does not end in a newline (an earlier
// writer died mid-line), a newline is written first so the new line stays
// whole and the torn one stays detectable.
func AppendLine(path string, line []byte, perm fs.FileMode) error {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return fmt.Errorf("append %s: line must end in a newline", path)
	}
	f, err := openAppendLocked(path, perm)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	defer f.Close()
	defer unlock(f)
	torn, err := endsMidLine(path, f)
	if err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	if torn {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("append %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("append %s: fsync: %w", path, err)
	}
	return nil
}

func endsMidLine(path string, f *os.File) (bool, error) {
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() == 0 {
		return false, nil
	}
	r, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer r.Close()
	var b [1]byte
	if _, err := r.ReadAt(b[:], st.Size()-1); err != nil {
		return false, err
	}
	return b[0] != '\n', nil
}
