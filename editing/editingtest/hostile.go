// Package editingtest holds what tests of the file tools share: a hostile
// workspace whose paths and symlinks try every way out of the workspace,
// past its zones and past an owned scope, and the table of those paths with
// the refusal each must meet. Package editing holds its resolver to the
// table; package workforce holds every file tool of the worker to it.
//
// It imports nothing of editing, so that editing's own tests can use it:
// refusals are named by Refusal, which each test maps to editing's errors.
package editingtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
)

// Secret is in every file of the hostile tree that the agent must not see:
// a tool result holding it has leaked.
const Secret = "s3cret"

// Refusal is the kind of error a hostile path must meet.
type Refusal int

const (
	Outside Refusal = iota + 1 // editing.ErrOutside: not under the workspace root
	BadPath                    // editing.ErrBadPath: malformed, or a dangling symlink
	Blocked                    // editing.ErrBlocked: a zone or the owned scope
)

// Case is one hostile path.
type Case struct {
	Name   string // what the case shows, as a sentence: "refuses a parent escape"
	Path   string // as the agent gives it
	Write  bool   // judged as a write, under Scope (it is readable)
	Want   Refusal
	Reason string // a part of the message that names the rule
}

// Hostile is a workspace built to be escaped from.
type Hostile struct {
	Root    string    // the workspace, symlinks resolved
	Outside string    // a directory beside it, holding Secret
	Zones   api.Zones // the zones the cases assume
	Scope   []string  // the owned scope the Write cases assume
	Cases   []Case
}

// New builds the hostile workspace in temporary directories of t:
//
//	src/main.go, src/gen/x.go, README.md      ordinary files
//	.git/config, sub/.git/HEAD                git's, denied by "**/.git/**"
//	secrets/key.txt, certs/a.pem              denied by "secrets/**", "**/*.pem"
//	out -> Outside                            a directory link out
//	s.txt -> Outside/secret.txt               a file link out
//	gitlink -> .git, public -> secrets        links into denied zones
//	dangling -> /nonexistent/target           a link to nowhere
//	src/etc -> ../../../../../../etc          a relative link climbing out
func New(t testing.TB) *Hostile {
	t.Helper()
	real := func(dir string) string {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	h := &Hostile{
		Root:    real(t.TempDir()),
		Outside: real(t.TempDir()),
		Zones:   api.Zones{Allow: []string{"**"}, Deny: []string{"**/.git/**", "secrets/**", "**/*.pem"}},
		Scope:   []string{"src/**", "!src/gen/**"},
	}
	write(t, h.Outside, map[string]string{"secret.txt": Secret + " outside\n", "sub/deeper.txt": Secret + " deeper\n"})
	write(t, h.Root, map[string]string{
		"src/main.go":     "package main\n",
		"src/gen/x.go":    "package gen\n",
		"README.md":       "# readme\n",
		".git/config":     "[core]\n# " + Secret + "\n",
		"sub/.git/HEAD":   Secret + "\n",
		"secrets/key.txt": Secret + " key\n",
		"certs/a.pem":     Secret + " pem\n",
	})
	for _, l := range []struct{ target, name string }{
		{h.Outside, "out"},
		{filepath.Join(h.Outside, "secret.txt"), "s.txt"},
		{".git", "gitlink"},
		{"secrets", "public"},
		{"/nonexistent/target", "dangling"},
		{"../../../../../../etc", "src/etc"},
	} {
		if err := os.Symlink(l.target, filepath.Join(h.Root, filepath.FromSlash(l.name))); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.ToSlash(h.Root)
	h.Cases = []Case{
		{"refuses a parent escape", "../etc/passwd", false, Outside, "not under the workspace root"},
		{"refuses a deep parent escape", "src/../../../etc/passwd", false, Outside, "not under the workspace root"},
		{"refuses an escape to the directory beside", "../" + filepath.Base(h.Outside) + "/secret.txt", false, Outside, "not under the workspace root"},
		{"refuses an absolute path outside", "/etc/passwd", false, Outside, "not under the workspace root"},
		{"refuses an absolute path to the secret", filepath.Join(h.Outside, "secret.txt"), false, Outside, "not under the workspace root"},
		{"refuses the filesystem root", "/", false, Outside, "not under the workspace root"},
		{"refuses backslash escapes", `..\..\etc\passwd`, false, Outside, "not under the workspace root"},
		{"refuses mixed separators", `src\..\..\etc/passwd`, false, Outside, "not under the workspace root"},
		{"refuses a Windows drive path", `C:\Windows\system32`, false, Outside, "drive path"},
		{"refuses a home path", "~/.ssh/id_rsa", false, Outside, "home directory"},
		{"refuses a file URI outside", "file:///etc/passwd", false, Outside, "not under the workspace root"},
		{"refuses an encoded traversal in a URI", "file://" + root + "/%2e%2e/%2e%2e/etc/passwd", false, Outside, "not under the workspace root"},
		{"refuses an encoded slash traversal in a URI", "file://" + root + "/..%2f..%2fetc%2fpasswd", false, Outside, "not under the workspace root"},
		{"refuses a remote file URI", "file://evil.example/etc/passwd", false, BadPath, "not on this machine"},
		{"refuses an http URL", "http://example.com/x", false, BadPath, "is a URL"},
		{"refuses an empty path", "  ", false, BadPath, "empty"},
		{"refuses a NUL byte", "src/main.go\x00.txt", false, BadPath, "NUL"},
		{"refuses an encoded NUL in a URI", "file://" + root + "/a%00b", false, BadPath, "NUL"},
		{"refuses a symlinked directory out", "out/secret.txt", false, Outside, "through a symlink"},
		{"refuses a file deeper in a symlinked directory out", "out/sub/deeper.txt", false, Outside, "through a symlink"},
		{"refuses a symlinked directory out itself", "out", false, Outside, "through a symlink"},
		{"refuses a symlinked file out", "s.txt", false, Outside, "through a symlink"},
		{"refuses a relative symlink climbing out", "src/etc/passwd", false, Outside, "through a symlink"},
		{"refuses a dangling symlink", "dangling", false, BadPath, "missing target"},
		{"refuses .git/config", ".git/config", false, Blocked, `zones.deny "**/.git/**"`},
		{"refuses .git through ./ and ..", "./src/../.git/config", false, Blocked, `zones.deny "**/.git/**"`},
		{"refuses a nested .git", "sub/.git/HEAD", false, Blocked, `zones.deny "**/.git/**"`},
		{"refuses .git through a symlink", "gitlink/config", false, Blocked, `zones.deny "**/.git/**"`},
		{"refuses a denied zone", "secrets/key.txt", false, Blocked, `zones.deny "secrets/**"`},
		{"refuses a denied zone through a symlink", "public/key.txt", false, Blocked, `zones.deny "secrets/**"`},
		{"refuses a denied extension", "certs/a.pem", false, Blocked, `zones.deny "**/*.pem"`},
		{"refuses an absolute path into a denied zone", filepath.Join(h.Root, "secrets", "key.txt"), false, Blocked, `zones.deny "secrets/**"`},
		{"refuses a write outside the owned scope", "README.md", true, Blocked, `owned_scope ["src/**" "!src/gen/**"]`},
		{"refuses a write in a scope exclusion", "src/gen/x.go", true, Blocked, `excluded by "!src/gen/**"`},
	}
	return h
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
