package acp

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
)

// Client is what an ACP client serves. Each method but SessionUpdate
// answers a request and runs on a goroutine of its own (rpc.Conn);
// SessionUpdate is a notification, handled one at a time in arrival order,
// so updates are seen in the order the agent sent them. A client that does
// not offer a method returns an error with api.CodeMethodNotFound
// (UnimplementedClient does).
type Client interface {
	RequestPermission(ctx context.Context, p *RequestPermissionRequest) (*RequestPermissionResponse, error)
	ReadTextFile(ctx context.Context, p *ReadTextFileRequest) (*ReadTextFileResponse, error)
	WriteTextFile(ctx context.Context, p *WriteTextFileRequest) (*WriteTextFileResponse, error)
	CreateTerminal(ctx context.Context, p *CreateTerminalRequest) (*CreateTerminalResponse, error)
	TerminalOutput(ctx context.Context, p *TerminalRequest) (*TerminalOutputResponse, error)
	WaitForTerminalExit(ctx context.Context, p *TerminalRequest) (*WaitForTerminalExitResponse, error)
	KillTerminal(ctx context.Context, p *TerminalRequest) (*Empty, error)
	ReleaseTerminal(ctx context.Context, p *TerminalRequest) (*Empty, error)
	SessionUpdate(ctx context.Context, p *SessionNotification) error
}

// UnimplementedClient answers every method of Client with -32601 and
// ignores updates; embed it to serve only some.
type UnimplementedClient struct{}

func (UnimplementedClient) RequestPermission(context.Context, *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return nil, notServed(MethodSessionRequestPermission)
}
func (UnimplementedClient) ReadTextFile(context.Context, *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	return nil, notServed(MethodFSReadTextFile)
}
func (UnimplementedClient) WriteTextFile(context.Context, *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	return nil, notServed(MethodFSWriteTextFile)
}
func (UnimplementedClient) CreateTerminal(context.Context, *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	return nil, notServed(MethodTerminalCreate)
}
func (UnimplementedClient) TerminalOutput(context.Context, *TerminalRequest) (*TerminalOutputResponse, error) {
	return nil, notServed(MethodTerminalOutput)
}
func (UnimplementedClient) WaitForTerminalExit(context.Context, *TerminalRequest) (*WaitForTerminalExitResponse, error) {
	return nil, notServed(MethodTerminalWaitForExit)
}
func (UnimplementedClient) KillTerminal(context.Context, *TerminalRequest) (*Empty, error) {
	return nil, notServed(MethodTerminalKill)
}
func (UnimplementedClient) ReleaseTerminal(context.Context, *TerminalRequest) (*Empty, error) {
	return nil, notServed(MethodTerminalRelease)
}
func (UnimplementedClient) SessionUpdate(context.Context, *SessionNotification) error { return nil }

// ServeClient returns the rpc.Handler serving c on an ACP connection, as
// ServeAgent does for an agent.
func ServeClient(c Client, log *zap.Logger) rpc.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	return &clientHandler{c: c, log: log}
}

type clientHandler struct {
	c   Client
	log *zap.Logger
}

func (h *clientHandler) Gate(req *rpc.Request) error {
	if g, ok := h.c.(Gater); ok {
		return g.Gate(req)
	}
	return nil
}

func (h *clientHandler) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	raw := req.Params()
	switch req.Method() {
	case MethodSessionRequestPermission:
		return serve(ctx, raw, h.c.RequestPermission)
	case MethodFSReadTextFile:
		return serve(ctx, raw, h.c.ReadTextFile)
	case MethodFSWriteTextFile:
		return serve(ctx, raw, h.c.WriteTextFile)
	case MethodTerminalCreate:
		return serve(ctx, raw, h.c.CreateTerminal)
	case MethodTerminalOutput:
		return serve(ctx, raw, h.c.TerminalOutput)
	case MethodTerminalWaitForExit:
		return serve(ctx, raw, h.c.WaitForTerminalExit)
	case MethodTerminalKill:
		return serve(ctx, raw, h.c.KillTerminal)
	case MethodTerminalRelease:
		return serve(ctx, raw, h.c.ReleaseTerminal)
	}
	return nil, notServed(req.Method())
}

func (h *clientHandler) HandleNotification(ctx context.Context, req *rpc.Request) {
	switch req.Method() {
	case MethodSessionUpdate:
		var p SessionNotification
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			h.log.Warn("acp: session/update with bad params", zap.Error(err))
			return
		}
		if err := h.c.SessionUpdate(ctx, &p); err != nil {
			h.log.Warn("acp: session/update", zap.Error(err))
		}
	default:
		h.log.Debug("acp: notification ignored", zap.String("method", req.Method()))
	}
}

// ClientConn makes the calls of an ACP agent to its client, each bounded
// by its Timeouts and its context. A call the client did not advertise
// (fs.readTextFile, fs.writeTextFile, terminal) fails at once with an
// error wrapping api.ErrUnsupported: the agent does the work itself. It
// implements Client. Safe for concurrent use.
type ClientConn struct {
	c    rpc.Caller
	t    atomic.Pointer[Timeouts]
	caps atomic.Pointer[ClientCapabilities]
}

// NewClientConn returns the calls to the client at the other end of c,
// which has advertised nothing yet (SetCapabilities).
func NewClientConn(c rpc.Caller, t Timeouts) *ClientConn {
	cc := &ClientConn{c: c}
	cc.t.Store(&t)
	cc.caps.Store(&ClientCapabilities{})
	return cc
}

// SetTimeouts changes the bounds of the calls made afterwards.
func (c *ClientConn) SetTimeouts(t Timeouts) { c.t.Store(&t) }

// Timeouts returns the bounds in force.
func (c *ClientConn) Timeouts() Timeouts { return *c.t.Load() }

var _ Client = (*ClientConn)(nil)

// SetCapabilities records what the client advertised in initialize.
func (c *ClientConn) SetCapabilities(caps ClientCapabilities) { c.caps.Store(&caps) }

// Capabilities returns what the client advertised.
func (c *ClientConn) Capabilities() ClientCapabilities { return *c.caps.Load() }

func unsupported(method, capability string) error {
	return fmt.Errorf("%s: %w (the client did not advertise %s)", method, api.ErrUnsupported, capability)
}

// RequestPermission asks the person; it is bounded by Timeouts.Human.
func (c *ClientConn) RequestPermission(ctx context.Context, p *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return callFor[RequestPermissionResponse](ctx, c.c, c.Timeouts().Human, MethodSessionRequestPermission, p)
}

func (c *ClientConn) ReadTextFile(ctx context.Context, p *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	if !c.Capabilities().FS.ReadTextFile {
		return nil, unsupported(MethodFSReadTextFile, "fs.readTextFile")
	}
	return callFor[ReadTextFileResponse](ctx, c.c, c.Timeouts().Call, MethodFSReadTextFile, p)
}

func (c *ClientConn) WriteTextFile(ctx context.Context, p *WriteTextFileRequest) (*WriteTextFileResponse, error) {
	if !c.Capabilities().FS.WriteTextFile {
		return nil, unsupported(MethodFSWriteTextFile, "fs.writeTextFile")
	}
	return callFor[WriteTextFileResponse](ctx, c.c, c.Timeouts().Call, MethodFSWriteTextFile, p)
}

func (c *ClientConn) CreateTerminal(ctx context.Context, p *CreateTerminalRequest) (*CreateTerminalResponse, error) {
	if !c.Capabilities().Terminal {
		return nil, unsupported(MethodTerminalCreate, "terminal")
	}
	return callFor[CreateTerminalResponse](ctx, c.c, c.Timeouts().Call, MethodTerminalCreate, p)
}

func (c *ClientConn) TerminalOutput(ctx context.Context, p *TerminalRequest) (*TerminalOutputResponse, error) {
	if !c.Capabilities().Terminal {
		return nil, unsupported(MethodTerminalOutput, "terminal")
	}
	return callFor[TerminalOutputResponse](ctx, c.c, c.Timeouts().Call, MethodTerminalOutput, p)
}

// WaitForTerminalExit waits for the command's end; it is bounded by
// Timeouts.Long (the caller bounds it by the command's own timeout).
func (c *ClientConn) WaitForTerminalExit(ctx context.Context, p *TerminalRequest) (*WaitForTerminalExitResponse, error) {
	if !c.Capabilities().Terminal {
		return nil, unsupported(MethodTerminalWaitForExit, "terminal")
	}
	return callFor[WaitForTerminalExitResponse](ctx, c.c, c.Timeouts().Long, MethodTerminalWaitForExit, p)
}

func (c *ClientConn) KillTerminal(ctx context.Context, p *TerminalRequest) (*Empty, error) {
	if !c.Capabilities().Terminal {
		return nil, unsupported(MethodTerminalKill, "terminal")
	}
	return callFor[Empty](ctx, c.c, c.Timeouts().Call, MethodTerminalKill, p)
}

func (c *ClientConn) ReleaseTerminal(ctx context.Context, p *TerminalRequest) (*Empty, error) {
	if !c.Capabilities().Terminal {
		return nil, unsupported(MethodTerminalRelease, "terminal")
	}
	return callFor[Empty](ctx, c.c, c.Timeouts().Call, MethodTerminalRelease, p)
}

// SessionUpdate sends session/update.
func (c *ClientConn) SessionUpdate(ctx context.Context, p *SessionNotification) error {
	return notify(ctx, c.c, MethodSessionUpdate, p)
}
