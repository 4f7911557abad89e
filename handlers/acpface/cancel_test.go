//go:build unix

package acpface_test

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/handlers/acpface"
	"github.com/agentls/agentls/internal/testkit"
)

// longCommand plans one subtask that runs a command lasting a minute.
var longCommand = script(map[string][]turn{
	"coordinator": onePlan("Wait a long time"),
	"1": {
		{calls: []call{{"run_command", map[string]any{"command": "sleep 60"}}}},
		finish("waited"),
	},
	"2:coordinator": onePlan("Say hi"),
	"2:1":           {finish("hi")},
})

func TestCancel(t *testing.T) {
	t.Run("stops a prompt in the middle of a command: the terminal is killed and released, the turn cancelled", func(t *testing.T) {
		e, sid := ready(t, opts{script: longCommand})
		e.client.termSeen = make(chan string, 1)
		done := e.promptInBackground(t, sid, acp.Text("wait"))
		id := <-e.client.termSeen
		must(t, e.agent.Cancel(testkit.Context(t), &acp.CancelNotification{SessionID: sid}))
		res := <-done
		if res == nil || res.StopReason != acp.StopCancelled || metaOf(t, res.Meta)["state"] != "stopped" {
			t.Fatalf("prompt = %+v", res)
		}
		term, err := e.client.terminal(id)
		must(t, err)
		e.client.mu.Lock()
		released, pid := term.released, term.cmd.Process.Pid
		e.client.mu.Unlock()
		if !released {
			t.Fatal("the terminal was not released")
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("the command still runs (kill 0: %v)", err)
		}
		var last acp.ToolCallUpdate
		for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
			if u.Status != "" {
				last = u
			}
		}
		if last.Status != acp.StatusFailed {
			t.Fatalf("the command's call ended %q", last.Status)
		}
		// The session takes the next prompt.
		res2, err := e.prompt(t, sid, acp.Text("say hi"))
		if err != nil || res2.StopReason != acp.StopEndTurn {
			t.Fatalf("the next prompt = %+v, %v", res2, err)
		}
	})

	t.Run("stops a prompt while the client creates its terminal: the terminal, answered after the cancel, is killed and released", func(t *testing.T) {
		cmdCtx := make(chan context.Context, 1)
		acpface.OnTerminalCreating(t, func(ctx context.Context) { cmdCtx <- ctx })
		e, sid := ready(t, opts{script: longCommand})
		e.client.termSeen = make(chan string, 1)
		e.client.termGate = make(chan struct{})
		done := e.promptInBackground(t, sid, acp.Text("wait"))
		ctx := <-cmdCtx
		id := <-e.client.termSeen
		must(t, e.agent.Cancel(testkit.Context(t), &acp.CancelNotification{SessionID: sid}))
		// The command's context ends before the client answers with the
		// terminal's id: agentls hears of the cancel first.
		<-ctx.Done()
		close(e.client.termGate)
		res := <-done
		if res == nil || res.StopReason != acp.StopCancelled {
			t.Fatalf("prompt = %+v", res)
		}
		term, err := e.client.terminal(id)
		must(t, err)
		e.client.mu.Lock()
		released, killed, pid := term.released, term.killed, term.cmd.Process.Pid
		e.client.mu.Unlock()
		if !released || !killed {
			t.Fatalf("the terminal created after the cancel: killed %v, released %v", killed, released)
		}
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Fatalf("the command still runs (kill 0: %v)", err)
		}
	})

	t.Run("stops a prompt waiting for a permission: the question is cancelled and nothing written", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo}, script: editOnly})
		e.client.asked = make(chan *acp.RequestPermissionRequest, 1)
		e.client.permCtx = make(chan error, 1)
		done := e.promptInBackground(t, sid, acp.Text("add greet"))
		<-e.client.asked
		must(t, e.agent.Cancel(testkit.Context(t), &acp.CancelNotification{SessionID: sid}))
		if cause := <-e.client.permCtx; cause == nil || !strings.Contains(cause.Error(), "cancelled") {
			t.Fatalf("the question ended with %v, want the agent's $/cancel_request", cause)
		}
		if res := <-done; res == nil || res.StopReason != acp.StopCancelled {
			t.Fatalf("prompt = %+v", res)
		}
		if got := e.read(t, "main.go"); got != mainGo {
			t.Fatalf("main.go = %q", got)
		}
	})

	t.Run("stops a prompt whose request is cancelled with $/cancel_request", func(t *testing.T) {
		e, sid := ready(t, opts{script: longCommand})
		e.client.termSeen = make(chan string, 1)
		ctx, cancel := context.WithCancel(testkit.Context(t))
		done := make(chan error, 1)
		go func() {
			done <- e.conn.Call(ctx, acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{acp.Text("wait")}}, nil)
		}()
		<-e.client.termSeen
		cancel() // the connection sends $/cancel_request for the prompt
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("call = %v", err)
		}
		// The turn ends: the session takes the next prompt (once the
		// cancelled one has answered).
		for {
			res, err := e.prompt(t, sid, acp.Text("say hi"))
			if err == nil {
				if res.StopReason != acp.StopEndTurn {
					t.Fatalf("next prompt = %+v", res)
				}
				break
			}
			if !strings.Contains(err.Error(), "already answering") {
				t.Fatal(err)
			}
			must(t, waitTurn(t, e))
		}
	})

	t.Run("refuses a second prompt while one runs", func(t *testing.T) {
		e, sid := ready(t, opts{script: longCommand})
		e.client.termSeen = make(chan string, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = e.prompt(t, sid, acp.Text("wait"))
		}()
		<-e.client.termSeen
		_, err := e.prompt(t, sid, acp.Text("and this?"))
		if codeOf(err) != -32600 || !strings.Contains(err.Error(), "session/cancel it first") {
			t.Fatalf("second prompt = %v", err)
		}
		must(t, e.agent.Cancel(testkit.Context(t), &acp.CancelNotification{SessionID: sid}))
		<-done
	})
}

// waitTurn waits until the client sees the summary of the turn in
// progress: the agent's message that ends a task.
func waitTurn(t *testing.T, e *env) error {
	t.Helper()
	e.client.await(t, "the end of the cancelled turn", func(u acp.SessionUpdate) bool {
		m, ok := u.(acp.AgentMessageChunk)
		return ok && strings.HasPrefix(m.Content.Text, "Stopped")
	})
	return nil
}
