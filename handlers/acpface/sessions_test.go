//go:build unix

package acpface_test

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/internal/testkit"
)

// twoRuns answers two prompts: each plans one subtask that reads a file and
// finishes.
var twoRuns = script(map[string][]turn{
	"coordinator":   onePlan("Read the notes"),
	"1":             {{text: "Looking at the notes.", calls: []call{{"read_file", map[string]any{"path": "notes.txt"}}}}, finish("the notes say hello")},
	"2:coordinator": onePlan("Read them again"),
	"2:1":           {finish("still hello")},
})

func TestSessionHistory(t *testing.T) {
	t.Run("lists a prompted session and replays it on session/load", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"notes.txt": "hello\n"}, script: twoRuns})
		_, err := e.prompt(t, sid, acp.Text("What do the notes say?"))
		must(t, err)
		// A session never prompted is not listed.
		_, err = e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		must(t, err)
		list, err := e.agent.ListSessions(testkit.Context(t), &acp.ListSessionsRequest{Cwd: e.root})
		must(t, err)
		if len(list.Sessions) != 1 || list.Sessions[0].SessionID != sid || list.Sessions[0].Title != "What do the notes say?" ||
			list.Sessions[0].Cwd != e.root || list.Sessions[0].UpdatedAt == "" || list.NextCursor != "" {
			t.Fatalf("session/list = %+v", list)
		}
		if all, err := e.agent.ListSessions(testkit.Context(t), &acp.ListSessionsRequest{}); err != nil || len(all.Sessions) != 1 {
			t.Fatalf("session/list without cwd = %+v, %v", all, err)
		}

		before := len(e.client.seen())
		res, err := e.agent.LoadSession(testkit.Context(t), &acp.LoadSessionRequest{SessionID: sid, Cwd: e.root})
		must(t, err)
		if res.Modes == nil || len(res.ConfigOptions) != 3 || res.Models == nil {
			t.Fatalf("session/load = %+v", res)
		}
		replayed := e.client.seen()[before:]
		users := of[acp.UserMessageChunk](replayed)
		if len(users) != 1 || users[0].Content.Text != "What do the notes say?" || metaOf(t, users[0].Meta)["replayed"] != true {
			t.Fatalf("user messages %+v", users)
		}
		thoughts := ""
		for _, c := range of[acp.AgentThoughtChunk](replayed) {
			thoughts += c.Content.Text
		}
		if !strings.Contains(thoughts, "Plan:") || !strings.Contains(thoughts, "Looking at the notes.") {
			t.Fatalf("thoughts %q", thoughts)
		}
		calls := of[acp.ToolCall](replayed)
		if len(calls) != 1 || calls[0].Title != "Read notes.txt" || calls[0].Status != acp.StatusCompleted || calls[0].Kind != acp.KindRead {
			t.Fatalf("tool calls %+v", calls)
		}
		msgs := of[acp.AgentMessageChunk](replayed)
		if len(msgs) != 1 || msgs[0].Content.Text != "the notes say hello" {
			t.Fatalf("agent messages %+v", msgs)
		}

		// The loaded session goes on: its next prompt is the session's
		// second task.
		_, err = e.prompt(t, sid, acp.Text("And now?"))
		must(t, err)
		answer := listOf(t, e, sid, "/sessions")
		if !strings.Contains(answer, "2 prompt(s)") {
			t.Fatalf("/sessions = %q", answer)
		}
	})

	t.Run("refuses to load or resume a session the workspace has not stored", func(t *testing.T) {
		e, _ := ready(t, opts{script: twoRuns})
		_, err := e.agent.LoadSession(testkit.Context(t), &acp.LoadSessionRequest{SessionID: "0123456789abcdef", Cwd: e.root})
		if codeOf(err) != acp.CodeResourceNotFound {
			t.Fatalf("session/load = %v", err)
		}
		_, err = e.agent.ResumeSession(testkit.Context(t), &acp.ResumeSessionRequest{SessionID: "0123456789abcdef", Cwd: e.root})
		if codeOf(err) != acp.CodeResourceNotFound {
			t.Fatalf("session/resume = %v", err)
		}
	})

	t.Run("resumes a session in another connection without replaying it", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"notes.txt": "hello\n"}, script: twoRuns})
		_, err := e.prompt(t, sid, acp.Text("What do the notes say?"))
		must(t, err)
		// A second agentls on the same state directory, as after a restart.
		other := &env{root: e.root, client: newClient(e.root), done: make(chan int, 1)}
		other.serve(t, map[string]string{"AGENTLS_MODEL": "script:unused.json"})
		other.initialize(t, opts{})
		_, err = other.agent.ResumeSession(testkit.Context(t), &acp.ResumeSessionRequest{SessionID: sid, Cwd: e.root})
		must(t, err)
		for _, n := range other.client.seen() {
			if _, ok := n.Update.(acp.AvailableCommandsUpdate); !ok {
				t.Fatalf("session/resume sent %T", n.Update)
			}
		}
	})

	t.Run("closes a session: it takes no more prompts", func(t *testing.T) {
		e, sid := ready(t, opts{script: twoRuns})
		_, err := e.agent.CloseSession(testkit.Context(t), &acp.CloseSessionRequest{SessionID: sid})
		must(t, err)
		if _, err := e.prompt(t, sid, acp.Text("hello?")); codeOf(err) != acp.CodeResourceNotFound {
			t.Fatalf("prompt after close = %v", err)
		}
		if _, err := e.agent.CloseSession(testkit.Context(t), &acp.CloseSessionRequest{SessionID: sid}); codeOf(err) != acp.CodeResourceNotFound {
			t.Fatalf("second close = %v", err)
		}
	})

	t.Run("refuses a cursor it did not give", func(t *testing.T) {
		e, _ := ready(t, opts{script: twoRuns})
		_, err := e.agent.ListSessions(testkit.Context(t), &acp.ListSessionsRequest{Cwd: e.root, Cursor: "page-two"})
		if codeOf(err) != api.CodeInvalidParams {
			t.Fatalf("session/list = %v", err)
		}
	})
}

func TestPromptBlocks(t *testing.T) {
	t.Run("mentions linked files and attaches embedded ones to the task's prompt", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"notes.txt": "hello\n", "a.go": "package a\n"}, script: twoRuns})
		_, err := e.prompt(t, sid,
			acp.Text("Compare "), acp.ResourceLink("notes.txt", fileuri.FromPath(e.root+"/notes.txt")),
			acp.Text(" with "), acp.TextResource(fileuri.FromPath(e.root+"/a.go"), "text/x-go", "package a // unsaved\n"))
		must(t, err)
		before := len(e.client.seen())
		_, err = e.agent.LoadSession(testkit.Context(t), &acp.LoadSessionRequest{SessionID: sid, Cwd: e.root})
		must(t, err)
		users := of[acp.UserMessageChunk](e.client.seen()[before:])
		want := "Compare @notes.txt with @a.go\n\n@a.go, as the user attached it:\n```\npackage a // unsaved\n```"
		if len(users) != 1 || users[0].Content.Text != want {
			t.Fatalf("the task's prompt was %q, want %q", users[0].Content.Text, want)
		}
	})

	t.Run("gives an image to the models as an attachment of the run", func(t *testing.T) {
		e, sid := ready(t, opts{script: twoRuns})
		_, err := e.prompt(t, sid, acp.Text("look"), acp.Image("image/png", onePixelPNG))
		must(t, err)
		before := len(e.client.seen())
		_, err = e.agent.LoadSession(testkit.Context(t), &acp.LoadSessionRequest{SessionID: sid, Cwd: e.root})
		must(t, err)
		users := of[acp.UserMessageChunk](e.client.seen()[before:])
		if len(users) != 1 || !strings.Contains(users[0].Content.Text, "image 1 (image/png, 70 bytes)") {
			t.Fatalf("the session's prompt %+v: want it to list the attached image", users)
		}
	})

	t.Run("refuses an image whose bytes are not its type, naming it", func(t *testing.T) {
		e, sid := ready(t, opts{script: twoRuns})
		_, err := e.prompt(t, sid, acp.Text("look"), acp.Image("image/jpeg", onePixelPNG))
		if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), `"attachments"[0]`) {
			t.Fatalf("prompt with a png called jpeg = %v", err)
		}
	})

	t.Run("refuses audio, saying so", func(t *testing.T) {
		e, sid := ready(t, opts{script: twoRuns})
		_, err := e.prompt(t, sid, acp.Text("listen"), acp.ContentBlock{Type: acp.BlockAudio, MimeType: "audio/wav", Data: "UklGRg=="})
		if codeOf(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), "prompt[1]") || !strings.Contains(err.Error(), "audio") {
			t.Fatalf("prompt with audio = %v", err)
		}
	})
}

// onePixelPNG is a 1×1 PNG, 70 bytes, in base64.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// listOf runs a slash command in the session and returns its answer.
func listOf(t *testing.T, e *env, sid, command string) string {
	t.Helper()
	before := len(e.client.seen())
	res, err := e.prompt(t, sid, acp.Text(command))
	must(t, err)
	if res.StopReason != acp.StopEndTurn {
		t.Fatalf("%s: stop reason %s", command, res.StopReason)
	}
	text := ""
	for _, m := range of[acp.AgentMessageChunk](e.client.seen()[before:]) {
		text += m.Content.Text
	}
	return text
}
