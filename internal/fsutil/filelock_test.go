package fsutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestFileLock(t *testing.T) {
	if !LocksWork {
		t.Skip("no file locks on " + runtime.GOOS)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "owner.lock")
	t.Run("a held lock cannot be taken by another holder", func(t *testing.T) {
		l, err := LockFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := TryLockFile(path); !errors.Is(err, ErrLocked) {
			t.Fatalf("TryLockFile while held: %v, want ErrLocked", err)
		}
		if err := l.Unlock(); err != nil {
			t.Fatal(err)
		}
		l2, err := TryLockFile(path)
		if err != nil {
			t.Fatalf("TryLockFile after Unlock: %v", err)
		}
		l2.Unlock()
	})
	t.Run("trying a file that does not exist says so", func(t *testing.T) {
		if _, err := TryLockFile(filepath.Join(dir, "none")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("got %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("Same tells whether the path still names the locked file", func(t *testing.T) {
		l, err := LockFile(path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Unlock()
		if !l.Same(path) {
			t.Fatal("Same is false for the file just locked")
		}
		os.Remove(path)
		if l.Same(path) {
			t.Fatal("Same is true after the file was removed")
		}
	})
}

// TestAppendLineFollowsAReplacedFile: a writer waiting for the lock while
// another replaces the file (a damaged history set aside and rewritten)
// must append to the file now in place, not to the one replaced.
func TestAppendLineFollowsAReplacedFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("watches /proc/self/fd to know the writer is waiting")
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := lock(holder); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- AppendLine(path, []byte("new line\n"), 0o600) }()
	// Wait until the writer has the file open (it then waits for the lock).
	deadline := time.Now().Add(10 * time.Second)
	for openCount(t, path) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the writer never opened the file")
		}
		time.Sleep(time.Millisecond)
	}
	if err := WriteAtomic(path, []byte("kept\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unlock(holder)
	holder.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "kept\nnew line\n" {
		t.Fatalf("file holds %q, want the line appended to the replacement", got)
	}
}

func openCount(t *testing.T, path string) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, path) {
			n++
		}
	}
	return n
}
