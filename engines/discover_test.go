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

// fakeInstall writes an npm package under dir/node_modules/pkg with a bin
// and returns the package's directory.
func fakeInstall(t *testing.T, dir, pkg, version, bin string) string {
	t.Helper()
	p := filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))
	testkit.WriteFiles(t, p, map[string]string{
		"package.json":  `{"name":"` + pkg + `","version":"` + version + `","bin":{"x":"` + bin + `"}}`,
		bin:             "#!/usr/bin/env node\n",
		"unrelated.txt": "",
	})
	return p
}

func TestResolve(t *testing.T) {
	cache := t.TempDir()
	bindir := t.TempDir()
	// npx left two versions of claude-agent-acp and gemini-cli in its cache.
	fakeInstall(t, filepath.Join(cache, "_npx", "aaa"), "@zed-industries/claude-agent-acp", "0.17.1", "dist/index.js")
	newest := fakeInstall(t, filepath.Join(cache, "_npx", "bbb"), "@zed-industries/claude-agent-acp", "0.23.1", "dist/index.js")
	fakeInstall(t, filepath.Join(cache, "_npx", "ccc"), "@google/gemini-cli", "0.61.0", "bundle/gemini.js")
	// codex-acp is installed globally: its bin is a link into node_modules.
	global := fakeInstall(t, filepath.Join(bindir, "lib"), "@zed-industries/codex-acp", "0.16.0", "bin/codex-acp.js")
	if err := os.Symlink(filepath.Join(global, "bin/codex-acp.js"), filepath.Join(bindir, "codex-acp")); err != nil {
		t.Fatal(err)
	}
	onPath := map[string]string{"node": "/usr/bin/node", "codex-acp": filepath.Join(bindir, "codex-acp"), "my-agent": "/opt/my-agent"}
	l := Lookup{
		NPMCache: cache,
		LookPath: func(name string) (string, error) {
			if p, ok := onPath[name]; ok {
				return p, nil
			}
			if filepath.IsAbs(name) {
				return name, nil
			}
			return "", errors.New("executable file not found in $PATH")
		},
	}
	t.Run("finds the newest install of a built-in engine in npm's cache", func(t *testing.T) {
		r := l.Resolve(api.EngineClaude, api.EngineConfig{})
		want := []string{"/usr/bin/node", filepath.Join(newest, "dist/index.js")}
		if r.Err != nil || !slices.Equal(r.Command, want) || r.Source != SourceNPMCache || r.Version != "0.23.1" {
			t.Fatalf("got %+v, want %v from the cache at 0.23.1", r, want)
		}
		if !r.Isolated {
			t.Fatal("claude-agent-acp 0.23.1 writes the disk itself: it must run isolated")
		}
	})
	t.Run("finds a built-in engine on PATH, with the version of the package its link leads to", func(t *testing.T) {
		r := l.Resolve(api.EngineCodex, api.EngineConfig{})
		if r.Err != nil || r.Command[0] != onPath["codex-acp"] || r.Source != SourcePath || r.Version != "0.16.0" || !r.Isolated {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("starts gemini in its ACP mode, not isolated: its writes go through fs/write_text_file", func(t *testing.T) {
		r := l.Resolve(api.EngineGemini, api.EngineConfig{})
		if r.Err != nil || r.Command[len(r.Command)-1] != "--experimental-acp" || r.Isolated {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("takes the configured command, and its version from the script it runs", func(t *testing.T) {
		old := filepath.Join(cache, "_npx", "aaa", "node_modules", "@zed-industries", "claude-agent-acp", "dist", "index.js")
		r := l.Resolve(api.EngineClaude, api.EngineConfig{Command: []string{"node", old}})
		if r.Err != nil || r.Source != SourceSettings || r.Version != "0.17.1" || r.Isolated {
			t.Fatalf("got %+v: 0.17.1 routes its writes through ACP and needs no isolation", r)
		}
	})
	t.Run("lets the setting decide isolation", func(t *testing.T) {
		no := false
		if r := l.Resolve(api.EngineCodex, api.EngineConfig{Isolate: &no}); r.Isolated {
			t.Fatal("isolate: false was not followed")
		}
	})
	t.Run("isolates an engine of another name, whose habits it cannot know", func(t *testing.T) {
		r := l.Resolve("goose", api.EngineConfig{Command: []string{"my-agent", "acp"}})
		if r.Err != nil || !r.Isolated || r.Builtin {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("says why a configured command cannot run", func(t *testing.T) {
		r := l.Resolve("goose", api.EngineConfig{Command: []string{"goose", "acp"}})
		if r.Err == nil || !strings.Contains(r.Err.Error(), `"goose" cannot be run`) {
			t.Fatalf("got %v", r.Err)
		}
		if info := r.Info(); info.Usable || info.Reason == "" {
			t.Fatalf("info = %+v", info)
		}
	})
	t.Run("says how to install a built-in engine it cannot find", func(t *testing.T) {
		empty := Lookup{NPMCache: t.TempDir(), LookPath: func(string) (string, error) { return "", errors.New("not found") }}
		r := empty.Resolve(api.EngineCodex, api.EngineConfig{})
		if r.Err == nil || !strings.Contains(r.Err.Error(), "npm install -g @zed-industries/codex-acp") || !strings.Contains(r.Err.Error(), "engines.codex.command") {
			t.Fatalf("got %v", r.Err)
		}
		if info := r.Info(); info.Usable || info.Command == nil {
			t.Fatalf("info = %+v: not usable, with an empty command list", info)
		}
	})
	t.Run("says a disabled engine is disabled", func(t *testing.T) {
		r := l.Resolve(api.EngineGemini, api.EngineConfig{Disabled: true})
		if r.Err == nil || !strings.Contains(r.Err.Error(), "disabled") {
			t.Fatalf("got %v", r.Err)
		}
	})
}

func TestNames(t *testing.T) {
	got := Names(map[string]api.EngineConfig{"goose": {Command: []string{"goose"}}, "codex": {Disabled: true}})
	if want := []string{"claude", "gemini", "goose"}; !slices.Equal(got, want) {
		t.Fatalf("Names = %v, want %v", got, want)
	}
}

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"0.18.0", "0.17.1", 1}, {"0.17.1", "0.18.0", -1}, {"0.9.0", "0.10.0", -1},
		{"1.0.0-beta.1", "1.0.0", 0}, {"v2.6.0", "2.6.0", 0}, {"0.101.0", "0.23.1", 1},
	} {
		if got := compareVersions(c.a, c.b); got != c.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestSharesMCP(t *testing.T) {
	no, yes := false, true
	m := NewManager(Options{})
	m.Configure(map[string]api.EngineConfig{"codex": {MCPServers: &no}, "gemini": {MCPServers: &yes}})
	if m.SharesMCP("codex") || !m.SharesMCP("gemini") || !m.SharesMCP("claude") {
		t.Fatal("only an entry with mcpServers: false keeps the user's MCP servers from its engine")
	}
}
