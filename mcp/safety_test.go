package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/redact"
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
					roots := ss.InitializeParams().Capabilities.RootsV2
					has := roots != nil && !roots.ListChanged
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
			t.Fatalf("initialize did not offer roots without listChanged (%v)", advertised)
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

func TestHTTPRedirects(t *testing.T) {
	const token = "tok-0123456789abcdef"
	environ := []string{"PATH=" + os.Getenv("PATH"), "SERVICE_TOKEN=" + token}
	headers := map[string]string{"Authorization": "Bearer ${SERVICE_TOKEN}", "X-Api-Key": "literal-key-value-42"}

	// recording serves the test server and records the credentials each
	// request carried.
	type seen struct {
		mu    sync.Mutex
		creds []string
	}
	recording := func(s *seen) http.Handler {
		srv := testServer(nil)
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.mu.Lock()
			s.creds = append(s.creds, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
			s.mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}

	t.Run("sends no configured header to the origin a server redirects to, and logs that it did not", func(t *testing.T) {
		other := &seen{}
		second := httptest.NewServer(recording(other)) // another port: another origin
		t.Cleanup(second.Close)
		first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, second.URL+r.URL.Path, http.StatusTemporaryRedirect)
		}))
		t.Cleanup(first.Close)
		core, logs := observer.New(zapcore.DebugLevel)
		red := redact.FromEnviron(environ)
		m := newManager(t, Options{Environ: environ, Redactor: red, Log: zap.New(core)},
			map[string]api.MCPServer{"web": {URL: first.URL + "/mcp", Headers: headers}}, 10*time.Second)
		// The redirected session works; it merely has no credentials.
		if res, err := call(t, m, "mcp__web__echo", `{"message":"x"}`); err != nil || res.Text != "Echo: x" {
			t.Fatalf("got %+v, %v", res, err)
		}
		other.mu.Lock()
		creds := other.creds
		other.mu.Unlock()
		if len(creds) == 0 {
			t.Fatal("the redirect was not followed")
		}
		for i, c := range creds {
			if c != "|" {
				t.Errorf("request %d to the other origin carried %q", i, c)
			}
		}
		warned := logs.FilterMessageSnippet("redirect to another origin").All()
		if len(warned) != 1 {
			t.Fatalf("%d warnings of the redirect, want 1: %v", len(warned), logs.All())
		}
		fields := warned[0].ContextMap()
		if fields["to"] != second.URL || fields["from"] != first.URL {
			t.Errorf("fields = %v", fields)
		}
		for _, e := range logs.All() {
			for k, v := range e.ContextMap() {
				if s, ok := v.(string); ok && (strings.Contains(s, token) || strings.Contains(s, "literal-key-value-42")) {
					t.Errorf("log %q: %s holds a credential: %q", e.Message, k, s)
				}
			}
		}
	})
	t.Run("keeps the headers on a redirect within the origin", func(t *testing.T) {
		same := &seen{}
		rec := recording(same)
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/old" {
				http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
				return
			}
			rec.ServeHTTP(w, r)
		}))
		t.Cleanup(ts.Close)
		m := newManager(t, Options{Environ: environ, Redactor: redact.FromEnviron(environ)},
			map[string]api.MCPServer{"web": {URL: ts.URL + "/old", Headers: headers}}, 10*time.Second)
		if res, err := call(t, m, "mcp__web__echo", `{"message":"x"}`); err != nil || res.Text != "Echo: x" {
			t.Fatalf("got %+v, %v", res, err)
		}
		same.mu.Lock()
		defer same.mu.Unlock()
		if len(same.creds) == 0 {
			t.Fatal("the redirect was not followed")
		}
		for i, c := range same.creds {
			if c != "Bearer "+token+"|literal-key-value-42" {
				t.Errorf("request %d within the origin carried %q", i, c)
			}
		}
	})
}

func TestOrigin(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://h.example/mcp", "https://H.example:443/other", true},
		{"http://127.0.0.1/mcp", "http://127.0.0.1:80/x", true},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", false},
		{"http://127.0.0.1/mcp", "http://127.0.0.2/mcp", false},
		{"http://h.example/mcp", "https://h.example/mcp", false},
		{"https://h.example/mcp", "https://sub.h.example/mcp", false},
		{"http://[::1]:80/mcp", "http://[::1]/mcp", true},
	} {
		a, err := url.Parse(c.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := url.Parse(c.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := originOf(a) == originOf(b); got != c.same {
			t.Errorf("%s and %s: same origin = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
