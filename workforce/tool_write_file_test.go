package workforce

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestWriteFile(t *testing.T) {
	h := newToolHarness(t, map[string]string{"old.txt": "old\n"})
	res := h.check("write_file", []toolCase{
		{name: "creates a file and its directories", args: map[string]any{"path": "new/a.txt", "content": "a\nb\n"}, says: []string{"Created new/a.txt (2 lines)."}, path: "new/a.txt"},
		{name: "creates an empty file from empty content", args: map[string]any{"path": "empty.txt", "content": ""}, says: []string{"Created empty.txt"}, path: "empty.txt"},
		{name: "will not overwrite a file it has not read", args: map[string]any{"path": "old.txt", "content": "new\n"}, isErr: true, says: []string{"read it before overwriting it"}, path: "old.txt"},
		{name: "needs content", args: map[string]any{"path": "c.txt"}, isErr: true, says: []string{"write_file needs content"}},
		{name: "needs a path and content", args: map[string]any{}, isErr: true, says: []string{"write_file needs path and content"}},
	})
	for name, want := range map[string]string{"new/a.txt": "a\nb\n", "empty.txt": "", "old.txt": "old\n"} {
		if b, err := os.ReadFile(filepath.Join(h.root, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if len(res.Changes) != 2 || res.Changes[0].Path != "new/a.txt" || res.Changes[0].Operation != api.OpCreate {
		t.Errorf("changes = %+v", res.Changes)
	}
	if got := h.events(res.TaskID, api.EventChangeApplied); len(got) != 2 {
		t.Errorf("changeApplied events = %+v", got)
	}
}
