// Package mcp is agentls's MCP client: it starts the MCP servers of the
// mcpServers setting (docs/MCP.md), lists their tools under the names models
// accept (mcp__<server>__<tool>), calls them and turns their results into
// the text a tool result is given to the model as.
//
// Guarantees:
//   - A server is started once per Manager, on first need (the first Tools,
//     Call or Status with start), by one goroutine; callers that need it
//     meanwhile wait for that start, each bounded by its own context.
//   - A stdio server runs in a process group of its own, with the sidecar's
//     environment less every secret agentls knows of (package redact), plus
//     the entry's env. Stopping it closes its input, sends SIGTERM to the
//     group, and SIGKILL to the group after a grace: no child outlives it.
//   - A stdio server never runs in the workspace, nor is its program found
//     through it: it runs in the entry's cwd (absolute once expanded) or in
//     Options.Dir, a directory of agentls's own, and its program is looked
//     up in the absolute entries of PATH (shell.LookPath). So a repository's
//     server.py, node_modules or .bin are not what `python3 -m server` or
//     `npx pkg` run.
//   - Every server is told the workspace as its one MCP root (roots/list,
//     answered with Options.Root's file:// URI). The root is the Manager's
//     for its life: the capability is offered without listChanged, and
//     notifications/roots/list_changed is never sent.
//   - A streamable HTTP server's configured headers go only to the origin
//     (scheme, host, port) of its URL: a redirect to another origin is
//     followed without them, and the log says so.
//   - A server that ends without being stopped (a crash, a killed process, a
//     dropped HTTP session) fails the calls in flight with an error that
//     says so; the next need starts it again, once. A second crash leaves it
//     failed until its entry changes.
//   - notifications/tools/list_changed makes the Manager list the server's
//     tools again; Tools returns the new list once it has arrived.
//   - A call is bounded by its timeout and its context; when either ends,
//     notifications/cancelled is sent to the server (by the SDK) and the call
//     returns at once.
//   - Every goroutine the Manager starts has ended when Close returns.
//
// A Manager is safe for concurrent use. Nothing it logs or returns holds a
// secret the Redactor knows (the values of the entries' secret env names and
// credential headers are added to it).
package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/shell"
)

// Options configure a Manager.
type Options struct {
	// Dir is where a stdio server whose entry names no cwd runs: a
	// directory of agentls's own (the workspace's state directory's
	// "mcp"), never the workspace. It must be absolute; it is made, mode
	// 0700, when missing. Empty: a private temporary directory, made at
	// the first start and removed by Close.
	Dir string
	// Root is the workspace root, every server's one MCP root (roots/list
	// gives its file:// URI). Empty: the client offers no roots.
	Root string
	// Environ is the sidecar's environment ("NAME=value"); nil:
	// os.Environ(). Servers inherit it without its secrets; ${NAME} in an
	// entry is expanded from it.
	Environ []string
	// Redactor knows the secrets (nil: none).
	Redactor *redact.Redactor
	// Log receives the Manager's logs (nil: none).
	Log *zap.Logger
	// Version is sent as clientInfo.version.
	Version string
}

// Errors of Call. A caller gives their text to the model as a tool error.
var (
	// ErrUnknownTool: no server offers a tool of that name.
	ErrUnknownTool = errors.New("no MCP server offers this tool")
	// ErrUnavailable: the server could not be started or failed for good.
	ErrUnavailable = errors.New("the MCP server is not available")
	// ErrCrashed: the server stopped during the call.
	ErrCrashed = errors.New("the MCP server stopped during the call")
	// ErrTimeout: the call took longer than its timeout.
	ErrTimeout = errors.New("the MCP tool did not answer in time")
	// ErrClosed: the Manager is closed.
	ErrClosed = errors.New("the MCP client is closed")
)

// Result is what a tool call gave back: rendered as text for the model,
// and its images, which go to the models whose tool results take them
// (docs/MCP.md).
type Result struct {
	Text    string
	IsError bool
	Images  []Image
}

// Image is an image of a tool's result: its type as the server gave it,
// and its bytes.
type Image struct {
	MIMEType string
	Data     []byte
}

// Manager runs the MCP servers of one sidecar.
type Manager struct {
	opts Options
	log  *zap.Logger

	// life ends every start and watcher when the Manager closes.
	life     context.Context
	shutdown context.CancelFunc
	wg       sync.WaitGroup

	approving sync.Mutex // one ToolsApproved asks at a time

	mu      sync.Mutex
	servers map[string]*server
	timeout time.Duration // bounds a start
	closed  bool
	tmpDir  string // the private directory made when Options.Dir is empty

	// dial makes a server's transport; tests replace it.
	dial func(ctx context.Context, s *server) (sdk.Transport, *process, error)
}

// New returns a Manager without servers; Configure gives it some.
func New(opts Options) *Manager {
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	life, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opts: opts, log: opts.Log.Named("mcp"),
		life: life, shutdown: cancel,
		servers: map[string]*server{},
		timeout: time.Duration(api.DefaultSettings().Timeouts.MCPMs) * time.Millisecond,
	}
	m.dial = m.dialConfigured
	return m
}

// Configure sets the servers and the bound of a start. A server whose entry
// is unchanged keeps running; one whose entry changed or that is gone is
// stopped (its calls in flight fail), and a changed or new one starts on
// its next need, with its restart spent on nothing yet.
func (m *Manager) Configure(servers map[string]api.MCPServer, startTimeout time.Duration) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	if startTimeout > 0 {
		m.timeout = startTimeout
	}
	var stop []*server
	for name, s := range m.servers {
		if cfg, ok := servers[name]; !ok || !cfg.Equal(s.cfg) {
			stop = append(stop, s)
			delete(m.servers, name)
		}
	}
	for name, cfg := range servers {
		if m.servers[name] == nil {
			m.servers[name] = newServer(m, name, cfg)
			m.secrets(name, cfg)
		}
	}
	m.mu.Unlock()
	for _, s := range stop {
		s.remove()
	}
}

// secrets teaches the Redactor the secret values of an entry: env values
// whose name says they are secret, and credential headers (with the token
// of "Bearer …" on its own).
func (m *Manager) secrets(name string, cfg api.MCPServer) {
	r := m.opts.Redactor
	for k, v := range cfg.Env {
		if redact.IsSecretName(k) {
			r.AddValue("mcpServers."+name+".env."+k, shell.Expand(v, m.opts.Environ))
		}
	}
	for k, v := range cfg.Headers {
		if !credentialHeader(k) {
			continue
		}
		v = shell.Expand(v, m.opts.Environ)
		label := "mcpServers." + name + ".headers." + k
		r.AddValue(label, v)
		if _, tok, ok := strings.Cut(v, " "); ok {
			r.AddValue(label, strings.TrimSpace(tok))
		}
	}
}

// credentialHeader reports whether a header carries a credential:
// Authorization, Proxy-Authorization, Cookie, or a name that says so
// (X-Api-Key, X-Auth-Token, …).
func credentialHeader(name string) bool {
	n := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	switch n {
	case "AUTHORIZATION", "PROXY_AUTHORIZATION", "COOKIE":
		return true
	}
	return redact.IsSecretName(n) || strings.HasSuffix(n, "_KEY") || strings.Contains(n, "AUTH")
}

// list returns the servers, sorted by name.
func (m *Manager) list() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func (m *Manager) startTimeout() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.timeout
}

// Tools returns the tools of every server, sorted by name. Servers not
// started yet are started (all at once) and waited for, as long as ctx
// lasts; a server that fails to start is left out (Status says why).
func (m *Manager) Tools(ctx context.Context) []api.MCPTool {
	servers := m.list()
	if len(servers) == 0 {
		return nil
	}
	m.startAll(ctx, servers)
	var out []api.MCPTool
	for _, s := range servers {
		out = append(out, s.toolList()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Approve decides whether a server that has not started yet may start
// (ToolsApproved): nil lets it, an error says why not. It may ask the
// person.
type Approve func(ctx context.Context, name string, cfg api.MCPServer) error

// ToolsApproved is Tools where a server that has not started yet starts
// only once approve let it. Each server is asked about once: the answer
// holds until its entry changes (a refusal is its state's error in
// Status). Servers are asked about one at a time, in name order; an
// approve that failed because ctx ended decides nothing.
func (m *Manager) ToolsApproved(ctx context.Context, approve Approve) []api.MCPTool {
	servers := m.list()
	if len(servers) == 0 {
		return nil
	}
	var ok []*server
	m.approving.Lock()
	for _, s := range servers {
		s.mu.Lock()
		undecided := !s.allowed && s.declined == "" && s.state == api.MCPNotStarted && s.conn == nil
		declined := s.declined != ""
		s.mu.Unlock()
		if undecided {
			err := approve(ctx, s.name, s.cfg)
			if err != nil && ctx.Err() != nil {
				continue
			}
			s.mu.Lock()
			if err != nil {
				s.declined = err.Error()
				s.err = "not started: " + err.Error()
			} else {
				s.allowed = true
			}
			declined = err != nil
			s.mu.Unlock()
		}
		if !declined {
			ok = append(ok, s)
		}
	}
	m.approving.Unlock()
	m.startAll(ctx, ok)
	var out []api.MCPTool
	for _, s := range ok {
		out = append(out, s.toolList()...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// startAll starts every server that has not been started and waits until
// each start ended or ctx did.
func (m *Manager) startAll(ctx context.Context, servers []*server) {
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() { _, _ = s.connection(ctx, false) })
	}
	wg.Wait()
}

// Call calls the tool the model knows as name with args (a JSON object),
// bounded by timeout (0: none beyond ctx). A tool that ran and failed is a
// Result with IsError; an error means the call did not run to its end:
// ErrUnknownTool, ErrUnavailable, ErrCrashed, ErrTimeout, ctx's error, or a
// protocol error of the server, each wrapped with what happened.
func (m *Manager) Call(ctx context.Context, name string, args json.RawMessage, timeout time.Duration) (Result, error) {
	s, tool := m.lookup(name)
	if s == nil {
		// A server not started yet has no tool list: start the one the
		// name points at, then look again.
		var why error
		for _, c := range m.list() {
			if strings.HasPrefix(name, api.MCPToolPrefix+api.SanitizeMCPName(c.name)+"__") {
				if _, err := c.connection(ctx, false); err != nil {
					why = err
				}
			}
		}
		s, tool = m.lookup(name)
		if s == nil && why != nil {
			return Result{}, why
		}
	}
	if s == nil {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownTool, name)
	}
	return s.call(ctx, tool, args, timeout)
}

// Unavailable says why a tool name the model called is not offered: the
// error of the server the name belongs to when that server failed, nil when
// no server claims the name (then it is merely unknown).
func (m *Manager) Unavailable(name string) error {
	for _, s := range m.list() {
		if !strings.HasPrefix(name, api.MCPToolPrefix+api.SanitizeMCPName(s.name)+"__") {
			continue
		}
		s.mu.Lock()
		state, msg := s.state, s.err
		s.mu.Unlock()
		if state == api.MCPFailed {
			return fmt.Errorf("%w: %s", ErrUnavailable, msg)
		}
	}
	return nil
}

// lookup finds the server and the server's own name of a tool.
func (m *Manager) lookup(name string) (*server, string) {
	rest, ok := strings.CutPrefix(name, api.MCPToolPrefix)
	if !ok {
		return nil, ""
	}
	if rest == "" {
		return nil, ""
	}
	for _, s := range m.list() {
		if tool, ok := s.toolName(name); ok {
			return s, tool
		}
	}
	return nil, ""
}

// Status answers agent/mcpServers: every server's state and tools, sorted
// by name. With start, servers not started yet (but those the person
// declined to start, ToolsApproved) are started and waited for (as long as
// ctx lasts).
func (m *Manager) Status(ctx context.Context, start bool) api.MCPServersResult {
	servers := m.list()
	if start {
		// A server the person declined (ToolsApproved) stays stopped.
		var undeclined []*server
		for _, s := range servers {
			s.mu.Lock()
			if s.declined == "" {
				undeclined = append(undeclined, s)
			}
			s.mu.Unlock()
		}
		m.startAll(ctx, undeclined)
	}
	res := api.MCPServersResult{Servers: make([]api.MCPServerStatus, 0, len(servers))}
	for _, s := range servers {
		res.Servers = append(res.Servers, s.status())
	}
	return redact.Value(m.opts.Redactor, res)
}

// Close stops every server and waits for every goroutine of the Manager.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.servers = map[string]*server{}
	m.mu.Unlock()
	m.shutdown()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(s.remove)
	}
	wg.Wait()
	m.wg.Wait()
	m.removeTmpDir()
}

// goOwned runs f on a goroutine the Manager owns, unless it is closed.
func (m *Manager) goOwned(f func()) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.wg.Go(f)
	return true
}

// toolNames gives a server's tools the names the model sees:
// mcp__<server>__<tool>, sanitized (api.SanitizeMCPName). A name longer
// than api.MCPNameMax, or one that two tools would share, is cut and ends
// with _ and 6 hex digits of the sha256 of the server's and tool's names.
func toolNames(server string, tools []string) []string {
	base := api.MCPToolPrefix + api.SanitizeMCPName(server) + "__"
	out := make([]string, len(tools))
	seen := map[string]bool{}
	for i, t := range tools {
		n := base + api.SanitizeMCPName(t)
		if len(n) > api.MCPNameMax || seen[n] {
			sum := sha256.Sum256([]byte(server + "\x00" + t))
			suffix := "_" + hex.EncodeToString(sum[:3])
			n = n[:min(len(n), api.MCPNameMax-len(suffix))] + suffix
		}
		seen[n] = true
		out[i] = n
	}
	return out
}

// convertTools turns a server's tools into the model's view.
func convertTools(server string, tools []*sdk.Tool) []api.MCPTool {
	sorted := slices.Clone(tools)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	names := make([]string, len(sorted))
	for i, t := range sorted {
		names[i] = t.Name
	}
	exposed := toolNames(server, names)
	out := make([]api.MCPTool, len(sorted))
	for i, t := range sorted {
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		if desc == "" {
			desc = fmt.Sprintf("The tool %s of the MCP server %s.", t.Name, server)
		}
		out[i] = api.MCPTool{
			Name: exposed[i], Server: server, Tool: t.Name,
			Description: desc,
			InputSchema: inputSchema(t.InputSchema),
			ReadOnly:    t.Annotations != nil && t.Annotations.ReadOnlyHint,
		}
	}
	return out
}

// inputSchema is the tool's schema as JSON, always an object schema. It is
// handled as plain JSON, not read with jsonschema-go as the workforce's own
// schemas are: that library refuses drafts the providers take (draft-04's
// boolean exclusiveMinimum), and the schema is the server's to enforce.
func inputSchema(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	var probe map[string]any
	if json.Unmarshal(b, &probe) != nil || probe == nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	if _, ok := probe["type"]; !ok {
		probe["type"] = "object"
		if b2, err := json.Marshal(probe); err == nil {
			b = b2
		}
	}
	return b
}
