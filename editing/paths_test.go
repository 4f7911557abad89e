package editing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
)

func hostileEnv(t *testing.T) *env {
	t.Helper()
	outside := t.TempDir()
	testkit.WriteFiles(t, outside, map[string]string{"secret.txt": "s3cret\n"})
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply,
		api.Zones{Allow: []string{"**"}, Deny: []string{"**/.git/**", "secrets/**", "**/*.pem"}},
		map[string]string{
			"src/main.go":     "package main\n",
			"src/gen/x.go":    "package gen\n",
			".git/config":     "[core]\n",
			"sub/.git/HEAD":   "ref\n",
			"secrets/key.txt": "k\n",
			"certs/a.pem":     "pem\n",
		})
	mustLink := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(e.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustLink(outside, "out")                                // dir link out of the workspace
	mustLink(filepath.Join(outside, "secret.txt"), "s.txt") // file link out
	mustLink(".git", "gitlink")                             // link into .git
	mustLink("secrets", "public")                           // link into a denied zone
	mustLink("/nonexistent/target", "dangling")             // dangling link
	mustLink("../../../../../../etc", "src/etc")            // relative link climbing out
	return e
}

func TestHostilePathsAreRefusedWithTheirReason(t *testing.T) {
	e := hostileEnv(t)
	scope, err := CompileScope([]string{"src/**", "!src/gen/**"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		write      bool
		want       error
		reason     string // a part of the message
	}{
		{"refuses a parent escape", "../etc/passwd", false, ErrOutside, "not under the workspace root"},
		{"refuses a deep parent escape", "src/../../../etc/passwd", false, ErrOutside, "not under the workspace root"},
		{"refuses an absolute path outside", "/etc/passwd", false, ErrOutside, "not under the workspace root"},
		{"refuses the filesystem root", "/", false, ErrOutside, "not under the workspace root"},
		{"refuses backslash escapes", `..\..\etc\passwd`, false, ErrOutside, "not under the workspace root"},
		{"refuses mixed separators", `src\..\..\etc/passwd`, false, ErrOutside, "not under the workspace root"},
		{"refuses a Windows drive path", `C:\Windows\system32`, false, ErrOutside, "drive path"},
		{"refuses a home path", "~/.ssh/id_rsa", false, ErrOutside, "home directory"},
		{"refuses a file URI outside", "file:///etc/passwd", false, ErrOutside, "not under the workspace root"},
		{"refuses an encoded traversal in a URI", "file://" + filepath.ToSlash(e.ws.Root()) + "/%2e%2e/%2e%2e/etc/passwd", false, ErrOutside, "not under the workspace root"},
		{"refuses an encoded slash traversal in a URI", "file://" + filepath.ToSlash(e.ws.Root()) + "/..%2f..%2fetc%2fpasswd", false, ErrOutside, "not under the workspace root"},
		{"refuses a remote file URI", "file://evil.example/etc/passwd", false, ErrBadPath, `on host "evil.example"`},
		{"refuses a file URI whose unescaped # would cut the name", "file://" + filepath.ToSlash(e.ws.Root()) + "/src/c#x", false, ErrBadPath, "%23"},
		{"refuses an http URL", "http://example.com/x", false, ErrBadPath, "is a URL"},
		{"refuses an empty path", "  ", false, ErrBadPath, "empty"},
		{"refuses a NUL byte", "src/main.go\x00.txt", false, ErrBadPath, "NUL"},
		{"refuses an encoded NUL in a URI", "file://" + filepath.ToSlash(e.ws.Root()) + "/a%00b", false, ErrBadPath, "NUL"},
		{"refuses a symlinked directory out", "out/secret.txt", false, ErrOutside, "through a symlink"},
		{"refuses a symlinked file out", "s.txt", false, ErrOutside, "through a symlink"},
		{"refuses a relative symlink climbing out", "src/etc/passwd", false, ErrOutside, "through a symlink"},
		{"refuses a dangling symlink", "dangling", true, ErrBadPath, "missing target"},
		{"refuses .git/config", ".git/config", false, ErrBlocked, `zones.deny "**/.git/**"`},
		{"refuses .git through ./ and ..", "./src/../.git/config", false, ErrBlocked, `zones.deny "**/.git/**"`},
		{"refuses a nested .git", "sub/.git/HEAD", false, ErrBlocked, `zones.deny "**/.git/**"`},
		{"refuses .git through a symlink", "gitlink/config", false, ErrBlocked, `zones.deny "**/.git/**"`},
		{"refuses a denied zone", "secrets/key.txt", false, ErrBlocked, `zones.deny "secrets/**"`},
		{"refuses a denied zone through a symlink", "public/key.txt", false, ErrBlocked, `zones.deny "secrets/**"`},
		{"refuses a denied extension", "certs/a.pem", false, ErrBlocked, `zones.deny "**/*.pem"`},
		{"refuses an absolute path into a denied zone", filepath.Join(e.ws.Root(), "secrets", "key.txt"), false, ErrBlocked, `zones.deny "secrets/**"`},
		{"refuses a write outside the owned scope", "README.md", true, ErrBlocked, `owned_scope ["src/**" "!src/gen/**"]`},
		{"refuses a write in a scope exclusion", "src/gen/x.go", true, ErrBlocked, `excluded by "!src/gen/**"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := e.ws.Access(Actor{AgentID: "1"}, c.path, c.write, scope)
			if !errors.Is(err, c.want) {
				t.Fatalf("Access(%q) = %v; want an error wrapping %v", c.path, err, c.want)
			}
			if !strings.Contains(err.Error(), c.reason) {
				t.Errorf("Access(%q) = %q; want it to say %q", c.path, err, c.reason)
			}
		})
	}
	if got, want := len(e.obs.blocked), len(cases); got != want {
		t.Errorf("observer heard %d blocked accesses, want %d: %q", got, want, e.obs.blocked)
	}
}

func TestPathsInsideResolveToWorkspaceRelativeSlashPaths(t *testing.T) {
	e := hostileEnv(t)
	root := e.ws.Root()
	cases := []struct{ name, path, want string }{
		{"keeps a relative path", "src/main.go", "src/main.go"},
		{"cleans ./ and ..", "./src/gen/../main.go", "src/main.go"},
		{"turns backslashes into slashes", `src\main.go`, "src/main.go"},
		{"makes an absolute path relative", filepath.Join(root, "src", "main.go"), "src/main.go"},
		{"decodes a file URI", fileuri.FromPath(filepath.Join(root, "src", "main.go")), "src/main.go"},
		{"decodes a percent-encoded file URI", "file://" + filepath.ToSlash(root) + "/src/ma%69n.go", "src/main.go"},
		{"allows a file that does not exist yet", "new/dir/file.txt", "new/dir/file.txt"},
		{"names the root itself", ".", "."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := e.ws.Access(Actor{}, c.path, true, nil)
			if err != nil {
				t.Fatalf("Access(%q): %v", c.path, err)
			}
			if p.Rel != c.want {
				t.Errorf("Rel = %q, want %q", p.Rel, c.want)
			}
			if !strings.HasPrefix(p.URI, "file:///") {
				t.Errorf("URI = %q, want a file:/// URI", p.URI)
			}
		})
	}
}

func TestFileURIsInADirectoryWithAwkwardCharacters(t *testing.T) {
	root := filepath.Join(t.TempDir(), "c#proj 100%done")
	testkit.WriteFiles(t, root, map[string]string{"src/a.go": "package a\n"})
	ws, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps())})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Access(Actor{}, "src/a.go", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(p.URI, "/c%23proj%20100%25done/src/a.go") {
		t.Errorf("URI = %q, want the #, the space and the %% escaped", p.URI)
	}
	back, err := ws.Access(Actor{}, p.URI, false, nil)
	if err != nil || back.Rel != "src/a.go" || back.Abs != p.Abs {
		t.Errorf("the URI resolves to %+v, %v; want src/a.go", back, err)
	}
}

func TestWorkspaceRootGivenThroughASymlink(t *testing.T) {
	real := t.TempDir()
	testkit.WriteFiles(t, real, map[string]string{"a.txt": "a\n"})
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	ws, err := New(Config{Root: link, Editor: headlesstest.New(link, headlesstest.AllCaps())})
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.Access(Actor{}, filepath.Join(link, "a.txt"), false, nil)
	if err != nil || p.Rel != "a.txt" {
		t.Fatalf("Access through the root's symlink = %+v, %v; want a.txt", p, err)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	ed := headlesstest.New(t.TempDir(), headlesstest.AllCaps())
	cases := []struct {
		name string
		cfg  Config
	}{
		{"rejects a missing root", Config{Root: filepath.Join(t.TempDir(), "nope"), Editor: ed}},
		{"rejects a bad zone pattern", Config{Root: t.TempDir(), Editor: ed, Zones: api.Zones{Deny: []string{"src/[a"}}}},
		{"rejects an unknown edit mode", Config{Root: t.TempDir(), Editor: ed, EditMode: "yolo"}},
		{"rejects a missing editor", Config{Root: t.TempDir()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(c.cfg); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}

func FuzzResolveStaysInside(f *testing.F) {
	for _, s := range []string{"a", "../x", "/etc", `..\..`, "file:///etc", "a/../../b", "./.", "%2e%2e/x", "~/x", "C:/x"} {
		f.Add(s)
	}
	root := f.TempDir()
	ws, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps())})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rp, err := ws.Resolve(p)
		if err != nil {
			return
		}
		if rp.Rel != "." && (strings.HasPrefix(rp.Rel, "../") || rp.Rel == ".." || filepath.IsAbs(rp.Rel)) {
			t.Fatalf("Resolve(%q) = %q: outside", p, rp.Rel)
		}
		if _, ok := within(ws.Root(), rp.Abs); !ok {
			t.Fatalf("Resolve(%q).Abs = %q: outside %q", p, rp.Abs, ws.Root())
		}
	})
}
