package handlers

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/rpc"
)

func writeGo(t *testing.T, root, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// awaitSymbol asks agent/codeGraph for symbol until it is there: the
// editor's notifications are handled apart from its requests.
func awaitSymbol(t *testing.T, c *client, symbol string) api.CodeGraphResult {
	t.Helper()
	deadline := time.Now().Add(testkit.Timeout)
	for {
		var res api.CodeGraphResult
		err := c.call(api.MethodCodeGraph, api.CodeGraphParams{Symbol: symbol}, &res)
		if err == nil {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent/codeGraph never found %s: %v", symbol, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCodeGraph(t *testing.T) {
	root := t.TempDir()
	writeGo(t, root, "main.go", "package main\n\nfunc main() { helper() }\n\nfunc helper() {}\n")
	c := startServer(t, root)

	t.Run("a file's definitions, by path or by URI", func(t *testing.T) {
		for _, p := range []string{"main.go", fileuri.FromPath(filepath.Join(root, "main.go")), filepath.Join(root, "main.go")} {
			var res api.CodeGraphResult
			if err := c.call(api.MethodCodeGraph, api.CodeGraphParams{Path: p}, &res); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if len(res.Nodes) != 3 || res.Nodes[1].ID != "main.go#main" || res.Nodes[2].ID != "main.go#helper" {
				t.Errorf("%s: nodes %+v", p, res.Nodes)
			}
		}
	})
	t.Run("a file the editor says changed is read again", func(t *testing.T) {
		writeGo(t, root, "extra.go", "package main\n\nfunc Extra() { helper() }\n")
		uri := fileuri.FromPath(filepath.Join(root, "extra.go"))
		if err := c.conn.Notify(context.Background(), api.MethodDidChangeWatchedFiles,
			api.DidChangeWatchedFilesParams{Changes: []api.FileEvent{{URI: uri, Type: 1}}}); err != nil {
			t.Fatal(err)
		}
		awaitSymbol(t, c, "Extra")
		writeGo(t, root, "extra.go", "package main\n\nfunc Saved() {}\n")
		if err := c.conn.Notify(context.Background(), api.MethodDidSave, map[string]any{"textDocument": map[string]any{"uri": uri}}); err != nil {
			t.Fatal(err)
		}
		res := awaitSymbol(t, c, "Saved")
		if res.Nodes[1].ID != "extra.go#Saved" {
			t.Errorf("nodes %+v", res.Nodes)
		}
	})
	t.Run("bad params are refused with the field named", func(t *testing.T) {
		depth := 9
		for _, tc := range []struct {
			params   api.CodeGraphParams
			fragment string
		}{
			{api.CodeGraphParams{}, `give "path"`},
			{api.CodeGraphParams{Path: "main.go", Depth: &depth}, "depth: must be a whole number from 1 to 3"},
			{api.CodeGraphParams{Path: "../outside.go"}, "outside the workspace"},
			{api.CodeGraphParams{Path: "README.md"}, "not a file of a language the graph reads"},
			{api.CodeGraphParams{Symbol: "Nowhere"}, "no definition of Nowhere"},
		} {
			err := c.call(api.MethodCodeGraph, tc.params, nil)
			wantCode(t, err, int64(api.CodeInvalidParams), tc.fragment)
		}
	})
}

// watchingClient answers client/registerCapability and records it.
type watchingClient struct {
	client
	registered chan api.RegistrationParams
	refuse     bool // answer the registration with an error
}

func (c *watchingClient) HandleCall(_ context.Context, r *rpc.Request) (any, error) {
	if r.Method() != api.MethodRegisterCapability {
		return nil, api.Errorf(api.CodeMethodNotFound, "not answered")
	}
	var p api.RegistrationParams
	if err := json.Unmarshal(r.Params(), &p); err != nil {
		return nil, err
	}
	c.registered <- p
	if c.refuse {
		return nil, api.Errorf(api.CodeInvalidParams, "no watching here")
	}
	return nil, nil
}

// graphWatches waits until the server's code graph watches the disk
// itself (want) or, not, until the graph is current and says it does not.
func graphWatches(t *testing.T, srv *Server, want bool) {
	t.Helper()
	srv.mu.Lock()
	ws := srv.ws
	srv.mu.Unlock()
	g, err := ws.Graph()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Timeout)
	defer cancel()
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	for want && g.Stats().Watched == 0 {
		if ctx.Err() != nil {
			t.Fatal("the graph does not watch the disk, and no editor does")
		}
		time.Sleep(time.Millisecond)
	}
	if !want && g.Stats().Watched != 0 {
		t.Errorf("the graph watches %d directories beside the editor's watcher", g.Stats().Watched)
	}
}

func TestFileWatcherRegistration(t *testing.T) {
	for _, tc := range []struct {
		name    string
		caps    map[string]any
		watches bool
		refuse  bool
	}{
		{"a client that can watch files for agentls is asked to watch the workspace, and the graph leaves it to the client",
			map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}, true, false},
		{"a client that can but refuses leaves the graph to watch the disk itself",
			map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}, true, true},
		{"a client that cannot is asked nothing, and the graph watches the disk itself", map[string]any{}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			cr, sw := io.Pipe()
			sr, cw := io.Pipe()
			sconn := rpc.NewConn(rpc.NewStream(sr, sw, nil), nil)
			srv := New(sconn, Options{Version: "test", Cwd: root})
			cconn := rpc.NewConn(rpc.NewStream(cr, cw, nil), nil)
			c := &watchingClient{client: client{conn: cconn, srv: srv, notes: make(chan *rpc.Request, 16)}, registered: make(chan api.RegistrationParams, 1), refuse: tc.refuse}
			ctx, cancel := context.WithCancel(context.Background())
			sdone, cdone := make(chan struct{}), make(chan struct{})
			go func() { defer close(sdone); sconn.Serve(ctx, srv) }()
			go func() { defer close(cdone); cconn.Serve(ctx, c) }()
			stop := func() {
				srv.close()
				cancel()
				cw.Close()
				sw.Close()
				<-sdone
				<-cdone
			}
			var res api.InitializeResult
			if err := c.call(api.MethodInitialize, map[string]any{"rootUri": fileuri.FromPath(root), "capabilities": tc.caps}, &res); err != nil {
				t.Fatal(err)
			}
			if s := res.Capabilities.TextDocumentSync; s == nil || s.OpenClose || s.Change != 0 || s.Save.IncludeText {
				t.Errorf("textDocumentSync = %+v, want a save without text only", s)
			}
			if !tc.watches {
				// initialized, handled here and now; the server's close
				// waits for a registration it would have sent
				srv.initializedNote(ctx, nil)
				graphWatches(t, srv, true)
				stop()
				select {
				case p := <-c.registered:
					t.Fatalf("registered %+v", p)
				default:
				}
				return
			}
			defer stop()
			if err := cconn.Notify(ctx, api.MethodInitialized, struct{}{}); err != nil {
				t.Fatal(err)
			}
			select {
			case p := <-c.registered:
				if len(p.Registrations) != 1 || p.Registrations[0].Method != api.MethodDidChangeWatchedFiles {
					t.Errorf("registrations %+v", p.Registrations)
				}
			case <-time.After(testkit.Timeout):
				t.Fatal("no client/registerCapability")
			}
			graphWatches(t, srv, tc.refuse)
		})
	}
}
