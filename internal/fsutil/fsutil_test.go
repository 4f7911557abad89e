package fsutil

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	t.Run("replaces a file and keeps its mode", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "f.json")
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := WriteAtomic(p, []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		st, _ := os.Stat(p)
		if string(got) != "new" || st.Mode().Perm() != 0o600 {
			t.Errorf("got %q mode %v, want \"new\" mode 0600", got, st.Mode().Perm())
		}
		entries, _ := os.ReadDir(filepath.Dir(p))
		if len(entries) != 1 {
			t.Errorf("left %d entries in the directory, want the file alone", len(entries))
		}
	})
	t.Run("creates a file with the given mode", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "g")
		if err := WriteAtomic(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
		if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want 0640", st.Mode().Perm())
		}
	})
	t.Run("fails without touching the file when the directory is missing", func(t *testing.T) {
		if err := WriteAtomic(filepath.Join(t.TempDir(), "no", "f"), []byte("x"), 0o644); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("creates the missing directories when asked", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "a", "b", "f")
		if err := Write(p, []byte("x"), WriteOptions{MkdirAll: true, Exclusive: true}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != "x" {
			t.Errorf("got %q", got)
		}
	})
	t.Run("makes the missing directories with the mode asked", func(t *testing.T) {
		top := t.TempDir()
		p := filepath.Join(top, "a", "b", "f")
		if err := Write(p, []byte("x"), WriteOptions{MkdirAll: true, DirPerm: 0o700, Perm: 0o600}); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{filepath.Join(top, "a"), filepath.Join(top, "a", "b")} {
			if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("%s: %v, %v; want 0700", d, st.Mode().Perm(), err)
			}
		}
	})
	t.Run("never replaces a file in an exclusive create", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte("the user's"), 0o644)
		err := Write(p, []byte("agent's"), WriteOptions{Exclusive: true})
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("err = %v, want fs.ErrExist", err)
		}
		if got, _ := os.ReadFile(p); string(got) != "the user's" {
			t.Errorf("the file became %q", got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left %d entries, want the file alone", len(entries))
		}
	})
	t.Run("never replaces a file that appears while an exclusive create writes", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		// The file appears after the first check, before the data is in
		// place: the last step must see it. Links make that step; the
		// rename stand-in is only reached without them, so it plants the
		// file here only as a second line of defence.
		appear := func() { os.WriteFile(p, []byte("the user's"), 0o644) }
		var err error
		withHook(t, appear, func() {
			err = Write(p, []byte("agent's"), WriteOptions{Exclusive: true})
		})
		if !errors.Is(err, fs.ErrExist) {
			t.Fatalf("err = %v, want fs.ErrExist", err)
		}
		if got, _ := os.ReadFile(p); string(got) != "the user's" {
			t.Errorf("the file became %q", got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left %d entries, want the file alone", len(entries))
		}
	})
	t.Run("leaves the old file whole and no temporary file when the last step fails", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		os.WriteFile(p, []byte("old"), 0o644)
		var tmpSeen string
		err := Write(p, []byte("new"), WriteOptions{Rename: func(old, _ string) error {
			tmpSeen = filepath.Base(old)
			return errors.New("power cut")
		}})
		if err == nil {
			t.Fatal("want an error")
		}
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("the file became %q", got)
		}
		if target, ok := TempTarget(tmpSeen); !ok || target != "f" {
			t.Errorf("temporary file %q is not named by the scheme", tmpSeen)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left %d entries, want the file alone", len(entries))
		}
	})
}

// withHook runs write with hook called just before a write's last step.
func withHook(t *testing.T, hook, write func()) {
	t.Helper()
	beforeLastStep = hook
	defer func() { beforeLastStep = func() {} }()
	write()
}

func TestPending(t *testing.T) {
	t.Run("a file written in a stream appears whole at Commit", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.bin")
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := Create(p, WriteOptions{Perm: 0o644})
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{"n", "e", "w"} {
			if _, err := w.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(p); string(got) != "old" {
				t.Fatalf("before Commit the file is %q, want it as it was", got)
			}
		}
		if err := w.Commit(); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		st, _ := os.Stat(p)
		if string(got) != "new" || st.Mode().Perm() != 0o600 {
			t.Errorf("got %q mode %v, want \"new\" with the file's own mode 0600", got, st.Mode().Perm())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left %d entries in the directory, want the file alone", len(entries))
		}
		if err := w.Commit(); err == nil {
			t.Error("a second Commit succeeded")
		}
		w.Abort() // after Commit: nothing
		if got, _ := os.ReadFile(p); string(got) != "new" {
			t.Errorf("Abort after Commit changed the file to %q", got)
		}
	})
	t.Run("Abort leaves the file as it was and no temporary file", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.bin")
		if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		w, err := Create(p, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("half")); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		w.Abort()
		if got, _ := os.ReadFile(p); string(got) != "old" {
			t.Errorf("the file became %q", got)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left %d entries in the directory, want the file alone", len(entries))
		}
		if _, err := w.Write([]byte("x")); err == nil {
			t.Error("a write after Abort succeeded")
		}
	})
}

func TestTempTarget(t *testing.T) {
	for _, c := range []struct {
		name, target string
		ok           bool
	}{
		{".main.go.agentls-123456.tmp", "main.go", true},
		{".intent_map.md.agentls-42.tmp", "intent_map.md", true},
		{".main.go.agentls-4711", "main.go", true}, // the sidecar's edits before
		{".main.go.agentlsconfig", "", false},      // six letters are a word
		{".tmp-intent_map.md-123", "", false},      // too plain to take on sight
		{"main.go.agentls-1.tmp", "", false},
		{".main.go.agentls-.tmp", "", false},
		{".main.go.tmp", "", false},
		{"notes.txt", "", false},
	} {
		target, ok := TempTarget(c.name)
		if target != c.target || ok != c.ok {
			t.Errorf("TempTarget(%q) = %q, %v; want %q, %v", c.name, target, ok, c.target, c.ok)
		}
	}
}

// plant writes a file aged as a crash's leftover (older than the process).
func plant(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := started.Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func names(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestRemoveTemps(t *testing.T) {
	t.Run("removes the leftovers of one file, in every scheme", func(t *testing.T) {
		dir := t.TempDir()
		for _, n := range []string{".tmp-s.json-123", ".s.json.agentls-9.tmp", ".other.agentls-9.tmp", "s.json", ".tmp-notes"} {
			plant(t, filepath.Join(dir, n))
		}
		RemoveTemps(dir, "s.json")
		if got := strings.Join(names(t, dir), " "); got != ".other.agentls-9.tmp .tmp-notes s.json" {
			t.Errorf("left %s", got)
		}
	})
	t.Run("keeps a temporary file a write of this process may still use", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, ".s.json.agentls-9.tmp"), nil, 0o644) // changed now
		RemoveTemps(dir, "")
		if len(names(t, dir)) != 1 {
			t.Error("a fresh temporary file was removed")
		}
	})
	t.Run("keeps a temporary file a writer holds", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, ".s.json.agentls-9.tmp")
		plant(t, p)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := lock(f); err != nil {
			t.Fatal(err)
		}
		defer unlock(f)
		if held, _ := tryLock(mustOpen(t, p)); !held {
			t.Skip("advisory locks are not available here")
		}
		RemoveTemps(dir, "")
		if len(names(t, dir)) != 1 {
			t.Error("a locked temporary file was removed")
		}
	})
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestSweepTemps(t *testing.T) {
	t.Run("removes the leftovers of a crash and nothing else", func(t *testing.T) {
		root := t.TempDir()
		for _, n := range []string{
			".orchestration/.tmp-intent_map.md-2854301", // agentls's own file, older scheme
			".orchestration/.intent_map.md.agentls-77.tmp",
			"src/deep/.main.go.agentls-123.tmp",
			"src/.util.go.agentls-4711",
			".git/.config.agentls-1.tmp",       // git's directory is not walked
			"src/.tmp-main.go-123",             // plain name, not a listed file: the user's
			".orchestration/.tmp-notes.md-123", // not a listed file either
			"src/main.go",
			"src/.main.go.agentls-old.txt",
		} {
			plant(t, filepath.Join(root, filepath.FromSlash(n)))
		}
		removed, err := SweepTemps(context.Background(), root, SweepOptions{Legacy: []string{".orchestration/intent_map.md"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(removed) != 4 {
			t.Errorf("removed %d files, want 4: %v", len(removed), removed)
		}
		want := ".git/.config.agentls-1.tmp .orchestration/.tmp-notes.md-123 src/.main.go.agentls-old.txt src/.tmp-main.go-123 src/main.go"
		if got := strings.Join(names(t, root), " "); got != want {
			t.Errorf("left %s\nwant %s", got, want)
		}
	})
	t.Run("stops when its context ends", func(t *testing.T) {
		root := t.TempDir()
		plant(t, filepath.Join(root, "a", ".x.agentls-1.tmp"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		removed, err := SweepTemps(ctx, root, SweepOptions{})
		if !errors.Is(err, context.Canceled) || len(removed) != 0 {
			t.Fatalf("SweepTemps = %v, %v; want nothing removed and context.Canceled", removed, err)
		}
	})
	t.Run("stops at its bound of entries", func(t *testing.T) {
		root := t.TempDir()
		for _, d := range []string{"a", "b", "c"} {
			plant(t, filepath.Join(root, d, "f"))
		}
		if _, err := SweepTemps(context.Background(), root, SweepOptions{MaxEntries: 3}); !errors.Is(err, ErrSweepBound) {
			t.Fatalf("err = %v, want ErrSweepBound", err)
		}
	})
}

func TestAppendLine(t *testing.T) {
	t.Run("refuses a line without its newline", func(t *testing.T) {
		if err := AppendLine(filepath.Join(t.TempDir(), "t"), []byte("x"), 0o644); err == nil {
			t.Error("want an error")
		}
	})
	t.Run("keeps a new line whole after a torn one", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "t.jsonl")
		os.WriteFile(p, []byte("{\"a\":1}\n{\"tor"), 0o644)
		if err := AppendLine(p, []byte("{\"b\":2}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != "{\"a\":1}\n{\"tor\n{\"b\":2}\n" {
			t.Errorf("got %q", got)
		}
	})
}
