package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/shell"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// stopGrace is how long a stdio server has between SIGTERM and SIGKILL.
const stopGrace = 2 * time.Second

// codeRejected is the SDK's "rejected by transport": the request did not
// reach the server (an HTTP server that went away). Its session cannot be
// trusted: it is handled as a crash.
const codeRejected = -32005

// server is one configured MCP server and its connection, if any.
type server struct {
	m    *Manager
	name string
	cfg  api.MCPServer
	// life ends when the server is removed or the Manager closes: a start
	// under way gives up.
	life   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	state    string
	err      string
	restarts int
	crashed  bool // ended without being stopped: the next need restarts it, once
	removed  bool // its entry changed or went away, or the Manager closed
	conn     *conn
	starting chan struct{} // closed when the start under way ends
	tools    []api.MCPTool
	byName   map[string]string // name the model sees → the server's name
	// allowed: an Approve said yes; declined: why it said no. Either holds
	// for the server's life (a changed entry is a new server).
	allowed  bool
	declined string
}

// conn is one live session with a server.
type conn struct {
	session *sdk.ClientSession
	proc    *process // nil for HTTP
	stopped atomic.Bool
	once    sync.Once

	endOnce sync.Once
	endDone chan struct{} // closed once ended has recorded the end
	endMsg  string
}

// stop ends the session: a stdio server's process group is killed first, so
// a call in flight or a server that ignores its input cannot hold it.
func (c *conn) stop() {
	c.once.Do(func() {
		c.stopped.Store(true)
		if c.proc != nil {
			c.proc.stop(stopGrace)
		}
		_ = c.session.Close()
	})
}

func newServer(m *Manager, name string, cfg api.MCPServer) *server {
	life, cancel := context.WithCancel(m.life)
	return &server{m: m, name: name, cfg: cfg, state: api.MCPNotStarted, life: life, cancel: cancel}
}

// connection returns the live session, starting the server when it has not
// been started, or (with restart: a call needs it) when it crashed with its
// restart unspent. It waits for a start under way as long as ctx lasts; the
// start itself belongs to the Manager and goes on when ctx ends.
func (s *server) connection(ctx context.Context, restart bool) (*conn, error) {
	for {
		s.mu.Lock()
		switch {
		case s.removed:
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: %q is no longer configured", ErrUnavailable, s.name)
		case s.conn != nil:
			c := s.conn
			s.mu.Unlock()
			return c, nil
		case s.starting != nil:
			ch := s.starting
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		case s.state == api.MCPFailed && (!s.crashed || s.restarts >= 1 || !restart):
			msg := s.err
			s.mu.Unlock()
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
		again := s.crashed
		if again {
			s.restarts++
		}
		s.state = api.MCPStarting
		ch := make(chan struct{})
		s.starting = ch
		s.mu.Unlock()
		if !s.m.goOwned(func() { s.start(ch, again) }) {
			s.mu.Lock()
			s.state, s.err, s.starting = api.MCPFailed, ErrClosed.Error(), nil
			s.mu.Unlock()
			close(ch)
		}
	}
}

// start connects and lists the tools, bounded by the start timeout, and
// records the outcome. It runs on a goroutine of the Manager.
func (s *server) start(done chan struct{}, restart bool) {
	defer close(done)
	timeout := s.m.startTimeout()
	ctx, cancel := context.WithTimeout(s.life, timeout)
	defer cancel()
	began := time.Now()
	c, tools, err := s.connect(ctx)
	if err != nil && errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("it did not start and list its tools within %s (timeouts.mcpMs): %w", timeout, err)
	}
	s.mu.Lock()
	s.starting = nil
	if err == nil && s.removed {
		err = errors.New("its entry changed while it started")
	}
	if err != nil {
		s.state, s.crashed = api.MCPFailed, false
		s.err = fmt.Sprintf("MCP server %q failed to start: %v", s.name, err)
		msg := s.err
		s.mu.Unlock()
		if c != nil {
			c.stop()
		}
		s.m.log.Warn("server failed to start", zap.String("server", s.name), zap.String("error", msg))
		return
	}
	s.conn, s.crashed, s.err = c, false, ""
	s.state = api.MCPReady
	if restart {
		s.state = api.MCPRestarted
	}
	s.setToolsLocked(tools)
	n := len(tools)
	s.mu.Unlock()
	s.m.log.Info("server ready", zap.String("server", s.name), zap.Int("tools", n), zap.Bool("restart", restart), zap.Duration("took", time.Since(began)))
	if !s.m.goOwned(func() { s.watch(c) }) {
		c.stop()
	}
}

// connect opens a session and lists the tools. On error the half-made
// connection is stopped (or returned with the error, to be stopped).
func (s *server) connect(ctx context.Context) (*conn, []api.MCPTool, error) {
	transport, proc, err := s.m.dial(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	c := &conn{proc: proc, endDone: make(chan struct{})}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentls", Version: s.m.opts.Version}, &sdk.ClientOptions{
		Capabilities: s.m.capabilities(),
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			s.listChanged(req.Session)
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if root := s.m.root(); root != nil {
		// Before Connect: no session is told of a change.
		client.AddRoots(root)
	}
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if proc != nil {
			proc.stop(0)
			err = proc.explain(err)
		}
		return nil, nil, err
	}
	c.session = session
	tools, err := listTools(ctx, session, s.name)
	if err != nil {
		if proc != nil {
			err = proc.explain(err)
		}
		return c, nil, fmt.Errorf("tools/list: %w", err)
	}
	return c, tools, nil
}

func listTools(ctx context.Context, session *sdk.ClientSession, name string) ([]api.MCPTool, error) {
	var all []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		all = append(all, t)
	}
	return convertTools(name, all), nil
}

// watch waits for the session to end; an end the Manager did not cause is
// a crash.
func (s *server) watch(c *conn) {
	err := c.session.Wait()
	if c.stopped.Load() {
		return
	}
	s.ended(c, err)
}

// ended records that c ended without being stopped (a crash, a killed
// process, an HTTP session gone), stops what is left of it, and returns the
// server's error. The watcher and a failed call may both see the end: the
// first records it, the other waits for that and gets the same error.
func (s *server) ended(c *conn, cause error) string {
	c.endOnce.Do(func() {
		defer close(c.endDone)
		s.mu.Lock()
		if s.conn != c {
			s.mu.Unlock()
			c.endMsg = fmt.Sprintf("MCP server %q was stopped", s.name)
			return
		}
		s.conn = nil
		s.crashed = true
		s.state = api.MCPFailed
		again := s.restarts >= 1
		s.mu.Unlock()

		reason := "its connection ended"
		if cause != nil {
			reason = "its connection ended: " + cause.Error()
		}
		if c.proc != nil {
			// A crashed process has exited, or will in a moment: say how,
			// before stopping the rest of its group.
			if r, ok := c.proc.exitReason(time.Second); ok {
				reason = r
			}
		}
		c.stop()
		s.mu.Lock()
		if again {
			s.err = fmt.Sprintf("MCP server %q is not restarted again: it stopped after its restart (%s); change its entry in mcpServers to start it anew", s.name, reason)
			s.tools, s.byName = nil, nil
		} else {
			s.err = fmt.Sprintf("MCP server %q stopped (%s); it is restarted at the next call", s.name, reason)
		}
		c.endMsg = s.err
		s.mu.Unlock()
		s.m.log.Warn("server stopped", zap.String("server", s.name), zap.String("error", c.endMsg))
	})
	<-c.endDone
	return c.endMsg
}

// listChanged lists the tools again after notifications/tools/list_changed.
func (s *server) listChanged(session *sdk.ClientSession) {
	s.m.goOwned(func() {
		// A server may announce a change while it starts (tools it adds
		// once initialized): list after the start has recorded its session.
		s.mu.Lock()
		starting := s.starting
		s.mu.Unlock()
		if starting != nil {
			select {
			case <-starting:
			case <-s.life.Done():
				return
			}
		}
		ctx, cancel := context.WithTimeout(s.life, s.m.startTimeout())
		defer cancel()
		tools, err := listTools(ctx, session, s.name)
		if err != nil {
			s.m.log.Warn("tools/list after list_changed failed", zap.String("server", s.name), zap.Error(err))
			return
		}
		s.mu.Lock()
		if s.conn != nil && s.conn.session == session {
			s.setToolsLocked(tools)
		}
		s.mu.Unlock()
		s.m.log.Info("tools changed", zap.String("server", s.name), zap.Int("tools", len(tools)))
	})
}

func (s *server) setToolsLocked(tools []api.MCPTool) {
	s.tools = tools
	s.byName = make(map[string]string, len(tools))
	for _, t := range tools {
		s.byName[t.Name] = t.Tool
	}
}

// toolList returns the tools to offer: those of a live server, and of one
// that crashed and will be restarted at its next call.
func (s *server) toolList() []api.MCPTool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed {
		return nil
	}
	return s.tools
}

func (s *server) toolName(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.byName[name]
	return t, ok
}

// remove stops the server for good: its entry changed or went away, or the
// Manager closed.
func (s *server) remove() {
	s.cancel()
	s.mu.Lock()
	s.removed = true
	c := s.conn
	s.conn = nil
	starting := s.starting
	s.mu.Unlock()
	if c != nil {
		c.stop()
	}
	if starting != nil {
		<-starting // the start sees removed, or m.life ended, and stops what it made
	}
}

// call runs one tool call on the server.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage, timeout time.Duration) (Result, error) {
	c, err := s.connection(ctx, true)
	if err != nil {
		return Result{}, err
	}
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var arguments any = map[string]any{}
	if len(strings.TrimSpace(string(args))) > 0 && string(args) != "null" {
		arguments = json.RawMessage(args)
	}
	res, err := c.session.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: arguments})
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		return render(res), nil
	case ctx.Err() != nil:
		return Result{}, context.Cause(ctx)
	case cctx.Err() != nil:
		return Result{}, fmt.Errorf("%w: %s of the MCP server %q did not answer within %s (timeouts.mcpMs); the call was cancelled", ErrTimeout, tool, s.name, timeout)
	case errors.As(err, &wire) && wire.Code != codeRejected:
		return Result{}, fmt.Errorf("the MCP server %q refused the call of %s: %s (code %d)", s.name, tool, wire.Message, wire.Code)
	}
	// The connection failed under the call: the server crashed or went
	// away. Record it (the watcher may not have seen it yet).
	return Result{}, fmt.Errorf("%w: %s", ErrCrashed, s.ended(c, err))
}

// status is the server's line of agent/mcpServers.
func (s *server) status() api.MCPServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := api.MCPServerStatus{
		Name: s.name, Transport: s.cfg.Transport(),
		Command: s.cfg.Command, Args: s.cfg.Args, URL: s.cfg.URL,
		State: s.state, Error: s.err, Restarts: s.restarts,
		ToolCount: len(s.tools), Tools: make([]api.MCPTool, 0, len(s.tools)),
	}
	for _, t := range s.tools {
		t.InputSchema = nil
		st.Tools = append(st.Tools, t)
	}
	return st
}

// capabilities are the client's: the roots capability when there is a
// workspace root to give, nothing else (the SDK's default would offer
// roots with no root).
func (m *Manager) capabilities() *sdk.ClientCapabilities {
	if m.opts.Root == "" {
		return &sdk.ClientCapabilities{}
	}
	// Without listChanged: the roots never change within a Manager (its
	// root is the workspace's for its life), so no
	// notifications/roots/list_changed is ever sent.
	return &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{}}
}

// root is the workspace as an MCP root, nil when there is none.
func (m *Manager) root() *sdk.Root {
	if m.opts.Root == "" {
		return nil
	}
	return &sdk.Root{URI: fileuri.FromPath(m.opts.Root), Name: filepath.Base(m.opts.Root)}
}

// dialConfigured makes the transport of the server's entry: a process for
// stdio, a streamable HTTP client for a URL.
func (m *Manager) dialConfigured(ctx context.Context, s *server) (sdk.Transport, *process, error) {
	if s.cfg.URL != "" {
		endpoint := shell.Expand(s.cfg.URL, m.opts.Environ)
		u, err := url.Parse(endpoint)
		if err != nil {
			// The setting was checked as written; ${NAME} made it bad.
			return nil, nil, fmt.Errorf("its url is not a URL once expanded: %w", err)
		}
		headers := make(http.Header, len(s.cfg.Headers))
		for k, v := range s.cfg.Headers {
			headers.Set(k, shell.Expand(v, m.opts.Environ))
		}
		t := &headerTransport{base: http.DefaultTransport, origin: originOf(u), headers: headers}
		t.dropped = func(to origin) {
			m.log.Warn("a redirect to another origin: the entry's headers (its credentials) were not sent there",
				zap.String("server", s.name), zap.Strings("headers", headerNames(headers)),
				zap.String("from", m.opts.Redactor.String(t.origin.String())), zap.String("to", m.opts.Redactor.String(to.String())))
		}
		return &sdk.StreamableClientTransport{
			Endpoint:   endpoint,
			HTTPClient: &http.Client{Transport: t},
			MaxRetries: 2,
		}, nil, nil
	}
	dir, err := m.workDir(s.cfg)
	if err != nil {
		return nil, nil, err
	}
	return startProcess(ctx, s.cfg, dir, m.opts.Environ, m.opts.Redactor)
}

// headerTransport adds the entry's headers to the requests to the entry's
// own origin, and to no other. Go's client drops credentials when it
// follows a redirect to another host; a transport that added the headers
// to every request would put them back, for whoever the server redirects
// to. A request to another origin (a redirect followed) goes without them,
// and dropped is told, once per origin.
type headerTransport struct {
	base    http.RoundTripper
	origin  origin
	headers http.Header
	dropped func(to origin)

	mu   sync.Mutex
	told map[origin]bool
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) == 0 {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	if to := originOf(r.URL); to != t.origin {
		for k := range t.headers {
			r.Header.Del(k)
		}
		t.mu.Lock()
		first := !t.told[to]
		if first {
			if t.told == nil {
				t.told = map[origin]bool{}
			}
			t.told[to] = true
		}
		t.mu.Unlock()
		if first && t.dropped != nil {
			t.dropped(to)
		}
		return t.base.RoundTrip(r)
	}
	for k, vs := range t.headers {
		r.Header[k] = vs
	}
	return t.base.RoundTrip(r)
}

// origin is a URL's scheme, host and port (the default port of the scheme
// when it names none), as browsers compare them.
type origin struct{ scheme, host, port string }

func originOf(u *url.URL) origin {
	o := origin{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: u.Port()}
	if o.port == "" {
		switch o.scheme {
		case "http":
			o.port = "80"
		case "https":
			o.port = "443"
		}
	}
	return o
}

func (o origin) String() string {
	return o.scheme + "://" + net.JoinHostPort(o.host, o.port)
}

// headerNames are the names of the headers, sorted.
func headerNames(h http.Header) []string {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
