//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// greetScript plans one subtask that reads main.go, adds greet, finishes.
const greetScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Add a greet function"}]}}]}],
  "1": [{"text": "Reading main.go.", "toolCalls": [{"name": "read_file", "arguments": {"path": "main.go"}}]},
        {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.go", "old_string": "func main() {}", "new_string": "func main() {}\n\nfunc greet() string { return \"hi\" }"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "greet added"}}]}]}}`

// acpWorkspace writes main.go and the script, and returns the root and the
// environment agentls runs with (its model the script, its state in the
// test's directory).
func acpWorkspace(t *testing.T) (string, []string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteFiles(t, root, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
	sp := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(sp, []byte(greetScript), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "AGENTLS_MODEL=script:"+sp, "AGENTLS_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
	return root, env
}

// goClient is package acp's client side over the binary's stdio.
type goClient struct {
	acp.UnimplementedClient
	mu      sync.Mutex
	updates []acp.SessionUpdate
	changed chan struct{} // closed and renewed at every update
}

func (c *goClient) SessionUpdate(_ context.Context, p *acp.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, p.Update)
	close(c.changed)
	c.changed = make(chan struct{})
	return nil
}

// await waits until an update satisfies cond.
func (c *goClient) await(t *testing.T, what string, cond func(acp.SessionUpdate) bool) {
	t.Helper()
	ctx := testkit.Context(t)
	for i := 0; ; {
		c.mu.Lock()
		for ; i < len(c.updates); i++ {
			if cond(c.updates[i]) {
				c.mu.Unlock()
				return
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no update %s", what)
		}
	}
}

// seen is a copy of the updates so far.
func (c *goClient) seen() []acp.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.SessionUpdate(nil), c.updates...)
}

func (c *goClient) RequestPermission(_ context.Context, p *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	return &acp.RequestPermissionResponse{Outcome: acp.Selected(p.Options[0].OptionID)}, nil
}

// runACP starts the binary with args for root and connects a Go client.
func runACP(t *testing.T, env []string, args ...string) (*acp.AgentConn, *goClient, io.WriteCloser, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &goClient{changed: make(chan struct{})}
	conn := acp.NewConn(acp.NewStream(stdout, stdin, nil), nil)
	go func() { _ = conn.Serve(context.Background(), acp.ServeClient(c, nil)) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
		_ = conn.Close()
		if t.Failed() {
			t.Logf("agentls's stderr:\n%s", stderr.String())
		}
	})
	return acp.NewAgentConn(conn, acp.DefaultTimeouts()), c, stdin, cmd
}

func TestACPBinary(t *testing.T) {
	for _, args := range [][]string{{"acp"}, {"serve"}, {}} {
		name := "agentls " + strings.Join(args, " ")
		t.Run(name+" serves an ACP client a prompt and exits 0 when its input ends", func(t *testing.T) {
			root, env := acpWorkspace(t)
			agent, client, stdin, cmd := runACP(t, env, args...)
			ctx := testkit.Context(t)
			init, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1,
				ClientCapabilities: acp.ClientCapabilities{FS: acp.FileSystemCapabilities{ReadTextFile: false}}})
			if err != nil || init.AgentInfo.Name != "agentls" {
				t.Fatalf("initialize = %+v, %v", init, err)
			}
			s, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: root})
			if err != nil {
				t.Fatal(err)
			}
			res, err := agent.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: []acp.ContentBlock{acp.Text("Add a greet function")}})
			if err != nil || res.StopReason != acp.StopEndTurn {
				t.Fatalf("prompt = %+v, %v", res, err)
			}
			b, _ := os.ReadFile(filepath.Join(root, "main.go"))
			if !strings.Contains(string(b), "func greet()") {
				t.Fatalf("main.go = %q", b)
			}
			client.mu.Lock()
			n := len(client.updates)
			client.mu.Unlock()
			if n == 0 {
				t.Fatal("no session/update")
			}
			_ = stdin.Close()
			err = cmd.Wait()
			if err != nil {
				t.Fatalf("agentls %v ended with %v, want exit 0", args, err)
			}
		})
	}

	t.Run("agentls acp exits 1 when its input ends inside a message", func(t *testing.T) {
		_, env := acpWorkspace(t)
		cmd := exec.Command(binary, "acp")
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" + `{"jsonrpc":"2.0","id":2,"meth`)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("exit = %v", err)
		}
		// Its first message was still answered, on a line of its own.
		line, _, _ := bufio.NewReader(bytes.NewReader(out)).ReadLine()
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				ProtocolVersion int `json:"protocolVersion"`
			} `json:"result"`
		}
		if err := json.Unmarshal(line, &reply); err != nil || reply.ID != 1 || reply.Result.ProtocolVersion != 1 {
			t.Fatalf("stdout %q: %v", out, err)
		}
	})

	t.Run("agentls serve still serves an LSP editor after looking at its first byte", func(t *testing.T) {
		ed := startBinary(t)
		var res struct {
			Data string `json:"data"`
		}
		if err := ed.Call(testkit.Context(t), "agent/ping", map[string]string{"data": "lsp"}, &res); err != nil || res.Data != "lsp" {
			t.Fatalf("ping = %v, %v", res, err)
		}
	})
}

// acpNpm is where scripts/acp-npm.sh installed the ACP SDK
// (AGENTLS_ACP_NPM). Without it (or without node) the test is skipped,
// saying how to get it; under CI it fails instead.
func acpNpm(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTLS_ACP_NPM")
	why := ""
	switch {
	case dir == "":
		why = "AGENTLS_ACP_NPM is not set: run `bash scripts/test.sh go` (it installs the ACP SDK from npm), or set AGENTLS_ACP_NPM=$(bash scripts/acp-npm.sh)"
	default:
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
			why = "AGENTLS_ACP_NPM=" + dir + " holds no node_modules/@agentclientprotocol/sdk: run scripts/acp-npm.sh"
		} else if _, err := exec.LookPath("node"); err != nil {
			why = "node is not installed"
		}
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the ACP SDK is missing: %s", why)
		}
		t.Skip(why)
	}
	return filepath.Join(dir, "node_modules")
}

// TestACPWithTheSDKClient drives agentls acp with the client of the ACP
// SDK (@agentclientprotocol/sdk, acp/testdata/npm/client.mjs): a client
// nobody at agentls wrote, which also checks every message against the
// protocol's schema as it parses it.
func TestACPWithTheSDKClient(t *testing.T) {
	modules := acpNpm(t)
	root, env := acpWorkspace(t)
	out, stderr, err := runSDKClient(t, modules, env, root, "Add a greet function")
	if err != nil {
		t.Fatalf("the SDK client: %v\n%s", err, stderr)
	}
	checkSDKRun(t, root, out, stderr)

	t.Run("two sessions on one root each play the scripted model from its start", func(t *testing.T) {
		root, env := acpWorkspace(t)
		out, stderr, err := runSDKClient(t, modules, env, root, "Add a greet function", "2")
		if err != nil {
			t.Fatalf("the SDK client: %v\n%s", err, stderr)
		}
		var got struct {
			Authenticated bool     `json:"authenticated"`
			StopReasons   []string `json:"stopReasons"`
			Models        []string `json:"models"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !got.Authenticated || strings.Join(got.StopReasons, ",") != "end_turn,end_turn" || len(got.Models) != 2 || !strings.HasPrefix(got.Models[1], "script:") {
			t.Fatalf("two sessions: %+v", got)
		}
	})
}

// runSDKClient runs acp/testdata/npm/client.mjs against the binary in
// root, and returns what it printed.
func runSDKClient(t *testing.T, modules string, env []string, root string, args ...string) ([]byte, string, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "acp", "testdata", "npm", "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "client.mjs"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	node := exec.CommandContext(testkit.Context(t), "node", append([]string{"client.mjs", binary, root}, args...)...)
	node.Dir = dir
	node.Env = env
	var stderr bytes.Buffer
	node.Stderr = &stderr
	out, err := node.Output()
	return out, stderr.String(), err
}

// checkSDKRun holds what the SDK client saw of one prompt.
func checkSDKRun(t *testing.T, root string, out []byte, stderr string) {
	t.Helper()
	var got struct {
		ProtocolVersion int    `json:"protocolVersion"`
		Agent           string `json:"agent"`
		Mode            string `json:"mode"`
		StopReason      string `json:"stopReason"`
		ExitCode        int    `json:"exitCode"`
		Meta            struct {
			State   string `json:"state"`
			Changes []struct {
				Path    string `json:"path"`
				Applied bool   `json:"applied"`
			} `json:"changes"`
		} `json:"meta"`
		Reads  []string `json:"reads"`
		Writes []struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		} `json:"writes"`
		Permissions []struct {
			ToolCallID string   `json:"toolCallId"`
			Title      string   `json:"title"`
			Options    []string `json:"options"`
			Diffs      []struct {
				Path    string  `json:"path"`
				OldText *string `json:"oldText"`
				NewText string  `json:"newText"`
			} `json:"diffs"`
		} `json:"permissions"`
		Updates []struct {
			Kind       string   `json:"kind"`
			ToolCallID string   `json:"toolCallId"`
			Title      string   `json:"title"`
			Status     string   `json:"status"`
			Content    []string `json:"content"`
			Entries    []string `json:"entries"`
			Text       string   `json:"text"`
		} `json:"updates"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s\n%s", err, out, stderr)
	}
	mainGo := filepath.Join(root, "main.go")
	switch {
	case got.ProtocolVersion != 1 || got.Agent != "agentls" || got.Mode != "propose":
		t.Fatalf("initialize and session/new: %+v", got)
	case got.StopReason != acp.StopEndTurn || got.Meta.State != "done" || len(got.Meta.Changes) != 1 || !got.Meta.Changes[0].Applied:
		t.Fatalf("prompt: stop reason %q, _meta.agentls %+v", got.StopReason, got.Meta)
	case got.ExitCode != 0:
		t.Fatalf("agentls acp exited %d after its input ended", got.ExitCode)
	case len(got.Reads) == 0 || got.Reads[0] != mainGo:
		t.Fatalf("fs/read_text_file: %v", got.Reads)
	case len(got.Permissions) != 1:
		t.Fatalf("session/request_permission: %+v", got.Permissions)
	case len(got.Writes) != 1 || got.Writes[0].Path != mainGo || !strings.Contains(got.Writes[0].Content, "func greet()"):
		t.Fatalf("fs/write_text_file: %+v", got.Writes)
	}
	p := got.Permissions[0]
	if p.Title != "Edit main.go" || strings.Join(p.Options, ",") != "Apply:allow_once,Reject:reject_once" ||
		len(p.Diffs) != 1 || p.Diffs[0].Path != mainGo || p.Diffs[0].OldText == nil || p.Diffs[0].NewText != got.Writes[0].Content {
		t.Fatalf("the permission asked: %+v", p)
	}
	// The updates, as the SDK parsed them: the plan, the calls (the edit
	// announced before it was asked about, ended with its diff), the
	// summary last.
	var kinds []string
	announced, editDiff := false, false
	for _, u := range got.Updates {
		kinds = append(kinds, u.Kind)
		if u.Kind == "tool_call" && u.ToolCallID == p.ToolCallID {
			announced = true
		}
		if u.Kind == "tool_call_update" && u.ToolCallID == p.ToolCallID && u.Status == "completed" && len(u.Content) > 0 && u.Content[0] == "diff" {
			editDiff = true
		}
	}
	last := got.Updates[len(got.Updates)-1]
	switch {
	case kinds[0] != "available_commands_update" || !contains(kinds, "plan") || !contains(kinds, "agent_thought_chunk"):
		t.Fatalf("update kinds %v", kinds)
	case !announced || !editDiff:
		t.Fatalf("the edit's call: announced %v, ended with its diff %v; updates %+v", announced, editDiff, got.Updates)
	case last.Kind != "agent_message_chunk" || last.Text != "greet added":
		t.Fatalf("last update %+v", last)
	}
	b, _ := os.ReadFile(mainGo)
	if !strings.Contains(string(b), "func greet()") {
		t.Fatalf("main.go = %q", b)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
