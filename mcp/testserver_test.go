package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
)

// TestMain lets the test binary play a stdio MCP server (testServer) when
// AGENTLS_MCP_TEST_SERVER is set: the tests start it as a real process.
func TestMain(m *testing.M) {
	if os.Getenv("AGENTLS_MCP_TEST_SERVER") == "1" {
		srv := testServer(nil)
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe records what the in-process server saw.
type probe struct {
	mu        sync.Mutex
	cancelled int // calls of "hang" whose context ended
	hanging   chan struct{}
}

func (p *probe) cancels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cancelled
}

// testServer is a small MCP server with a tool for each case the client
// must handle.
func testServer(p *probe) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "agentls-test", Version: "1"}, nil)
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	type echoArgs struct {
		Message string `json:"message"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes the message.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			return text("Echo: " + a.Message), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "it went wrong"}}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "mixed", Description: "Returns every kind of content."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")
			size := int64(12)
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "hello"},
				&sdk.ImageContent{MIMEType: "image/png", Data: png},
				&sdk.ResourceLink{URI: "file:///w/a.txt", Name: "a.txt", MIMEType: "text/plain", Size: &size, Description: "a file"},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://r/1", MIMEType: "text/plain", Text: "inside"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "test://r/2", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			}, StructuredContent: map[string]any{"sum": 3}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "structured", Description: "Sends its structure twice."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: `{"sum": 3}`}}, StructuredContent: map[string]any{"sum": 3}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "hang", Description: "Waits until cancelled."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			if p != nil && p.hanging != nil {
				select {
				case p.hanging <- struct{}{}:
				default:
				}
			}
			<-ctx.Done()
			if p != nil {
				p.mu.Lock()
				p.cancelled++
				p.mu.Unlock()
			}
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Ends the server's process."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "crashing on purpose")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "pid", Description: "Its process id."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "child", Description: "Starts a child that sleeps, and gives its pid."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			c := exec.Command("sleep", "600")
			if err := c.Start(); err != nil {
				return nil, nil, err
			}
			return text(strconv.Itoa(c.Process.Pid)), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "env", Description: "Gives an environment variable."},
		func(_ context.Context, _ *sdk.CallToolRequest, a struct {
			Name string `json:"name"`
		}) (*sdk.CallToolResult, any, error) {
			v, ok := os.LookupEnv(a.Name)
			if !ok {
				return text("(unset)"), nil, nil
			}
			return text(v), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "cwd", Description: "Gives its working directory."},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			d, err := os.Getwd()
			if err != nil {
				return nil, nil, err
			}
			return text(d), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "roots", Description: "Asks the client for its roots and gives their URIs, a line each."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			// A multi round-trip request: on the protocol versions before
			// 2026-07-28 the SDK sends the client roots/list itself.
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil, nil
			}
			res, ok := resp.(*sdk.ListRootsResult)
			if !ok {
				return nil, nil, fmt.Errorf("roots/list answered with a %T", resp)
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			if len(uris) == 0 {
				return text("(no roots)"), nil, nil
			}
			return text(strings.Join(uris, "\n")), nil, nil
		})
	return srv
}

// httpServer serves testServer over streamable HTTP on loopback.
func httpServer(t *testing.T, p *probe) (*sdk.Server, string) {
	t.Helper()
	srv := testServer(p)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return srv, ts.URL + "/mcp"
}

// stdioEntry is an entry that starts the test binary as a stdio server.
func stdioEntry(t *testing.T, env map[string]string) api.MCPServer {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"AGENTLS_MCP_TEST_SERVER": "1"}
	for k, v := range env {
		e[k] = v
	}
	return api.MCPServer{Command: exe, Env: e}
}

// newManager is a Manager with the given servers, closed at the end of the
// test.
func newManager(t *testing.T, opts Options, servers map[string]api.MCPServer, timeout time.Duration) *Manager {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	m := New(opts)
	m.Configure(servers, timeout)
	t.Cleanup(m.Close)
	return m
}
