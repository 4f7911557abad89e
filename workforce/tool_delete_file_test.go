package workforce

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
)

func TestDeleteFile(t *testing.T) {
	h := newToolHarness(t, map[string]string{"gone.txt": "g\n", "kept.txt": "k\n"})
	res := h.check("delete_file", []toolCase{
		{name: "deletes a file it has read", args: map[string]any{"path": "gone.txt"}, says: []string{"Deleted gone.txt."}, path: "gone.txt"},
		{name: "will not delete a file it has not read", args: map[string]any{"path": "kept.txt"}, isErr: true, says: []string{"read kept.txt before deleting it"}, path: "kept.txt"},
		{name: "reports a file that is not there", args: map[string]any{"path": "never.txt"}, isErr: true, says: []string{"never.txt"}},
		{name: "needs a path", args: map[string]any{}, isErr: true, says: []string{"delete_file needs path"}},
		{name: "refuses an empty path", args: map[string]any{"path": ""}, isErr: true, says: []string{"delete_file needs path"}},
	}, call("read_file", map[string]any{"path": "gone.txt"}))
	if _, err := os.Stat(filepath.Join(h.root, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(h.root, "kept.txt")); err != nil || string(b) != "k\n" {
		t.Errorf("kept.txt = %q, %v", b, err)
	}
	if len(res.Changes) != 1 || res.Changes[0].Operation != api.OpDelete || res.Changes[0].Path != "gone.txt" {
		t.Errorf("changes = %+v", res.Changes)
	}
}
