package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// agentlsIn runs the binary in dir with only the environment env (and a
// PATH, a HOME and a state directory of the test's own): the person's keys,
// models and Ollama never reach it.
func agentlsIn(t *testing.T, dir string, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(testkit.Context(t), binary, args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AGENTLS_STATE_DIR=" + filepath.Join(t.TempDir(), "state")}
	if _, ok := env["AGENTLS_STATE_DIR"]; ok {
		cmd.Env = cmd.Env[:2]
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// openaiServer lists models and answers 404 for any other model, as
// OpenAI does.
func openaiServer(t *testing.T, models ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet && r.URL.Path == "/v1/models" {
			var data []string
			for _, m := range models {
				data = append(data, fmt.Sprintf(`{"id":%q,"object":"model","created":1,"owned_by":"system"}`, m))
			}
			_, _ = io.WriteString(w, `{"object":"list","data":[`+strings.Join(data, ",")+`]}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"The model does not exist or you do not have access to it.","type":"invalid_request_error","code":"model_not_found"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// nowhere is the address of a server that is no longer there.
func nowhere(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

func TestAgentlsModels(t *testing.T) {
	base := openaiServer(t, "gpt-4.1", "gpt-4.1-mini")
	env := map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-cmd-0123456789abcdef", "OLLAMA_HOST": nowhere(t)}

	t.Run("lists what each provider offers, the current model marked, and how to set up the others", func(t *testing.T) {
		code, out, errs := agentlsIn(t, t.TempDir(), env, "models", "--model", "openai:gpt-4.1-mini")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		for _, want := range []string{
			"Current model: openai:gpt-4.1-mini (from --model)\n",
			"openai (" + base + "): 2 models\n  openai:gpt-4.1\n* openai:gpt-4.1-mini\n",
			"anthropic: not set up: set ANTHROPIC_API_KEY in the shell agentls run starts from\n",
			"ollama (" + env["OLLAMA_HOST"] + "): cannot reach " + env["OLLAMA_HOST"],
		} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, env["OPENAI_API_KEY"][:8]) {
			t.Errorf("stdout shows the key:\n%s", out)
		}
	})

	t.Run("prints the answer as JSON with --json", func(t *testing.T) {
		code, out, errs := agentlsIn(t, t.TempDir(), env, "models", "--json")
		var res api.ModelsResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Current != "openai:gpt-4.1-mini" || res.Source != "OPENAI_API_KEY" {
			t.Errorf("exit %d, %+v\nstderr: %s", code, res, errs)
		}
	})
}

func TestAgentlsCheckModel(t *testing.T) {
	base := openaiServer(t, "gpt-4.1", "gpt-4.1-mini")
	env := map[string]string{"OPENAI_BASE_URL": base, "OPENAI_API_KEY": "sk-cmd-0123456789abcdef"}
	for _, c := range []struct {
		name   string
		env    map[string]string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"exits 0 for a model the provider offers", env, []string{"--model", "openai:gpt-4.1"}, 0, "openai:gpt-4.1 is ready", ""},
		{"exits 1 for a model the provider does not know, naming the closest", env, []string{"--model", "openai:gpt-4.1-mimi"}, 1, "",
			`openai:gpt-4.1-mimi does not work: ` + base + ` offers no model "gpt-4.1-mimi"; the closest are openai:gpt-4.1-mini, openai:gpt-4.1`},
		{"exits 2 without a model, naming the flag and the keys", nil, nil, 2, "", "pass --model"},
		{"exits 2 for a provider without its key, naming the variable", nil, []string{"--model", "anthropic:claude-sonnet-4-5"}, 2, "",
			"(from --model) needs ANTHROPIC_API_KEY: export it in the shell agentls run starts from"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := agentlsIn(t, t.TempDir(), c.env, append([]string{"check-model"}, c.args...)...)
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
		})
	}
}

const commandIntents = `active_intents:
  - id: INT-001
    name: Greeting
    status: IN_PROGRESS
    owned_scope: ["note.txt"]
  - id: INT-000
    name: Setup
    status: COMPLETED
    owned_scope: ["go.mod"]
`

// oneStep is a script whose one subtask finishes at once, for every run of
// a process.
const oneStep = `{"agents": {"coordinator": [{"text": "one step"}], "1": [{"toolCalls": [{"name": "finish", "arguments": {"summary": "noted"}}]}]}}`

func TestAgentlsIntentsAndFollowUps(t *testing.T) {
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{".orchestration/active_intents.yaml": commandIntents})
	script := filepath.Join(t.TempDir(), "one.json")
	if err := os.WriteFile(script, []byte(oneStep), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("lists the intents agentls run --intent takes", func(t *testing.T) {
		code, out, errs := agentlsIn(t, dir, nil, "intents")
		want := "INT-001  [IN_PROGRESS]  Greeting  (note.txt)\nINT-000  [COMPLETED]  Setup  (go.mod)  (completed: cannot be selected)\n"
		if code != 0 || out != want {
			t.Errorf("exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", code, out, want, errs)
		}
	})

	t.Run("agentls run refuses a completed intent with exit 2, naming those it can take", func(t *testing.T) {
		code, _, errs := agentlsIn(t, dir, nil, "run", "--yes", "--model", "script:"+script, "--intent", "INT-000", "note it")
		if code != 2 || !strings.Contains(errs, `intent "INT-000" (Setup) is COMPLETED`) || !strings.Contains(errs, `select one of "INT-001" (Greeting)`) {
			t.Errorf("exit %d: %s", code, errs)
		}
	})

	t.Run("agentls run --session follows up on the session an earlier run printed", func(t *testing.T) {
		state := filepath.Join(t.TempDir(), "state")
		env := map[string]string{"AGENTLS_STATE_DIR": state}
		code, out, errs := agentlsIn(t, dir, env, "run", "--yes", "--model", "script:"+script, "--intent", "INT-001", "note it")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		_, rest, ok := strings.Cut(out, "Session: ")
		id, _, _ := strings.Cut(rest, " ")
		if !ok || id == "" || !strings.Contains(out, "--session "+id+" PROMPT") {
			t.Fatalf("no session printed:\n%s", out)
		}
		code, out, errs = agentlsIn(t, dir, env, "run", "--json", "--yes", "--model", "script:"+script, "--intent", "INT-001", "--session", id, "and again")
		if code != 0 {
			t.Fatalf("the follow-up: exit %d: %s", code, errs)
		}
		if !strings.Contains(out, `"kind":"sessionContinued","text":"`+id+`"`) || !strings.Contains(out, `"sessionId":"`+id+`"`) {
			t.Errorf("the follow-up did not continue session %s:\n%s", id, out)
		}
	})
}

func TestAgentlsEngines(t *testing.T) {
	bin := t.TempDir()
	agent := filepath.Join(bin, "claude-agent-acp")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Only the fake claude-agent-acp (and sh, for the server's watchdog)
	// is on PATH, and npm's cache is empty: codex and gemini are found
	// nowhere.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	if err := os.Symlink(sh, filepath.Join(bin, "sh")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": bin}
	t.Run("lists the engines, the one found on PATH usable and the others with why not", func(t *testing.T) {
		code, out, errs := agentlsIn(t, t.TempDir(), env, "engines")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 4 || lines[0] != "3 engines (agentls run --engine NAME; agentls: the built-in worker)" ||
			lines[1] != "claude: usable, isolated: "+agent+" (from PATH); version unknown: the package its command runs cannot be told without starting it; whether it runs isolated is decided when it starts, from the version it gives" ||
			!strings.HasPrefix(lines[2], "codex: cannot be used: ") || !strings.HasPrefix(lines[3], "gemini: cannot be used: ") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
		}
	})
	t.Run("prints agent/engines' answer with --json", func(t *testing.T) {
		code, out, errs := agentlsIn(t, t.TempDir(), env, "engines", "--json")
		var res api.EnginesResult
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Engines) != 3 || !res.Engines[0].Usable || res.Engines[1].Usable {
			t.Errorf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
		}
	})
}
