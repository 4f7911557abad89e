package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

// Agent is what an ACP agent serves. Each method but Cancel answers a
// request and runs on a goroutine of its own (rpc.Conn); Cancel is a
// notification, handled in arrival order with the others, so it must not
// block. An agent that does not offer a method returns an error with
// api.CodeMethodNotFound (UnimplementedAgent does).
type Agent interface {
	Initialize(ctx context.Context, p *InitializeRequest) (*InitializeResponse, error)
	Authenticate(ctx context.Context, p *AuthenticateRequest) (*AuthenticateResponse, error)
	NewSession(ctx context.Context, p *NewSessionRequest) (*NewSessionResponse, error)
	LoadSession(ctx context.Context, p *LoadSessionRequest) (*LoadSessionResponse, error)
	ListSessions(ctx context.Context, p *ListSessionsRequest) (*ListSessionsResponse, error)
	ResumeSession(ctx context.Context, p *ResumeSessionRequest) (*ResumeSessionResponse, error)
	CloseSession(ctx context.Context, p *CloseSessionRequest) (*CloseSessionResponse, error)
	SetSessionMode(ctx context.Context, p *SetSessionModeRequest) (*SetSessionModeResponse, error)
	SetSessionConfigOption(ctx context.Context, p *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error)
	SetSessionModel(ctx context.Context, p *SetSessionModelRequest) (*SetSessionModelResponse, error)
	Prompt(ctx context.Context, p *PromptRequest) (*PromptResponse, error)
	Cancel(ctx context.Context, p *CancelNotification) error
}

// UnimplementedAgent answers every method of Agent with -32601; embed it
// to serve only some.
type UnimplementedAgent struct{}

func notServed(method string) error {
	return api.Errorf(api.CodeMethodNotFound, "method not found: %s", method)
}

func (UnimplementedAgent) Initialize(context.Context, *InitializeRequest) (*InitializeResponse, error) {
	return nil, notServed(MethodInitialize)
}
func (UnimplementedAgent) Authenticate(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
	return nil, notServed(MethodAuthenticate)
}
func (UnimplementedAgent) NewSession(context.Context, *NewSessionRequest) (*NewSessionResponse, error) {
	return nil, notServed(MethodSessionNew)
}
func (UnimplementedAgent) LoadSession(context.Context, *LoadSessionRequest) (*LoadSessionResponse, error) {
	return nil, notServed(MethodSessionLoad)
}
func (UnimplementedAgent) ListSessions(context.Context, *ListSessionsRequest) (*ListSessionsResponse, error) {
	return nil, notServed(MethodSessionList)
}
func (UnimplementedAgent) ResumeSession(context.Context, *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	return nil, notServed(MethodSessionResume)
}
func (UnimplementedAgent) CloseSession(context.Context, *CloseSessionRequest) (*CloseSessionResponse, error) {
	return nil, notServed(MethodSessionClose)
}
func (UnimplementedAgent) SetSessionMode(context.Context, *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return nil, notServed(MethodSessionSetMode)
}
func (UnimplementedAgent) SetSessionConfigOption(context.Context, *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return nil, notServed(MethodSessionSetConfigOption)
}
func (UnimplementedAgent) SetSessionModel(context.Context, *SetSessionModelRequest) (*SetSessionModelResponse, error) {
	return nil, notServed(MethodSessionSetModel)
}
func (UnimplementedAgent) Prompt(context.Context, *PromptRequest) (*PromptResponse, error) {
	return nil, notServed(MethodSessionPrompt)
}
func (UnimplementedAgent) Cancel(context.Context, *CancelNotification) error { return nil }

// Gater is implemented by an Agent or Client that checks every message in
// arrival order before it is served (rpc.Handler's Gate: on the read loop,
// never blocking); an error answers a call, and drops a notification.
type Gater interface {
	Gate(req *rpc.Request) error
}

// ServeAgent returns the rpc.Handler serving a on an ACP connection: each
// request's params are decoded into its type (-32602 naming the field when
// they do not fit) and handed to its method; any other method is -32601
// and any other notification is ignored (logged).
func ServeAgent(a Agent, log *zap.Logger) rpc.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	return &agentHandler{a: a, log: log}
}

type agentHandler struct {
	a   Agent
	log *zap.Logger
}

func (h *agentHandler) Gate(req *rpc.Request) error {
	if g, ok := h.a.(Gater); ok {
		return g.Gate(req)
	}
	return nil
}

func (h *agentHandler) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	raw := req.Params()
	switch req.Method() {
	case MethodInitialize:
		return serve(ctx, raw, h.a.Initialize)
	case MethodAuthenticate:
		return serve(ctx, raw, h.a.Authenticate)
	case MethodSessionNew:
		return serve(ctx, raw, h.a.NewSession)
	case MethodSessionLoad:
		return serve(ctx, raw, h.a.LoadSession)
	case MethodSessionList:
		return serve(ctx, raw, h.a.ListSessions)
	case MethodSessionResume:
		return serve(ctx, raw, h.a.ResumeSession)
	case MethodSessionClose:
		return serve(ctx, raw, h.a.CloseSession)
	case MethodSessionSetMode:
		return serve(ctx, raw, h.a.SetSessionMode)
	case MethodSessionSetConfigOption:
		return serve(ctx, raw, h.a.SetSessionConfigOption)
	case MethodSessionSetModel:
		return serve(ctx, raw, h.a.SetSessionModel)
	case MethodSessionPrompt:
		return serve(ctx, raw, h.a.Prompt)
	}
	return nil, notServed(req.Method())
}

func (h *agentHandler) HandleNotification(ctx context.Context, req *rpc.Request) {
	switch req.Method() {
	case MethodSessionCancel:
		var p CancelNotification
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			h.log.Warn("acp: session/cancel with bad params", zap.Error(err))
			return
		}
		if err := h.a.Cancel(ctx, &p); err != nil {
			h.log.Warn("acp: session/cancel", zap.Error(err))
		}
	default:
		h.log.Debug("acp: notification ignored", zap.String("method", req.Method()))
	}
}

// serve decodes raw into P and calls fn.
func serve[P, R any](ctx context.Context, raw json.RawMessage, fn func(context.Context, *P) (R, error)) (any, error) {
	var p P
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	r, err := fn(ctx, &p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Peer is the connection AgentConn calls over: *rpc.Conn.
type Peer interface {
	rpc.Caller
	// Settle waits until every notification read so far has been handled.
	Settle(ctx context.Context) error
}

// AgentConn makes the calls of an ACP client to its agent, each bounded by
// its Timeouts and its context. It implements Agent, so a client can also
// pass an agent's methods on. Safe for concurrent use.
type AgentConn struct {
	c Peer
	t Timeouts
}

// NewAgentConn returns the calls to the agent at the other end of c.
func NewAgentConn(c Peer, t Timeouts) *AgentConn { return &AgentConn{c: c, t: t} }

var _ Agent = (*AgentConn)(nil)

func (a *AgentConn) Initialize(ctx context.Context, p *InitializeRequest) (*InitializeResponse, error) {
	return callFor[InitializeResponse](ctx, a.c, a.t.Call, MethodInitialize, p)
}

func (a *AgentConn) Authenticate(ctx context.Context, p *AuthenticateRequest) (*AuthenticateResponse, error) {
	return callFor[AuthenticateResponse](ctx, a.c, a.t.Call, MethodAuthenticate, p)
}

func (a *AgentConn) NewSession(ctx context.Context, p *NewSessionRequest) (*NewSessionResponse, error) {
	return callFor[NewSessionResponse](ctx, a.c, a.t.Call, MethodSessionNew, p)
}

// LoadSession loads a session: the agent replays its history as
// session/update notifications, all handled before LoadSession returns.
func (a *AgentConn) LoadSession(ctx context.Context, p *LoadSessionRequest) (*LoadSessionResponse, error) {
	r, err := callFor[LoadSessionResponse](ctx, a.c, a.t.Long, MethodSessionLoad, p)
	if err != nil {
		return nil, err
	}
	if err := a.c.Settle(ctx); err != nil {
		return nil, fmt.Errorf("%s: the replayed updates: %w", MethodSessionLoad, err)
	}
	return r, nil
}

func (a *AgentConn) ListSessions(ctx context.Context, p *ListSessionsRequest) (*ListSessionsResponse, error) {
	return callFor[ListSessionsResponse](ctx, a.c, a.t.Call, MethodSessionList, p)
}

func (a *AgentConn) ResumeSession(ctx context.Context, p *ResumeSessionRequest) (*ResumeSessionResponse, error) {
	return callFor[ResumeSessionResponse](ctx, a.c, a.t.Call, MethodSessionResume, p)
}

func (a *AgentConn) CloseSession(ctx context.Context, p *CloseSessionRequest) (*CloseSessionResponse, error) {
	return callFor[CloseSessionResponse](ctx, a.c, a.t.Call, MethodSessionClose, p)
}

func (a *AgentConn) SetSessionMode(ctx context.Context, p *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return callFor[SetSessionModeResponse](ctx, a.c, a.t.Call, MethodSessionSetMode, p)
}

func (a *AgentConn) SetSessionModel(ctx context.Context, p *SetSessionModelRequest) (*SetSessionModelResponse, error) {
	return callFor[SetSessionModelResponse](ctx, a.c, a.t.Call, MethodSessionSetModel, p)
}

func (a *AgentConn) SetSessionConfigOption(ctx context.Context, p *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return callFor[SetSessionConfigOptionResponse](ctx, a.c, a.t.Call, MethodSessionSetConfigOption, p)
}

// Prompt runs a prompt turn and returns its stop reason once every
// session/update the agent sent before it has been handled. When ctx ends
// (or Timeouts.Long passes) first, it sends session/cancel and waits
// Timeouts.CancelGrace for the agent's answer (normally StopCancelled),
// which it returns; past the grace it gives the call up ($/cancel_request)
// and returns ctx's cause.
func (a *AgentConn) Prompt(ctx context.Context, p *PromptRequest) (*PromptResponse, error) {
	turn := ctx
	if a.t.Long > 0 {
		var cancel context.CancelFunc
		turn, cancel = context.WithTimeoutCause(ctx, a.t.Long, fmt.Errorf("%s: %w (%s)", MethodSessionPrompt, api.ErrTimeout, a.t.Long))
		defer cancel()
	}
	// The call itself outlives turn by the grace: ending the turn is
	// session/cancel's job, and the agent answers it.
	callCtx, giveUp := context.WithCancelCause(context.WithoutCancel(ctx))
	defer giveUp(nil)
	var r PromptResponse
	done := make(chan error, 1)
	go func() { done <- a.c.Call(callCtx, MethodSessionPrompt, p, &r) }()
	var err error
	select {
	case err = <-done:
	case <-turn.Done():
		if nerr := notify(context.WithoutCancel(ctx), a.c, MethodSessionCancel, &CancelNotification{SessionID: p.SessionID}); nerr != nil {
			giveUp(context.Cause(turn))
			<-done
			return nil, fmt.Errorf("%s: %w", MethodSessionPrompt, context.Cause(turn))
		}
		grace := time.NewTimer(a.t.CancelGrace)
		select {
		case err = <-done:
			grace.Stop()
		case <-grace.C:
			giveUp(context.Cause(turn))
			<-done
			return nil, fmt.Errorf("%s: the agent did not answer session/cancel within %s: %w", MethodSessionPrompt, a.t.CancelGrace, context.Cause(turn))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", MethodSessionPrompt, err)
	}
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer cancel()
	if err := a.c.Settle(settle); err != nil {
		return &r, fmt.Errorf("%s: the updates before the answer: %w", MethodSessionPrompt, err)
	}
	return &r, nil
}

// Cancel sends session/cancel.
func (a *AgentConn) Cancel(ctx context.Context, p *CancelNotification) error {
	return notify(ctx, a.c, MethodSessionCancel, p)
}
