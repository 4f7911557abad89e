package contain_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/contain"
)

// tree makes a workspace "ws" beside an "outside" directory holding a
// secret, with symlinks in and out, and returns the parent directory.
func tree(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	top := t.TempDir()
	mk := func(p, content string) {
		t.Helper()
		p = filepath.Join(top, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(top, p)); err != nil {
			t.Fatal(err)
		}
	}
	mk("outside/secret.txt", "secret")
	mk("ws/a/b.txt", "b")
	ln(filepath.Join(top, "outside"), "ws/out")        // absolute, out
	ln("../../outside/secret.txt", "ws/a/rel-out.txt") // relative, out
	ln("b.txt", "ws/a/in.txt")                         // in
	ln(filepath.Join(top, "ws", "a"), "ws/a-abs")      // absolute, in
	ln(filepath.Join(top, "nowhere"), "ws/dangling")   // dangling
	ln(filepath.Join(top, "ws"), "ws-link")            // the workspace through a link
	return top
}

func TestResolve(t *testing.T) {
	top := tree(t)
	d, err := contain.New(filepath.Join(top, "ws-link"))
	if err != nil {
		t.Fatal(err)
	}
	realWS, _ := filepath.EvalSymlinks(filepath.Join(top, "ws"))
	if d.Path() != realWS {
		t.Fatalf("Path() = %s, want %s", d.Path(), realWS)
	}
	for _, tc := range []struct {
		name, path, rel string
		outside         bool
	}{
		{"takes a relative path", "a/b.txt", "a/b.txt", false},
		{"takes the directory itself", ".", ".", false},
		{"takes a path not made yet", "a/new/file.txt", "a/new/file.txt", false},
		{"takes an absolute path under the real directory", filepath.Join(realWS, "a/b.txt"), "a/b.txt", false},
		{"takes an absolute path under the symlinked name", filepath.Join(top, "ws-link", "a/b.txt"), "a/b.txt", false},
		{"follows a symlink that stays inside", "a/in.txt", "a/b.txt", false},
		{"follows an absolute symlink that stays inside", "a-abs/b.txt", "a/b.txt", false},
		{"refuses dot-dot out", "../outside/secret.txt", "", true},
		{"refuses an absolute path elsewhere", filepath.Join(top, "outside/secret.txt"), "", true},
		{"refuses a directory symlink out", "out/secret.txt", "", true},
		{"refuses a new file under a directory symlink out", "out/pwned.txt", "", true},
		{"refuses a relative file symlink out", "a/rel-out.txt", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := d.Resolve(tc.path)
			if tc.outside {
				if !errors.Is(err, contain.ErrOutside) {
					t.Fatalf("Resolve(%q) = %+v, %v; want ErrOutside", tc.path, p, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.path, err)
			}
			if p.Rel != tc.rel {
				t.Errorf("Resolve(%q).Rel = %q, want %q", tc.path, p.Rel, tc.rel)
			}
			if want := filepath.Join(realWS, filepath.FromSlash(tc.rel)); p.Abs != want {
				t.Errorf("Resolve(%q).Abs = %q, want %q", tc.path, p.Abs, want)
			}
		})
	}
	t.Run("refuses a dangling symlink", func(t *testing.T) {
		if _, err := d.Resolve("dangling/x"); err == nil || !strings.Contains(err.Error(), "missing target") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("says the two names of one directory are the same", func(t *testing.T) {
		if !contain.Same(filepath.Join(top, "ws-link"), realWS) {
			t.Fatal("Same = false")
		}
		if contain.Same(filepath.Join(top, "outside"), realWS) {
			t.Fatal("Same = true for two directories")
		}
	})
}

func TestNoSymlinks(t *testing.T) {
	top := tree(t)
	d, err := contain.New(filepath.Join(top, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NoSymlinks("a/b.txt"); err != nil {
		t.Errorf("a plain path: %v", err)
	}
	if _, err := d.NoSymlinks("a/missing/x.txt"); err != nil {
		t.Errorf("a path not made yet: %v", err)
	}
	for _, p := range []string{"out/x", "a/in.txt", "a-abs/b.txt", "dangling"} {
		if _, err := d.NoSymlinks(p); !errors.Is(err, contain.ErrSymlink) {
			t.Errorf("NoSymlinks(%q) = %v, want ErrSymlink", p, err)
		}
	}
	if _, err := d.NoSymlinks("../outside"); !errors.Is(err, contain.ErrOutside) {
		t.Errorf("NoSymlinks(..) = %v, want ErrOutside", err)
	}
	if _, err := d.MkdirNoSymlinks("out/deeper", 0o700); !errors.Is(err, contain.ErrSymlink) {
		t.Errorf("MkdirNoSymlinks through a symlink = %v", err)
	}
	if _, err := os.Stat(filepath.Join(top, "outside", "deeper")); !os.IsNotExist(err) {
		t.Errorf("a directory was made outside: %v", err)
	}
	abs, err := d.MkdirNoSymlinks(".state/x", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %s: %v %v", abs, fi, err)
	}
}

func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("reads a file whole", func(t *testing.T) {
		b, size, err := contain.ReadRegular(file, 0)
		if err != nil || string(b) != "0123456789" || size != 10 {
			t.Fatalf("%q %d %v", b, size, err)
		}
	})
	t.Run("reads a file at its bound whole", func(t *testing.T) {
		b, _, err := contain.ReadRegular(file, 10)
		if err != nil || string(b) != "0123456789" {
			t.Fatalf("%q %v", b, err)
		}
	})
	t.Run("reads no more than its bound of a larger file", func(t *testing.T) {
		b, size, err := contain.ReadRegular(file, 4)
		if !errors.Is(err, contain.ErrTooLarge) || string(b) != "0123" || size != 10 {
			t.Fatalf("%q %d %v", b, size, err)
		}
	})
	t.Run("refuses a directory", func(t *testing.T) {
		if _, _, err := contain.ReadRegular(dir, 0); !errors.Is(err, contain.ErrNotRegular) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("refuses a FIFO without blocking on it", func(t *testing.T) {
		if runtime.GOOS == "windows" {
			t.Skip("no FIFOs")
		}
		fifo := filepath.Join(dir, "fifo")
		mkfifo(t, fifo)
		// No writer ever opens it: a reader that opened it would block
		// here forever.
		_, _, err := contain.ReadRegular(fifo, 0)
		if !errors.Is(err, contain.ErrNotRegular) || !strings.Contains(err.Error(), "named pipe") {
			t.Fatalf("err = %v", err)
		}
		if _, err := contain.CheckRegular(fifo); !errors.Is(err, contain.ErrNotRegular) {
			t.Fatalf("CheckRegular: %v", err)
		}
	})
}

func TestReadWriteFile(t *testing.T) {
	top := tree(t)
	d, err := contain.New(filepath.Join(top, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile("a/in.txt", 0); err != nil || string(b) != "b" {
		t.Errorf("a symlink inside: %q %v", b, err)
	}
	for _, p := range []string{"out/secret.txt", "a/rel-out.txt", filepath.Join(top, "outside/secret.txt")} {
		if b, err := d.ReadFile(p, 0); !errors.Is(err, contain.ErrOutside) {
			t.Errorf("ReadFile(%q) = %q, %v; want ErrOutside", p, b, err)
		}
		if err := d.WriteFile(p, []byte("pwned"), 0o644); !errors.Is(err, contain.ErrOutside) {
			t.Errorf("WriteFile(%q) = %v; want ErrOutside", p, err)
		}
	}
	if err := d.WriteFile("out/pwned.txt", []byte("pwned"), 0o644); !errors.Is(err, contain.ErrOutside) {
		t.Errorf("WriteFile through a directory symlink out = %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(top, "outside/secret.txt")); err != nil || string(b) != "secret" {
		t.Fatalf("the file outside changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(top, "outside/pwned.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file was made outside: %v", err)
	}
	if err := d.WriteFile("new/dir/f.txt", []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile("new/dir/f.txt", 0); err != nil || string(b) != "f" {
		t.Fatalf("read back %q %v", b, err)
	}
}
