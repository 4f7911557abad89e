package acp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/rpc"
)

// fakeAgent serves a few methods for the connection tests; the others are
// UnimplementedAgent's.
type fakeAgent struct {
	UnimplementedAgent
	client    *ClientConn
	cancels   chan string
	promptErr chan error // what the prompt handler's context ended with
	// prompt says how session/prompt behaves: "updates" sends 20 updates
	// then ends the turn; "wait" waits for session/cancel; "ignore" waits
	// for its context alone; "panic" panics.
	prompt string

	mu        sync.Mutex
	cancelled map[string]chan struct{}
}

func (a *fakeAgent) Initialize(_ context.Context, p *InitializeRequest) (*InitializeResponse, error) {
	a.client.SetCapabilities(p.ClientCapabilities)
	return &InitializeResponse{ProtocolVersion: min(p.ProtocolVersion, ProtocolVersion), AgentInfo: &Implementation{Name: "fake", Version: "1"}}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, p *NewSessionRequest) (*NewSessionResponse, error) {
	if p.Cwd == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "cwd" is required`)
	}
	return &NewSessionResponse{SessionID: "s-" + p.Cwd}, nil
}

func (a *fakeAgent) turn(id string) chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cancelled == nil {
		a.cancelled = map[string]chan struct{}{}
	}
	if a.cancelled[id] == nil {
		a.cancelled[id] = make(chan struct{})
	}
	return a.cancelled[id]
}

func (a *fakeAgent) Prompt(ctx context.Context, p *PromptRequest) (*PromptResponse, error) {
	switch a.prompt {
	case "updates":
		for i := range 20 {
			u := AgentMessageChunk{Content: Text(strings.Repeat("x", i))}
			if err := a.client.SessionUpdate(ctx, &SessionNotification{SessionID: p.SessionID, Update: u}); err != nil {
				return nil, err
			}
		}
		return &PromptResponse{StopReason: StopEndTurn}, nil
	case "wait":
		select {
		case <-a.turn(p.SessionID):
			return &PromptResponse{StopReason: StopCancelled}, nil
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	case "ignore":
		<-ctx.Done()
		a.promptErr <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	case "panic":
		panic("a bug in the agent")
	}
	// Asks the client to read a file, then ends the turn.
	res, err := a.client.ReadTextFile(ctx, &ReadTextFileRequest{SessionID: p.SessionID, Path: "/w/a.go"})
	if err != nil {
		return nil, err
	}
	return &PromptResponse{StopReason: StopEndTurn, Meta: MetaOf(MetaKey, map[string]string{"read": res.Content})}, nil
}

func (a *fakeAgent) Cancel(_ context.Context, p *CancelNotification) error {
	a.cancels <- p.SessionID
	close(a.turn(p.SessionID))
	return nil
}

// fakeClient records updates and answers reads; "never" paths never answer.
type fakeClient struct {
	UnimplementedClient
	mu       sync.Mutex
	updates  []SessionUpdate
	readCtx  chan error
	readSeen chan struct{}
}

func (c *fakeClient) SessionUpdate(_ context.Context, p *SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, p.Update)
	return nil
}

func (c *fakeClient) ReadTextFile(ctx context.Context, p *ReadTextFileRequest) (*ReadTextFileResponse, error) {
	if p.Path == "/never" {
		c.readSeen <- struct{}{}
		<-ctx.Done()
		c.readCtx <- context.Cause(ctx)
		return nil, context.Cause(ctx)
	}
	return &ReadTextFileResponse{Content: "text of " + p.Path}, nil
}

type pair struct {
	agent      *fakeAgent
	client     *fakeClient
	toAgent    *AgentConn
	toClient   *ClientConn
	clientConn *rpc.Conn
}

// connect runs a fake agent and a fake client against each other over
// real OS pipes, with the ACP stream and connection.
func connect(t *testing.T, prompt string, tm Timeouts) *pair {
	t.Helper()
	ar, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cr, aw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	agentConn := NewConn(NewStream(ar, aw, nil), nil)
	clientConn := NewConn(NewStream(cr, cw, nil), nil)
	p := &pair{
		agent:      &fakeAgent{prompt: prompt, cancels: make(chan string, 4), promptErr: make(chan error, 1)},
		client:     &fakeClient{readCtx: make(chan error, 1), readSeen: make(chan struct{}, 1)},
		toAgent:    NewAgentConn(clientConn, tm),
		toClient:   NewClientConn(agentConn, tm),
		clientConn: clientConn,
	}
	p.agent.client = p.toClient
	var wg sync.WaitGroup
	wg.Go(func() { _ = agentConn.Serve(context.Background(), ServeAgent(p.agent, nil)) })
	wg.Go(func() { _ = clientConn.Serve(context.Background(), ServeClient(p.client, nil)) })
	t.Cleanup(func() {
		_ = clientConn.Close()
		_ = agentConn.Close()
		_ = cw.Close()
		_ = aw.Close()
		wg.Wait()
	})
	return p
}

func (p *pair) initialize(t *testing.T, caps ClientCapabilities) {
	t.Helper()
	res, err := p.toAgent.Initialize(testkit.Context(t), &InitializeRequest{ProtocolVersion: 3, ClientCapabilities: caps})
	if err != nil || res.ProtocolVersion != ProtocolVersion || res.AgentInfo.Name != "fake" {
		t.Fatalf("initialize = %+v, %v", res, err)
	}
}

func code(err error) api.Code {
	var we *api.Error
	if errors.As(err, &we) {
		return we.Code
	}
	return 0
}

func TestConn(t *testing.T) {
	t.Run("serves a prompt turn that reads a file through the client", func(t *testing.T) {
		p := connect(t, "read", DefaultTimeouts())
		p.initialize(t, ClientCapabilities{FS: FileSystemCapabilities{ReadTextFile: true}})
		ctx := testkit.Context(t)
		s, err := p.toAgent.NewSession(ctx, &NewSessionRequest{Cwd: "/w"})
		if err != nil || s.SessionID != "s-/w" {
			t.Fatalf("session/new = %+v, %v", s, err)
		}
		res, err := p.toAgent.Prompt(ctx, &PromptRequest{SessionID: s.SessionID, Prompt: []ContentBlock{Text("hi")}})
		if err != nil || res.StopReason != StopEndTurn {
			t.Fatalf("prompt = %+v, %v", res, err)
		}
		var meta map[string]string
		if ok, err := res.Meta.Get(MetaKey, &meta); !ok || err != nil || meta["read"] != "text of /w/a.go" {
			t.Fatalf("meta = %v %v %v", meta, ok, err)
		}
	})

	t.Run("refuses a call the client did not advertise, before sending it", func(t *testing.T) {
		p := connect(t, "read", DefaultTimeouts())
		p.initialize(t, ClientCapabilities{})
		for _, err := range []error{
			func() error {
				_, err := p.toClient.ReadTextFile(testkit.Context(t), &ReadTextFileRequest{Path: "/a"})
				return err
			}(),
			func() error {
				_, err := p.toClient.WriteTextFile(testkit.Context(t), &WriteTextFileRequest{Path: "/a"})
				return err
			}(),
			func() error {
				_, err := p.toClient.CreateTerminal(testkit.Context(t), &CreateTerminalRequest{Command: "ls"})
				return err
			}(),
		} {
			if !errors.Is(err, api.ErrUnsupported) {
				t.Errorf("err = %v, want api.ErrUnsupported", err)
			}
		}
	})

	t.Run("answers a method not served with -32601 and params that do not fit with -32602 naming the field", func(t *testing.T) {
		p := connect(t, "read", DefaultTimeouts())
		ctx := testkit.Context(t)
		_, err := p.toAgent.ListSessions(ctx, &ListSessionsRequest{})
		if code(err) != api.CodeMethodNotFound {
			t.Fatalf("session/list = %v", err)
		}
		err = p.clientConn.Call(ctx, MethodSessionNew, json.RawMessage(`{"cwd":7,"mcpServers":[]}`), nil)
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), `"cwd"`) {
			t.Fatalf("session/new with a number for cwd = %v", err)
		}
		if _, err := p.toAgent.NewSession(ctx, &NewSessionRequest{Cwd: "/still/serving"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("turns a panic in a method into an internal error and keeps serving", func(t *testing.T) {
		p := connect(t, "panic", DefaultTimeouts())
		ctx := testkit.Context(t)
		_, err := p.toAgent.Prompt(ctx, &PromptRequest{SessionID: "s"})
		if code(err) != api.CodeInternalError || !strings.Contains(err.Error(), "a bug in the agent") {
			t.Fatalf("prompt = %v", err)
		}
		if _, err := p.toAgent.NewSession(ctx, &NewSessionRequest{Cwd: "/w"}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("returns a prompt's answer only after every update sent before it was handled", func(t *testing.T) {
		p := connect(t, "updates", DefaultTimeouts())
		for range 5 {
			res, err := p.toAgent.Prompt(testkit.Context(t), &PromptRequest{SessionID: "s"})
			if err != nil || res.StopReason != StopEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			p.client.mu.Lock()
			n := len(p.client.updates)
			p.client.updates = nil
			p.client.mu.Unlock()
			if n != 20 {
				t.Fatalf("%d updates handled when the prompt returned, want 20", n)
			}
		}
	})

	t.Run("cancels a prompt with session/cancel and returns the agent's stop reason", func(t *testing.T) {
		p := connect(t, "wait", DefaultTimeouts())
		ctx, cancel := context.WithCancel(testkit.Context(t))
		type outcome struct {
			res *PromptResponse
			err error
		}
		done := make(chan outcome, 1)
		go func() {
			res, err := p.toAgent.Prompt(ctx, &PromptRequest{SessionID: "s1"})
			done <- outcome{res, err}
		}()
		cancel()
		if got := <-p.agent.cancels; got != "s1" {
			t.Fatalf("session/cancel for %q", got)
		}
		o := <-done
		if o.err != nil || o.res.StopReason != StopCancelled {
			t.Fatalf("prompt = %+v, %v", o.res, o.err)
		}
	})

	t.Run("gives a prompt up with $/cancel_request when the agent ignores session/cancel", func(t *testing.T) {
		tm := DefaultTimeouts()
		tm.CancelGrace = 50 * time.Millisecond
		p := connect(t, "ignore", tm)
		ctx, cancel := context.WithCancelCause(testkit.Context(t))
		done := make(chan error, 1)
		go func() {
			_, err := p.toAgent.Prompt(ctx, &PromptRequest{SessionID: "s1"})
			done <- err
		}()
		stop := errors.New("the person pressed stop")
		cancel(stop)
		<-p.agent.cancels
		if err := <-done; !errors.Is(err, stop) || !strings.Contains(err.Error(), "did not answer session/cancel") {
			t.Fatalf("prompt = %v", err)
		}
		if cause := <-p.agent.promptErr; cause == nil || !strings.Contains(cause.Error(), "cancelled by the client") {
			t.Fatalf("the agent's prompt ended with %v, want the client's $/cancel_request", cause)
		}
	})

	t.Run("bounds a call by its timeout and cancels it on the peer", func(t *testing.T) {
		tm := DefaultTimeouts()
		tm.Call = 50 * time.Millisecond
		p := connect(t, "read", tm)
		p.toClient.SetCapabilities(ClientCapabilities{FS: FileSystemCapabilities{ReadTextFile: true}})
		_, err := p.toClient.ReadTextFile(testkit.Context(t), &ReadTextFileRequest{SessionID: "s", Path: "/never"})
		if !errors.Is(err, api.ErrTimeout) || !strings.Contains(err.Error(), MethodFSReadTextFile) {
			t.Fatalf("read = %v, want a timeout naming the method", err)
		}
		if cause := <-p.client.readCtx; cause == nil || !strings.Contains(cause.Error(), "cancelled by the client") {
			t.Fatalf("the client's read ended with %v, want $/cancel_request", cause)
		}
	})
}
