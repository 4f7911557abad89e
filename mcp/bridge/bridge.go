// Package bridge serves the editor's tools over MCP to an external agent the
// sidecar runs (docs/MCP.md, the bridge): reading the editor's buffers,
// writing and editing through the editing pipeline, running a command with
// its approval, each as the subtask the agent works on.
//
// The external agent starts `agentls mcp` (Relay) as a stdio MCP server.
// The relay connects to the sidecar's unix socket, presents the token of its
// grant, and from then on carries MCP's newline-delimited JSON-RPC both
// ways; the sidecar serves the MCP session (Listener) and hands each tool
// call to its Host, which runs it as that subtask's worker would.
//
// Trust (docs/ARCHITECTURE.md): the socket is in a directory only the user
// may enter; on Linux a connection is refused unless its process belongs
// to the user and descends from the sidecar; and it is refused without a
// token the sidecar granted for a running subtask, which it gave only in the
// environment of the entry it handed to its child. A token acts as its
// subtask alone, and only while that subtask runs.
//
// Guarantees: a Listener listens only from its first Open; every connection
// ends when its grant is revoked or the Listener closes; every goroutine it
// starts has ended when Close returns. It is safe for concurrent use.
package bridge

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"log/slog"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

// The variables of the entry's environment that tell `agentls mcp` where
// to connect and what to present.
const (
	EnvSocket = "AGENTLS_MCP_SOCKET"
	EnvToken  = "AGENTLS_MCP_TOKEN"
)

// handshakeTimeout bounds the relay's first line and the answer to it.
const handshakeTimeout = 10 * time.Second

// Host runs the bridged tool calls: *workforce.Engine satisfies it.
type Host interface {
	// BridgeCall runs one call as the subtask's worker would. text is
	// what the agent is given, isError a failure of the tool; err means
	// the call could not run (the subtask ended, an unknown tool).
	BridgeCall(ctx context.Context, taskID, subtaskID, tool string, args json.RawMessage) (text string, isError bool, err error)
}

// Options configure a Listener.
type Options struct {
	// Dir is where the socket goes: the state directory's bridge/. When
	// the path would be too long for a unix socket, a private directory
	// in the system's temporary directory is used (and removed at Close).
	Dir string
	// Executable is the agentls binary the entries start (default: this
	// process's executable).
	Executable string
	// Version is the server version the MCP session reports.
	Version string
	Log     *zap.Logger
	// Redactor learns every token granted: none is ever logged.
	Redactor *redact.Redactor
}

// toolsTimeout bounds the listing of a grant's tools at a connection.
const toolsTimeout = 60 * time.Second

// grant is one token's access.
type grant struct {
	taskID, subtaskID string
	// tools lists the tools it serves (names, descriptions, schemas) when
	// its agent connects; ctx bounds what listing them waits for (MCP
	// servers that start on their first need).
	tools func(ctx context.Context) []api.MCPTool
	conns map[net.Conn]struct{}
}

// Listener is the sidecar's end of the bridge.
type Listener struct {
	opts Options
	log  *zap.Logger

	life   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	host    Host
	ln      net.Listener
	path    string
	tempDir string
	grants  map[[32]byte]*grant // by sha256 of the token
	conns   map[net.Conn]struct{}
	closed  bool
}

// New returns a Listener; it listens from its first Open. host may be set
// later (SetHost), before the first Open.
func New(opts Options, host Host) *Listener {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	life, cancel := context.WithCancel(context.Background())
	return &Listener{opts: opts, log: opts.Log.Named("bridge"), host: host, life: life, cancel: cancel,
		grants: map[[32]byte]*grant{}, conns: map[net.Conn]struct{}{}}
}

// SetHost sets the Host: the engine is made after the Listener it is given.
func (l *Listener) SetHost(h Host) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.host = h
}

// ErrClosed is returned by Open after Close.
var ErrClosed = errors.New("the bridge is closed")

// Open grants the external agent of a subtask access to the bridge, to the
// tools tools lists, and returns the entry that starts `agentls mcp` for it
// ({"command", "args", "env"}, to hand to the agent as an MCP server).
// revoke ends the access and the agent's connections; call it when the
// subtask ends.
func (l *Listener) Open(taskID, subtaskID string, tools func(ctx context.Context) []api.MCPTool) (api.MCPServer, func(), error) {
	if tools == nil {
		return api.MCPServer{}, nil, errors.New("bridge: a grant needs its tools")
	}
	if err := l.listen(); err != nil {
		return api.MCPServer{}, nil, err
	}
	exe := l.opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return api.MCPServer{}, nil, fmt.Errorf("bridge: the agentls executable: %w", err)
		}
	}
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return api.MCPServer{}, nil, fmt.Errorf("bridge: %w", err)
	}
	token := hex.EncodeToString(raw[:])
	l.opts.Redactor.AddValue(EnvToken, token)
	key := sha256.Sum256([]byte(token))
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return api.MCPServer{}, nil, ErrClosed
	}
	g := &grant{taskID: taskID, subtaskID: subtaskID, tools: tools, conns: map[net.Conn]struct{}{}}
	l.grants[key] = g
	path := l.path
	l.mu.Unlock()
	l.log.Debug("granted", zap.String("task", taskID), zap.String("subtask", subtaskID))
	var once sync.Once
	revoke := func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.grants, key)
			conns := g.conns
			g.conns = nil
			l.mu.Unlock()
			for c := range conns {
				_ = c.Close()
			}
		})
	}
	return api.MCPServer{
		Command: exe,
		Args:    []string{"mcp"},
		Env:     map[string]string{EnvSocket: path, EnvToken: token},
	}, revoke, nil
}

// listen starts listening, once.
func (l *Listener) listen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.ln != nil {
		return nil
	}
	if l.host == nil {
		return errors.New("bridge: no host")
	}
	dir := l.opts.Dir
	name := strconv.Itoa(os.Getpid()) + ".sock"
	// sun_path holds 108 bytes on Linux, 104 on the BSDs.
	if dir == "" || len(filepath.Join(dir, name)) > 100 {
		d, err := os.MkdirTemp("", "agentls-bridge-")
		if err != nil {
			return fmt.Errorf("bridge: %w", err)
		}
		dir, l.tempDir = d, d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	path := filepath.Join(dir, name)
	_ = os.Remove(path) // a crashed sidecar of the same pid left it
	ln, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("bridge: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("bridge: %w", err)
	}
	l.ln, l.path = ln, path
	l.wg.Go(func() { l.accept(ln) })
	l.log.Info("listening", zap.String("socket", path))
	return nil
}

func (l *Listener) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if l.life.Err() == nil {
				l.log.Warn("accept failed; the bridge stops", zap.Error(err))
			}
			return
		}
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			c.Close()
			return
		}
		l.conns[c] = struct{}{}
		l.wg.Go(func() {
			l.serve(c)
			l.mu.Lock()
			delete(l.conns, c)
			l.mu.Unlock()
		})
		l.mu.Unlock()
	}
}

type hello struct {
	Bridge int    `json:"agentlsBridge"`
	Token  string `json:"token"`
}

type reply struct {
	OK    bool   `json:"ok,omitempty"`
	Error string `json:"error,omitempty"`
}

// serve checks one connection and serves its MCP session.
func (l *Listener) serve(c net.Conn) {
	defer c.Close()
	refuse := func(why string) {
		l.log.Warn("connection refused", zap.String("reason", why))
		b, _ := json.Marshal(reply{Error: why})
		_, _ = c.Write(append(b, '\n'))
	}
	if err := checkPeer(c); err != nil {
		refuse(err.Error())
		return
	}
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	r := bufio.NewReaderSize(c, 4096)
	line, err := r.ReadSlice('\n')
	if err != nil {
		refuse("no handshake line")
		return
	}
	var h hello
	if json.Unmarshal(line, &h) != nil || h.Bridge != 1 || h.Token == "" {
		refuse(`the first line must be {"agentlsBridge":1,"token":"…"}`)
		return
	}
	key := sha256.Sum256([]byte(h.Token))
	l.mu.Lock()
	g := l.grants[key]
	host := l.host
	if g != nil && g.conns != nil {
		g.conns[c] = struct{}{}
	}
	l.mu.Unlock()
	if g == nil || g.conns == nil {
		refuse("unknown or revoked token: the subtask it was granted for has ended")
		return
	}
	defer func() {
		l.mu.Lock()
		if g.conns != nil {
			delete(g.conns, c)
		}
		l.mu.Unlock()
	}()
	b, _ := json.Marshal(reply{OK: true})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})

	srv := sdk.NewServer(&sdk.Implementation{Name: "agentls", Version: l.opts.Version}, &sdk.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
	})
	lctx, lcancel := context.WithTimeout(l.life, toolsTimeout)
	tools := g.tools(lctx)
	lcancel()
	for _, t := range tools {
		name := t.Name
		srv.AddTool(&sdk.Tool{Name: name, Description: t.Description, InputSchema: t.InputSchema,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: t.ReadOnly}},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				text, isErr, err := host.BridgeCall(ctx, g.taskID, g.subtaskID, name, req.Params.Arguments)
				if err != nil {
					text, isErr = "Error: "+err.Error(), true
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isErr}, nil
			})
	}
	ctx, cancel := context.WithCancel(l.life)
	defer cancel()
	transport := &sdk.IOTransport{Reader: readCloser{r, c}, Writer: c}
	session, err := srv.Connect(ctx, transport, nil)
	if err != nil {
		l.log.Warn("MCP session not opened", zap.Error(err))
		return
	}
	// The session ends when the relay goes away, or the grant is revoked
	// or the Listener closes (both close c).
	stop := context.AfterFunc(ctx, func() { _ = session.Close() })
	defer stop()
	_ = session.Wait()
}

type readCloser struct {
	io.Reader
	c net.Conn
}

func (r readCloser) Close() error { return r.c.Close() }

// Close stops listening, ends every connection and waits for them.
func (l *Listener) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	ln, path, temp := l.ln, l.path, l.tempDir
	var conns []net.Conn
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.grants = map[[32]byte]*grant{}
	l.mu.Unlock()
	l.cancel()
	if ln != nil {
		ln.Close()
		_ = os.Remove(path)
	}
	for _, c := range conns {
		c.Close()
	}
	l.wg.Wait()
	if temp != "" {
		_ = os.RemoveAll(temp)
	}
}
