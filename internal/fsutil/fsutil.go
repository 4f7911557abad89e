// Package fsutil holds the two disk writes agentls relies on: a whole-file
// replace that is atomic (readers see the old or the new file, never a part)
// and a line append that is one write under an exclusive lock (concurrent
// appenders, even in other processes, never interleave a line).
package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TempPrefix starts the name of every temporary file WriteAtomic makes, so
// that leftovers of a crash can be recognised and removed.
const TempPrefix = ".tmp-"

// WriteAtomic replaces path with data: a temporary file in the same
// directory is written, fsynced and renamed over path, then the directory is
// fsynced. An existing file's mode is kept; a new one gets perm.
func WriteAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, TempPrefix+base+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: fsync: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
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

// RemoveTemps removes the temporary files an interrupted WriteAtomic left in
// dir for target's base name ("": for any target).
func RemoveTemps(dir, base string) {
	prefix := TempPrefix
	if base != "" {
		prefix += base + "-"
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
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
