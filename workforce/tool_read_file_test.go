package workforce

import (
	"encoding/json"
	"testing"
)

func TestReadFile(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.txt": "one\ntwo\nthree\n", "dir/b.txt": "bee\n"})
	h.check("read_file", []toolCase{
		{name: "reads a file whole", args: map[string]any{"path": "a.txt"}, says: []string{"one\ntwo\nthree"}, path: "a.txt"},
		{name: "reads from offset, limit lines, and says how to read on", args: map[string]any{"path": "a.txt", "offset": 2, "limit": 1}, says: []string{"two\n", "lines 2-2 of 3 shown; read on with offset 3"}},
		{name: "takes a null argument as one left out", args: json.RawMessage(`{"path":"a.txt","offset":null,"limit":null}`), says: []string{"one\ntwo\nthree"}, path: "a.txt"},
		{name: "reads a file in a directory", args: map[string]any{"path": "dir/b.txt"}, says: []string{"bee"}, path: "dir/b.txt"},
		{name: "reports a missing file about its path", args: map[string]any{"path": "nope.txt"}, isErr: true, says: []string{"nope.txt"}, path: "nope.txt"},
		{name: "refuses a directory", args: map[string]any{"path": "dir"}, isErr: true, says: []string{"is a directory; use list_files"}},
		{name: "needs a path", args: map[string]any{"offset": 1}, isErr: true, says: []string{"read_file needs path"}},
		{name: "refuses an offset that is not a number", args: json.RawMessage(`{"path":"a.txt","offset":"2"}`), isErr: true, says: []string{"read_file's offset must be an integer"}},
	})
}
