// Command stockserver is the reference echo server of the transport benchmark:
// the four methods the benchmark calls (initialize, initialized, agent/ping,
// shutdown, exit), written with stock go.lsp.dev/jsonrpc2 v0.10.0 the way an
// ordinary user of the library writes a server: jsonrpc2.NewStream over
// stdin/stdout, jsonrpc2.NewConn, and one handler with a switch on the method.
//
// It is not part of agentls. It exists so that bench/wire/driver can measure
// the library on its own, side by side with agentls and vscode-jsonrpc.
// It keeps the library's own ordering: requests are handled one at a time,
// in arrival order, on the read loop. Stdout carries the protocol only.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"go.lsp.dev/jsonrpc2"
)

// codeServerNotInitialized is the LSP error for a request before initialize.
const codeServerNotInitialized jsonrpc2.Code = -32002

// stdio joins stdin and stdout into the io.ReadWriteCloser jsonrpc2 wants.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error {
	errIn := os.Stdin.Close()
	errOut := os.Stdout.Close()
	if errIn != nil {
		return errIn
	}
	return errOut
}

type pingParams struct {
	Data json.RawMessage `json:"data"`
}

type server struct {
	initialized bool
	shutdown    bool
	exit        chan int
}

func (s *server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	switch req.Method() {
	case "initialize":
		s.initialized = true
		return reply(ctx, map[string]any{
			"capabilities": map[string]any{},
			"serverInfo":   map[string]any{"name": "stockserver"},
		}, nil)
	case "initialized":
		return nil
	case "exit":
		code := 1
		if s.shutdown {
			code = 0
		}
		s.exit <- code
		return nil
	}
	if _, isCall := req.(*jsonrpc2.Call); !isCall {
		return nil // unknown notifications are ignored
	}
	if !s.initialized {
		return reply(ctx, nil, jsonrpc2.NewError(codeServerNotInitialized, "server not initialized"))
	}
	switch req.Method() {
	case "agent/ping":
		var p pingParams
		if err := json.Unmarshal(req.Params(), &p); err != nil {
			return reply(ctx, nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "agent/ping: %v", err))
		}
		return reply(ctx, p, nil)
	case "shutdown":
		s.shutdown = true
		return reply(ctx, nil, nil)
	default:
		return jsonrpc2.MethodNotFoundHandler(ctx, reply, req)
	}
}

func main() {
	s := &server{exit: make(chan int, 1)}
	conn := jsonrpc2.NewConn(jsonrpc2.NewStream(stdio{}))
	conn.Go(context.Background(), s.handle)
	select {
	case code := <-s.exit:
		os.Exit(code)
	case <-conn.Done():
		if err := conn.Err(); err != nil {
			fmt.Fprintln(os.Stderr, "stockserver:", err)
		}
		os.Exit(1)
	}
}
