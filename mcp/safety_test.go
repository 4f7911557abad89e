package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// realPath is p with its symlinks resolved (macOS's temporary directory is
// one).
func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestWhereAStdioServerRuns(t *testing.T) {
	ws := t.TempDir()
	cwdOf := func(t *testing.T, m *Manager, server string) string {
		t.Helper()
		m.Tools(ctxT(t))
		res, err := call(t, m, "mcp__"+server+"__cwd", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}

	t.Run("runs in agentls's own directory, made private, never the workspace", func(t *testing.T) {
		own := filepath.Join(t.TempDir(), "state", "workspaces", "0123", "mcp")
		m := newManager(t, Options{Dir: own, Root: ws}, map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
		got := cwdOf(t, m, "local")
		if realPath(t, got) != realPath(t, own) {
			t.Fatalf("the server runs in %s, want %s (the workspace is %s)", got, own, ws)
		}
		fi, err := os.Stat(own)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("the directory: %v, %v; want mode 0700", fi, err)
		}
	})
	t.Run("runs in the cwd its entry names, ${NAME} expanded", func(t *testing.T) {
		base := t.TempDir()
		if err := os.Mkdir(filepath.Join(base, "srv"), 0o755); err != nil {
			t.Fatal(err)
		}
		e := stdioEntry(t, nil)
		e.Cwd = "${MCP_BASE}/srv"
		m := newManager(t, Options{Root: ws, Environ: append(os.Environ(), "MCP_BASE="+base)}, map[string]api.MCPServer{"local": e}, 20*time.Second)
		if got := cwdOf(t, m, "local"); realPath(t, got) != realPath(t, filepath.Join(base, "srv")) {
			t.Fatalf("the server runs in %s", got)
		}
	})
	t.Run("refuses a cwd that is relative once expanded, never taking it against the workspace", func(t *testing.T) {
		e := stdioEntry(t, nil)
		e.Cwd = "${MCP_REL}"
		m := newManager(t, Options{Root: ws, Environ: append(os.Environ(), "MCP_REL=tools")}, map[string]api.MCPServer{"local": e}, 20*time.Second)
		st := m.Status(ctxT(t), true).Servers[0]
		if st.State != api.MCPFailed || !strings.Contains(st.Error, `its cwd "${MCP_REL}" is "tools" once expanded, not an absolute path`) {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("refuses a cwd that is not a directory", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "file")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		e := stdioEntry(t, nil)
		e.Cwd = f
		m := newManager(t, Options{Root: ws}, map[string]api.MCPServer{"local": e}, 20*time.Second)
		if st := m.Status(ctxT(t), true).Servers[0]; st.State != api.MCPFailed || !strings.Contains(st.Error, "is not a directory") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("refuses its own directory when it is a symlink", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "mcp")
		if err := os.Symlink(ws, link); err != nil {
			t.Skip("no symlinks here:", err)
		}
		m := newManager(t, Options{Dir: link, Root: ws}, map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
		if st := m.Status(ctxT(t), true).Servers[0]; st.State != api.MCPFailed || !strings.Contains(st.Error, "is not a directory") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("refuses a relative directory of its own", func(t *testing.T) {
		m := newManager(t, Options{Dir: "state/mcp", Root: ws}, map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
		if st := m.Status(ctxT(t), true).Servers[0]; st.State != api.MCPFailed || !strings.Contains(st.Error, "not an absolute path") {
			t.Fatalf("status = %+v", st)
		}
	})
	t.Run("without a directory of its own, runs in a private temporary one that Close removes", func(t *testing.T) {
		m := New(Options{Root: ws})
		t.Cleanup(m.Close)
		m.Configure(map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
		got := cwdOf(t, m, "local")
		if realPath(t, got) == realPath(t, ws) || !strings.HasPrefix(filepath.Base(got), "agentls-mcp-") {
			t.Fatalf("the server runs in %s", got)
		}
		if fi, err := os.Stat(got); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("the directory: %v, %v; want mode 0700", fi, err)
		}
		m.Close()
		if _, err := os.Stat(got); !os.IsNotExist(err) {
			t.Fatalf("after Close: %v", err)
		}
	})
}

func TestRoots(t *testing.T) {
	ws := t.TempDir()
	want := fileuri.FromPath(ws)
	rootsOf := func(t *testing.T, m *Manager, server string) string {
		t.Helper()
		m.Tools(ctxT(t))
		res, err := call(t, m, "mcp__"+server+"__roots", `{}`)
		if err != nil || res.IsError {
			t.Fatalf("roots: %+v, %v", res, err)
		}
		return res.Text
	}

	t.Run("tells a stdio server the workspace as its one root", func(t *testing.T) {
		m := newManager(t, Options{Root: ws}, map[string]api.MCPServer{"local": stdioEntry(t, nil)}, 20*time.Second)
		if got := rootsOf(t, m, "local"); got != want {
			t.Fatalf("roots = %q, want %q", got, want)
		}
	})
	t.Run("tells a streamable HTTP server the workspace as its one root", func(t *testing.T) {
		_, endpoint := httpServer(t, nil)
		m := newManager(t, Options{Root: ws}, map[string]api.MCPServer{"web": {URL: endpoint}}, 10*time.Second)
		if got := rootsOf(t, m, "web"); got != want {
			t.Fatalf("roots = %q, want %q", got, want)
		}
	})
	t.Run("advertises roots and answers roots/list to a server of the older protocol", func(t *testing.T) {
		// A server without server/discover: the client falls back to
		// initialize (2025-11-25), and the server asks roots/list itself.
		var mu sync.Mutex
		var advertised *bool
		srv := testServer(nil)
		srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "server/discover" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
				}
				if method == "notifications/initialized" {
					ss := req.GetSession().(*sdk.ServerSession)
					has := ss.InitializeParams().Capabilities.RootsV2 != nil
					mu.Lock()
					advertised = &has
					mu.Unlock()
				}
				return next(ctx, method, req)
			}
		})
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		m := newManager(t, Options{Root: ws}, map[string]api.MCPServer{"old": {URL: ts.URL + "/mcp"}}, 10*time.Second)
		if got := rootsOf(t, m, "old"); got != want {
			t.Fatalf("roots = %q, want %q", got, want)
		}
		mu.Lock()
		defer mu.Unlock()
		if advertised == nil || !*advertised {
			t.Fatalf("the roots capability was not in initialize (%v)", advertised)
		}
	})
	t.Run("gives no root when it has no workspace", func(t *testing.T) {
		_, endpoint := httpServer(t, nil)
		m := newManager(t, Options{}, map[string]api.MCPServer{"web": {URL: endpoint}}, 10*time.Second)
		if got := rootsOf(t, m, "web"); got != "(no roots)" {
			t.Fatalf("roots = %q", got)
		}
	})
}
