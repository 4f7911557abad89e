package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

var binary string

// TestMain builds the real binary once; the tests drive it over real pipes.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentls-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "agentls")
	// The servers the tests start keep their state (sessions, the code
	// graph) here, never in the user's state directory.
	if err := os.Setenv("AGENTLS_STATE_DIR", filepath.Join(dir, "state")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building agentls:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func startBinary(t *testing.T, args ...string) *headless.Editor {
	t.Helper()
	ed, err := headless.Start(testkit.Context(t), headless.Options{
		Root:    t.TempDir(),
		Command: append([]string{binary, "serve"}, args...),
		Caps:    headless.FullCapabilities(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	return ed
}

func TestBinary(t *testing.T) {
	t.Run("prints its version", func(t *testing.T) {
		out, err := exec.Command(binary, "version").Output()
		if err != nil || !strings.HasPrefix(string(out), "agentls ") {
			t.Fatalf("version = %q, %v", out, err)
		}
	})

	t.Run("refuses an unknown command and a bad flag with exit 2", func(t *testing.T) {
		for _, args := range [][]string{{"frobnicate"}, {"serve", "--nope"}, {"serve", "--log-level", "loud"}, {"serve", "--zone", "/abs"}} {
			err := exec.Command(binary, args...).Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 {
				t.Errorf("%v: %v, want exit 2", args, err)
			}
		}
	})

	t.Run("agentls mcp run by hand says it is started by agentls, with exit 2", func(t *testing.T) {
		cmd := exec.Command(binary, "mcp")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "AGENTLS_MCP_SOCKET and AGENTLS_MCP_TOKEN are not set") {
			t.Fatalf("%v: %s", err, out)
		}
	})

	t.Run("agentls mcp that cannot reach its sidecar exits 1 saying so", func(t *testing.T) {
		cmd := exec.Command(binary, "mcp")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "AGENTLS_MCP_SOCKET=" + filepath.Join(t.TempDir(), "gone.sock"), "AGENTLS_MCP_TOKEN=x"}
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "cannot reach the agentls sidecar") {
			t.Fatalf("%v: %s", err, out)
		}
	})

	t.Run("serves over stdio and exits 0 after shutdown", func(t *testing.T) {
		ed := startBinary(t)
		var res struct {
			Data string `json:"data"`
		}
		if err := ed.Call(testkit.Context(t), api.MethodPing, map[string]string{"data": "hi"}, &res); err != nil || res.Data != "hi" {
			t.Fatalf("ping = %v, %v", res, err)
		}
		if code, err := ed.Shutdown(testkit.Context(t)); err != nil || code != 0 {
			t.Fatalf("exit code %d, %v", code, err)
		}
	})

	t.Run("exits 1 on exit without shutdown", func(t *testing.T) {
		ed := startBinary(t)
		if err := ed.Notify(testkit.Context(t), api.MethodExit, nil); err != nil {
			t.Fatal(err)
		}
		if code, err := ed.Wait(testkit.Context(t)); err != nil || code != 1 {
			t.Fatalf("exit code %d, %v", code, err)
		}
	})

	t.Run("answers 64 pings in flight at once, each with its own data", func(t *testing.T) {
		ed := startBinary(t)
		errs := make(chan error, 64)
		for i := range 64 {
			go func() {
				var res struct{ Data int }
				err := ed.Call(testkit.Context(t), api.MethodPing, map[string]int{"data": i}, &res)
				if err == nil && res.Data != i {
					err = fmt.Errorf("ping %d answered %d", i, res.Data)
				}
				errs <- err
			}()
		}
		for range 64 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestStdoutCarriesOnlyProtocol runs the binary with debug logs and checks
// that every byte on stdout belongs to a frame, and the logs went to stderr.
func TestStdoutCarriesOnlyProtocol(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--log-level", "debug")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var in bytes.Buffer
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"agent/ping","params":{"data":"x"}}`,
		`{not json`,
		`{"jsonrpc":"2.0","id":3,"method":"shutdown"}`,
		`{"jsonrpc":"2.0","method":"exit"}`,
	} {
		fmt.Fprintf(&in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	cmd.Stdin = &in
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	rest := stdout.Bytes()
	frames := 0
	for len(rest) > 0 {
		var n int
		if _, err := fmt.Sscanf(string(rest), "Content-Length: %d\r\n\r\n", &n); err != nil {
			t.Fatalf("stdout has bytes outside a frame: %q", rest)
		}
		start := bytes.Index(rest, []byte("\r\n\r\n")) + 4
		if !json.Valid(rest[start : start+n]) {
			t.Fatalf("frame is not JSON: %q", rest[start:start+n])
		}
		rest = rest[start+n:]
		frames++
	}
	if frames != 4 { // initialize, ping, parse error, shutdown
		t.Fatalf("%d frames on stdout, want 4", frames)
	}
	if !strings.Contains(stderr.String(), "initialized") {
		t.Fatalf("no logs on stderr: %q", stderr.String())
	}
}

func TestLogFile(t *testing.T) {
	log := filepath.Join(t.TempDir(), "agentls.log")
	cmd := exec.Command(binary, "serve", "--log-file", log)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`
	cmd.Stdin = strings.NewReader(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
	cmd.Stdout = io.Discard
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("end of input without shutdown: %v, want exit 1", err)
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), "initialized") || stderr.Len() != 0 {
		t.Fatalf("log file %q, stderr %q", data, stderr.String())
	}
}

// TestWaitingRunDoesNotBlockTheReader drives the built binary with a task
// whose worker waits on a question the editor never answers: agent/ping and
// agent/stop must still be read and answered while agent/run is open.
func TestWaitingRunDoesNotBlockTheReader(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(t.TempDir(), "ask.json")
	if err := os.WriteFile(script, []byte(`{"agents": {
		"coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "ask"}]}}]}],
		"1": [{"toolCalls": [{"name": "ask_human", "arguments": {"question": "Which one?"}}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ed, err := headless.Start(testkit.Context(t), headless.Options{
		Root:                  dir,
		Command:               []string{binary, "serve"},
		Env:                   append(os.Environ(), "AGENTLS_STATE_DIR="+filepath.Join(t.TempDir(), "state")),
		Caps:                  headless.FullCapabilities(),
		InitializationOptions: map[string]any{"model": "script:" + script},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ed.Close()
	asked := make(chan struct{})
	ed.Handle(api.MethodAsk, func(ctx context.Context, _ json.RawMessage) (any, error) {
		close(asked)
		<-ctx.Done() // never answered: the task waits until it is stopped
		return nil, ctx.Err()
	})
	runDone := make(chan api.RunResult, 1)
	go func() {
		var res api.RunResult
		if err := ed.Call(testkit.Context(t), api.MethodRun, api.RunParams{Prompt: "ask me", TaskID: "t1"}, &res); err != nil {
			t.Error(err)
		}
		runDone <- res
	}()
	<-asked
	var pong struct{ Data string }
	if err := ed.Call(testkit.Context(t), api.MethodPing, map[string]string{"data": "alive"}, &pong); err != nil || pong.Data != "alive" {
		t.Fatalf("ping while a run waits: %v, %v", pong, err)
	}
	var stop api.StopResult
	if err := ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t1"}, &stop); err != nil || !stop.Stopped {
		t.Fatalf("stop while a run waits: %v, %v", stop, err)
	}
	if res := <-runDone; res.State != api.TaskStopped {
		t.Fatalf("run ended %q, want stopped", res.State)
	}
	if code, err := ed.Shutdown(testkit.Context(t)); err != nil || code != 0 {
		t.Fatalf("exit code %d, %v", code, err)
	}
}
