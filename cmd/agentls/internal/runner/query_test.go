package runner

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

// queryFake runs one of the query commands against f.
func queryFake(t *testing.T, f *fakeServer, cmd func(context.Context, Options) int, o Options) (int, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	o.Serve = f.serve
	o.Workspace = t.TempDir()
	o.Stdout, o.Stderr = &stdout, &stderr
	code := make(chan int, 1)
	go func() { code <- cmd(context.Background(), o) }()
	select {
	case c := <-code:
		return c, stdout.String(), stderr.String()
	case <-time.After(time.Minute):
		t.Fatalf("the command did not end; stderr so far:\n%s", stderr.String())
		return 0, "", ""
	}
}

// answering is a fake server that answers method with result.
func answering(method string, result any) *fakeServer {
	return &fakeServer{control: func(m string, _ json.RawMessage) (any, error) {
		if m != method {
			return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", m)
		}
		return result, nil
	}}
}

func TestModels(t *testing.T) {
	res := api.ModelsResult{
		Current: "anthropic:claude-sonnet-4-5", Source: "initializationOptions.model",
		Models: []api.ModelInfo{
			{ID: "openai:gpt-4.1", Provider: "openai", Name: "gpt-4.1"},
			{ID: "anthropic:claude-sonnet-4-5-20250929", Provider: "anthropic", Name: "claude-sonnet-4-5-20250929", DisplayName: "Claude Sonnet 4.5"},
			{ID: "anthropic:claude-sonnet-4-5", Provider: "anthropic", Name: "claude-sonnet-4-5", Current: true},
		},
		Providers: []api.ProviderInfo{
			{Provider: "openai", URL: "https://api.openai.com/v1", Configured: true, Models: 1},
			{Provider: "anthropic", URL: "https://api.anthropic.com", Configured: true, Models: 1},
			{Provider: "ollama", URL: "http://127.0.0.1:11434", Configured: true, Problem: api.ProblemUnreachable,
				Error: "cannot reach http://127.0.0.1:11434: connection refused; check that the server runs and that OLLAMA_HOST is its address"},
		},
	}
	code, out, errs := queryFake(t, answering(api.MethodModels, res), Models, Options{})
	if code != ExitDone {
		t.Fatalf("exit %d, stderr:\n%s", code, errs)
	}
	want := `Current model: anthropic:claude-sonnet-4-5 (from --model)

openai (https://api.openai.com/v1): 1 model
  openai:gpt-4.1

anthropic (https://api.anthropic.com): 1 model
  anthropic:claude-sonnet-4-5-20250929  (Claude Sonnet 4.5)
* anthropic:claude-sonnet-4-5

ollama (http://127.0.0.1:11434): cannot reach http://127.0.0.1:11434: connection refused; check that the server runs and that OLLAMA_HOST is its address
`
	if out != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, want)
	}

	t.Run("says how to set up a provider, in the shell's words", func(t *testing.T) {
		res := api.ModelsResult{Models: []api.ModelInfo{}, CurrentError: "no model configured: set initializationOptions.model (editor setting \"model\", e.g. \"anthropic:claude-sonnet-4-5\"), or AGENTLS_MODEL, or put ANTHROPIC_API_KEY or OPENAI_API_KEY in the editor's environment; to try agentls offline, use the scripted model: \"script:/abs/path/to/script.json\"",
			Providers: []api.ProviderInfo{{Provider: "anthropic", Hint: "set ANTHROPIC_API_KEY in the editor's environment"}}}
		_, out, _ := queryFake(t, answering(api.MethodModels, res), Models, Options{})
		for _, want := range []string{"Current model: none", "pass --model", "anthropic: not set up: set ANTHROPIC_API_KEY in the shell agentls run starts from"} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "editor") || strings.Contains(out, "initializationOptions") {
			t.Errorf("stdout speaks of the editor:\n%s", out)
		}
	})

	t.Run("prints the answer as JSON with --json", func(t *testing.T) {
		_, out, _ := queryFake(t, answering(api.MethodModels, res), Models, Options{JSON: true})
		var back api.ModelsResult
		if err := json.Unmarshal([]byte(out), &back); err != nil || back.Current != res.Current || len(back.Models) != 3 {
			t.Errorf("stdout %q is not the answer (%v)", out, err)
		}
	})
}

func TestCheckModelCommand(t *testing.T) {
	for _, c := range []struct {
		name     string
		res      api.CheckModelResult
		code     int
		stdout   string
		stderr   string
		noEditor bool
	}{
		{"says a working model is ready and exits 0",
			api.CheckModelResult{Model: "openai:gpt-4.1", OK: true, Checked: api.CheckedByList, Message: "openai:gpt-4.1 is ready: https://api.openai.com/v1 offers it"},
			ExitDone, "openai:gpt-4.1 is ready", "", false},
		{"says what is wrong with a model that does not work and exits 1",
			api.CheckModelResult{Model: "openai:gpt-4.1-mimi", Problem: api.ProblemUnknownModel, Message: `https://api.openai.com/v1 offers no model "gpt-4.1-mimi"; the closest are openai:gpt-4.1-mini`},
			ExitFailed, "", `agentls check-model: openai:gpt-4.1-mimi does not work: https://api.openai.com/v1 offers no model "gpt-4.1-mimi"; the closest are openai:gpt-4.1-mini`, false},
		{"exits 2 for a configuration that cannot work, in the shell's words",
			api.CheckModelResult{Model: "openai:gpt-4o", Problem: api.ProblemConfig, Message: `model "openai:gpt-4o" (from initializationOptions.model) needs OPENAI_API_KEY: set it in the editor's environment, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key`},
			ExitUsage, "", `(from --model) needs OPENAI_API_KEY: export it in the shell agentls run starts from`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := queryFake(t, answering(api.MethodCheckModel, c.res), CheckModel, Options{})
			if code != c.code || !strings.Contains(out, c.stdout) || !strings.Contains(errs, c.stderr) {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
			}
			if c.noEditor && strings.Contains(out+errs, "editor") {
				t.Errorf("speaks of the editor:\n%s%s", out, errs)
			}
		})
	}
}

func TestIntentsCommand(t *testing.T) {
	res := api.IntentsResult{Intents: []api.IntentInfo{
		{ID: "INT-001", Name: "Greeting", Status: "IN_PROGRESS", OwnedScope: []string{"main.go", "greet_test.go"}, Selectable: true},
		{ID: "INT-000", Name: "Setup", Status: "COMPLETED", OwnedScope: []string{"go.mod"}},
	}}
	code, out, _ := queryFake(t, answering(api.MethodIntents, res), Intents, Options{})
	want := "INT-001  [IN_PROGRESS]  Greeting  (main.go, greet_test.go)\nINT-000  [COMPLETED]  Setup  (go.mod)  (completed: cannot be selected)\n"
	if code != ExitDone || out != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", code, out, want)
	}

	t.Run("says there are none", func(t *testing.T) {
		_, out, _ := queryFake(t, answering(api.MethodIntents, api.IntentsResult{Intents: []api.IntentInfo{}}), Intents, Options{})
		if !strings.Contains(out, "No intents") {
			t.Errorf("stdout:\n%s", out)
		}
	})

	t.Run("exits 1 and says why a broken file cannot be used", func(t *testing.T) {
		broken := api.IntentsResult{Intents: []api.IntentInfo{}, Error: "active_intents.yaml is broken: .orchestration/active_intents.yaml: intent \"a\" (line 3): id already used by intent 1"}
		code, _, errs := queryFake(t, answering(api.MethodIntents, broken), Intents, Options{})
		if code != ExitFailed || !strings.Contains(errs, "id already used") {
			t.Errorf("exit %d, stderr:\n%s", code, errs)
		}
	})

	t.Run("says the workspace is not a directory", func(t *testing.T) {
		var errb syncBuffer
		code := Intents(context.Background(), Options{Workspace: os.DevNull, Serve: answering(api.MethodIntents, res).serve, Stdout: &errb, Stderr: &errb})
		if code != ExitUsage || !strings.Contains(errb.String(), "agentls intents: --workspace") {
			t.Errorf("exit %d: %s", code, errb.String())
		}
	})
}
