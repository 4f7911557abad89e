package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/internal/testkit"
)

// testKey is the API key of these tests: long enough to be redacted.
const testKey = "sk-proj-e2e0123456789abcdefKEY"

// secretScript is a model that asks for the key every way it can: printenv,
// a .env file whose reading fails, a file read, then repeats what it saw in
// its text, a file it writes and its summary (@KEY@ is the key). On the
// second agent/run it fails with an error that quotes the key, as a
// provider that echoes the request's headers does.
var secretScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Look at the environment"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "printenv OPENAI_API_KEY"}}]},
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "printenv OPENAI_API_KEY | rev; echo reversed"}}]},
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "cat .env; exit 3"}}]},
    {"toolCalls": [{"name": "read_file", "arguments": {"path": ".env"}}]},
    {"text": "I saw @KEY@ in .env.", "toolCalls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "key: @KEY@\n"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "the key is @KEY@"}}]}],
  "2:coordinator": [{"error": "401 Unauthorized (Authorization: Bearer @KEY@)"}]
}}`

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// debugLogger logs everything, as `agentls serve --log-level debug` does.
func debugLogger(sink io.Writer) *zap.Logger {
	enc := zap.NewProductionEncoderConfig()
	return zap.New(zapcore.NewCore(zapcore.NewConsoleEncoder(enc), zapcore.AddSync(sink), zapcore.DebugLevel))
}

// scriptedProvider is an OpenAI-compatible server that answers from a
// script (the coordinator when the plan tool is offered, "N:coordinator"
// for its N-th conversation, else subtask "1") and keeps every request it
// was sent. An error turn is a 401 whose message is the turn's error.
type scriptedProvider struct {
	srv *httptest.Server

	mu       sync.Mutex
	agents   map[string][]clients.Turn
	next     map[string]int
	plans    int
	bodies   []string
	authKeys []string
}

func newScriptedProvider(t *testing.T, script string) *scriptedProvider {
	t.Helper()
	var s struct {
		Agents map[string][]clients.Turn `json:"agents"`
	}
	if err := json.Unmarshal([]byte(script), &s); err != nil {
		t.Fatal(err)
	}
	p := &scriptedProvider{agents: s.Agents, next: map[string]int{}}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *scriptedProvider) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		// The model list agentls reads the context window from: a server
		// without one.
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	agent := "1"
	p.mu.Lock()
	for _, tl := range req.Tools {
		if tl.Function.Name == "plan" {
			p.plans++ // the coordinator answers once per run
			agent = clients.ScriptKey(clients.AgentCoordinator, p.plans)
		}
	}
	p.bodies = append(p.bodies, string(body))
	p.authKeys = append(p.authKeys, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	i := p.next[agent]
	p.next[agent]++
	p.mu.Unlock()
	if i >= len(p.agents[agent]) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":"script exhausted for %s","type":"invalid_request_error"}}`, agent)
		return
	}
	turn := p.agents[agent][i]
	if turn.Error != "" {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": turn.Error, "type": "invalid_request_error", "code": "invalid_api_key"}})
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choices []any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": choices, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	// The text streams in small pieces, as real providers send it: a key
	// it holds is split across deltas.
	chunk(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for text := turn.Text; text != ""; {
		n := min(len(text), 7)
		chunk(delta(map[string]any{"content": text[:n]}, nil), nil)
		text = text[n:]
	}
	for j, c := range turn.ToolCalls {
		call := map[string]any{"index": j, "id": fmt.Sprintf("call_%d_%d", i, j), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": string(c.Arguments)}}
		chunk(delta(map[string]any{"tool_calls": []any{call}}, nil), nil)
	}
	finish := "stop"
	if len(turn.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	chunk(delta(map[string]any{}, finish), nil)
	chunk([]any{}, map[string]any{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (p *scriptedProvider) requests() (bodies, keys []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.bodies), slices.Clone(p.authKeys)
}

// filesUnder returns the path and content of every file under dir.
func filesUnder(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

func TestSecretsStayInTheSidecar(t *testing.T) {
	script := strings.ReplaceAll(secretScript, "@KEY@", testKey)
	for _, model := range []string{"scripted model", "OpenAI-compatible provider"} {
		for _, editorRuns := range []bool{true, false} {
			name := model + ", commands run by the sidecar"
			if editorRuns {
				name = model + ", commands run by the editor"
			}
			t.Run(name, func(t *testing.T) {
				t.Setenv("OPENAI_API_KEY", testKey)
				state := filepath.Join(t.TempDir(), "state")
				t.Setenv("AGENTLS_STATE_DIR", state)
				root := workspace(t, map[string]string{".env": "OPENAI_API_KEY=" + testKey + "\n", ".orchestration/.keep": ""})
				opts := map[string]any{"editMode": "apply", "commands": "allow", "trace": true}
				var provider *scriptedProvider
				if model == "scripted model" {
					sp := filepath.Join(t.TempDir(), "script.json")
					if err := os.WriteFile(sp, []byte(script), 0o644); err != nil {
						t.Fatal(err)
					}
					opts["model"] = "script:" + sp
				} else {
					provider = newScriptedProvider(t, script)
					t.Setenv("OPENAI_BASE_URL", provider.srv.URL+"/v1")
					opts["model"] = "openai:test-model"
				}
				caps := headless.FullCapabilities()
				caps.RunCommand = editorRuns
				logs := &lockedBuffer{}
				recording := filepath.Join(t.TempDir(), "recording.json")
				ed := start(t, headless.Options{
					Root: root,
					Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
						return handlers.Serve(ctx, in, out, handlers.Options{Version: "test", Cwd: root, Base: api.DefaultSettings(),
							Log: debugLogger(logs), Record: recording})
					},
					Caps:                  caps,
					InitializationOptions: opts,
				})

				var res api.RunResult
				if err := ed.Call(testkit.Context(t), api.MethodRun, api.RunParams{Prompt: "look at the environment", TaskID: "t1"}, &res); err != nil {
					t.Fatal(err)
				}
				if res.State != api.TaskDone {
					t.Fatalf("result = %+v", res)
				}
				result, _ := json.Marshal(res)
				// The second run fails with an error quoting the key.
				var failed api.RunResult
				if err := ed.Call(testkit.Context(t), api.MethodRun, api.RunParams{Prompt: "again", TaskID: "t2"}, &failed); err != nil {
					t.Fatal(err)
				}
				if failed.State != api.TaskFailed || !strings.Contains(failed.Summary, "Planning failed") {
					t.Fatalf("second result = %+v", failed)
				}
				failedResult, _ := json.Marshal(failed)
				if _, err := ed.Shutdown(testkit.Context(t)); err != nil {
					t.Fatal(err)
				}

				// The commands ran, and did not see the key.
				var outputs []string
				for _, n := range ed.Notifications() {
					var u api.TaskUpdateParams
					if n.Method == api.MethodTaskUpdate && n.Decode(&u) == nil && u.Event.Kind == api.EventToolResult && u.Event.Tool == "run_command" {
						outputs = append(outputs, u.Event.Summary)
					}
				}
				if len(outputs) != 3 || !strings.Contains(outputs[1], "reversed") || strings.Contains(outputs[1], reverse(testKey)) {
					t.Errorf("the commands' results: %q", outputs)
				}
				if !strings.Contains(outputs[2], "[redacted OPENAI_API_KEY]") {
					t.Errorf("the .env output was not redacted: %q", outputs[2])
				}
				if editorRuns {
					var asked int
					for _, c := range ed.ReverseCalls() {
						var p api.RunCommandParams
						if c.Method == api.MethodRunCommand && json.Unmarshal(c.Params, &p) == nil {
							asked++
							if !slices.Contains(p.UnsetEnv, "OPENAI_API_KEY") {
								t.Errorf("agent/runCommand does not unset the key: %s", c.Params)
							}
						}
					}
					if asked != 3 {
						t.Errorf("%d agent/runCommand calls, want 3", asked)
					}
				}

				// Nowhere a trace of the key.
				places := map[string]string{"the log": logs.String(), "the run result": string(result), "the failed run's result": string(failedResult)}
				var deltas strings.Builder // the streamed text, as an editor shows it
				for i, n := range ed.Notifications() {
					places[fmt.Sprintf("notification %d (%s)", i+1, n.Method)] = string(n.Params)
					var u api.TaskUpdateParams
					if n.Method == api.MethodTaskUpdate && n.Decode(&u) == nil && u.Event.Kind == api.EventMessageDelta {
						deltas.WriteString(u.Event.Text)
					}
				}
				places["the messageDelta text put together"] = deltas.String()
				if !strings.Contains(deltas.String(), "I saw [redacted OPENAI_API_KEY] in .env.") {
					t.Errorf("the streamed text: %q", deltas.String())
				}
				for path, text := range filesUnder(t, state) {
					places["session file "+path] = text
				}
				for path, text := range filesUnder(t, filepath.Join(root, ".orchestration")) {
					places["trace file "+path] = text
				}
				rec, err := os.ReadFile(recording)
				if err != nil {
					t.Fatal(err)
				}
				places["the recording"] = string(rec)
				if provider != nil {
					// What the model was given: everything but its own
					// earlier answers, which the scripted model made up.
					bodies, keys := provider.requests()
					for i, b := range bodies {
						var req struct {
							Messages []map[string]any `json:"messages"`
						}
						if err := json.Unmarshal([]byte(b), &req); err != nil {
							t.Fatal(err)
						}
						for j, m := range req.Messages {
							if m["role"] != "assistant" {
								js, _ := json.Marshal(m)
								places[fmt.Sprintf("model request %d, message %d", i+1, j+1)] = string(js)
							}
						}
					}
					if len(bodies) != 8 || keys[0] != testKey {
						t.Errorf("%d model requests (want 8), authenticated with the key: %v", len(bodies), keys[0] == testKey)
					}
				}
				for where, text := range places {
					if i := strings.Index(text, testKey); i >= 0 {
						t.Errorf("%s holds the key: …%s…", where, text[max(0, i-200):min(len(text), i+len(testKey)+40)])
					}
				}
				for _, want := range []string{"tool failed", "planning failed", "[redacted OPENAI_API_KEY]"} {
					if !strings.Contains(logs.String(), want) {
						t.Errorf("the debug log lacks %q", want)
					}
				}
				if !strings.Contains(string(rec), "the key is [redacted OPENAI_API_KEY]") {
					t.Errorf("the recording:\n%s", rec)
				}
			})
		}
	}
}

func TestCommandEnvPassesNamedVariables(t *testing.T) {
	const passed, kept = "passed-token-0123456789", "kept-token-0123456789"
	script := `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Use the token"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "echo \"passed=$(printenv PASSED_TEST_TOKEN | rev) kept=$(printenv KEPT_TEST_TOKEN | rev)\""}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "done"}}]}]
}}`
	for _, editorRuns := range []bool{true, false} {
		t.Run(fmt.Sprintf("commands run by the editor: %v", editorRuns), func(t *testing.T) {
			t.Setenv("PASSED_TEST_TOKEN", passed)
			t.Setenv("KEPT_TEST_TOKEN", kept)
			caps := headless.FullCapabilities()
			caps.RunCommand = editorRuns
			r := startRun(t, runOpts{script: script, caps: &caps,
				options: map[string]any{"commandEnv": map[string]any{"pass": []string{"PASSED_TEST_TOKEN"}}}})
			if res, err := r.run(t, api.RunParams{Prompt: "use the token", TaskID: "t1"}); err != nil || res.State != api.TaskDone {
				t.Fatalf("result %+v, %v", res, err)
			}
			ev := toolResult(t, r, "run_command")
			if want := "passed=" + reverse(passed) + " kept="; !strings.Contains(ev.Summary, want) {
				t.Fatalf("the command printed %q, want %q", ev.Summary, want)
			}
		})
	}
}
