package testkit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hexops/gotextdiff"
	"github.com/hexops/gotextdiff/myers"
	"github.com/hexops/gotextdiff/span"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files with what the tests produce")

// Archive is a txtar archive read from testdata: its comment and its
// files (name → content), as gopls's tests keep their workspaces.
type Archive struct {
	Comment string
	Files   map[string]string
}

// ReadArchive reads the txtar archive at path. Two files of one name are an
// error of the fixture.
func ReadArchive(t testing.TB, path string) Archive {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	a := Archive{Comment: string(ar.Comment), Files: map[string]string{}}
	for _, f := range ar.Files {
		if _, dup := a.Files[f.Name]; dup {
			t.Fatalf("%s: %s appears twice", path, f.Name)
		}
		a.Files[f.Name] = string(f.Data)
	}
	return a
}

// Under returns the files under dir (with dir/ taken off their names).
func (a Archive) Under(dir string) map[string]string {
	prefix := strings.TrimSuffix(dir, "/") + "/"
	out := map[string]string{}
	for name, data := range a.Files {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			out[rest] = data
		}
	}
	return out
}

// File returns the file named name, failing the test if there is none.
func (a Archive) File(t testing.TB, name string) string {
	t.Helper()
	data, ok := a.Files[name]
	if !ok {
		t.Fatalf("the archive has no file %s", name)
	}
	return data
}

// Golden compares got with the golden file at path and fails the test with
// a unified diff from the file to got when they differ. Run the tests with
// -update to write got to the file instead (then read the change in git).
func Golden(t testing.TB, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
		return
	}
	if bytes.Equal(want, []byte(got)) {
		return
	}
	edits := myers.ComputeEdits(span.URIFromPath(path), string(want), got)
	t.Errorf("the output differs from %s (-want +got; -update rewrites it):\n%s",
		path, gotextdiff.ToUnified(path, "got", string(want), edits))
}
