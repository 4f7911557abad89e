package editing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/testkit"
)

// linkEnv is a workspace whose symlinks lead out, into .git, into a denied
// zone, nowhere, in loops, and to places inside that walks follow.
func linkEnv(t *testing.T) *env {
	t.Helper()
	outside := t.TempDir()
	testkit.WriteFiles(t, outside, map[string]string{
		"secret.txt":       "top secret\n",
		"sub/deeper.txt":   "top secret deeper\n",
		"ignore":           "*.go\n",
		"exclude":          "*.md\n",
		"gitdir/info/none": "",
	})
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply,
		api.Zones{Allow: []string{"**"}, Deny: []string{"**/.git/**", "secrets/**"}},
		map[string]string{
			"src/a.go":        "package a\n",
			"docs/x.md":       "# x\n",
			"secrets/key.txt": "top secret key\n",
			".git/config":     "[core]\n",
			"sub/keep.go":     "package sub\n",
			"d1/f1.txt":       "one\n",
			"d2/f2.txt":       "two\n",
		})
	for _, l := range []struct{ target, name string }{
		{outside, "link"}, // the directory link of the report
		{filepath.Join(outside, "secret.txt"), "out.txt"},
		{"../../../../../../../../etc", "src/climb"},
		{".git", "gitlink"},
		{"secrets", "public"},
		{"/nonexistent/target", "dangling"},
		{"docs", "docs2"},                                        // a directory inside: followed
		{"src/a.go", "a.go.link"},                                // a file inside: followed
		{".", "loop"},                                            // the root itself
		{"..", "src/up"},                                         // a parent
		{"../d2", "d1/b"},                                        // two directories that
		{"../d1", "d2/c"},                                        // lead into each other
		{filepath.Join(outside, "ignore"), "sub/.gitignore"},     // ignore rules from outside
		{filepath.Join(outside, "exclude"), ".git/info/exclude"}, // and through .git
		{filepath.Join(outside, "sub"), "docs/deep"},             // a link out below a link in
	} {
		p := filepath.Join(e.root, filepath.FromSlash(l.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, p); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func TestWalksStayInside(t *testing.T) {
	ctx := context.Background()
	e := linkEnv(t)
	a := e.agent("")
	visible := []string{
		"a.go.link",
		"d1/b/f2.txt", "d1/f1.txt", "d2/c/f1.txt", "d2/f2.txt",
		"docs/x.md", "docs2/x.md",
		"src/a.go", "sub/keep.go",
	}
	cases := []struct {
		name, pattern string
		want          []string
	}{
		{"lists what is inside, following the links that stay inside, once", "", visible},
		{"does not follow a directory link out (the report's case)", "link/**", nil},
		{"does not follow a directory link out named directly", "link/secret.txt", nil},
		{"does not follow a directory link out under a pattern", "link/*", nil},
		{"does not list a file link out", "out.txt", nil},
		{"does not follow a relative link climbing out", "src/climb/**", nil},
		{"does not follow a link into .git", "gitlink/**", nil},
		{"does not follow a link into a denied zone", "public/**", nil},
		{"does not list a dangling link", "dangling", nil},
		{"does not follow a link out below a link in", "docs2/deep/**", nil},
		{"does not walk a link to the root", "loop/**", nil},
		{"does not walk a link to a parent", "src/up/**", nil},
		{"follows a directory link inside", "docs2/**", []string{"docs2/x.md"}},
		{"follows a file link inside", "*.link", []string{"a.go.link"}},
		{"stops a loop between two directories", "d1/**", []string{"d1/b/f2.txt", "d1/f1.txt"}},
		{"reads no ignore file from outside", "sub/*", []string{"sub/keep.go"}},
		{"reads no exclude file from outside", "**/*.md", []string{"docs/x.md", "docs2/x.md"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := a.List(ctx, c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.Sorted(slices.Values(r.Paths))
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("List(%q) = %q, want %q", c.pattern, got, c.want)
			}
			for _, p := range r.Paths {
				if _, err := a.Read(ctx, p, 0, 0); err != nil {
					t.Errorf("List(%q) gave %s, which read_file refuses: %v", c.pattern, p, err)
				}
			}
		})
	}
	for _, glob := range []string{"", "link/**", "**/*.txt", "link/*", "link/secret.txt", "out.txt", "docs2/deep/*", "public/*"} {
		t.Run(fmt.Sprintf("search %q finds no secret", glob), func(t *testing.T) {
			r, err := a.Search(ctx, `secret`, glob)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Matches) != 0 {
				t.Errorf("Search(secret, %q) = %q, want no match", glob, r.Text)
			}
		})
	}
	t.Run("search finds text behind a link inside", func(t *testing.T) {
		r, err := a.Search(ctx, `^two$`, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Text != "d1/b/f2.txt:1: two\nd2/f2.txt:1: two" {
			t.Errorf("Search = %q", r.Text)
		}
	})
}

func TestWalksEndOnLinkMazes(t *testing.T) {
	// Ten directories, each with a link to every one of them: without a
	// bound, the walk would list 10! paths.
	const n = 10
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("n%d/f.txt", i)] = "x\n"
	}
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, files)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if err := os.Symlink(fmt.Sprintf("../n%d", j), filepath.Join(e.root, fmt.Sprintf("n%d", i), fmt.Sprintf("l%d", j))); err != nil {
				t.Fatal(err)
			}
		}
	}
	r, err := e.agent("").List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	// Each directory is walked by its own name and at most once more
	// through a link.
	if len(r.Paths) < n || len(r.Paths) > 2*n {
		t.Fatalf("List gave %d paths, want between %d and %d: %q", len(r.Paths), n, 2*n, r.Paths)
	}
	for i := 0; i < n; i++ {
		if want := fmt.Sprintf("n%d/f.txt", i); !slices.Contains(r.Paths, want) {
			t.Errorf("List left out %s", want)
		}
	}
}

// FuzzWalkStaysInside builds a random tree of directories, files and
// symlinks (to places inside, to parents, out of the workspace, into .git
// and a denied zone, dangling) and checks that no listed or searched file
// resolves outside the workspace or to a place read_file refuses.
func FuzzWalkStaysInside(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "")
	f.Add([]byte{7, 7, 7, 1, 9, 3, 200, 14, 3}, "**/*.txt")
	f.Add([]byte("links and more links"), "l*/**")
	f.Add([]byte{0, 0, 2, 0, 2, 1, 2, 10}, "") // links out, one of them in a directory
	f.Fuzz(func(t *testing.T, plan []byte, pattern string) {
		if len(plan) > 64 {
			plan = plan[:64]
		}
		outside := t.TempDir()
		testkit.WriteFiles(t, outside, map[string]string{"secret.txt": "top secret\n", "d/secret.txt": "top secret\n", ".gitignore": "*\n"})
		root := t.TempDir()
		testkit.WriteFiles(t, root, map[string]string{".git/config": "top secret\n", "deny/s.txt": "top secret\n", "ok.txt": "fine\n"})
		ws, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps()),
			Zones: api.Zones{Deny: []string{"**/.git/**", "deny/**"}}})
		if err != nil {
			t.Fatal(err)
		}
		dirs := []string{"."}
		var names []string // every name made, as patterns to list and search
		targets := func(from string, b byte) string {
			up := strings.Repeat("../", strings.Count(from, "/")+1)
			switch b % 9 {
			case 0:
				return outside
			case 1:
				return filepath.Join(outside, "d")
			case 2:
				return up + ".."
			case 3:
				return up + ".git"
			case 4:
				return up + "deny"
			case 5:
				return "/nonexistent"
			case 6:
				return up + dirs[int(b)%len(dirs)]
			case 7:
				return filepath.Join(outside, "secret.txt")
			default:
				return "."
			}
		}
		for i := 0; i+1 < len(plan); i += 2 {
			op, arg := plan[i], plan[i+1]
			dir := dirs[int(arg)%len(dirs)]
			name := joinRel(dir, fmt.Sprintf("e%d", i))
			names = append(names, name, name+"/**", name+"/*/*.txt")
			abs := filepath.Join(root, filepath.FromSlash(name))
			switch op % 4 {
			case 0:
				if os.Mkdir(abs, 0o755) == nil {
					dirs = append(dirs, name)
				}
			case 1:
				_ = os.WriteFile(abs, []byte("fine\n"), 0o644)
			case 2:
				_ = os.Symlink(targets(name, arg), abs)
			case 3:
				_ = os.WriteFile(filepath.Join(root, filepath.FromSlash(dir), ".gitignore"), []byte("e1*\n!e2*\n"), 0o644)
			}
		}
		a := ws.Task("t", "fuzz", api.EditApply).Agent("1")
		ctx := context.Background()
		check := func(rel string) {
			t.Helper()
			rp, err := ws.Resolve(rel)
			if err != nil {
				t.Fatalf("walk gave %q, which does not resolve: %v", rel, err)
			}
			if _, ok := contain.Within(ws.Root(), rp.Abs); !ok {
				t.Fatalf("walk gave %q, which resolves to %s outside %s", rel, rp.Abs, ws.Root())
			}
			if _, err := ws.Access(Actor{}, rel, false, nil); err != nil {
				t.Fatalf("walk gave %q, which read_file refuses: %v", rel, err)
			}
		}
		for _, p := range append([]string{pattern, "", "**/*.txt"}, names...) {
			r, err := a.List(ctx, p)
			if err != nil {
				continue // a bad pattern
			}
			for _, rel := range r.Paths {
				check(rel)
			}
			s, err := a.Search(ctx, "secret", p)
			if err != nil {
				continue
			}
			for _, m := range s.Matches {
				t.Fatalf("search %q found %s:%d: %s", p, m.Path, m.Line, m.Text)
			}
		}
	})
}

func TestWalksReadNamesAsTheDirectoryHoldsThem(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{
		"t /x.txt":  "in t-blank\n",
		"t/y.txt":   "in t\n",
		"a b/c.txt": "c\n",
	})
	if err := os.Symlink("t ", filepath.Join(e.root, "l ")); err != nil {
		t.Fatal(err)
	}
	a := e.agent("")
	cases := []struct {
		name, pattern string
		want          []string
	}{
		{"lists names with blanks", "", []string{"a b/c.txt", "l /x.txt", "t /x.txt", "t/y.txt"}},
		{"keeps a trailing blank of a directory named in the pattern", "t /*", []string{"t /x.txt"}},
		{"keeps a trailing blank of a link", "l /*", []string{"l /x.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := a.List(ctx, c.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(r.Paths)); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("List(%q) = %q, want %q", c.pattern, got, c.want)
			}
		})
	}
}
