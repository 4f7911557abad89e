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

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

const demoPrompt = `Make Greet fall back to "world" for an empty name, add a Farewell function with a test, and run the tests.`

// exampleCopy copies examples/greeter into a temporary directory.
func exampleCopy(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	src := filepath.Join("..", "..", "examples", "greeter")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func demoScriptPath(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo.script.json"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// agentlsRun runs `agentls run` without a terminal and returns its exit
// code, stdout and stderr.
func agentlsRun(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.CommandContext(testkit.Context(t), binary, append([]string{"run"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTLS_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
	cmd.Env = append(cmd.Env, env...)
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

func TestAgentlsRun(t *testing.T) {
	t.Run("runs the example with --yes: exit 0, the files changed as the script says, the diffs printed", func(t *testing.T) {
		dir := exampleCopy(t)
		code, out, errs := agentlsRun(t, dir, nil, "--yes", "--mode", "apply", "--model", "script:"+demoScriptPath(t), demoPrompt)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		greet, _ := os.ReadFile(filepath.Join(dir, "greet.go"))
		if !strings.Contains(string(greet), `name = "world"`) {
			t.Errorf("greet.go not edited:\n%s", greet)
		}
		for _, f := range []string{"farewell.go", "farewell_test.go"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s not created: %v", f, err)
			}
		}
		for _, want := range []string{"Task run-", ": done", "+++ b/greet.go", "+\t\tname = \"world\"", "--- /dev/null", "+++ b/farewell.go", "go test ./... passes."} {
			if !strings.Contains(out, want) {
				t.Errorf("stdout lacks %q:\n%s", want, out)
			}
		}
		// The command's real output and exit status, not the model's account.
		for _, want := range []string{"[1] started", "[2] started", "[3] run_command `go test ./...`", "approved (--yes)", "[task] done",
			"$ go test ./...\n│ ok  \texample.com/greeter", "└ exit status 0\n"} {
			if !strings.Contains(errs, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errs)
			}
		}
		// The two independent subtasks ran side by side: 2 started before 1 finished.
		if i, j := strings.Index(errs, "[2] started"), strings.Index(errs, "[1] done"); i < 0 || j < 0 || i > j {
			t.Errorf("subtask 2 did not start before subtask 1 was done:\n%s", errs)
		}
	})

	t.Run("without --yes and without a terminal changes nothing, says no one could be asked, and exits 3", func(t *testing.T) {
		dir := exampleCopy(t)
		before, _ := os.ReadFile(filepath.Join(dir, "greet.go"))
		code, out, errs := agentlsRun(t, dir, nil, "--mode", "propose", "--model", "script:"+demoScriptPath(t), demoPrompt)
		after, _ := os.ReadFile(filepath.Join(dir, "greet.go"))
		if !bytes.Equal(before, after) {
			t.Errorf("greet.go changed:\n%s", after)
		}
		if _, err := os.Stat(filepath.Join(dir, "farewell.go")); !os.IsNotExist(err) {
			t.Errorf("farewell.go created: %v", err)
		}
		if code != 3 {
			t.Errorf("exit %d, want 3", code)
		}
		if !strings.Contains(out, "NOT applied") || !strings.Contains(errs, "no one could be asked") ||
			!strings.Contains(errs, "3 changes were not applied and 1 command was not run") || !strings.Contains(errs, "--yes") {
			t.Errorf("stdout:\n%s\nstderr:\n%s", out, errs)
		}
		if strings.Contains(errs, "the user chose") {
			t.Errorf("a refusal no one made is told as the user's choice:\n%s", errs)
		}
	})

	t.Run("holds the changes in review mode and asks once for all of them at the end", func(t *testing.T) {
		dir := exampleCopy(t)
		code, out, errs := agentlsRun(t, dir, nil, "--yes", "--mode", "review", "--model", "script:"+demoScriptPath(t), demoPrompt)
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if n := strings.Count(errs, "approved (--yes): agentls: review the changes of"); n != 1 {
			t.Errorf("%d review approvals, want 1:\n%s", n, errs)
		}
		// The review came after the last subtask, the changes after it.
		if i, j := strings.Index(errs, "[3] done"), strings.Index(errs, "review the changes of"); i < 0 || j < i {
			t.Errorf("the review did not come at the end:\n%s", errs)
		}
		if greet, _ := os.ReadFile(filepath.Join(dir, "greet.go")); !strings.Contains(string(greet), `name = "world"`) {
			t.Errorf("greet.go not edited:\n%s", greet)
		}
		if !strings.Contains(out, "update greet.go (applied)") || !strings.Contains(out, "create farewell_test.go (applied)") {
			t.Errorf("stdout:\n%s", out)
		}
	})

	t.Run("prints every notification as a JSON line with --json, then the result", func(t *testing.T) {
		dir := exampleCopy(t)
		code, out, errs := agentlsRun(t, dir, nil, "--json", "--yes", "--mode", "apply", "--model", "script:"+demoScriptPath(t), demoPrompt)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<20)
		var lines []map[string]json.RawMessage
		for sc.Scan() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("not a JSON line: %q", sc.Text())
			}
			lines = append(lines, m)
		}
		if len(lines) < 10 || lines[0]["method"] == nil {
			t.Fatalf("%d lines:\n%s", len(lines), out)
		}
		var res api.RunResult
		if err := json.Unmarshal(lines[len(lines)-1]["result"], &res); err != nil || res.State != api.TaskDone {
			t.Fatalf("last line = %s (%v)", out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:], err)
		}
	})

	t.Run("records the model's answers with --record as a replayable script", func(t *testing.T) {
		dir := exampleCopy(t)
		rec := filepath.Join(t.TempDir(), "rec.json")
		code, _, errs := agentlsRun(t, dir, nil, "--yes", "--mode", "apply", "--record", rec, "--model", "script:"+demoScriptPath(t), demoPrompt)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		// Replaying the recording on a fresh copy does the same.
		dir2 := exampleCopy(t)
		code, out, errs := agentlsRun(t, dir2, nil, "--yes", "--mode", "apply", "--model", "script:"+rec, demoPrompt)
		if code != 0 || !strings.Contains(out, "go test ./... passes.") {
			t.Fatalf("replay: exit %d\n%s\n%s", code, out, errs)
		}
		a, _ := os.ReadFile(filepath.Join(dir, "greet.go"))
		b, _ := os.ReadFile(filepath.Join(dir2, "greet.go"))
		if !bytes.Equal(a, b) {
			t.Errorf("the replay changed greet.go differently")
		}
	})

	t.Run("exits 2 when no model is configured, naming the ways to configure one", func(t *testing.T) {
		dir := t.TempDir()
		code, _, errs := agentlsRun(t, dir, []string{"AGENTLS_MODEL=", "ANTHROPIC_API_KEY=", "OPENAI_API_KEY="}, "do something")
		if code != 2 || !strings.Contains(errs, "AGENTLS_MODEL") || !strings.Contains(errs, "--model") || !strings.Contains(errs, "export ANTHROPIC_API_KEY") {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if strings.Contains(errs, "initializationOptions") || strings.Contains(errs, "editor") {
			t.Errorf("the message speaks of an editor to a terminal user: %s", errs)
		}
	})

	t.Run("exits 2 without a prompt or with a bad mode", func(t *testing.T) {
		for _, args := range [][]string{{}, {"--mode", "yolo", "x"}} {
			if code, _, errs := agentlsRun(t, t.TempDir(), nil, args...); code != 2 {
				t.Errorf("%v: exit %d: %s", args, code, errs)
			}
		}
	})
}

func TestAgentlsRunKeepsTheKeyFromCommands(t *testing.T) {
	const key = "sk-run-0123456789abcdefKEY"
	reversed := func(s string) string {
		r := []rune(s)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Print the key"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "run_command", "arguments": {"command": "echo \"key=$(printenv OPENAI_API_KEY | rev)\""}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "printed"}}]}]
}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// commandResult is what the model was told the command printed.
	commandResult := func(t *testing.T, out string) string {
		t.Helper()
		sc := bufio.NewScanner(strings.NewReader(out))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var n struct {
				Method string               `json:"method"`
				Params api.TaskUpdateParams `json:"params"`
			}
			if json.Unmarshal(sc.Bytes(), &n) == nil && n.Method == api.MethodTaskUpdate &&
				n.Params.Event.Kind == api.EventToolResult && n.Params.Event.Tool == "run_command" {
				return n.Params.Event.Summary
			}
		}
		t.Fatalf("no result of run_command in:\n%s", out)
		return ""
	}
	t.Run("the commands agentls run runs do not see the API key it holds", func(t *testing.T) {
		code, out, errs := agentlsRun(t, t.TempDir(), []string{"OPENAI_API_KEY=" + key}, "--json", "--yes", "--model", "script:"+script, "print the key")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if got := commandResult(t, out); !strings.Contains(got, "key=") || strings.Contains(got, reversed(key)) {
			t.Fatalf("the command printed %q", got)
		}
		if strings.Contains(out+errs, key) {
			t.Fatal("the key is in the output")
		}
	})
	t.Run("--pass-env lets a named variable through", func(t *testing.T) {
		code, out, errs := agentlsRun(t, t.TempDir(), []string{"OPENAI_API_KEY=" + key}, "--json", "--yes", "--pass-env", "OPENAI_API_KEY", "--model", "script:"+script, "print the key")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if got := commandResult(t, out); !strings.Contains(got, "key="+reversed(key)) {
			t.Fatalf("the command printed %q", got)
		}
	})
}

// TestAgentlsRunEngines runs `agentls run --engines FILE`: a terminal user
// names other agents, as an editor does in its settings.
func TestAgentlsRunEngines(t *testing.T) {
	fake := filepath.Join(t.TempDir(), "fakeagent")
	build := exec.Command("go", "build", "-o", fake, "../../engines/enginestest/fakeagent")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the fake agent: %v\n%s", err, out)
	}
	steps, _ := json.Marshal([]map[string]any{{"write": "{root}/from-engine.txt", "content": "from the engine\n"}, {"say": "Wrote it."}})
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(`{"agents": {"coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "write from-engine.txt"}]}}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, v any) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "engines.json")
		b, _ := json.Marshal(v)
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "{root}", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("runs a subtask on an engine the file names", func(t *testing.T) {
		no := false
		file := write(t, map[string]any{"fake": map[string]any{"command": []string{fake}, "env": map[string]string{"AGENTLS_FAKE_AGENT": string(steps)}, "isolate": no}})
		code, out, errs := agentlsRun(t, dir, nil, "--yes", "--mode", "apply", "--model", "script:"+script, "--engines", file, "--engine", "fake", "write it")
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "from-engine.txt")); err != nil || string(got) != "from the engine\n" {
			t.Fatalf("from-engine.txt = %q (%v)\nstderr:\n%s", got, err, errs)
		}
		if !strings.Contains(errs, "[1] started on fake") {
			t.Errorf("the tree does not say the engine:\n%s", errs)
		}
	})
	t.Run("refuses a file whose entry the setting refuses, naming the key, with exit 2", func(t *testing.T) {
		file := write(t, map[string]any{"goose": map[string]any{"env": map[string]string{}}})
		code, out, errs := agentlsRun(t, dir, nil, "--model", "script:"+script, "--engines", file, "go")
		if code != 2 || !strings.Contains(errs, "engines.goose") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
	})
	t.Run("refuses a file that is not a JSON object, with exit 2", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "engines.json")
		if err := os.WriteFile(file, []byte(`["goose"]`), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := agentlsRun(t, dir, nil, "--model", "script:"+script, "--engines", file, "go")
		if code != 2 || !strings.Contains(errs, "--engines") {
			t.Fatalf("exit %d: %s", code, errs)
		}
	})
	t.Run("agentls engines lists what the file names", func(t *testing.T) {
		file := write(t, map[string]any{"goose": map[string]any{"command": []string{"/no/such/goose", "acp"}}})
		code, out, errs := agentlsIn(t, t.TempDir(), nil, "engines", "--engines", file)
		if code != 0 || !strings.Contains(out, "goose: cannot be used: its command \"/no/such/goose\" cannot be run") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
		}
	})
}

// breakAndFix is a worker that introduces an undefined name, fixes it, and
// asks for the diagnostics left.
const breakAndFix = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Greet by name"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "read_file", "arguments": {"path": "main.go"}}]},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.go", "old_string": "println(\"Hello\")", "new_string": "println(\"Hello, \" + name)"}}]},
    {"toolCalls": [{"name": "edit_file", "arguments": {"path": "main.go", "old_string": "\tprintln(\"Hello, \" + name)", "new_string": "\tname := \"world\"\n\tprintln(\"Hello, \" + name)"}}]},
    {"toolCalls": [{"name": "get_diagnostics", "arguments": {}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "greets by name"}}]}
  ]}}`

func TestAgentlsRunDiagnostics(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not installed: the diagnostics command is go vet")
	}
	dir := t.TempDir()
	testkit.WriteFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/greet\n\ngo 1.21\n",
		"main.go": "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
	})
	script := filepath.Join(t.TempDir(), "fix.json")
	if err := os.WriteFile(script, []byte(breakAndFix), 0o644); err != nil {
		t.Fatal(err)
	}
	// The user's GOFLAGS (-mod=vendor) and a toolchain download must not
	// change what go vet says.
	const vet = "GOFLAGS= GOTOOLCHAIN=local go vet ./..."
	code, out, errs := agentlsRun(t, dir, nil, "--json", "--yes", "--mode", "apply", "--model", "script:"+script, "--diagnostics", "go="+vet, "Greet by name")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	var results []api.TaskEvent
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var n struct {
			Method string               `json:"method"`
			Params api.TaskUpdateParams `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &n) == nil && n.Method == api.MethodTaskUpdate && n.Params.Event.Kind == api.EventToolResult {
			results = append(results, n.Params.Event)
		}
	}
	if len(results) != 5 { // read_file, edit_file twice, get_diagnostics, finish
		t.Fatalf("%d tool results:\n%s", len(results), out)
	}
	for i, want := range []string{
		"Updated main.go (+1 -1 lines). Diagnostics after this change, from `" + vet + "` (the diagnostics setting): 1 error new. main.go:4:22: error: undefined: name",
		"Updated main.go (+1 -0 lines). Diagnostics: `" + vet + "` (the diagnostics setting) finds no new error or warning after this change.",
		"No diagnostics in the workspace, from `" + vet + "` (the diagnostics setting).",
	} {
		if r := results[i+1]; !strings.HasPrefix(r.Summary, want) {
			t.Errorf("tool result %d (%s) = %q, want it to begin %q", i+2, r.Tool, r.Summary, want)
		}
	}
	if !strings.Contains(out, `"kind":"commandStarted","subtaskId":"1","text":"`+vet+`"`) {
		t.Errorf("the diagnostics command was not shown as a command:\n%s", out)
	}
}
