package engines

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// fakeNPM lays out npm as its package installs it: npx and npm are links
// into npm's own package, whose package.json is npm's (11.19.1).
func fakeNPM(t *testing.T) (bindir string) {
	t.Helper()
	dir := t.TempDir()
	npm := filepath.Join(dir, "lib", "node_modules", "npm")
	testkit.WriteFiles(t, npm, map[string]string{
		"package.json":   `{"name":"npm","version":"11.19.1","bin":{"npm":"bin/npm-cli.js","npx":"bin/npx-cli.js"}}`,
		"bin/npm-cli.js": "", "bin/npx-cli.js": "",
	})
	bindir = filepath.Join(dir, "bin")
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"npm", "npx"} {
		if err := os.Symlink(filepath.Join(npm, "bin", n+"-cli.js"), filepath.Join(bindir, n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{"pnpm", "bunx", "node"} {
		testkit.WriteFiles(t, bindir, map[string]string{n: ""})
	}
	return bindir
}

// linkBin links prefix/node_modules/.bin/bin to a package's entry, as npm
// installs a bin.
func linkBin(t *testing.T, prefix, pkgDir, entry, bin string) {
	t.Helper()
	dir := filepath.Join(prefix, "node_modules", ".bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(pkgDir, entry), filepath.Join(dir, bin)); err != nil {
		t.Fatal(err)
	}
}

func TestResolveLaunchedPackages(t *testing.T) {
	bindir := fakeNPM(t)
	cache := t.TempDir()
	// Zed's way: an install of its own, run with npx --offline --prefix.
	zed := t.TempDir()
	old := fakeInstall(t, zed, "@zed-industries/claude-agent-acp", "0.17.1", "dist/index.js")
	linkBin(t, zed, old, "dist/index.js", "claude-agent-acp")
	// What npx -y left in npm's cache for a spec: its directory is named by
	// the spec's hash.
	fakeInstall(t, npxDir(cache, []string{"@zed-industries/codex-acp"}), "@zed-industries/codex-acp", "0.16.0", "bin/codex-acp.js")
	fakeInstall(t, npxDir(cache, []string{"@google/gemini-cli@latest"}), "@google/gemini-cli", "0.61.0", "bundle/gemini.js")
	// A copy of another version under another spec's hash must not be
	// taken for it.
	fakeInstall(t, npxDir(cache, []string{"@zed-industries/claude-agent-acp@0.23.1"}), "@zed-industries/claude-agent-acp", "0.23.1", "dist/index.js")
	l := Lookup{
		NPMCache: cache,
		LookPath: func(name string) (string, error) {
			if filepath.IsAbs(name) {
				return name, nil
			}
			p := filepath.Join(bindir, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			return "", errors.New("executable file not found in $PATH")
		},
	}
	for _, c := range []struct {
		name     string
		engine   string
		command  []string
		pkg, ver string
		agent    string
		isolated bool
		atStart  bool
	}{
		{"npx --offline --prefix DIR bin, as Zed starts it: the package the bin links to, never npm's own",
			"claude", []string{"npx", "--offline", "--prefix", zed, "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "0.17.1", "claude", false, false},
		{"the same with --prefix=DIR", "claude", []string{"npx", "--prefix=" + zed, "--offline", "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "0.17.1", "claude", false, false},
		{"npm exec --prefix DIR -- bin", "claude", []string{"npm", "exec", "--prefix", zed, "--", "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "0.17.1", "claude", false, false},
		{"npx -y pkg, from npx's directory for that spec in npm's cache",
			"codex", []string{"npx", "-y", "@zed-industries/codex-acp"}, "@zed-industries/codex-acp", "0.16.0", "codex", true, false},
		{"npx -y pkg@tag, installed", "gemini", []string{"npx", "-y", "@google/gemini-cli@latest", "--experimental-acp"}, "@google/gemini-cli", "0.61.0", "gemini", false, false},
		{"npx -p pkg@version bin: the version the spec pins", "claude",
			[]string{"npx", "-y", "-p", "@zed-industries/claude-agent-acp@0.17.1", "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "0.17.1", "claude", false, false},
		{"npx --package=pkg bin, not installed yet: the package, its version unknown", "claude",
			[]string{"npx", "--package=@zed-industries/claude-agent-acp", "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "", "claude", true, true},
		{"pnpm dlx pkg@version", "claude", []string{"pnpm", "dlx", "@zed-industries/claude-agent-acp@0.23.1"}, "@zed-industries/claude-agent-acp", "0.23.1", "claude", true, false},
		{"bunx pkg, not installed: version unknown", "claude", []string{"bunx", "@zed-industries/claude-agent-acp"}, "@zed-industries/claude-agent-acp", "", "claude", true, true},
		{"an engine of another name that runs a known agent takes its rules",
			"cc", []string{"npx", "--offline", "--prefix", zed, "claude-agent-acp"}, "@zed-industries/claude-agent-acp", "0.17.1", "claude", false, false},
		{"an engine of another name that runs another package is isolated",
			"goose", []string{"npx", "-y", "goose-acp"}, "goose-acp", "", "", true, false},
		{"an engine of another name whose package cannot be told is decided at its start",
			"wrapped", []string{"/opt/bin/my-agent", "acp"}, "", "", "", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := l.Resolve(c.engine, api.EngineConfig{Command: c.command})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Package != c.pkg || r.Version != c.ver || r.Agent != c.agent || r.Isolated != c.isolated || r.IsolateAtStart != c.atStart {
				t.Fatalf("got package %q version %q agent %q isolated %v at start %v; want %q %q %q %v %v",
					r.Package, r.Version, r.Agent, r.Isolated, r.IsolateAtStart, c.pkg, c.ver, c.agent, c.isolated, c.atStart)
			}
			info := r.Info()
			if info.Version == "11.19.1" {
				t.Fatal("npm's own version was taken for the agent's")
			}
			if (c.ver == "") != strings.Contains(info.Note, "version unknown") {
				t.Fatalf("note %q for version %q: an unknown version is said to be unknown", info.Note, c.ver)
			}
		})
	}
	t.Run("the setting's isolate wins over what the version says", func(t *testing.T) {
		yes := true
		r := l.Resolve("claude", api.EngineConfig{Command: []string{"npx", "--prefix", zed, "claude-agent-acp"}, Isolate: &yes})
		if !r.Isolated || r.IsolateAtStart {
			t.Fatalf("got %+v", r)
		}
	})
}

func TestWithArgs(t *testing.T) {
	bindir := fakeNPM(t)
	npm, npx := filepath.Join(bindir, "npm"), filepath.Join(bindir, "npx")
	for _, c := range []struct{ in, want []string }{
		{[]string{"codex-acp"}, []string{"codex-acp", "-c", "x=1"}},
		{[]string{npx, "--offline", "--prefix", "/d", "codex-acp"}, []string{npx, "--offline", "--prefix", "/d", "codex-acp", "-c", "x=1"}},
		{[]string{npm, "exec", "--prefix", "/d", "codex-acp"}, []string{npm, "exec", "--prefix", "/d", "--", "codex-acp", "-c", "x=1"}},
		{[]string{npm, "exec", "--", "codex-acp"}, []string{npm, "exec", "--", "codex-acp", "-c", "x=1"}},
	} {
		if got := withArgs(c.in, []string{"-c", "x=1"}); !slices.Equal(got, c.want) {
			t.Errorf("withArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
