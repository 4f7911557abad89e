// Package headless is an editor without a screen: the Go client that drives
// a real agentls server over real pipes, as a subprocess or in-process. It
// answers the reverse calls of docs/PROTOCOL.md §4 from a real directory (open
// buffers it was given first, then the disk), applies workspace edits to
// files atomically and refuses stale versions, runs commands with a timeout,
// lets a test script every answer (approve, reject, never answer, answer
// slowly) and stop reading for a while (an editor whose main loop is busy),
// and awaits notifications by predicate with a deadline.
//
// `agentls run` and every end-to-end test are built on it, as gopls's
// integration tests are built on its fake editor.
//
// Every notification the server sends is kept, none dropped, numbered in
// arrival order (Notification.Seq); Notifications returns them in that
// order and Await sees each. Reverse calls are answered concurrently, each
// on its own goroutine, and recorded in arrival order (ReverseCalls); a
// workspace edit is checked and applied whole before the next read sees it
// (Workspace). An Editor is safe for concurrent use.
package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/rpc"
)

// Capabilities are what the editor advertises in initialize.
type Capabilities struct {
	ApplyEdit        bool
	DocumentChanges  bool
	ChangeAnnotation bool
	// ResourceOperations are the kinds of workspaceEdit.resourceOperations
	// ("create", "delete"); nil leaves the list out, as eglot 1.9 does.
	ResourceOperations []string
	WorkDoneProgress   bool
	ReadFile           bool
	RunCommand         bool
	Ask                bool
	// References and Definition declare agent/references and
	// agent/definition. This editor runs no language server: it answers
	// them null unless a test scripts an answer with Handle.
	References bool
	Definition bool
	// Diagnostics declares agent/diagnostics. No language server gives
	// this editor any: it answers that no document has diagnostics unless
	// a test scripts an answer with Handle, and sends
	// agent/didChangeDiagnostics when a test does (Notify).
	Diagnostics bool
}

// FullCapabilities is an editor that supports everything agentls can use.
func FullCapabilities() Capabilities {
	return Capabilities{ApplyEdit: true, DocumentChanges: true, ChangeAnnotation: true,
		ResourceOperations: []string{"create", "delete"},
		WorkDoneProgress:   true, ReadFile: true, RunCommand: true, Ask: true}
}

// ServeFunc runs a server in-process on in/out and returns its exit code;
// handlers.Serve has this shape (with its options bound).
type ServeFunc func(ctx context.Context, in io.Reader, out io.Writer) int

// Options configure an Editor.
type Options struct {
	// Root is the workspace directory. Required.
	Root string
	// Command starts the server as a subprocess, e.g. {"/path/agentls", "serve"}.
	Command []string
	// Env is the subprocess's environment (nil: inherited).
	Env []string
	// Serve runs the server in-process instead (Command must be empty).
	Serve ServeFunc
	// Stderr receives the subprocess's stderr (nil: kept and reported in
	// errors).
	Stderr io.Writer
	// Caps are advertised in initialize.
	Caps Capabilities
	// SkipUndeclaredResourceOps plays an editor such as eglot 1.9: a
	// CreateFile or DeleteFile whose kind Caps.ResourceOperations leaves
	// out is skipped and the edit still answered applied: true, and a text
	// edit to a missing file goes to a new, unsaved buffer. Without it such
	// an edit is refused (applied: false), as the LSP asks.
	SkipUndeclaredResourceOps bool
	// InitializationOptions are sent in initialize (nil: none).
	InitializationOptions any
	// ClientName is clientInfo.name (default "headless").
	ClientName string
	// NoInitialize leaves the lifecycle to the caller (Initialize).
	NoInitialize bool
	// Log receives the client's logs (nil: discarded).
	Log *zap.Logger
}

// Notification is a notification the server sent.
type Notification struct {
	Method string
	Params json.RawMessage
	// Seq is its position among every notification received (from 1).
	Seq int
}

// Decode decodes the params into v.
func (n Notification) Decode(v any) error { return json.Unmarshal(n.Params, v) }

// ReverseCall records a call the server made to the editor.
type ReverseCall struct {
	Method string
	Params json.RawMessage
}

// CallHandler answers one reverse call. It may block (to answer slowly or
// never); ctx ends when the server cancels the call or the editor closes.
type CallHandler func(ctx context.Context, params json.RawMessage) (any, error)

// Editor is a headless editor connected to one agentls server.
type Editor struct {
	opts Options
	root string
	ws   *Workspace // the files and open buffers the reverse calls see
	conn *rpc.Conn
	log  *zap.Logger

	proc     *shell.Proc // the server, when it is a subprocess
	stderr   *lockedWriter
	exitCode chan int // receives the server's exit code once
	exited   chan struct{}
	code     int

	served chan struct{}
	cancel context.CancelFunc
	out    io.WriteCloser // the server's input
	gate   *readGate      // PauseReading and ResumeReading

	mu        sync.Mutex
	notes     []Notification
	noteCond  chan struct{} // closed and replaced on every notification
	calls     []ReverseCall
	overrides map[string]CallHandler
	review    ReviewFunc
	init      *api.InitializeResult
}

// Start starts the server, connects to it and, unless NoInitialize is set,
// runs initialize and initialized.
func Start(ctx context.Context, opts Options) (*Editor, error) {
	if opts.Root == "" {
		return nil, errors.New("headless: Options.Root is required")
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("headless: %w", err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	if (len(opts.Command) == 0) == (opts.Serve == nil) {
		return nil, errors.New("headless: set exactly one of Options.Command and Options.Serve")
	}
	log := opts.Log
	if log == nil {
		log = zap.NewNop()
	}
	e := &Editor{
		opts:      opts,
		root:      root,
		ws:        NewWorkspace(root),
		log:       log,
		exitCode:  make(chan int, 1),
		exited:    make(chan struct{}),
		served:    make(chan struct{}),
		noteCond:  make(chan struct{}),
		overrides: map[string]CallHandler{},
	}
	e.ws.SetResourceOperations(opts.Caps.ResourceOperations, opts.SkipUndeclaredResourceOps)
	var in io.Reader
	var out io.WriteCloser
	if len(opts.Command) > 0 {
		in, out, err = e.spawn()
	} else {
		in, out = e.inProcess()
	}
	if err != nil {
		return nil, err
	}
	e.out = out
	e.gate = newReadGate(in)
	e.conn = rpc.NewConn(rpc.NewStream(e.gate, out, log), log)
	serveCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() {
		defer close(e.served)
		_ = e.conn.Serve(serveCtx, (*clientHandler)(e))
	}()
	if !opts.NoInitialize {
		if _, err := e.Initialize(ctx); err != nil {
			e.Close()
			return nil, err
		}
	}
	return e, nil
}

func (e *Editor) spawn() (io.Reader, io.WriteCloser, error) {
	// The server and everything it starts are killed with this process,
	// however it ends (shell.Proc). Its output pipe is ours: what it wrote
	// last is read even after it exited.
	var stderr io.Writer = e.opts.Stderr
	if stderr == nil {
		e.stderr = &lockedWriter{}
		stderr = e.stderr
	}
	p, err := shell.Start(shell.ProcSpec{Argv: e.opts.Command, Dir: e.root, Env: e.opts.Env, Stderr: stderr})
	if err != nil {
		return nil, nil, fmt.Errorf("headless: %w", err)
	}
	e.proc = p
	go func() {
		// Exited closes only once the output is read to its end (or the
		// editor closed it): every notification the server sent is
		// recorded before.
		<-e.served
		<-p.Exited()
		code := 0
		if err := p.Err(); err != nil {
			code = -1
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
		}
		e.code = code
		close(e.exited)
	}()
	return p.Stdout(), p.Stdin(), nil
}

func (e *Editor) inProcess() (io.Reader, io.WriteCloser) {
	toServerR, toServerW := io.Pipe()
	fromServerR, fromServerW := io.Pipe()
	go func() {
		code := e.opts.Serve(context.Background(), toServerR, fromServerW)
		_ = fromServerW.Close()
		_ = toServerR.Close()
		e.code = code
		close(e.exited)
	}()
	return fromServerR, toServerW
}

// Root is the workspace directory (symlinks resolved).
func (e *Editor) Root() string { return e.root }

// URI is the file:// URI of a workspace-relative path.
func (e *Editor) URI(rel string) string {
	return fileuri.FromPath(filepath.Join(e.root, filepath.FromSlash(rel)))
}

// Initialize sends initialize and initialized.
func (e *Editor) Initialize(ctx context.Context) (*api.InitializeResult, error) {
	params := map[string]any{
		"processId":  os.Getpid(),
		"clientInfo": map[string]any{"name": e.clientName(), "version": "1"},
		"rootUri":    fileuri.FromPath(e.root),
		"workspaceFolders": []map[string]any{
			{"uri": fileuri.FromPath(e.root), "name": filepath.Base(e.root)},
		},
		"capabilities": e.capabilities(),
	}
	if e.opts.InitializationOptions != nil {
		params["initializationOptions"] = e.opts.InitializationOptions
	}
	var res api.InitializeResult
	if err := e.Call(ctx, api.MethodInitialize, params, &res); err != nil {
		return nil, fmt.Errorf("headless: initialize: %w", err)
	}
	if err := e.Notify(ctx, api.MethodInitialized, struct{}{}); err != nil {
		return nil, fmt.Errorf("headless: initialized: %w", err)
	}
	e.mu.Lock()
	e.init = &res
	e.mu.Unlock()
	return &res, nil
}

func (e *Editor) clientName() string {
	if e.opts.ClientName != "" {
		return e.opts.ClientName
	}
	return "headless"
}

func (e *Editor) capabilities() map[string]any {
	c := e.opts.Caps
	caps := map[string]any{
		"workspace": map[string]any{
			"applyEdit": c.ApplyEdit,
			"workspaceEdit": func() map[string]any {
				we := map[string]any{"documentChanges": c.DocumentChanges}
				if c.ResourceOperations != nil {
					we["resourceOperations"] = c.ResourceOperations
				}
				if c.ChangeAnnotation {
					we["changeAnnotationSupport"] = map[string]any{"groupsOnLabel": true}
				}
				return we
			}(),
		},
		"window": map[string]any{
			"workDoneProgress": c.WorkDoneProgress,
			"showMessage":      map[string]any{"messageActionItem": map[string]any{"additionalPropertiesSupport": false}},
		},
		"experimental": map[string]any{
			"agent": map[string]any{"readFile": c.ReadFile, "runCommand": c.RunCommand, "ask": c.Ask,
				"references": c.References, "definition": c.Definition, "diagnostics": c.Diagnostics},
		},
	}
	return caps
}

// Call sends a request to the server and decodes the result. It returns
// once the notifications the server sent before its reply have been
// handled: after agent/run, the task's last update and its $/progress end
// have been seen. It must not be called from a notification's handling.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	if err := e.conn.Call(ctx, method, params, result); err != nil {
		return err
	}
	return e.conn.Settle(ctx)
}

// Notify sends a notification to the server.
func (e *Editor) Notify(ctx context.Context, method string, params any) error {
	return e.conn.Notify(ctx, method, params)
}

// Shutdown sends shutdown and exit and waits for the server to end. It
// returns the server's exit code.
func (e *Editor) Shutdown(ctx context.Context) (int, error) {
	if err := e.Call(ctx, api.MethodShutdown, nil, nil); err != nil {
		return -1, fmt.Errorf("headless: shutdown: %w", err)
	}
	if err := e.Notify(ctx, api.MethodExit, nil); err != nil {
		return -1, fmt.Errorf("headless: exit: %w", err)
	}
	return e.Wait(ctx)
}

// Wait waits for the server to end and returns its exit code.
func (e *Editor) Wait(ctx context.Context) (int, error) {
	select {
	case <-e.exited:
		e.Close()
		return e.code, nil
	case <-ctx.Done():
		return -1, fmt.Errorf("headless: waiting for the server to exit: %w", context.Cause(ctx))
	}
}

// Exited is closed when the server has ended.
func (e *Editor) Exited() <-chan struct{} { return e.exited }

// Close ends the connection and, if the server still runs, kills it (its
// whole process group). It waits for the editor's goroutines.
func (e *Editor) Close() {
	_ = e.out.Close() // the server sees the end of its input
	_ = e.conn.Close()
	e.cancel()
	<-e.served
	if e.proc != nil {
		select {
		case <-e.exited:
		case <-time.After(2 * time.Second):
		}
		// What it left behind goes too; an ended server is only reaped.
		e.proc.Stop(0)
		<-e.exited
	} else {
		<-e.exited
	}
}

// PauseReading stops the editor reading what the server writes, as an
// editor whose main loop is busy would: the server's output backs up in the
// pipe. What a read already under way takes from the pipe is held back too:
// no reply or notification is seen until ResumeReading (or Close). Exited
// and Wait, which wait for the output to be read to its end, wait for
// ResumeReading as well.
func (e *Editor) PauseReading() { e.gate.pause() }

// ResumeReading undoes PauseReading.
func (e *Editor) ResumeReading() { e.gate.resume() }

// readGate passes reads through to r, except while paused.
type readGate struct {
	r      io.Reader
	mu     sync.Mutex
	paused chan struct{} // non-nil while paused; closed by resume
	closed chan struct{}
	once   sync.Once
}

func newReadGate(r io.Reader) *readGate { return &readGate{r: r, closed: make(chan struct{})} }

func (g *readGate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused == nil {
		g.paused = make(chan struct{})
	}
}

func (g *readGate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused != nil {
		close(g.paused)
		g.paused = nil
	}
}

func (g *readGate) Read(p []byte) (int, error) {
	if err := g.wait(); err != nil {
		return 0, err
	}
	n, err := g.r.Read(p)
	if werr := g.wait(); werr != nil { // paused while the read was under way
		return 0, werr
	}
	return n, err
}

// wait returns once the gate is open, or os.ErrClosed once it is closed.
func (g *readGate) wait() error {
	g.mu.Lock()
	paused := g.paused
	g.mu.Unlock()
	if paused == nil {
		return nil
	}
	select {
	case <-paused:
		return nil
	case <-g.closed:
		return os.ErrClosed
	}
}

// Close releases a paused read and closes r when it can be closed.
func (g *readGate) Close() error {
	g.once.Do(func() { close(g.closed) })
	if c, ok := g.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stderr returns what the subprocess wrote to stderr when Options.Stderr was
// nil.
func (e *Editor) Stderr() string {
	if e.stderr == nil {
		return ""
	}
	e.stderr.mu.Lock()
	defer e.stderr.mu.Unlock()
	return e.stderr.buf.String()
}

// Pid is the server's process id (0 in-process).
func (e *Editor) Pid() int {
	if e.proc == nil {
		return 0
	}
	return e.proc.Pid()
}

// ---- scripting ----

// Handle replaces the editor's answer to a reverse call method. Use the
// helpers (Answer, Reject, NeverAnswer, Slowly) or write your own.
func (e *Editor) Handle(method string, h CallHandler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if h == nil {
		delete(e.overrides, method)
		return
	}
	e.overrides[method] = h
}

// Answer always replies with v.
func Answer(v any) CallHandler {
	return func(context.Context, json.RawMessage) (any, error) { return v, nil }
}

// Fail always replies with an error of the given code.
func Fail(code api.Code, msg string) CallHandler {
	return func(context.Context, json.RawMessage) (any, error) {
		return nil, &api.Error{Code: code, Message: msg}
	}
}

// NeverAnswer blocks until the server cancels the call (or the editor
// closes).
func NeverAnswer() CallHandler {
	return func(ctx context.Context, _ json.RawMessage) (any, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
}

// Slowly waits d (or until cancelled) before handing over to h.
func Slowly(d time.Duration, h CallHandler) CallHandler {
	return func(ctx context.Context, p json.RawMessage) (any, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return h(ctx, p)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// ChooseAction answers window/showMessageRequest with the action titled
// title (nil, as a dismissal, when there is none).
func ChooseAction(title string) CallHandler {
	return func(_ context.Context, raw json.RawMessage) (any, error) {
		var p api.ShowMessageRequestParams
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, err
		}
		for _, a := range p.Actions {
			if a.Title == title {
				return a, nil
			}
		}
		return nil, nil
	}
}

// ConfirmEdits decides edits whose annotations need confirmation (propose
// mode with changeAnnotationSupport): the refactor preview of a real editor.
// Without it such edits are refused, as a person who did not confirm them.
func (e *Editor) ConfirmEdits(f func(ctx context.Context, p api.ApplyWorkspaceEditParams) (bool, error)) {
	if f == nil {
		e.ReviewEdits(nil)
		return
	}
	e.ReviewEdits(func(ctx context.Context, p api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error) {
		ok, err := f(ctx, p)
		if err != nil || !ok {
			return nil, err
		}
		return &p.Edit, nil
	})
}

// ReviewFunc reviews an edit that needs confirmation and returns what the
// person accepted of it: the edit itself, a part of it (some text edits, as
// a refactor preview with boxes unticked or a per-hunk review), or nil for
// none.
type ReviewFunc func(ctx context.Context, p api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error)

// ReviewEdits is ConfirmEdits for an editor that lets the person accept
// part of an edit. What the review returns is applied, and the call is
// answered applied: true as real editors do, however little was taken;
// a nil edit is a rejection.
func (e *Editor) ReviewEdits(f ReviewFunc) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.review = f
}

// AcceptTextEdits is a review that accepts, of each TextDocumentEdit (and
// each file's `changes`), the text edits keep picks by the document's URI
// and the edit's index; the rest of the edit (creates, deletes) is
// accepted whole. A file left with no text edit is left out.
func AcceptTextEdits(keep func(uri string, i int) bool) ReviewFunc {
	return func(_ context.Context, p api.ApplyWorkspaceEditParams) (*api.WorkspaceEdit, error) {
		out := api.WorkspaceEdit{ChangeAnnotations: p.Edit.ChangeAnnotations}
		for uri, edits := range p.Edit.Changes {
			var kept []api.TextEdit
			for i, ed := range edits {
				if keep(uri, i) {
					kept = append(kept, ed)
				}
			}
			if len(kept) > 0 {
				if out.Changes == nil {
					out.Changes = map[string][]api.TextEdit{}
				}
				out.Changes[uri] = kept
			}
		}
		for _, dc := range p.Edit.DocumentChanges {
			if dc.TextDocumentEdit == nil {
				out.DocumentChanges = append(out.DocumentChanges, dc)
				continue
			}
			td := *dc.TextDocumentEdit
			td.Edits = nil
			for i, ed := range dc.TextDocumentEdit.Edits {
				if keep(td.TextDocument.URI, i) {
					td.Edits = append(td.Edits, ed)
				}
			}
			if len(td.Edits) > 0 {
				out.DocumentChanges = append(out.DocumentChanges, api.DocumentChange{TextDocumentEdit: &td})
			}
		}
		return &out, nil
	}
}

// OpenBuffer opens a buffer for a workspace-relative path with text that
// differs from the disk (unsaved edits). agent/readFile answers from it and
// workspace/applyEdit edits it (its version rising by one per edit).
func (e *Editor) OpenBuffer(rel, text string) { e.ws.OpenBuffer(rel, text) }

// Buffer returns an open buffer's text and version.
func (e *Editor) Buffer(rel string) (string, int32, bool) { return e.ws.Buffer(rel) }

// SetBufferVersion changes an open buffer's version, as further typing in a
// real editor would (to test stale edits).
func (e *Editor) SetBufferVersion(rel string, v int32) { e.ws.SetBufferVersion(rel, v) }

func (e *Editor) abs(rel string) string { return e.ws.Abs(rel) }

// ReverseCalls returns the reverse calls received so far, in order.
func (e *Editor) ReverseCalls() []ReverseCall {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]ReverseCall(nil), e.calls...)
}

// Notifications returns the notifications received so far, in order.
func (e *Editor) Notifications() []Notification {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Notification(nil), e.notes...)
}

// Await returns the first notification (received before or after the call)
// for which match returns true. It fails when ctx ends first; give ctx a
// deadline.
func (e *Editor) Await(ctx context.Context, match func(Notification) bool) (Notification, error) {
	seen := 0
	for {
		e.mu.Lock()
		notes := e.notes[seen:]
		wake := e.noteCond
		e.mu.Unlock()
		for _, n := range notes {
			if match(n) {
				return n, nil
			}
		}
		seen += len(notes)
		select {
		case <-wake:
		case <-e.served:
			return Notification{}, errors.New("headless: the connection ended before a matching notification arrived")
		case <-ctx.Done():
			return Notification{}, fmt.Errorf("headless: no matching notification among %d received: %w", seen, context.Cause(ctx))
		}
	}
}

// Method matches notifications of one method.
func Method(m string) func(Notification) bool {
	return func(n Notification) bool { return n.Method == m }
}

type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
