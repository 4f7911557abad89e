package fsutil

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteAtomic(t *testing.T) {
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
	t.Run("removes temporaries a crash left", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, TempPrefix+"s.json-123"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, "s.json"), nil, 0o644)
		RemoveTemps(dir, "s.json")
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%d entries left, want 1", len(entries))
		}
	})
}
