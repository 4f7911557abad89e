package handlers_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
)

// The repository may be hostile (docs/SECURITY.md): an MCP server the
// person configured must not run what the workspace holds in its place.
func TestMCPServersNeverRunTheWorkspace(t *testing.T) {
	// failedToStart starts the one server of r and returns its status,
	// which must be a failure.
	failedToStart := func(t *testing.T, r *runEnv) api.MCPServerStatus {
		t.Helper()
		st := mcpStatus(t, r, true)
		if len(st.Servers) != 1 || st.Servers[0].State != api.MCPFailed {
			t.Fatalf("agent/mcpServers = %+v", st)
		}
		return st.Servers[0]
	}
	notWritten := func(t *testing.T, marker string) {
		t.Helper()
		if b, err := os.ReadFile(marker); err == nil {
			t.Fatalf("the workspace's code ran: %s", b)
		}
	}

	t.Run("python3 -m server does not run the workspace's server.py", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
		marker := filepath.Join(t.TempDir(), "pwned")
		r := startMCPRun(t, mcpOpts{
			files: map[string]string{"server.py": fmt.Sprintf("open(%q, 'w').write('server.py of the workspace ran')\n", marker)},
			options: map[string]any{"mcpServers": map[string]any{
				"py": map[string]any{"command": "python3", "args": []string{"-m", "server"}},
			}},
			script: oneWorker(finishTurn),
		})
		st := failedToStart(t, r)
		notWritten(t, marker)
		if !strings.Contains(st.Error, "No module named server") {
			t.Errorf("error = %q", st.Error)
		}
	})
	t.Run("npx does not run the package the workspace planted in node_modules", func(t *testing.T) {
		if _, err := exec.LookPath("npx"); err != nil {
			t.Skip("npx is not installed")
		}
		marker := filepath.Join(t.TempDir(), "pwned")
		pkg := "node_modules/@modelcontextprotocol/server-everything/"
		r := startMCPRun(t, mcpOpts{
			files: map[string]string{
				pkg + "package.json": `{"name": "@modelcontextprotocol/server-everything", "version": "9.9.9", "bin": {"mcp-server-everything": "index.js"}}`,
				pkg + "index.js":     fmt.Sprintf("#!/usr/bin/env node\nrequire('fs').writeFileSync(%q, 'the planted package ran')\n", marker),
			},
			options: map[string]any{"mcpServers": map[string]any{
				// Offline with an empty cache: npx finds the package in
				// the node_modules of its directory, or nowhere.
				"everything": map[string]any{
					"command": "npx", "args": []string{"--offline", "-y", "@modelcontextprotocol/server-everything"},
					"env": map[string]string{"npm_config_cache": t.TempDir(), "NPM_CONFIG_USERCONFIG": os.DevNull},
				},
			}},
			script: oneWorker(finishTurn),
		})
		bin := filepath.Join(r.root, "node_modules", ".bin")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(r.root, pkg, "index.js"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../@modelcontextprotocol/server-everything/index.js", filepath.Join(bin, "mcp-server-everything")); err != nil {
			t.Fatal(err)
		}
		st := failedToStart(t, r)
		notWritten(t, marker)
		if !strings.Contains(st.Error, "ENOTCACHED") {
			t.Errorf("error = %q", st.Error)
		}
	})
	t.Run("a program only a relative entry of PATH finds does not run", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "pwned")
		r := startMCPRun(t, mcpOpts{
			files: map[string]string{"node_modules/.bin/agentls-test-server": fmt.Sprintf("#!/bin/sh\necho planted > %q\n", marker)},
			options: map[string]any{"mcpServers": map[string]any{
				"planted": map[string]any{"command": "agentls-test-server"},
			}},
			script: oneWorker(finishTurn),
		})
		if err := os.Chmod(filepath.Join(r.root, "node_modules/.bin/agentls-test-server"), 0o755); err != nil {
			t.Fatal(err)
		}
		// agentls runs in the workspace, with a PATH that names
		// node_modules/.bin relatively, as some people's does.
		t.Chdir(r.root)
		t.Setenv("PATH", "node_modules/.bin"+string(filepath.ListSeparator)+os.Getenv("PATH"))
		st := failedToStart(t, r)
		notWritten(t, marker)
		if !strings.Contains(st.Error, "relative entries are not searched") {
			t.Errorf("error = %q", st.Error)
		}
	})
	t.Run("a server runs in agentls's own directory in the state directory", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 is not installed")
		}
		cwd := filepath.Join(t.TempDir(), "cwd")
		r := startMCPRun(t, mcpOpts{
			options: map[string]any{"mcpServers": map[string]any{
				"where": map[string]any{"command": "python3", "args": []string{"-c", "import os, sys; open(sys.argv[1], 'w').write(os.getcwd())", cwd}},
			}},
			script: oneWorker(finishTurn),
		})
		failedToStart(t, r) // it is no MCP server: it says where it ran and ends
		b, err := os.ReadFile(cwd)
		if err != nil {
			t.Fatal(err)
		}
		dir := string(b)
		state := os.Getenv("AGENTLS_STATE_DIR")
		if real, err := filepath.EvalSymlinks(state); err == nil {
			state = real
		}
		if filepath.Base(dir) != "mcp" || !strings.HasPrefix(dir, filepath.Join(state, "workspaces")+string(filepath.Separator)) {
			t.Fatalf("the server ran in %s; want <state>/workspaces/<workspace>/mcp (the state is %s, the workspace %s)", dir, state, r.root)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v, %v; want mode 0700", dir, fi, err)
		}
	})
}

func TestMCPRootsAreTheWorkspace(t *testing.T) {
	// A server of the Go SDK, in this process, over streamable HTTP: its
	// tool asks the client for its roots.
	srv := sdk.NewServer(&sdk.Implementation{Name: "roots", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "roots", Description: "Lists the client's roots."},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			resp, ok := req.Params.InputResponses["roots"]
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"roots": &sdk.ListRootsParams{}}}, nil, nil
			}
			res, ok := resp.(*sdk.ListRootsResult)
			if !ok {
				return nil, nil, fmt.Errorf("roots/list answered with a %T", resp)
			}
			var lines []string
			for _, r := range res.Roots {
				lines = append(lines, "root "+r.URI)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%d roots: %s", len(lines), strings.Join(lines, ", "))}}}, nil, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	r := startMCPRun(t, mcpOpts{
		options: map[string]any{"commands": "allow", "mcpServers": map[string]any{"ws": map[string]any{"url": ts.URL + "/mcp"}}},
		script:  oneWorker(toolTurn("mcp__ws__roots", `{}`), finishTurn),
	})
	res, err := r.run(t, api.RunParams{Prompt: "list the roots", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	got := r.toolResults(t, "mcp__ws__roots")
	want := "1 roots: root " + fileuri.FromPath(r.root)
	if len(got) != 1 || !*got[0].OK || !strings.Contains(got[0].Summary, want) {
		t.Fatalf("results = %+v, want %q", got, want)
	}
}
