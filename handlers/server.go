// Package handlers is agentls's LSP face: the lifecycle, capability
// negotiation and settings of docs/PROTOCOL.md §2, and one small function per
// agent/* method that validates its params and hands over to the package
// that owns the work. No business logic lives here.
//
// Every method is registered in one table (methods, below). A method not in
// the table answers -32601; an unknown notification is ignored, as is a
// workspace/didChangeConfiguration without agentls settings. A request's
// params are decoded once, before its method runs (-32602 naming the field
// when they do not fit), and errors become codes only here (§7).
//
// Ordering is the connection's (rpc.Conn): the lifecycle is checked in
// arrival order on the read loop (Gate), requests then run concurrently,
// each once the notifications before it have been handled, notifications
// one at a time in order. A request that arrives while
// initialize is being answered waits for it. A Server is safe for concurrent
// use.
package handlers

import (
	"context"
	"encoding/json"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/rpc"
)

// Options configure a Server.
type Options struct {
	// Version is reported as serverInfo.version.
	Version string
	// Cwd is the workspace root when the client names none.
	Cwd string
	// Base are the settings initializationOptions are applied over
	// (defaults, plus --zone / --deny from the command line).
	Base api.Settings
	// Log receives the server's logs; nil discards them.
	Log *zap.Logger
	// Record, when set, records every model answer into this file as a
	// script (docs/MODELS.md; `agentls serve --record`).
	Record string
	// Getenv reads the environment for the model of docs/MODELS.md (nil:
	// os.Getenv).
	Getenv func(string) string
	// WriteTimeout is how long a write to the editor may make no progress
	// before agentls gives up on it: the running tasks are interrupted and
	// Serve returns ExitEditorGone (0: never; `agentls serve
	// --write-timeout`, 5 minutes by default).
	WriteTimeout time.Duration
	// Redactor knows the secrets (nil: those of os.Environ()); the API keys
	// read through Getenv are added to it. No known secret reaches the
	// logs, the editor, the model, the trace, the sessions or a recording,
	// and commands run without them (package redact).
	Redactor *redact.Redactor

	secured bool // Redactor set and Log wrapped

	// bridgeExecutable is the agentls binary the bridge's entries start
	// (tests; "": this process's executable).
	bridgeExecutable string
	// onServer is told the Server Serve made (tests).
	onServer func(*Server)
}

// secure fills in the Redactor, teaches it the model keys and wraps the
// logger with it, once (core.Secure).
func (o *Options) secure() {
	if o.secured {
		return
	}
	o.secured = true
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	o.Log, o.Redactor = core.Secure(o.Log, o.Redactor, o.Getenv)
}

// Server serves one connection: one editor, one workspace.
type Server struct {
	opts     Options
	log      *zap.Logger
	conn     rpc.Caller
	editor   *rpc.Editor
	notifier *rpc.Notifier
	events   *events // the tasks' events, as notifications

	mu       sync.Mutex
	state    lifecycle
	ready    chan struct{} // closed when initialize has succeeded
	settings api.Settings
	root     string
	client   api.ClientInfo

	ws     *core.Workspace // opened by initialize
	closed bool

	exit     chan int // receives the exit code when exit arrives
	exitOnce sync.Once

	workMu sync.Mutex
	tasks  *core.Tasks // the task engine, made on the first agent/run

	// life ends when the server closes; calls are the reverse calls the
	// server makes on its own (the file watcher's registration).
	life    context.Context
	endLife context.CancelFunc
	calls   sync.WaitGroup
}

// New returns a Server that will talk back to the editor over conn.
func New(conn rpc.Caller, opts Options) *Server {
	opts.secure()
	log := opts.Log
	if opts.Base.MaxWorkers == 0 {
		opts.Base = api.DefaultSettings()
	}
	s := &Server{
		opts:     opts,
		log:      log,
		conn:     conn,
		notifier: rpc.NewNotifier(conn),
		ready:    make(chan struct{}),
		settings: opts.Base,
		exit:     make(chan int, 1),
	}
	s.life, s.endLife = context.WithCancel(context.Background())
	s.events = newEvents(s)
	s.editor = rpc.NewEditor(conn, api.Caps{}, opts.Base.Timeouts)
	return s
}

type method struct {
	// inline marks a call that is cheap and never waits: once initialized,
	// it runs on the read loop (rpc.InlineHandler).
	inline bool
	// call handles a request; nil for a notification-only method.
	call handler
	// note handles a notification; nil for a request-only method.
	note func(s *Server, ctx context.Context, params json.RawMessage)
}

// handler answers a request from its raw params.
type handler func(s *Server, ctx context.Context, params json.RawMessage) (any, error)

// call adapts fn, a method that takes its params decoded, to the method
// table: the params are decoded into P first, and params that do not fit
// answer -32602 naming the field, without calling fn.
func call[P, R any](fn func(s *Server, ctx context.Context, p P) (R, error)) handler {
	return func(s *Server, ctx context.Context, raw json.RawMessage) (any, error) {
		var p P
		if err := rpc.DecodeParams(raw, &p); err != nil {
			return nil, err
		}
		res, err := fn(s, ctx, p)
		if err != nil {
			return nil, err
		}
		return res, nil
	}
}

// withService runs fn on a service that open makes on first use (the task
// engine, the tracking) and turns the errors fn returns into the codes of
// docs/PROTOCOL.md §7 with codes; an error of open is answered as it is.
func withService[S, R any](method string, open func() (S, error), codes func(method string, err error) error, fn func(S) (R, error)) (R, error) {
	var zero R
	svc, err := open()
	if err != nil {
		return zero, err
	}
	res, err := fn(svc)
	if err != nil {
		return zero, codes(method, err)
	}
	return res, nil
}

// methods is every method agentls serves; any other call answers -32601 and
// any other notification is ignored.
var methods = map[string]method{
	api.MethodInitialize:             {call: (*Server).initialize},
	api.MethodInitialized:            {note: (*Server).initializedNote},
	api.MethodShutdown:               {call: (*Server).shutdown},
	api.MethodExit:                   {note: (*Server).exitNote},
	api.MethodDidChangeConfiguration: {note: (*Server).didChangeConfiguration},
	api.MethodSetTrace:               {note: func(*Server, context.Context, json.RawMessage) {}},
	api.MethodDidChangeWatchedFiles:  {note: (*Server).didChangeWatchedFiles},
	api.MethodDidSave:                {note: (*Server).didTextDocument},
	api.MethodDidOpen:                {note: (*Server).didTextDocument},
	api.MethodDidClose:               {note: (*Server).didTextDocument},
	api.MethodDidChange:              {note: func(*Server, context.Context, json.RawMessage) {}},
	api.MethodDidChangeDiagnostics:   {note: (*Server).didChangeDiagnostics},
	api.MethodCodeGraph:              {call: (*Server).codeGraph},
	api.MethodWorkDoneProgressCancel: {note: (*Server).workDoneProgressCancel},
	api.MethodPing:                   {call: (*Server).ping, inline: true},
	api.MethodHeatSnapshot:           {call: call((*Server).heatSnapshot)},
	api.MethodTrace:                  {call: call((*Server).trace)},
	api.MethodSessions:               {call: call((*Server).sessions)},
	api.MethodSession:                {call: call((*Server).session)},
	api.MethodDeleteSession:          {call: call((*Server).deleteSession)},
	api.MethodIntents:                {call: call((*Server).intents)},
	api.MethodModels:                 {call: call((*Server).models)},
	api.MethodCheckModel:             {call: call((*Server).checkModel)},
	api.MethodRun:                    {call: call((*Server).run)},
	api.MethodStop:                   {call: call((*Server).stop)},
	api.MethodAddSubtask:             {call: call((*Server).addSubtask)},
	api.MethodRemoveSubtask:          {call: call((*Server).removeSubtask)},
	api.MethodSkipSubtask:            {call: call((*Server).skipSubtask)},
	api.MethodUndo:                   {call: call((*Server).undo)},
	api.MethodMCPServers:             {call: call((*Server).mcpServers)},
	api.MethodEngines:                {call: call((*Server).enginesList)},
}

// Exit receives the process exit code once the client sent exit (0 after
// shutdown, 1 otherwise).
func (s *Server) Exit() <-chan int { return s.exit }

// ShutDown reports whether shutdown was received: it decides the exit code
// when the input ends without exit.
func (s *Server) ShutDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateShutdown
}

// Editor is the editor of this connection (for the services).
func (s *Server) Editor() *rpc.Editor { return s.editor }

// Settings returns the settings in force.
func (s *Server) Settings() api.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// Root returns the workspace root (empty before initialize).
func (s *Server) Root() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.root
}

// Gate implements rpc.Handler: the lifecycle checks of docs/PROTOCOL.md §2, made in
// arrival order on the read loop.
func (s *Server) Gate(req *rpc.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := req.Method()
	if name == api.MethodExit {
		return nil // always accepted; its code depends on the state
	}
	switch s.state {
	case stateNew:
		if name == api.MethodInitialize {
			s.state = stateInitializing
			return nil
		}
		if req.IsCall() {
			return api.Errorf(api.CodeNotInitialized, "%s: the server is not initialized; send initialize first", name)
		}
		return errNotInitialized
	case stateInitializing, stateInitialized:
		if name == api.MethodInitialize {
			return api.Errorf(api.CodeInvalidRequest, "initialize: the server is already initialized")
		}
		if name == api.MethodShutdown {
			s.state = stateShutdown
		}
		return nil
	default: // stateShutdown
		if req.IsCall() {
			return api.Errorf(api.CodeInvalidRequest, "%s: the server is shutting down; only exit is accepted", name)
		}
		return errShuttingDown
	}
}

// Inline implements rpc.InlineHandler: the methods marked inline run on the
// read loop once initialize has been answered.
func (s *Server) Inline(req *rpc.Request) bool {
	m, ok := methods[req.Method()]
	if !ok || !m.inline {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateInitialized
}

// HandleCall implements rpc.Handler.
func (s *Server) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	m, ok := methods[req.Method()]
	if !ok || m.call == nil {
		return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", req.Method())
	}
	if req.Method() != api.MethodInitialize {
		if err := s.awaitReady(ctx); err != nil {
			return nil, err
		}
	}
	s.log.Debug("request", zap.String("method", req.Method()), zap.String("id", req.ID()))
	return m.call(s, ctx, req.Params())
}

// HandleNotification implements rpc.Handler.
func (s *Server) HandleNotification(ctx context.Context, req *rpc.Request) {
	m, ok := methods[req.Method()]
	if !ok || m.note == nil {
		s.log.Debug("notification ignored", zap.String("method", req.Method()))
		return
	}
	m.note(s, ctx, req.Params())
}
