// Package testkit holds what the tests of several packages need alike: a
// context bounded so that a hung test fails instead of hanging, a test
// binary re-run as a child process (for crashes and concurrent processes),
// workspaces written from maps or from txtar archives in testdata/, and
// golden files rewritten with -update.
//
// It is for tests only: nothing outside a _test.go file imports it. Its
// functions are safe to call from parallel tests; a golden file is written
// by the one test that owns it.
package testkit

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Timeout bounds what a test waits for: a reply, a notification, a child
// process. It is generous, as the machine may be loaded; it is there so
// that a hung test fails with its own message rather than go test's.
const Timeout = 30 * time.Second

// Context returns a context that ends when the test does, after Timeout,
// or a second before the test binary's deadline (-timeout) if that is
// sooner.
func Context(t testing.TB) context.Context {
	return ContextWithin(t, Timeout)
}

// ContextWithin is Context bounded by d instead of Timeout, for a wait on
// something outside the process that is slow even on an idle machine (a
// real agent from npm that starts node and runs a whole task).
func ContextWithin(t testing.TB, d time.Duration) context.Context {
	deadline := time.Now().Add(d)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok && end.Add(-time.Second).Before(deadline) {
			deadline = end.Add(-time.Second)
		}
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	t.Cleanup(cancel)
	return ctx
}

// childEnv carries, to a child process started by Child, the role it plays.
const childEnv = "AGENTLS_TESTKIT_CHILD"

// Child returns a command that runs the test t alone again, in a child
// process of this test binary, with env ("NAME=value") added to the
// environment. In the child, ChildRole returns role (not empty), and the
// test plays the child's part:
//
//	func TestCrash(t *testing.T) {
//		if testkit.ChildRole() != "" {
//			writeUntilKilled(t)
//			return
//		}
//		cmd := testkit.Child(t, "writer", "STATE="+dir)
//		…
//	}
func Child(t testing.TB, role string, env ...string) *exec.Cmd {
	t.Helper()
	if role == "" {
		t.Fatal("testkit.Child: the role must not be empty")
	}
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(parts, "/"))
	cmd.Env = append(append(os.Environ(), childEnv+"="+role), env...)
	return cmd
}

// ChildRole is the role Child gave this process, or "" in the test
// binary's own run.
func ChildRole() string { return os.Getenv(childEnv) }

// WriteFiles writes files (paths relative to dir with "/" separators →
// content) under dir, making the directories they need.
func WriteFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NotPrivate lists what under dir (dir included) is not its user's alone:
// every directory whose mode is not 0700 and every other entry (a file, a
// socket) whose mode is not 0600, as "path mode".
func NotPrivate(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if got := info.Mode().Perm(); got != want {
			out = append(out, fmt.Sprintf("%s %#o", p, got))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
