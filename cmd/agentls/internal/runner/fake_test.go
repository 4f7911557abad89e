package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

// fakeServer is an agentls server reduced to what a test of the runner
// needs: it answers the lifecycle and answers agent/run with run, which may
// make reverse calls on conn.
type fakeServer struct {
	run func(ctx context.Context, conn *rpc.Conn, p api.RunParams) (any, error)
	// control answers the other requests (agent/skipSubtask, agent/stop,
	// agent/models, …); nil answers them -32601.
	control func(method string, params json.RawMessage) (any, error)
}

func (f *fakeServer) serve(ctx context.Context, in io.Reader, out io.Writer) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn := rpc.NewConn(rpc.NewStream(in, out, nil), nil)
	_ = conn.Serve(ctx, &fakeHandler{f: f, conn: conn, exit: cancel})
	return 0
}

type fakeHandler struct {
	f    *fakeServer
	conn *rpc.Conn
	exit context.CancelFunc
}

func (h *fakeHandler) Gate(*rpc.Request) error { return nil }

func (h *fakeHandler) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	switch req.Method() {
	case api.MethodInitialize:
		return map[string]any{"capabilities": map[string]any{}}, nil
	case api.MethodRun:
		var p api.RunParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return nil, err
		}
		return h.f.run(ctx, h.conn, p)
	case api.MethodShutdown:
		return nil, nil
	}
	if h.f.control != nil {
		return h.f.control(req.Method(), req.Params())
	}
	return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", req.Method())
}

func (h *fakeHandler) HandleNotification(_ context.Context, req *rpc.Request) {
	if req.Method() == api.MethodExit {
		h.exit()
	}
}

// syncBuffer is a bytes.Buffer safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runFake runs `agentls run` against f and returns its exit code, stdout
// and stderr. The run must end within a minute: a run that waits on
// something the fake withholds fails the test.
func runFake(t *testing.T, f *fakeServer, o Options) (int, string, string) {
	t.Helper()
	var stdout syncBuffer
	stderr, ok := o.Stderr.(*syncBuffer)
	if !ok {
		stderr = new(syncBuffer)
	}
	o.Serve = f.serve
	o.Workspace = t.TempDir()
	o.Stdout, o.Stderr = &stdout, stderr
	if o.Prompt == "" {
		o.Prompt = "do it"
	}
	o.Signals = make(chan os.Signal)
	code := make(chan int, 1)
	go func() { code <- Run(context.Background(), o) }()
	select {
	case c := <-code:
		return c, stdout.String(), stderr.String()
	case <-time.After(time.Minute):
		t.Fatalf("the run did not end; stderr so far:\n%s", stderr.String())
		return 0, "", ""
	}
}

func contains(s string, subs ...string) []string {
	var missing []string
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			missing = append(missing, sub)
		}
	}
	return missing
}
