package workforce

import "testing"

func TestSearchFiles(t *testing.T) {
	h := newToolHarness(t, map[string]string{"a.go": "package a\n\nfunc Hello() {}\n", "b.txt": "Hello there\n"})
	h.check("search_files", []toolCase{
		{name: "finds the lines a regular expression matches, as path:line: text", args: map[string]any{"regex": `func \w+\(`}, says: []string{"a.go:3: func Hello() {}"}},
		{name: "searches only the files a glob matches", args: map[string]any{"regex": "Hello", "glob": "*.txt"}, says: []string{"b.txt:1: Hello there"}},
		{name: "says when nothing matches", args: map[string]any{"regex": "Goodbye"}, says: []string{"(no matches"}},
		{name: "reports a regular expression that does not compile", args: map[string]any{"regex": "("}, isErr: true, says: []string{"missing closing )"}},
		{name: "needs a regular expression", args: map[string]any{"glob": "*.go"}, isErr: true, says: []string{"search_files needs regex"}},
		{name: "refuses an empty regular expression", args: map[string]any{"regex": ""}, isErr: true, says: []string{"search_files needs regex"}},
	})
}
