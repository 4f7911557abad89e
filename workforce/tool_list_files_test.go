package workforce

import "testing"

func TestListFiles(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.go": "package a\n", "sub/b.go": "package b\n", "notes.txt": "n\n"})
	h.check("list_files", []toolCase{
		{name: "lists every file without a pattern", args: map[string]any{}, says: []string{"a.go", "sub/b.go", "notes.txt"}},
		{name: "lists the files a glob matches at any depth", args: map[string]any{"pattern": "**/*.go"}, says: []string{"a.go", "sub/b.go"}},
		{name: "says when nothing matches", args: map[string]any{"pattern": "*.rs"}, says: []string{`(no files match "**/*.rs")`}},
		{name: "refuses a pattern that is not a string", args: map[string]any{"pattern": []string{"*.go"}}, isErr: true, says: []string{"list_files's pattern must be a string"}},
	})
}
