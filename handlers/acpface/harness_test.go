//go:build unix

package acpface_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/handlers/acpface"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/rpc"
)

// client is an ACP client over a real directory: it reads and writes the
// files agentls asks for, runs its commands in terminals, and answers
// permission requests with answer (reject when nil). Everything it is
// asked is recorded.
type client struct {
	acp.UnimplementedClient
	root string

	mu          sync.Mutex
	updates     []acp.SessionNotification
	permissions []acp.RequestPermissionRequest
	calls       []string // methods called, in order
	writes      []acp.WriteTextFileRequest
	answer      func(*acp.RequestPermissionRequest) acp.PermissionOutcome
	asked       chan *acp.RequestPermissionRequest // every permission request, when set
	permCtx     chan error                         // why a permission request's context ended, when it did
	terminals   map[string]*terminal
	termSeen    chan string   // every terminal created, when set
	termGate    chan struct{} // when set, a terminal/create is answered once it is closed
	nextTerm    int
	changed     chan struct{} // closed and renewed at every update
}

// lockedBuffer is a command's output, written by its process's copier and
// read by terminal/output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type terminal struct {
	cmd      *exec.Cmd
	out      lockedBuffer
	done     chan struct{}
	exit     int
	killed   bool
	released bool
}

func newClient(root string) *client {
	return &client{root: root, terminals: map[string]*terminal{}, changed: make(chan struct{})}
}

func (c *client) record(method string) {
	c.mu.Lock()
	c.calls = append(c.calls, method)
	c.mu.Unlock()
}

func (c *client) SessionUpdate(_ context.Context, p *acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, *p)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

func (c *client) ReadTextFile(_ context.Context, p *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	c.record(acp.MethodFSReadTextFile)
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return nil, api.Errorf(acp.CodeResourceNotFound, "%v", err)
	}
	return &acp.ReadTextFileResponse{Content: string(b)}, nil
}

func (c *client) WriteTextFile(_ context.Context, p *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	c.record(acp.MethodFSWriteTextFile)
	c.mu.Lock()
	c.writes = append(c.writes, *p)
	c.mu.Unlock()
	if err := os.WriteFile(p.Path, []byte(p.Content), 0o644); err != nil {
		return nil, err
	}
	return &acp.WriteTextFileResponse{}, nil
}

func (c *client) RequestPermission(ctx context.Context, p *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	c.record(acp.MethodSessionRequestPermission)
	c.mu.Lock()
	c.permissions = append(c.permissions, *p)
	answer, asked, permCtx := c.answer, c.asked, c.permCtx
	c.mu.Unlock()
	if asked != nil {
		asked <- p
	}
	if answer == nil {
		// Waits for the person, who never comes: only the end of the
		// request (its $/cancel_request) ends it.
		<-ctx.Done()
		if permCtx != nil {
			permCtx <- context.Cause(ctx)
		}
		return &acp.RequestPermissionResponse{Outcome: acp.Cancelled}, nil
	}
	return &acp.RequestPermissionResponse{Outcome: answer(p)}, nil
}

func (c *client) CreateTerminal(_ context.Context, p *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	c.record(acp.MethodTerminalCreate)
	cmd := exec.Command(p.Command, p.Args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // killed as a group, as a terminal's job is
	cmd.Dir = p.Cwd
	cmd.Env = os.Environ()
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	t := &terminal{cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &t.out, &t.out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		c.mu.Lock()
		t.exit = cmd.ProcessState.ExitCode()
		c.mu.Unlock()
		close(t.done)
	}()
	c.mu.Lock()
	c.nextTerm++
	id := "term-" + strconv.Itoa(c.nextTerm)
	c.terminals[id] = t
	seen, gate := c.termSeen, c.termGate
	c.mu.Unlock()
	if seen != nil {
		seen <- id
	}
	if gate != nil {
		<-gate // the answer waits for the test
	}
	return &acp.CreateTerminalResponse{TerminalID: id}, nil
}

func (c *client) terminal(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terminals[id]
	if t == nil {
		return nil, api.Errorf(acp.CodeResourceNotFound, "no terminal %s", id)
	}
	return t, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, p *acp.TerminalRequest) (*acp.WaitForTerminalExitResponse, error) {
	c.record(acp.MethodTerminalWaitForExit)
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	code := t.exit
	return &acp.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (c *client) TerminalOutput(_ context.Context, p *acp.TerminalRequest) (*acp.TerminalOutputResponse, error) {
	c.record(acp.MethodTerminalOutput)
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	res := &acp.TerminalOutputResponse{}
	select {
	case <-t.done:
		c.mu.Lock()
		code := t.exit
		c.mu.Unlock()
		res.ExitStatus = &acp.TerminalExitStatus{ExitCode: &code}
	default:
	}
	res.Output = t.out.String()
	return res, nil
}

func (c *client) KillTerminal(_ context.Context, p *acp.TerminalRequest) (*acp.Empty, error) {
	c.record(acp.MethodTerminalKill)
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	t.killed = true
	c.mu.Unlock()
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	return &acp.Empty{}, nil
}

func (c *client) ReleaseTerminal(_ context.Context, p *acp.TerminalRequest) (*acp.Empty, error) {
	c.record(acp.MethodTerminalRelease)
	t, err := c.terminal(p.TerminalID)
	if err != nil {
		return nil, err
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	c.mu.Lock()
	t.released = true
	c.mu.Unlock()
	return &acp.Empty{}, nil
}

// seen returns a copy of the updates so far.
func (c *client) seen() []acp.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.SessionNotification(nil), c.updates...)
}

// called reports how many times method was called.
func (c *client) called(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, m := range c.calls {
		if m == method {
			n++
		}
	}
	return n
}

// await waits until an update satisfies cond and returns it.
func (c *client) await(t *testing.T, what string, cond func(acp.SessionUpdate) bool) acp.SessionUpdate {
	t.Helper()
	ctx := testkit.Context(t)
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.updates); i++ {
			if cond(c.updates[i].Update) {
				u := c.updates[i].Update
				c.mu.Unlock()
				return u
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no update %s", what)
		}
	}
}

// env is agentls acp served in-process over real OS pipes, with c as its
// client.
type env struct {
	root   string
	client *client
	agent  *acp.AgentConn
	conn   *rpc.Conn
	done   chan int
}

type opts struct {
	files  map[string]string
	script string            // the scripted model's script (docs/MODELS.md); "" for none
	env    map[string]string // the environment agentls reads its model from
	// meta are initialize's _meta.agentls over {"commands":"allow","maxWorkers":1}.
	meta map[string]any
	caps *acp.ClientCapabilities // nil: fs and terminal
}

var fullCaps = acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}

// start serves a workspace of files with the scripted model and connects
// a client; initialize is not sent.
func start(t testing.TB, o opts) *env {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, o.files)
	vars := map[string]string{}
	if o.script != "" {
		sp := filepath.Join(t.TempDir(), "script.json")
		if err := os.WriteFile(sp, []byte(o.script), 0o644); err != nil {
			t.Fatal(err)
		}
		vars["AGENTLS_MODEL"] = "script:" + sp
	}
	for k, v := range o.env {
		vars[k] = v
	}
	e := &env{root: root, client: newClient(root), done: make(chan int, 1)}
	return e.serve(t, vars)
}

func (e *env) serve(t testing.TB, vars map[string]string) *env {
	t.Helper()
	ar, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cr, aw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		e.done <- acpface.Serve(context.Background(), ar, aw, acpface.Options{
			Version: "test", Base: api.DefaultSettings(), Getenv: func(k string) string { return vars[k] },
		})
		_ = aw.Close()
	}()
	e.conn = acp.NewConn(acp.NewStream(cr, cw, nil), nil)
	served := make(chan struct{})
	go func() { _ = e.conn.Serve(context.Background(), acp.ServeClient(e.client, nil)); close(served) }()
	e.agent = acp.NewAgentConn(e.conn, acp.DefaultTimeouts())
	t.Cleanup(func() {
		_ = cw.Close() // the end of agentls's input: it stops and exits
		select {
		case <-e.done:
		case <-time.After(30 * time.Second):
			t.Error("agentls acp did not end after its input did")
		}
		<-served
		_ = cr.Close()
	})
	return e
}

// initialize sends initialize with caps and _meta.agentls.
func (e *env) initialize(t *testing.T, o opts) *acp.InitializeResponse {
	t.Helper()
	meta := map[string]any{"commands": "allow", "maxWorkers": 1}
	for k, v := range o.meta {
		meta[k] = v
	}
	caps := fullCaps
	if o.caps != nil {
		caps = *o.caps
	}
	res, err := e.agent.Initialize(testkit.Context(t), &acp.InitializeRequest{
		ProtocolVersion: 1, ClientCapabilities: caps, ClientInfo: &acp.Implementation{Name: "go-test", Version: "1"},
		Meta: acp.MetaOf(acp.MetaKey, meta),
	})
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

// ready starts agentls, initializes it and opens a session on the root.
func ready(t *testing.T, o opts) (*env, string) {
	t.Helper()
	e := start(t, o)
	e.initialize(t, o)
	s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	return e, s.SessionID
}

func (e *env) prompt(t *testing.T, session string, blocks ...acp.ContentBlock) (*acp.PromptResponse, error) {
	t.Helper()
	return e.agent.Prompt(testkit.Context(t), &acp.PromptRequest{SessionID: session, Prompt: blocks})
}

// promptInBackground sends a prompt from a goroutine of its own, for the
// test to act while it runs; its answer comes on the channel.
func (e *env) promptInBackground(t *testing.T, session string, blocks ...acp.ContentBlock) <-chan *acp.PromptResponse {
	done := make(chan *acp.PromptResponse, 1)
	go func() {
		res, err := e.prompt(t, session, blocks...)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	return done
}

func (e *env) read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func codeOf(err error) api.Code {
	var we *api.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

// script builds a scripted model's script: agent → its turns, each turn
// a text and tool calls given as name, arguments pairs.
func script(agents map[string][]turn) string {
	out := map[string]any{}
	for name, turns := range agents {
		var list []any
		for _, tr := range turns {
			m := map[string]any{}
			if tr.text != "" {
				m["text"] = tr.text
			}
			if tr.thinking != "" {
				m["thinking"] = tr.thinking
			}
			if tr.delayMs > 0 {
				m["delayMs"] = tr.delayMs
			}
			if tr.usage != nil {
				m["usage"] = tr.usage
			}
			var calls []any
			for _, c := range tr.calls {
				calls = append(calls, map[string]any{"name": c.name, "arguments": c.args})
			}
			if calls != nil {
				m["toolCalls"] = calls
			}
			list = append(list, m)
		}
		out[name] = list
	}
	b, err := json.Marshal(map[string]any{"agents": out})
	if err != nil {
		panic(err)
	}
	return string(b)
}

type turn struct {
	text     string
	thinking string
	calls    []call
	delayMs  int
	usage    map[string]int
}

type call struct {
	name string
	args map[string]any
}

// onePlan is the coordinator's turn that plans one subtask.
func onePlan(content string) []turn {
	return []turn{{calls: []call{{"plan", map[string]any{"subtasks": []any{map[string]any{"id": "1", "content": content}}}}}}}
}

func finish(summary string) turn {
	return turn{calls: []call{{"finish", map[string]any{"summary": summary}}}}
}

// of returns the updates of type T, in order.
func of[T acp.SessionUpdate](updates []acp.SessionNotification) []T {
	var out []T
	for _, n := range updates {
		if u, ok := n.Update.(T); ok {
			out = append(out, u)
		}
	}
	return out
}

func metaOf(t *testing.T, m acp.Meta) map[string]any {
	t.Helper()
	var v map[string]any
	if _, err := m.Get(acp.MetaKey, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

var _ = fmt.Sprint
