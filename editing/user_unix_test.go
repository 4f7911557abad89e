//go:build unix

package editing

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/agentls/agentls/internal/testkit"
)

// A FIFO in the workspace (a repository can ship one, or a person can name
// one) is refused before it is opened: opening it for reading would block
// until a writer came, which never does.
func TestFIFOIsRefusedWithoutBlocking(t *testing.T) {
	e := newEnv(t, headlessCaps(), "apply", zonesDeny("private/**"), map[string]string{"main.go": "package main\n"})
	if err := syscall.Mkfifo(filepath.Join(e.root, "pipe.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := testkit.Context(t)
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"as an attached image", func() error { _, _, err := e.ws.UserImage("pipe.png", 1<<20); return err }},
		{"as an attached file", func() error { _, _, err := e.ws.UserFile(ctx, "pipe.png", 1<<20); return err }},
		{"by read_file", func() error { _, err := e.agent("apply").Read(ctx, "pipe.png", 0, 0); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- c.read() }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrBadPath) {
					t.Fatalf("err = %v, want ErrBadPath (not a regular file)", err)
				}
			case <-ctx.Done():
				t.Fatal("reading a FIFO blocked")
			}
		})
	}
}

// A file much larger than the bound is refused before it is read: memory
// does not grow with its size.
func TestHugeFileIsNotReadWhole(t *testing.T) {
	e := newEnv(t, headlessCaps(), "apply", zonesDeny("private/**"), map[string]string{"main.go": "package main\n"})
	huge := filepath.Join(e.root, "huge.log")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: a gigabyte that takes no room on the disk.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		read func() error
	}{
		{"as an attached file", func() error { _, _, err := e.ws.UserFile(ctx, "huge.log", 1<<20); return err }},
		{"as an attached range of a file", func() error { _, _, err := e.ws.UserFile(ctx, "huge.log", 0); return err }},
		{"as an attached image", func() error { _, _, err := e.ws.UserImage("huge.log", 1<<20); return err }},
		{"by read_file", func() error { _, err := e.agent("apply").Read(ctx, "huge.log", 0, 10); return err }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := c.read()
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("err = %v, want ErrTooLarge", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Fatalf("reading it allocated %d MiB: it was read before it was refused", grew>>20)
			}
		})
	}
}
