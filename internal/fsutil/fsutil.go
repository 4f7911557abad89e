// Package fsutil holds the disk writes agentls relies on: a whole-file
// write that is atomic (readers see the old or the new file, never a part;
// a crash leaves the old file whole), given whole (Write) or in a stream
// (Create, then Commit), optionally an exclusive create that
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
func Write(path string, data []byte, o WriteOptions) error {
	p, err := Create(path, o)
	if err != nil {
		return err
	}
	defer p.Abort()
	if _, err := p.Write(data); err != nil {
		return err
	}
	return p.Commit()
}

// Pending is a file being written atomically in a stream (Create): its
// data goes to a temporary file, and path is replaced (or created) by
// Commit, all at once, as Write does. Until then path is as it was; Abort
// removes the temporary file. A Pending is used by one goroutine.
type Pending struct {
	path, tmp string
	f         *os.File
	o         WriteOptions
	perm      fs.FileMode
	done      bool
	err       error // the first write's error, kept for Commit
}

// Create starts the atomic write of path with the options of Write: the
// directories are made and the temporary file created now, the data is
// written with Write (Pending's), and Commit puts it in place.
func Create(path string, o WriteOptions) (*Pending, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	if o.Rename == nil {
		o.Rename = os.Rename
	}
	if o.MkdirAll {
		dirPerm := o.DirPerm
		if dirPerm == 0 {
			dirPerm = 0o755
		}
		if err := os.MkdirAll(dir, dirPerm); err != nil {
			return nil, fmt.Errorf("write %s: %w", path, err)
		}
	}
	if o.Exclusive {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("write %s: %w", path, fs.ErrExist)
		}
	} else if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, tempPattern(base))
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("write %s: lock: %w", path, err)
	}
	return &Pending{path: path, tmp: f.Name(), f: f, o: o, perm: perm}, nil
}

// Name is the temporary file's path, which holds the data until Commit
// puts it at path: a reader opened on it before Commit reads what was
// written, whoever replaces path afterwards.
func (p *Pending) Name() string { return p.tmp }

// Write writes to the temporary file. An error is kept: Commit fails with
// it too.
func (p *Pending) Write(b []byte) (int, error) {
	if p.done {
		return 0, fmt.Errorf("write %s: %w", p.path, os.ErrClosed)
	}
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.f.Write(b)
	if err != nil {
		p.err = fmt.Errorf("write %s: %w", p.path, err)
		return n, p.err
	}
	return n, nil
}

// Commit fsyncs the data, gives it its mode and puts it at path (a rename,
// or a hard link for an exclusive create), then fsyncs the directory. On
// failure the temporary file is removed and path is as it was. It may be
// called once; Abort after it does nothing.
func (p *Pending) Commit() (err error) {
	if p.done {
		return fmt.Errorf("write %s: %w", p.path, os.ErrClosed)
	}
	p.done = true
	closed := false
	defer func() {
		if !closed {
			unlock(p.f)
			p.f.Close()
		}
		if err != nil {
			os.Remove(p.tmp)
		}
	}()
	if p.err != nil {
		return p.err
	}
	if err = p.f.Chmod(p.perm); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	if err = p.f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", p.path, err)
	}
	// The lock is held until the file is in place: a sweep that sees the
	// temporary name meanwhile leaves it alone.
	beforeLastStep()
	if p.o.Exclusive {
		err = link(p.tmp, p.path, p.o.Rename)
	} else {
		err = p.o.Rename(p.tmp, p.path)
	}
	unlock(p.f)
	cerr := p.f.Close()
	closed = true
	if err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	if p.o.Exclusive {
		os.Remove(p.tmp) // path holds the data under its own name now
	}
	if cerr != nil {
		return fmt.Errorf("write %s: %w", p.path, cerr)
	}
	dir := filepath.Dir(p.path)
	return SyncDir(dir)
}

// Abort removes the temporary file and leaves path as it was, unless
// Commit was called. It may be called any number of times.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	unlock(p.f)
	p.f.Close()
	os.Remove(p.tmp)
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
