package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/workforce"
)

// npmModules is node_modules of scripts/mcp-npm.sh (AGENTLS_MCP_NPM); the
// test is skipped without it, and fails under CI=true.
func npmModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTLS_MCP_NPM")
	why := ""
	if dir == "" {
		why = "AGENTLS_MCP_NPM is not set: run `bash scripts/test.sh go` (it installs the MCP SDK from npm), or set AGENTLS_MCP_NPM=$(bash scripts/mcp-npm.sh)"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		why = "AGENTLS_MCP_NPM=" + dir + " holds no node_modules/@modelcontextprotocol/sdk: run scripts/mcp-npm.sh"
	} else if _, err := exec.LookPath("node"); err != nil {
		why = "node is not installed"
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the MCP SDK is missing: %s", why)
		}
		t.Skip(why)
	}
	return filepath.Join(dir, "node_modules")
}

// buildAgentls builds the agentls binary the bridge's entries start.
func buildAgentls(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentls")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/agentls")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBridgeFromTheTypeScriptSDK has the TypeScript SDK's MCP client, as an
// external agent would, start `agentls mcp` from the entry a real sidecar
// handed out for a running subtask, and read, edit and run a command
// through it.
func TestBridgeFromTheTypeScriptSDK(t *testing.T) {
	modules := npmModules(t)
	bin := buildAgentls(t)
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root := t.TempDir()
	for name, text := range map[string]string{
		"main.go":   "package main\n\nfunc main() {}\n",
		"notes.txt": "on disk\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(root, ".orchestration"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The worker of subtask 1 thinks for a minute: meanwhile the external
	// agent works through the bridge as that subtask.
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Work through the bridge"}]}}]}],
  "1": [{"delayMs": 60000, "toolCalls": [{"name": "finish", "arguments": {"summary": "done"}}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	servers := make(chan *Server, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	ed, err := headless.Start(ctx, headless.Options{
		Root: root,
		Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
			return Serve(ctx, in, out, Options{Version: "test", Cwd: root, Getenv: func(string) string { return "" },
				bridgeExecutable: bin, onServer: func(s *Server) { servers <- s }})
		},
		Caps:                  headless.FullCapabilities(),
		InitializationOptions: map[string]any{"model": "script:" + script, "editMode": "apply", "commands": "ask"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	srv := <-servers
	ed.OpenBuffer("notes.txt", "unsaved text in the editor\n")
	var mu sync.Mutex
	var approvals []string
	ed.Handle(api.MethodShowMessageRequest, func(_ context.Context, raw json.RawMessage) (any, error) {
		var p api.ShowMessageRequestParams
		_ = json.Unmarshal(raw, &p)
		mu.Lock()
		approvals = append(approvals, p.Message)
		mu.Unlock()
		return api.MessageActionItem{Title: "Run"}, nil
	})

	done := make(chan error, 1)
	go func() {
		var res api.RunResult
		done <- ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "bridge", TaskID: "t1"}, &res)
	}()
	engine, err := srv.Work()
	if err != nil {
		t.Fatal(err)
	}
	var entry api.MCPServer
	for deadline := time.Now().Add(20 * time.Second); ; {
		entry, err = engine.MCPEntry("t1", "1")
		if err == nil {
			break
		}
		if !errors.Is(err, workforce.ErrWrongState) && !errors.Is(err, workforce.ErrUnknownTask) || time.Now().After(deadline) {
			t.Fatalf("MCPEntry: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "bridge-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(entry)
	if err := os.WriteFile(filepath.Join(dir, "entry.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	node := exec.CommandContext(ctx, "node", "client.mjs", "entry.json")
	node.Dir = dir
	var stderr strings.Builder
	node.Stderr = &stderr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("the TypeScript client: %v\n%s", err, stderr.String())
	}
	var got struct {
		Tools                              []string
		Read, ReadMain, Edit, Run, Outside struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	t.Run("serves read, write, edit and run-command", func(t *testing.T) {
		if !slices.Equal(got.Tools, []string{"edit_file", "read_file", "run_command", "write_file"}) {
			t.Fatalf("tools = %v", got.Tools)
		}
	})
	t.Run("reads the editor's buffer, unsaved text included", func(t *testing.T) {
		if got.Read.IsError || !strings.Contains(got.Read.Text, "unsaved text in the editor") {
			t.Fatalf("read = %+v", got.Read)
		}
	})
	t.Run("edits through the editing pipeline: the editor applies it, the trace records it", func(t *testing.T) {
		if got.Edit.IsError {
			t.Fatalf("edit = %+v", got.Edit)
		}
		b, err := os.ReadFile(filepath.Join(root, "main.go"))
		if err != nil || !strings.Contains(string(b), `println("bridged")`) {
			t.Fatalf("main.go = %q, %v", b, err)
		}
		applied := false
		for _, c := range ed.ReverseCalls() {
			applied = applied || c.Method == api.MethodApplyEdit && strings.Contains(string(c.Params), "main.go")
		}
		if !applied {
			t.Fatal("no workspace/applyEdit reached the editor")
		}
		var tr api.TraceResult
		if err := ed.Call(ctx, api.MethodTrace, api.TraceParams{Path: "main.go"}, &tr); err != nil {
			t.Fatal(err)
		}
		if len(tr.Entries) != 1 || tr.Entries[0].TaskID != "t1" || tr.Entries[0].SubtaskID != "1" || tr.Entries[0].Operation != api.OpUpdate {
			t.Fatalf("trace = %+v", tr.Entries)
		}
	})
	t.Run("runs a command after the person approved it", func(t *testing.T) {
		if got.Run.IsError || !strings.Contains(got.Run.Text, "bridged-command") {
			t.Fatalf("run = %+v", got.Run)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(approvals) != 1 || !strings.Contains(approvals[0], "echo bridged-command") {
			t.Fatalf("approvals = %q", approvals)
		}
	})
	t.Run("keeps the agent in the workspace", func(t *testing.T) {
		if !got.Outside.IsError {
			t.Fatalf("read outside = %+v", got.Outside)
		}
	})
	t.Run("shows the bridged calls as the subtask's tool calls", func(t *testing.T) {
		var tools []string
		for _, n := range ed.Notifications() {
			var p api.TaskUpdateParams
			if n.Method == api.MethodTaskUpdate && n.Decode(&p) == nil && p.Event.Kind == api.EventToolCall && p.Event.SubtaskID == "1" {
				tools = append(tools, p.Event.Tool)
			}
		}
		if !slices.Equal(tools, []string{"read_file", "read_file", "edit_file", "run_command", "read_file"}) {
			t.Fatalf("toolCall events = %v", tools)
		}
	})
	var stop api.StopResult
	if err := ed.Call(ctx, api.MethodStop, api.StopParams{TaskID: "t1"}, &stop); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run did not end after stop")
	}
	t.Run("refuses the entry once its subtask has ended", func(t *testing.T) {
		cmd := exec.Command(bin, "mcp")
		cmd.Env = append(os.Environ(), "AGENTLS_MCP_SOCKET="+entry.Env["AGENTLS_MCP_SOCKET"], "AGENTLS_MCP_TOKEN="+entry.Env["AGENTLS_MCP_TOKEN"])
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "unknown or revoked token") {
			t.Fatalf("agentls mcp: %v: %s", err, out)
		}
	})
}
