package editing

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing/editingtest"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
)

// hostileEnv is a workspace over the hostile tree of editingtest, with
// its zones.
func hostileEnv(t *testing.T) (*env, *editingtest.Hostile) {
	t.Helper()
	h := editingtest.New(t)
	e := &env{root: h.Root, ed: headlesstest.New(h.Root, headlesstest.AllCaps()), obs: &recorder{}}
	ws, err := New(Config{Root: h.Root, Zones: h.Zones, EditMode: api.EditApply, Editor: e.ed, Observer: e.obs})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = ws
	return e, h
}

// refusalErr is the sentinel of an editingtest refusal.
var refusalErr = map[editingtest.Refusal]error{
	editingtest.Outside: ErrOutside,
	editingtest.BadPath: ErrBadPath,
	editingtest.Blocked: ErrBlocked,
}

// The same table runs through the worker's tools in package workforce.
func TestHostilePathsAreRefusedWithTheirReason(t *testing.T) {
	e, h := hostileEnv(t)
	scope, err := CompileScope(h.Scope)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range h.Cases {
		t.Run(c.Name, func(t *testing.T) {
			_, err := e.ws.Access(Actor{AgentID: "1"}, c.Path, c.Write, scope)
			if want := refusalErr[c.Want]; !errors.Is(err, want) {
				t.Fatalf("Access(%q) = %v; want an error wrapping %v", c.Path, err, want)
			}
			if !strings.Contains(err.Error(), c.Reason) {
				t.Errorf("Access(%q) = %q; want it to say %q", c.Path, err, c.Reason)
			}
		})
	}
	if got, want := len(e.obs.blocked), len(h.Cases); got != want {
		t.Errorf("observer heard %d blocked accesses, want %d: %q", got, want, e.obs.blocked)
	}
}

func TestPathsInsideResolveToWorkspaceRelativeSlashPaths(t *testing.T) {
	e, _ := hostileEnv(t)
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
		if _, ok := contain.Within(ws.Root(), rp.Abs); !ok {
			t.Fatalf("Resolve(%q).Abs = %q: outside %q", p, rp.Abs, ws.Root())
		}
	})
}
