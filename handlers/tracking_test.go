package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking/sessions"
	"github.com/agentls/agentls/tracking/trace"
)

// client is an in-process editor: a real rpc.Conn over pipes to a real
// Server, recording the notifications it receives.
type client struct {
	conn  *rpc.Conn
	srv   *Server
	notes chan *rpc.Request
}

func (c *client) Gate(*rpc.Request) error { return nil }
func (c *client) HandleCall(context.Context, *rpc.Request) (any, error) {
	return nil, api.Errorf(api.CodeMethodNotFound, "the test editor answers no calls")
}
func (c *client) HandleNotification(_ context.Context, r *rpc.Request) { c.notes <- r }

func startServer(t *testing.T, root string) *client {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	sconn := rpc.NewConn(rpc.NewStream(sr, sw, nil), nil)
	srv := New(sconn, Options{Version: "test", Cwd: root})
	cconn := rpc.NewConn(rpc.NewStream(cr, cw, nil), nil)
	c := &client{conn: cconn, srv: srv, notes: make(chan *rpc.Request, 256)}
	ctx, cancel := context.WithCancel(context.Background())
	sdone, cdone := make(chan struct{}), make(chan struct{})
	go func() { defer close(sdone); sconn.Serve(ctx, srv) }()
	go func() { defer close(cdone); cconn.Serve(ctx, c) }()
	t.Cleanup(func() {
		srv.close()
		cancel()
		cw.Close()
		sw.Close()
		<-sdone
		<-cdone
	})
	var res api.InitializeResult
	if err := c.call("initialize", map[string]any{"rootUri": fileuri.FromPath(root), "capabilities": map[string]any{}}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Timeout)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

func (c *client) await(t *testing.T, method string, pred func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	deadline := time.After(testkit.Timeout)
	for {
		select {
		case r := <-c.notes:
			if r.Method() == method && pred(r.Params()) {
				return r.Params()
			}
		case <-deadline:
			t.Fatalf("no %s notification before the deadline", method)
			return nil
		}
	}
}

func wantCode(t *testing.T, err error, code int64, fragment string) {
	t.Helper()
	var we *api.Error
	if !errors.As(err, &we) || int64(we.Code) != code || !strings.Contains(we.Message, fragment) {
		t.Fatalf("got %v, want code %d with %q", err, code, fragment)
	}
}

func TestSessionMethods(t *testing.T) {
	c := startServer(t, t.TempDir())
	ws, err := c.srv.Tracking()
	if err != nil {
		t.Fatal(err)
	}
	first, _ := ws.Sessions.StartTask("", "t1", "Add greet")
	ws.Sessions.Append(first, api.SessionMessage{Role: "user", Text: "Add greet", TaskID: "t1"})
	ws.Sessions.SetTaskState(first, "t1", api.TaskDone)
	second, _ := ws.Sessions.StartTask("", "t2", "Still going")

	t.Run("agent/sessions lists sessions newest first", func(t *testing.T) {
		var res api.SessionsResult
		if err := c.call(api.MethodSessions, struct{}{}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Sessions) != 2 || res.Sessions[0].SessionID != second || res.Sessions[1].Tasks[0].State != api.TaskDone {
			t.Errorf("got %+v", res.Sessions)
		}
	})
	t.Run("agent/session returns the history", func(t *testing.T) {
		var res api.SessionResult
		if err := c.call(api.MethodSession, api.SessionParams{SessionID: first}, &res); err != nil {
			t.Fatal(err)
		}
		if res.Title != "Add greet" || len(res.Messages) != 1 || res.Messages[0].Role != "user" || len(res.Tasks) != 1 {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("agent/session answers -32011 for an unknown session", func(t *testing.T) {
		wantCode(t, c.call(api.MethodSession, api.SessionParams{SessionID: "nope"}, nil), -32011, "unknown session")
	})
	t.Run("agent/session answers -32602 without sessionId", func(t *testing.T) {
		wantCode(t, c.call(api.MethodSession, struct{}{}, nil), -32602, "sessionId")
	})
	t.Run("agent/deleteSession answers -32012 while a task is going", func(t *testing.T) {
		wantCode(t, c.call(api.MethodDeleteSession, api.SessionParams{SessionID: second}, nil), -32012, "stop it first")
	})
	t.Run("agent/deleteSession deletes and answers {}", func(t *testing.T) {
		var res json.RawMessage
		if err := c.call(api.MethodDeleteSession, api.SessionParams{SessionID: first}, &res); err != nil || string(res) != "{}" {
			t.Fatalf("got %s, %v", res, err)
		}
		wantCode(t, c.call(api.MethodSession, api.SessionParams{SessionID: first}, nil), -32011, "unknown session")
	})
}

func TestTraceMethod(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".orchestration"), 0o755)
	c := startServer(t, root)
	ws, _ := c.srv.Tracking()
	e, err := ws.RecordChange(trace.Change{Path: "a.go", Operation: api.OpCreate, Content: []byte("a\nb\n"), Spans: []trace.Span{{Start: 1, End: 2}}, IntentID: "I-1", SessionID: "s", TaskID: "t", SubtaskID: "1", Model: "m"})
	if err != nil || e == nil {
		t.Fatalf("RecordChange: %v, %v", e, err)
	}
	t.Run("agent/trace answers the entries of a line", func(t *testing.T) {
		var res api.TraceResult
		if err := c.call(api.MethodTrace, map[string]any{"path": "a.go", "line": 2}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Entries) != 1 || res.Entries[0].ID != e.ID || *res.Entries[0].IntentID != "I-1" {
			t.Errorf("got %+v", res.Entries)
		}
	})
	t.Run("agent/trace answers an empty list for an untraced file", func(t *testing.T) {
		var raw json.RawMessage
		if err := c.call(api.MethodTrace, map[string]any{"path": "b.go"}, &raw); err != nil || string(raw) != `{"entries":[]}` {
			t.Errorf("got %s, %v", raw, err)
		}
	})
	t.Run("agent/trace answers -32602 without path or with line 0", func(t *testing.T) {
		wantCode(t, c.call(api.MethodTrace, struct{}{}, nil), -32602, "path")
		wantCode(t, c.call(api.MethodTrace, map[string]any{"path": "a.go", "line": 0}, nil), -32602, "line")
		wantCode(t, c.call(api.MethodTrace, map[string]any{"path": "../x"}, nil), -32602, "outside the workspace")
	})
}

func TestHeatMethods(t *testing.T) {
	c := startServer(t, t.TempDir())
	ws, _ := c.srv.Tracking()
	tr := ws.Heat.Tracker("task-1", "1")
	tr.Access("src/main.go", api.ActionWrite)
	c.await(t, api.MethodHeatUpdate, func(p json.RawMessage) bool {
		var u api.HeatUpdateParams
		json.Unmarshal(p, &u)
		return u.TaskID == "task-1" && len(u.Updates) == 1 && u.Updates[0].Path == "src/main.go"
	})
	t.Run("agent/heatSnapshot gives a task's view", func(t *testing.T) {
		var res api.HeatSnapshot
		if err := c.call(api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "task-1"}, &res); err != nil {
			t.Fatal(err)
		}
		want := api.HeatNode{Path: "src/main.go", Heat: 1, InContext: true, LastAction: api.ActionWrite}
		if res.Seq < 1 || len(res.Nodes) != 1 || res.Nodes[0] != want {
			t.Errorf("got %+v", res)
		}
	})
	t.Run("agent/heatSnapshot without taskId gives the workspace", func(t *testing.T) {
		var res api.HeatSnapshot
		if err := c.call(api.MethodHeatSnapshot, struct{}{}, &res); err != nil || len(res.Nodes) != 1 {
			t.Errorf("got %+v, %v", res, err)
		}
	})
	t.Run("agent/heatSnapshot answers -32011 for an unknown task", func(t *testing.T) {
		wantCode(t, c.call(api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "nope"}, nil), -32011, "unknown task")
	})
}

func TestDamagedStateIsReportedToTheEditor(t *testing.T) {
	root := t.TempDir()
	c := startServer(t, root)
	dir := sessions.WorkspaceDir(os.Getenv("AGENTLS_STATE_DIR"), root)
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "sessions.json"), []byte("{not json"), 0o600)
	var res api.SessionsResult
	if err := c.call(api.MethodSessions, nil, &res); err != nil || len(res.Sessions) != 0 {
		t.Fatalf("got %+v, %v", res, err)
	}
	c.await(t, api.MethodLogMessage, func(p json.RawMessage) bool { return strings.Contains(string(p), "session list was damaged") })
}
