package intents

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// An intents file that is a symlink (to a file outside, whose YAML could
// widen what an agent may change) is not followed: the file is broken, and
// mutating tools are refused until it is fixed.
func TestSymlinkedIntentsFileIsBroken(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	root, outside := t.TempDir(), t.TempDir()
	theirs := filepath.Join(outside, "intents.yaml")
	if err := os.WriteFile(theirs, []byte("active_intents:\n  - id: INT-1\n    name: x\n    status: IN_PROGRESS\n    owned_scope: [\"**\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, filepath.Join(root, filepath.FromSlash(RelPath))); err != nil {
		t.Fatal(err)
	}
	var broken error
	s := NewStore(root, Options{OnBroken: func(err error) { broken = err }})
	list, err := s.Intents()
	if !errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "symlink") || list != nil {
		t.Fatalf("Intents = %v, %v; want broken, naming the symlink", list, err)
	}
	if broken == nil {
		t.Fatal("the person was not told")
	}
}
