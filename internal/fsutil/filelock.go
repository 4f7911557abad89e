package fsutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrLocked is returned by TryLockFile when another holder has the lock.
var ErrLocked = errors.New("locked by another holder")

// FileLock is an exclusive advisory lock on a file, held across processes:
// flock(2) on Unix, LockFileEx on Windows. The operating system releases it
// when the holder closes it or dies, however it dies, which is what makes
// it a liveness signal: a lock that can be taken has no live holder. Each
// FileLock is its own holder, also within one process. Where the platform
// has no such lock (LocksWork is false) the calls succeed without locking.
type FileLock struct {
	f *os.File
}

// LockFile opens path (creating it with mode 0600) and waits until it holds
// the file's exclusive lock.
func LockFile(path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockFile(f, true); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &FileLock{f: f}, nil
}

// TryLockFile takes the exclusive lock of the existing file path if no one
// holds it, without waiting. It fails with ErrLocked when someone does, and
// with an error wrapping fs.ErrNotExist when there is no such file.
func TryLockFile(path string) (*FileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := lockFile(f, false); err != nil {
		f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &FileLock{f: f}, nil
}

// Name is the path the lock was taken on.
func (l *FileLock) Name() string { return l.f.Name() }

// Same reports whether path still names the locked file (it may have been
// removed or replaced since the lock was taken).
func (l *FileLock) Same(path string) bool {
	li, err := l.f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && os.SameFile(li, pi)
}

// Unlock releases the lock and closes the file. It may be called once.
func (l *FileLock) Unlock() error {
	uerr := unlockFile(l.f)
	cerr := l.f.Close()
	if uerr != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), uerr)
	}
	return cerr
}

// openAppendLocked opens path for appending under AppendLine's lock, and
// makes sure path still names the file it locked: a file replaced (set
// aside and rewritten by WriteAtomic) while this writer waited for the lock
// would otherwise take the line into a file that is no longer there.
func openAppendLocked(path string, perm fs.FileMode) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
		if err != nil {
			return nil, err
		}
		if err := lock(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock: %w", err)
		}
		fi, ferr := f.Stat()
		pi, perr := os.Stat(path)
		if ferr == nil && perr == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		unlock(f)
		f.Close()
		if ferr != nil {
			return nil, ferr
		}
		if perr != nil && !errors.Is(perr, fs.ErrNotExist) {
			return nil, perr
		}
		// Replaced or removed while this writer waited: open it again.
	}
}
