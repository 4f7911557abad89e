package trace

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
)

// A repository can ship the trace, the intent map or .orchestration itself
// as a symlink to a file of the person's (~/.bashrc): a line appended there
// runs in their next shell. None is followed: the change is refused with a
// reason that says so, and the file outside is untouched.
func TestSymlinkedPlacesAreNotFollowed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	for _, c := range []struct {
		name, link string
		dir        bool // the link leads to a directory
	}{
		{"the trace", RelPath, false},
		{"the intent map", MapRelPath, false},
		{".orchestration", Dir, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			bashrc := filepath.Join(outside, ".bashrc")
			if err := os.WriteFile(bashrc, []byte("export PS1=x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := bashrc
			if c.dir {
				target = outside
			}
			link := filepath.Join(root, filepath.FromSlash(c.link))
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			l := newTestLog(t, root)
			_, err := l.Record(Change{Path: "n$(touch PWNED).txt", Operation: api.OpCreate, Content: []byte("x\n"), Spans: []Span{{1, 1}}})
			if !errors.Is(err, contain.ErrSymlink) || !strings.Contains(err.Error(), "does not follow") {
				t.Fatalf("Record = %v, want a refusal naming the symlink", err)
			}
			if b, _ := os.ReadFile(bashrc); string(b) != "export PS1=x\n" {
				t.Fatalf("the file outside was written: %q", b)
			}
			if left, _ := os.ReadDir(outside); len(left) != 1 {
				t.Fatalf("files were made outside: %v", left)
			}
			if _, err := l.Query("x.txt", nil); c.link != MapRelPath && err == nil {
				t.Fatal("agent/trace read through the symlink")
			}
		})
	}
}
