package workforce

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEditFile(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.txt": "x = 1\ny = 1\n", "b.txt": "k\nk\n"})
	h.check("edit_file", []toolCase{
		{name: "replaces the one occurrence of old_string", args: map[string]any{"path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}, says: []string{"Updated a.txt (+1 -1 lines)."}, path: "a.txt"},
		{name: "refuses an old_string that occurs more than once", args: map[string]any{"path": "b.txt", "old_string": "k", "new_string": "j"}, isErr: true, says: []string{"b.txt"}},
		{name: "replaces every occurrence with replace_all", args: map[string]any{"path": "b.txt", "old_string": "k", "new_string": "j", "replace_all": true}, says: []string{"Updated b.txt"}, path: "b.txt"},
		{name: "refuses an empty old_string and points to write_file", args: map[string]any{"path": "a.txt", "old_string": "", "new_string": "z"}, isErr: true, says: []string{"use write_file"}},
		{name: "needs new_string", args: map[string]any{"path": "a.txt", "old_string": "y = 1"}, isErr: true, says: []string{"edit_file needs new_string"}},
		{name: "refuses a replace_all that is not true or false", args: map[string]any{"path": "a.txt", "old_string": "y", "new_string": "z", "replace_all": "yes"}, isErr: true, says: []string{"edit_file's replace_all must be true or false"}},
	}, call("read_file", map[string]any{"path": "a.txt"}), call("read_file", map[string]any{"path": "b.txt"}))
	for name, want := range map[string]string{"a.txt": "x = 2\ny = 1\n", "b.txt": "j\nj\n"} {
		if b, err := os.ReadFile(filepath.Join(h.root, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
}
