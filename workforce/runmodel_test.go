package workforce

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// writeScript writes a scripted model that plans one subtask and ends it
// with summary, for the first run of the process and the second.
func writeScript(t *testing.T, dir, name, summary string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	finish := func(s string) string {
		return `[{"toolCalls": [{"name": "finish", "arguments": {"summary": "` + s + `"}}]}]`
	}
	body := `{"agents": {"coordinator": [{"text": "one step"}], "1": ` + finish(summary) +
		`, "2:coordinator": [{"text": "one step"}], "2:1": ` + finish(summary+" again") + `}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunModel(t *testing.T) {
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	scripts := t.TempDir()
	settingModel := writeScript(t, scripts, "setting.json", "from the setting")
	runModel := writeScript(t, scripts, "run.json", "from the run")
	record := filepath.Join(t.TempDir(), "session.json")
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	models := NewModels(func(string) string { return "" }, root, record, nil, zap.NewNop(), redact.New())
	e, err := New(Config{Root: root, Editor: headlesstest.New(root, api.Caps{}), Events: &fakeEvents{}, Tracking: ws, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	s := settings()
	s.Model = "script:" + settingModel

	t.Run("a run's own model answers that run", func(t *testing.T) {
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x", Model: "script:" + runModel}, s)
		if err != nil || res.Summary != "from the run" {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})
	t.Run("the setting answers the next run that names no model", func(t *testing.T) {
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x"}, s)
		if err != nil || res.Summary != "from the setting again" {
			t.Fatalf("run = %+v, %v", res, err)
		}
	})
	t.Run("a run's model that cannot work fails the run, naming agent/run", func(t *testing.T) {
		_, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "x", Model: "openai:gpt-4.1"}, s)
		var ae *api.Error
		if !errors.As(err, &ae) || ae.Code != api.CodeModelUnavailable || !strings.Contains(ae.Message, "(from agent/run model)") || !strings.Contains(ae.Message, "OPENAI_API_KEY") {
			t.Errorf("err = %v, want -32010 naming agent/run model and OPENAI_API_KEY", err)
		}
	})
	t.Run("the recording holds the answers of both models", func(t *testing.T) {
		if err := models.Close(); err != nil {
			t.Fatal(err)
		}
		replay, err := clients.LoadScript(record)
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]string{"1": "from the run", "2:1": "from the setting again"} {
			turns := replay.Turns(key)
			if len(turns) != 1 || len(turns[0].ToolCalls) != 1 || !strings.Contains(string(turns[0].ToolCalls[0].Arguments), want) {
				t.Errorf("%s recorded as %+v, want the finish of %q", key, turns, want)
			}
		}
	})
}
