package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// TestStartRemovesCrashLeftovers plants the temporary files a crash leaves
// and starts a server: once initialized, it removes them in the background,
// and leaves alone files that are not agentls's own by name.
func TestStartRemovesCrashLeftovers(t *testing.T) {
	leftovers := []string{
		".orchestration/.tmp-intent_map.md-2854301", // the trace's intent map, older scheme
		".orchestration/.intent_map.md.agentls-77.tmp",
		"src/.main.go.agentls-4711",        // an edit of an older sidecar
		"zz/deep/.util.go.agentls-123.tmp", // walked last
	}
	theirs := []string{
		".orchestration/.tmp-notes.md-123", // not a file agentls writes
		"src/.tmp-main.go-1",
		"src/.main.go.agentlsconfig", // a word, not six random letters
		"src/main.go",
	}
	files := map[string]string{}
	for _, n := range append(append([]string{}, leftovers...), theirs...) {
		files[n] = "half"
	}
	root := workspace(t, files)
	crash := time.Now().Add(-time.Hour)
	for n := range files {
		if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(n)), crash, crash); err != nil {
			t.Fatal(err)
		}
	}
	start(t, headless.Options{Root: root})

	gone := func(n string) bool {
		_, err := os.Lstat(filepath.Join(root, filepath.FromSlash(n)))
		return os.IsNotExist(err)
	}
	ctx := testkit.Context(t)
	for _, n := range leftovers {
		for !gone(n) {
			select {
			case <-ctx.Done():
				t.Fatalf("%s is still there", n)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	// The walk is lexical and the last leftover is gone: it has passed them.
	for _, n := range theirs {
		if gone(n) {
			t.Errorf("%s was removed", n)
		}
	}
}
