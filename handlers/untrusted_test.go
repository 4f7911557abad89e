//go:build unix

package handlers_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
)

// A repository the person did not write, opened in the editor, with the
// scripted model playing the attacker, over real pipes: nothing escapes the
// workspace, nothing blocks, nothing is read whole past its bound. (docs/
// SECURITY.md; the engines', MCP servers' and git's parts are held by the
// tests of engines, mcp and internal/shell.)
func TestHostileRepository(t *testing.T) {
	t.Run("the trace's symlink to a file of the person's is not followed", func(t *testing.T) {
		outside := t.TempDir()
		bashrc := filepath.Join(outside, ".bashrc")
		if err := os.WriteFile(bashrc, []byte("export PS1='$ '\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// The model names a file whose name runs a command in a shell
		// that reads the line: it must land in the workspace only.
		name := "n$(touch PWNED).txt"
		r := startRun(t, runOpts{
			script: `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Add a file"}]}}]}],
  "1": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "` + name + `", "content": "x\n"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "added"}}]}]}}`,
			files: map[string]string{"main.go": "package main\n", ".orchestration/active_intents.yaml": "active_intents: []\n"},
		})
		if err := os.Symlink(bashrc, filepath.Join(r.root, ".orchestration", "agent_trace.jsonl")); err != nil {
			t.Fatal(err)
		}
		res, err := r.run(t, api.RunParams{Prompt: "add a file"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		if got := r.file(t, name); got != "x\n" {
			t.Fatalf("the change did not land: %q", got)
		}
		if b, _ := os.ReadFile(bashrc); string(b) != "export PS1='$ '\n" {
			t.Fatalf("a line was appended to the file the trace's symlink leads to:\n%s", b)
		}
		if _, err := r.ed.Await(testkit.Context(t), func(n headless.Notification) bool {
			return n.Method == api.MethodLogMessage && strings.Contains(string(n.Params), "does not follow")
		}); err != nil {
			t.Fatalf("the person was not told the trace was not written: %v", err)
		}
	})

	t.Run("an attached FIFO is refused without blocking, and the server keeps serving", func(t *testing.T) {
		r := startRun(t, runOpts{
			script: `{"agents": {"coordinator": [{"text": "one step"}], "1": [{"text": "done"}]}}`,
			files:  map[string]string{"main.go": "package main\n"},
		})
		for _, p := range []string{"pipe.png", "pipe.txt"} {
			if err := syscall.Mkfifo(filepath.Join(r.root, p), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		for _, att := range []api.Attachment{{Type: api.AttachImage, Path: "pipe.png"}, {Type: api.AttachFile, Path: "pipe.txt"}} {
			// No writer ever opens the FIFO: a server that opened it for
			// reading would never answer (the test's context bounds it).
			_, err := r.run(t, api.RunParams{Prompt: "look", Attachments: []api.Attachment{att}})
			if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("%s: err = %v, want -32602 saying it is not a regular file", att.Path, err)
			}
		}
		if res, err := r.run(t, api.RunParams{Prompt: "look"}); err != nil || res.State != api.TaskDone {
			t.Fatalf("the next run = %+v, %v", res, err)
		}
	})

	t.Run("a huge attachment is refused from its size, before it is read", func(t *testing.T) {
		r := startRun(t, runOpts{
			script: `{"agents": {"coordinator": [{"text": "one step"}], "1": [{"text": "done"}]}}`,
			files:  map[string]string{"main.go": "package main\n"},
		})
		f, err := os.Create(filepath.Join(r.root, "huge.log"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(1 << 30); err != nil { // sparse: no room on the disk
			t.Fatal(err)
		}
		f.Close()
		for _, att := range []api.Attachment{{Type: api.AttachFile, Path: "huge.log"}, {Type: api.AttachImage, Path: "huge.log"}} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := r.run(t, api.RunParams{Prompt: "look", Attachments: []api.Attachment{att}})
			runtime.ReadMemStats(&after)
			if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "1073741824 bytes") {
				t.Fatalf("%s: err = %v, want -32602 giving its size", att.Type, err)
			}
			// The server runs in this process: what it allocated shows here.
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Fatalf("%s: the refusal allocated %d MiB: the file was read before it was refused", att.Type, grew>>20)
			}
		}
	})

	t.Run("a model's read through a committed symlink out of the workspace is refused", func(t *testing.T) {
		outside := t.TempDir()
		if err := os.WriteFile(filepath.Join(outside, "id_ed25519"), []byte("PRIVATE KEY\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := startRun(t, runOpts{
			script: `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Read the key"}]}}]}],
  "1": [{"toolCalls": [{"name": "read_file", "arguments": {"path": "keys/id_ed25519"}}]},
        {"toolCalls": [{"name": "write_file", "arguments": {"path": "keys/pwned", "content": "x\n"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "done"}}]}]}}`,
			files: map[string]string{"main.go": "package main\n"},
		})
		if err := os.Symlink(outside, filepath.Join(r.root, "keys")); err != nil {
			t.Fatal(err)
		}
		if _, err := r.run(t, api.RunParams{Prompt: "read the key"}); err != nil {
			t.Fatal(err)
		}
		for _, u := range r.updates(t, "") {
			if u.Event.Kind == api.EventToolResult && strings.Contains(u.Event.Text, "PRIVATE KEY") {
				t.Fatalf("the model read the file outside: %q", u.Event.Text)
			}
		}
		if _, err := os.Stat(filepath.Join(outside, "pwned")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the model wrote outside the workspace: %v", err)
		}
	})
}
