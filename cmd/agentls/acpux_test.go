//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// TestServeTellsTheProtocolsApart: agentls serve takes the editor's
// first byte that is not white space; `{` is ACP, and an LSP message
// always starts with a header, so no LSP client is taken for ACP, whatever
// its initialize holds (an LSP initialize has no protocolVersion).
func TestServeTellsTheProtocolsApart(t *testing.T) {
	lspInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`
	framed := func(headers ...string) string {
		return strings.Join(headers, "\r\n") + "\r\n\r\n" + lspInit
	}
	length := "Content-Length: " + itoa(len(lspInit))
	for _, c := range []struct {
		name, in string
		lsp      bool
	}{
		{"an LSP initialize with Content-Length alone", framed(length), true},
		{"an LSP initialize with Content-Type first", framed("Content-Type: application/vscode-jsonrpc; charset=utf-8", length), true},
		{"an LSP initialize after blank lines", "\r\n\r\n" + framed(length), true},
		{"an ACP initialize on one line", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n", false},
		{"an ACP initialize without protocolVersion, on one line", lspInit + "\n", false},
	} {
		t.Run("serves "+c.name+" as "+map[bool]string{true: "LSP", false: "ACP"}[c.lsp], func(t *testing.T) {
			_, env := acpWorkspace(t)
			cmd := exec.CommandContext(testkit.Context(t), binary, "serve")
			cmd.Env = env
			cmd.Dir = t.TempDir()
			stdin, err := cmd.StdinPipe()
			must(t, err)
			stdout, err := cmd.StdoutPipe()
			must(t, err)
			must(t, cmd.Start())
			t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
			_, err = io.WriteString(stdin, c.in)
			must(t, err)
			r := bufio.NewReader(stdout)
			first, err := r.ReadString('\n')
			must(t, err)
			if c.lsp {
				if !strings.HasPrefix(first, "Content-Length: ") {
					t.Fatalf("the answer begins %q: not LSP's framing", first)
				}
				return
			}
			var reply struct {
				Result struct {
					ProtocolVersion int `json:"protocolVersion"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(first), &reply); err != nil || reply.Result.ProtocolVersion != 1 {
				t.Fatalf("the answer %q is not ACP's initialize: %v", first, err)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestAnInterruptedSessionSaysWhatHappened: a prompt stopped by the editor
// closing agentls (SIGTERM), or by agentls being killed, is told so when
// the session is loaded again, never as the person's stop, nor with the
// plan as the agent's last words.
func TestAnInterruptedSessionSaysWhatHappened(t *testing.T) {
	slow := `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Wait for a long time"}]}}]}],
  "1": [{"delayMs": 600000, "text": "never"}]}}`
	for _, c := range []struct {
		name string
		sig  syscall.Signal
		says string
	}{
		{"the editor closing agentls", syscall.SIGTERM, "Interrupted after 0 of 1 subtasks: the editor closed agentls."},
		{"agentls killed", syscall.SIGKILL, "Interrupted: agentls ended before this task did (it was killed, or it crashed)."},
	} {
		t.Run("replays a prompt interrupted by "+c.name, func(t *testing.T) {
			root, env := acpWorkspace(t)
			sp := filepath.Join(t.TempDir(), "slow.json")
			must(t, os.WriteFile(sp, []byte(slow), 0o644))
			env = append(env, "AGENTLS_MODEL=script:"+sp)
			agent, client, _, cmd := runACP(t, env, "acp")
			ctx := testkit.Context(t)
			_, err := agent.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
			must(t, err)
			s, err := agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: root})
			must(t, err)
			go func() {
				_, _ = agent.Prompt(ctx, &acp.PromptRequest{SessionID: s.SessionID, Prompt: []acp.ContentBlock{acp.Text("Wait")}})
			}()
			client.await(t, "the subtask running", func(u acp.SessionUpdate) bool {
				p, ok := u.(acp.Plan)
				return ok && len(p.Entries) == 1 && p.Entries[0].Status == acp.PlanInProgress
			})
			must(t, cmd.Process.Signal(c.sig))
			_ = cmd.Wait()

			again, client2, _, _ := runACP(t, env, "acp")
			_, err = again.Initialize(ctx, &acp.InitializeRequest{ProtocolVersion: 1})
			must(t, err)
			_, err = again.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: s.SessionID, Cwd: root})
			must(t, err)
			var said []string
			for _, u := range client2.seen() {
				if m, ok := u.(acp.AgentMessageChunk); ok {
					said = append(said, m.Content.Text)
				}
			}
			if len(said) != 1 || !strings.HasPrefix(said[0], c.says) || strings.Contains(said[0], "by the user") {
				t.Fatalf("the agent's messages replayed: %q; want %q", said, c.says)
			}
		})
	}
}
