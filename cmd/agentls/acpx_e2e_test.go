//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/testkit"
)

// acpxCLI is acpx's command line as scripts/acp-npm.sh installed it
// (AGENTLS_ACP_NPM): a second ACP client from npm, nobody at agentls wrote
// it. Without it the test is skipped, saying how to get it; under CI it
// fails instead.
func acpxCLI(t *testing.T) string {
	t.Helper()
	modules := acpNpm(t)
	cli := filepath.Join(modules, "acpx", "dist", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		why := "AGENTLS_ACP_NPM holds no acpx: run scripts/acp-npm.sh again (its lock file names acpx)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and acpx is missing: %s", why)
		}
		t.Skip(why)
	}
	return cli
}

// rpcMessage is one JSON-RPC message acpx printed (--format json prints
// every message of the connection, both ways, one a line).
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// runAcpx has acpx run one prompt with agentls acp as its agent in root,
// approving everything, and returns the messages and acpx's exit code.
func runAcpx(t *testing.T, env []string, root, prompt string, execArgs ...string) ([]rpcMessage, int) {
	t.Helper()
	cli := acpxCLI(t)
	args := []string{cli, "--approve-all", "--format", "json", "--cwd", root, "--agent", binary + " acp", "exec"}
	cmd := exec.CommandContext(testkit.Context(t), "node", append(append(args, execArgs...), prompt)...)
	cmd.Dir = root
	// acpx keeps its state in ~/.acpx: a home of the test's own.
	cmd.Env = append(append([]string(nil), env...), "HOME="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("acpx: %v\n%s", err, stderr.String())
	}
	var msgs []rpcMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var m rpcMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("acpx printed a line that is not JSON-RPC: %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("acpx's stdout:\n%s\nits stderr:\n%s", out, stderr.String())
		}
	})
	return msgs, code
}

// answerTo is the answer to the request of method in msgs: an error, or a
// result that has the member key. (Both sides number their requests, so
// an id alone does not say which request an answer is to.)
func answerTo(t *testing.T, msgs []rpcMessage, method, key string) rpcMessage {
	t.Helper()
	for i, m := range msgs {
		if m.Method != method || len(m.ID) == 0 {
			continue
		}
		for _, a := range msgs[i+1:] {
			if a.Method != "" || !bytes.Equal(a.ID, m.ID) {
				continue
			}
			var members map[string]json.RawMessage
			if a.Error != nil || json.Unmarshal(a.Result, &members) == nil && members[key] != nil {
				return a
			}
		}
	}
	t.Fatalf("no answer to %s", method)
	return rpcMessage{}
}

// updatesOf are the session/update params of msgs, decoded.
func updatesOf(t *testing.T, msgs []rpcMessage) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range msgs {
		if m.Method != "session/update" {
			continue
		}
		var p struct {
			Update map[string]any `json:"update"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p.Update)
	}
	return out
}

// TestACPWithAcpx drives agentls acp end to end with acpx, a second real
// ACP client from npm, in a temporary workspace, as a person would from
// the command line.
func TestACPWithAcpx(t *testing.T) {
	t.Run("runs a prompt: options with their categories, both model selections, the calls as the client shows them", func(t *testing.T) {
		root, env := acpWorkspace(t)
		// The engine option has a category of agentls's own: acpx sets it
		// by its id all the same, as it sets the mode.
		msgs, code := runAcpx(t, env, root, "Add a greet function", "--config-option", "engine=agentls", "--config-option", "mode=apply")
		if code != 0 {
			t.Fatalf("acpx exited %d", code)
		}
		set := 0
		for i, m := range msgs {
			if m.Method == "session/set_config_option" {
				if a := answerTo(t, msgs[i:], "session/set_config_option", "configOptions"); a.Error != nil {
					t.Fatalf("session/set_config_option %s: %+v", m.Params, a.Error)
				}
				set++
			}
		}
		if set != 2 {
			t.Fatalf("acpx set %d options, want the engine and the mode", set)
		}
		var session struct {
			ConfigOptions []struct {
				ID       string `json:"id"`
				Category string `json:"category"`
			} `json:"configOptions"`
			Models *struct {
				CurrentModelID  string            `json:"currentModelId"`
				AvailableModels []json.RawMessage `json:"availableModels"`
			} `json:"models"`
		}
		if err := json.Unmarshal(answerTo(t, msgs, "session/new", "sessionId").Result, &session); err != nil {
			t.Fatal(err)
		}
		var cats []string
		for _, o := range session.ConfigOptions {
			cats = append(cats, o.ID+":"+o.Category)
		}
		if strings.Join(cats, ",") != "model:model,mode:mode,engine:_engine" || session.Models == nil || !strings.HasPrefix(session.Models.CurrentModelID, "script:") {
			t.Fatalf("session/new: options %v, models %+v", cats, session.Models)
		}
		var prompt struct {
			StopReason string `json:"stopReason"`
		}
		if err := json.Unmarshal(answerTo(t, msgs, "session/prompt", "stopReason").Result, &prompt); err != nil || prompt.StopReason != "end_turn" {
			t.Fatalf("session/prompt: %+v, %v", prompt, err)
		}
		// The read: its title, and its result with the file's lines.
		readID, readText := "", ""
		for _, u := range updatesOf(t, msgs) {
			switch {
			case u["sessionUpdate"] == "tool_call" && u["title"] == "Read main.go" && u["kind"] == "read":
				readID, _ = u["toolCallId"].(string)
			case u["sessionUpdate"] == "tool_call_update" && readID != "" && u["toolCallId"] == readID && u["status"] == "completed":
				content, _ := u["content"].([]any)
				for _, c := range content {
					if block, _ := c.(map[string]any)["content"].(map[string]any); block != nil {
						readText, _ = block["text"].(string)
					}
				}
			}
		}
		if readID == "" || !strings.Contains(readText, "package main\n\nfunc main() {}") {
			t.Fatalf("the read: call %q, content %q", readID, readText)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "main.go")); !strings.Contains(string(b), "func greet()") {
			t.Fatalf("main.go = %q", b)
		}
	})

	t.Run("is refused a session for a model no prompt could use, in the prompt's words", func(t *testing.T) {
		root, env := acpWorkspace(t)
		env = append(env, "AGENTLS_MODEL=gemini:pro")
		msgs, code := runAcpx(t, env, root, "hello")
		a := answerTo(t, msgs, "session/new", "sessionId")
		if code == 0 || a.Error == nil || a.Error.Code != -32000 || !strings.Contains(a.Error.Message, `unknown model provider "gemini"`) {
			t.Fatalf("acpx exited %d; session/new answered %+v", code, a.Error)
		}
	})

	t.Run("is told a failed turn failed", func(t *testing.T) {
		root, env := acpWorkspace(t)
		sp := filepath.Join(t.TempDir(), "down.json")
		if err := os.WriteFile(sp, []byte(`{"agents": {"coordinator": [{"error": "the model is down"}]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		env = append(env, "AGENTLS_MODEL=script:"+sp)
		msgs, code := runAcpx(t, env, root, "hello")
		a := answerTo(t, msgs, "session/prompt", "stopReason")
		if code == 0 || a.Error == nil || a.Error.Code != -32603 || !strings.Contains(a.Error.Message, "Planning failed") {
			t.Fatalf("acpx exited %d; session/prompt answered %+v", code, a.Error)
		}
	})
}
