package acpface

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/rpc"
)

// Options configure a Server.
type Options struct {
	// Version is reported as agentInfo.version.
	Version string
	// Base are the settings initialize's _meta.agentls and session/new's
	// are applied over (defaults, plus --zone / --deny).
	Base api.Settings
	// Log receives the server's logs; nil discards them.
	Log *zap.Logger
	// Record, when set, records every model answer into this file as a
	// script (docs/MODELS.md; `agentls acp --record`).
	Record string
	// Getenv reads the environment for the models (nil: os.Getenv).
	Getenv func(string) string
	// WriteTimeout is how long a write to the client may make no progress
	// before agentls gives up on it (0: never; `--write-timeout`).
	WriteTimeout time.Duration
	// Redactor knows the secrets (nil: those of os.Environ()); the API keys
	// read through Getenv are added to it.
	Redactor *redact.Redactor

	secured bool // Redactor set and Log wrapped
}

// The exit codes of Serve (docs/ACP.md).
const (
	// ExitOK: the input ended, or the context did (a signal): ACP clients
	// end an agent either way.
	ExitOK = 0
	// ExitError: the input ended inside a message.
	ExitError = 1
	// ExitClientGone: the client read nothing agentls wrote for the write
	// timeout; the running prompts were interrupted.
	ExitClientGone = 3
)

// Serve runs the ACP face on in/out until the input ends (or ctx does, or
// the client stops reading) and returns the exit code: ExitOK, ExitError or
// ExitClientGone. Before it returns every prompt is stopped, every session
// written, every MCP server stopped, and what was sent flushed (within the
// drain bound).
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) int {
	opts.secure()
	log := opts.Log
	stream := acp.NewStream(in, out, log)
	stream.SetWriteTimeout(opts.WriteTimeout)
	conn := acp.NewConn(stream, log)
	srv := New(conn, opts)
	served := make(chan error, 1)
	go func() { served <- conn.Serve(ctx, acp.ServeAgent(srv, log)) }()

	code := ExitOK
	// However it ends, the editor is gone: the prompts still running are
	// interrupted, and their sessions say so, and how.
	why := "the editor closed agentls"
	select {
	case err := <-served:
		var truncated *rpc.TruncatedError
		switch {
		case errors.As(err, &truncated):
			log.Error("input ended inside a message", zap.Error(err))
			code = ExitError
		case err != nil:
			log.Warn("input ended with an error", zap.Error(err))
			code = ExitError
		default:
			log.Info("input ended")
		}
	case <-stream.Stalled():
		log.Error("the client stopped reading: nothing it was sent could be written for the write timeout; the running prompts are interrupted and agentls exits",
			zap.Duration("writeTimeout", opts.WriteTimeout), zap.Int("code", ExitClientGone))
		why = "the editor stopped reading"
		code = ExitClientGone
	case <-ctx.Done():
		log.Info("stopped", zap.Error(context.Cause(ctx)))
	}
	srv.interrupt(why)
	_ = conn.Close()
	srv.close()
	conn.Drain(rpc.DrainTimeout)
	return code
}

// secure fills in the Redactor, teaches it the model keys and wraps the
// logger with it, once (core.Secure); and sets the defaults.
func (o *Options) secure() {
	if o.secured {
		return
	}
	o.secured = true
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	o.Log, o.Redactor = core.Secure(o.Log, o.Redactor, o.Getenv)
	if o.Base.MaxWorkers == 0 {
		o.Base = api.DefaultSettings()
	}
}

// Server serves one ACP connection: one client, any number of sessions.
type Server struct {
	acp.UnimplementedAgent

	opts   Options
	log    *zap.Logger
	client *acp.ClientConn

	mu          sync.Mutex
	initialized bool
	settings    api.Settings // Base with initialize's _meta.agentls
	clientInfo  acp.Implementation
	sessions    map[string]*session
	workspaces  map[string]*workspace
	closed      bool

	catalog catalog
}

// New returns a Server that calls its client over conn. Serve it with
// acp.ServeAgent.
func New(conn rpc.Caller, opts Options) *Server {
	opts.secure()
	s := &Server{
		opts:       opts,
		log:        opts.Log,
		client:     acp.NewClientConn(conn, timeouts(opts.Base)),
		settings:   opts.Base,
		sessions:   map[string]*session{},
		workspaces: map[string]*workspace{},
	}
	return s
}

// timeouts are the bounds of the calls to the client: reverseCallMs for
// what the client answers by itself, humanMs for a person's answer.
func timeouts(st api.Settings) acp.Timeouts {
	return acp.Timeouts{Call: st.Timeouts.ReverseCall(), Human: st.Timeouts.Human(), CancelGrace: 10 * time.Second}
}

// Gate implements acp.Gater: every method but initialize waits for it.
func (s *Server) Gate(req *rpc.Request) error {
	if req.Method() == acp.MethodInitialize {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized {
		if req.IsCall() {
			return api.Errorf(api.CodeInvalidRequest, "%s: send initialize first", req.Method())
		}
		return errors.New("not initialized")
	}
	return nil
}

// Initialize answers initialize: protocol version 1, what agentls offers,
// and how to give it a model. Settings may come in _meta.agentls, with
// the keys of the LSP face's initializationOptions (docs/PROTOCOL.md §2).
func (s *Server) Initialize(_ context.Context, p *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	settings := s.opts.Base
	if raw, ok := p.Meta[acp.MetaKey]; ok {
		next, unknown, err := api.ApplySettings(settings, raw)
		if err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: _meta.agentls.%v", err)
		}
		if len(unknown) > 0 {
			s.log.Warn("_meta.agentls: unknown keys ignored", zap.Strings("keys", unknown))
		}
		settings = next
	}
	s.client.SetCapabilities(p.ClientCapabilities)
	s.client.SetTimeouts(timeouts(settings))
	s.mu.Lock()
	s.settings = settings
	if p.ClientInfo != nil {
		s.clientInfo = *p.ClientInfo
	}
	s.initialized = true
	s.mu.Unlock()
	caps := p.ClientCapabilities
	s.log.Info("initialized", zap.String("client", s.clientInfo.Name), zap.Int("protocolVersion", p.ProtocolVersion),
		zap.Bool("readTextFile", caps.FS.ReadTextFile), zap.Bool("writeTextFile", caps.FS.WriteTextFile), zap.Bool("terminal", caps.Terminal))
	return &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion,
		AgentCapabilities: acp.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: acp.PromptCapabilities{EmbeddedContext: true, Image: true},
			MCPCapabilities:    acp.MCPCapabilities{HTTP: true},
			SessionCapabilities: acp.SessionCapabilities{
				List: &acp.Capability{}, Resume: &acp.Capability{}, Close: &acp.Capability{},
			},
		},
		AuthMethods: []acp.AuthMethod{modelAuthMethod},
		AgentInfo:   &acp.Implementation{Name: "agentls", Title: "agentls", Version: s.opts.Version},
	}, nil
}

// Settings returns the connection's settings (initialize's).
func (s *Server) Settings() api.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings
}

// interrupt stops every prompt because the client went away (why says
// how): the sessions record the tasks as interrupted.
func (s *Server) interrupt(why string) {
	s.mu.Lock()
	workspaces := make([]*workspace, 0, len(s.workspaces))
	for _, w := range s.workspaces {
		workspaces = append(workspaces, w)
	}
	s.mu.Unlock()
	for _, w := range workspaces {
		for _, id := range w.core.Interrupt(why) {
			s.log.Warn("task interrupted", zap.String("task", id), zap.String("why", why))
		}
	}
}

func (s *Server) allSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		out = append(out, se)
	}
	return out
}

// close ends everything the server runs: every session's prompt, engine,
// MCP servers and updates, then every workspace's tracking.
func (s *Server) close() {
	s.mu.Lock()
	s.closed = true
	sessions := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		sessions = append(sessions, se)
	}
	workspaces := make([]*workspace, 0, len(s.workspaces))
	for _, w := range s.workspaces {
		workspaces = append(workspaces, w)
	}
	s.mu.Unlock()
	s.closeCatalog()
	var wg sync.WaitGroup
	for _, se := range sessions {
		wg.Go(se.close)
	}
	wg.Wait()
	for _, w := range workspaces {
		w.core.Close()
	}
}
