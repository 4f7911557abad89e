package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestContext(t *testing.T) {
	t.Run("ends within Timeout", func(t *testing.T) {
		d, ok := Context(t).Deadline()
		if !ok || time.Until(d) > Timeout {
			t.Fatalf("deadline %v, %v; want one within %s", d, ok, Timeout)
		}
	})
}

func TestChild(t *testing.T) {
	if ChildRole() == "echo" {
		fmt.Printf("%s %s\n", t.Name(), os.Getenv("TESTKIT_WORD"))
		return
	}
	t.Run("runs this test alone again with its role and environment", func(t *testing.T) {
		out, err := Child(t, "echo", "TESTKIT_WORD=hello").Output()
		if err != nil {
			t.Fatal(err)
		}
		// The child runs TestChild, which plays the child's part at once.
		if want := "TestChild hello\n"; !strings.HasPrefix(string(out), want) {
			t.Errorf("the child printed %q, want a line %q", out, want)
		}
	})
}

func TestWriteFiles(t *testing.T) {
	dir := t.TempDir()
	WriteFiles(t, dir, map[string]string{"a/b/c.txt": "c\n", "d.txt": ""})
	for name, want := range map[string]string{"a/b/c.txt": "c\n", "d.txt": ""} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestReadArchive(t *testing.T) {
	a := ReadArchive(t, "testdata/sample.txtar")
	if a.Comment != "A workspace of two files and a script.\n" {
		t.Errorf("comment = %q", a.Comment)
	}
	if got := a.File(t, "script.json"); got != "{\"agents\": {}}\n" {
		t.Errorf("script.json = %q", got)
	}
	ws := a.Under("ws")
	if len(ws) != 2 || ws["main.go"] != "package main\n" || ws["docs/a.md"] != "# A\n" {
		t.Errorf("Under(ws) = %q", ws)
	}
}

// recordingTB keeps the failures instead of failing the test.
type recordingTB struct {
	testing.TB
	failures []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func TestGolden(t *testing.T) {
	if *update {
		t.Skip("-update would rewrite this test's own golden file")
	}
	t.Run("passes when the output is the file", func(t *testing.T) {
		r := &recordingTB{TB: t}
		Golden(r, "testdata/sample.golden", "line one\nline two\n")
		if len(r.failures) != 0 {
			t.Errorf("failures: %q", r.failures)
		}
	})
	t.Run("fails with a diff when the output differs", func(t *testing.T) {
		r := &recordingTB{TB: t}
		Golden(r, "testdata/sample.golden", "line one\nline 2\n")
		if len(r.failures) != 1 || !strings.Contains(r.failures[0], "-line two\n+line 2\n") {
			t.Errorf("failures: %q", r.failures)
		}
	})
	t.Run("fails saying how to write a missing file", func(t *testing.T) {
		r := &recordingTB{TB: t}
		Golden(r, "testdata/missing.golden", "x")
		if len(r.failures) != 1 || !strings.Contains(r.failures[0], "-update") {
			t.Errorf("failures: %q", r.failures)
		}
	})
}
