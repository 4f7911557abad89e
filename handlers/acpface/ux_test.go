//go:build unix

package acpface_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// TestAModelThatCannotBeUsed holds authenticate, session/new and the prompt
// to one answer: where a prompt would fail for want of a model, so do the
// other two, with the same code and the same words. A client that offered
// authentication again on -32000 would otherwise loop.
func TestAModelThatCannotBeUsed(t *testing.T) {
	for _, c := range []struct{ name, model, says string }{
		{"a provider agentls does not know", "gemini:pro", `unknown model provider "gemini"`},
		{"a script that is not there", "script:/no/such.json", "/no/such.json"},
		{"a model without its provider", "claude-sonnet-4-5", "is not provider:model"},
	} {
		t.Run("refuses "+c.name+" at authenticate and session/new alike", func(t *testing.T) {
			e := start(t, opts{env: map[string]string{"AGENTLS_MODEL": c.model, "ANTHROPIC_API_KEY": "sk-ant-test"}})
			e.initialize(t, opts{})
			_, authErr := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "agentls-model"})
			_, newErr := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
			if codeOf(authErr) != acp.CodeAuthRequired || codeOf(newErr) != acp.CodeAuthRequired {
				t.Fatalf("authenticate = %v; session/new = %v; want -32000 from both", authErr, newErr)
			}
			if messageOf(authErr) != messageOf(newErr) || !strings.Contains(messageOf(authErr), c.says) {
				t.Fatalf("authenticate says %q, session/new %q; want the same words, naming %q", authErr, newErr, c.says)
			}
		})
	}

	t.Run("answers authenticate, session/new and the prompt with one error when the model goes", func(t *testing.T) {
		e, sid := ready(t, opts{script: script(map[string][]turn{"coordinator": {{text: "never asked"}}})})
		// The script goes away: the session's prompt cannot think.
		model := metaModel(t, e, sid)
		must(t, os.Remove(strings.TrimPrefix(model, "script:")))
		_, promptErr := e.prompt(t, sid, acp.Text("hello"))
		_, authErr := e.agent.Authenticate(testkit.Context(t), &acp.AuthenticateRequest{MethodID: "agentls-model"})
		_, newErr := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		for name, err := range map[string]error{"prompt": promptErr, "authenticate": authErr, "session/new": newErr} {
			if codeOf(err) != acp.CodeAuthRequired || messageOf(err) != messageOf(promptErr) {
				t.Errorf("%s = %v; want -32000 saying %q", name, err, promptErr)
			}
		}
	})
}

// messageOf is the message of an error reply, as agentls wrote it.
func messageOf(err error) string {
	var we *api.Error
	if errors.As(err, &we) {
		return we.Message
	}
	return ""
}

// metaModel is the session's model, as its model option shows it.
func metaModel(t *testing.T, e *env, sid string) string {
	t.Helper()
	res, err := e.agent.SetSessionConfigOption(testkit.Context(t), &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "engine", Value: "*"})
	must(t, err)
	return res.ConfigOptions[0].CurrentValue.(string)
}

// TestEverySessionPlaysTheScript: the scripted model's place in its script
// belongs to the session, so a second session on the same root plays it
// from its start, as the first did.
func TestEverySessionPlaysTheScript(t *testing.T) {
	e, first := ready(t, opts{files: map[string]string{"notes.txt": "ship it\n"}, script: script(map[string][]turn{
		"coordinator": onePlan("Read the notes"),
		"1":           {{calls: []call{{"read_file", map[string]any{"path": "notes.txt"}}}}, finish("the notes say ship it")},
	})})
	second, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
	must(t, err)
	for _, sid := range []string{first, second.SessionID} {
		res, err := e.prompt(t, sid, acp.Text("What do the notes say?"))
		if err != nil || res.StopReason != acp.StopEndTurn || metaOf(t, res.Meta)["state"] != api.TaskDone {
			t.Fatalf("the prompt of session %s = %+v, %v", sid, res, err)
		}
	}
}

// TestAFailedTurn: a task that failed does not end its turn as if it had
// been done; the prompt fails, saying why, with the task in its data.
func TestAFailedTurn(t *testing.T) {
	// The coordinator's model fails.
	e, sid := ready(t, opts{script: `{"agents": {"coordinator": [{"error": "the model is down"}]}}`})
	_, err := e.prompt(t, sid, acp.Text("Do something"))
	var we *api.Error
	if codeOf(err) != api.CodeInternalError || !asError(err, &we) || !strings.Contains(we.Message, "Planning failed") {
		t.Fatalf("prompt = %v; want -32603 saying the planning failed", err)
	}
	var data struct {
		Meta struct {
			Agentls struct {
				State  string `json:"state"`
				TaskID string `json:"taskId"`
			} `json:"agentls"`
		} `json:"_meta"`
	}
	if we.Data == nil || json.Unmarshal(*we.Data, &data) != nil || data.Meta.Agentls.State != api.TaskFailed || data.Meta.Agentls.TaskID == "" {
		t.Fatalf("error data %s", dataOf(we))
	}
	// The person saw why, in the turn's last message.
	msgs := of[acp.AgentMessageChunk](e.client.seen())
	if len(msgs) == 0 || !strings.Contains(msgs[len(msgs)-1].Content.Text, "Planning failed") {
		t.Fatalf("agent messages %+v", msgs)
	}
}

func asError(err error, target **api.Error) bool { return errors.As(err, target) }

func dataOf(e *api.Error) string {
	if e == nil || e.Data == nil {
		return "none"
	}
	return string(*e.Data)
}

// TestAnImageAlone: a pasted screenshot with nothing typed is a prompt,
// as promptCapabilities.image promises.
func TestAnImageAlone(t *testing.T) {
	e, sid := ready(t, opts{script: script(map[string][]turn{
		"coordinator": onePlan("Look at the screenshot"),
		"1":           {finish("a one-pixel image")},
	})})
	res, err := e.prompt(t, sid, acp.ContentBlock{Type: acp.BlockImage, MimeType: "image/png", Data: onePixelPNG})
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("an image alone = %+v, %v", res, err)
	}
	_, err = e.prompt(t, sid, acp.Text("  "))
	if codeOf(err) != api.CodeInvalidParams {
		t.Fatalf("a prompt of blanks = %v", err)
	}
}

// TestTheOlderModelSelection: CodeCompanion reads session/new's models and
// calls session/set_model; both stand beside the model option.
func TestTheOlderModelSelection(t *testing.T) {
	e, sid := ready(t, opts{script: script(nil), env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}})
	_, err := e.agent.SetSessionModel(testkit.Context(t), &acp.SetSessionModelRequest{SessionID: sid, ModelID: "openai:gpt-4.1-mini"})
	must(t, err)
	if got := metaModel(t, e, sid); got != "openai:gpt-4.1-mini" {
		t.Fatalf("the model option after session/set_model = %q", got)
	}
	_, err = e.agent.SetSessionModel(testkit.Context(t), &acp.SetSessionModelRequest{SessionID: sid, ModelID: "openai:gpt-5-ultra"})
	if codeOf(err) != api.CodeInvalidParams {
		t.Fatalf("session/set_model of a model not offered = %v", err)
	}
	// The mode option sets the mode as session/set_mode does, and says so.
	set, err := e.agent.SetSessionConfigOption(testkit.Context(t), &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "mode", Value: "apply"})
	must(t, err)
	if set.ConfigOptions[1].CurrentValue != "apply" {
		t.Fatalf("options %+v", set.ConfigOptions)
	}
	e.client.await(t, "current_mode_update", func(u acp.SessionUpdate) bool {
		m, ok := u.(acp.CurrentModeUpdate)
		return ok && m.CurrentModeID == "apply"
	})
}

// repeatsPrefix reports whether msg says its first words twice: "invalid
// params: invalid params: …", "Error: Error: …", "Not applied: not
// applied: …".
func repeatsPrefix(msg string) bool {
	head, rest, ok := strings.Cut(strings.TrimSpace(msg), ":")
	if !ok || head == "" || strings.ContainsAny(head, `"{[(`) {
		return false
	}
	rest = strings.TrimSpace(rest)
	return len(rest) >= len(head) && strings.EqualFold(rest[:len(head)], head)
}

func TestRepeatsPrefix(t *testing.T) {
	for msg, want := range map[string]bool{
		`invalid params: invalid params: "attachments"[0]: no`: true,
		"Error: Error: the user refused":                       true,
		"Not applied: not applied: stale":                      true,
		`invalid params: "attachments"[0]: no`:                 false,
		"Error: the user refused":                              false,
		"no colon here":                                        false,
	} {
		if repeatsPrefix(msg) != want {
			t.Errorf("repeatsPrefix(%q) = %v", msg, !want)
		}
	}
}

// TestErrorsReadOnce holds what the client and the model are told to one
// rule: the edge that turns an error into a code, or into a tool's result,
// says what it is, once.
func TestErrorsReadOnce(t *testing.T) {
	e, sid := ready(t, opts{files: map[string]string{"a.txt": "a\n"}, script: script(map[string][]turn{
		"coordinator": onePlan("Change a.txt"),
		"1": {
			{calls: []call{{"write_file", map[string]any{"path": "a.txt", "content": "b\n"}}}},
			{calls: []call{{"read_file", map[string]any{"nope": 1}}}},
			finish("tried"),
		},
	}), meta: map[string]any{"editMode": "propose"}})
	e.client.answer = func(p *acp.RequestPermissionRequest) acp.PermissionOutcome {
		return acp.Selected(p.Options[len(p.Options)-1].OptionID) // Reject
	}
	ctx := testkit.Context(t)
	var errs []error
	// A picture whose bytes are not its type: the workforce refuses the
	// attachment, the face says -32602.
	_, err := e.prompt(t, sid, acp.Text("look"), acp.ContentBlock{Type: acp.BlockImage, MimeType: "image/png", Data: "aGVsbG8="})
	errs = append(errs, err)
	_, err = e.agent.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: sid, ModeID: "yolo"})
	errs = append(errs, err)
	_, err = e.agent.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{SessionID: sid, ConfigID: "engine", Value: "nobody"})
	errs = append(errs, err)
	_, err = e.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: "relative/dir"})
	errs = append(errs, err)
	_, err = e.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: filepath.Join(e.root, "a.txt")})
	errs = append(errs, err)
	_, err = e.prompt(t, sid, acp.Text("/stop-subtask"))
	errs = append(errs, err)
	for i, err := range errs {
		if codeOf(err) != api.CodeInvalidParams {
			t.Errorf("request %d = %v; want -32602", i, err)
			continue
		}
		if msg := messageOf(err); repeatsPrefix(msg) || strings.Count(strings.ToLower(msg), "invalid params") != 1 {
			t.Errorf("request %d: %q says its prefix more or less than once", i, err)
		}
	}
	if !strings.Contains(errs[0].Error(), `"attachments"[0]`) {
		t.Errorf("the attachment's refusal %q does not name it", errs[0])
	}
	// A turn with a change the person rejected and a call that did not fit.
	res, err := e.prompt(t, sid, acp.Text("Change a.txt"))
	if err != nil || res.StopReason != acp.StopEndTurn {
		t.Fatalf("prompt = %+v, %v", res, err)
	}
	failed := 0
	for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
		for _, c := range u.Content {
			if c.Content == nil {
				continue
			}
			if repeatsPrefix(c.Content.Text) {
				t.Errorf("tool call %s says %q", u.ToolCallID, c.Content.Text)
			}
		}
		if u.Status == acp.StatusFailed {
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("%d calls failed; want the rejected change and the call that did not fit", failed)
	}
	for _, c := range of[acp.AgentThoughtChunk](e.client.seen()) {
		if repeatsPrefix(c.Content.Text) {
			t.Errorf("a thought says %q", c.Content.Text)
		}
	}
}

// TestAReopenedSessionLooksLikeTheLiveOne: session/load shows each tool
// call as the live session did: its id, title, kind, the file it touched
// at the line it changed, and the diff of its change.
func TestAReopenedSessionLooksLikeTheLiveOne(t *testing.T) {
	e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo}, meta: map[string]any{"editMode": "apply"}, script: script(map[string][]turn{
		"coordinator": onePlan("Add greet"),
		"1": {
			{calls: []call{{"read_file", map[string]any{"path": "main.go"}}}},
			{calls: []call{{"edit_file", map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() {}\n\nfunc greet() {}"}}}},
			{calls: []call{{"write_file", map[string]any{"path": "greet.md", "content": "# greet\n"}}}},
			{calls: []call{{"run_command", map[string]any{"command": "echo done"}}}},
			finish("greet added"),
		},
	})})
	_, err := e.prompt(t, sid, acp.Text("Add greet"))
	must(t, err)
	live := shownCalls(e.client.seen())
	before := len(e.client.seen())
	_, err = e.agent.LoadSession(testkit.Context(t), &acp.LoadSessionRequest{SessionID: sid, Cwd: e.root})
	must(t, err)
	replayed := shownCalls(e.client.seen()[before:])
	if len(live) != 4 || !slices.Equal(live, replayed) {
		t.Fatalf("live calls\n%s\nreplayed\n%s", strings.Join(live, "\n"), strings.Join(replayed, "\n"))
	}
}

// shownCalls is each tool call as a client shows it once it has ended:
// its id, title and kind, its locations and its diffs.
func shownCalls(updates []acp.SessionNotification) []string {
	type shown struct {
		title, kind string
		locs        []acp.ToolCallLocation
		content     []acp.ToolCallContent
	}
	calls := map[string]*shown{}
	var order []string
	for _, n := range updates {
		switch u := n.Update.(type) {
		case acp.ToolCall:
			calls[u.ToolCallID] = &shown{title: u.Title, kind: u.Kind, locs: u.Locations, content: u.Content}
			order = append(order, u.ToolCallID)
		case acp.ToolCallUpdate:
			c := calls[u.ToolCallID]
			if c == nil {
				continue
			}
			if u.Locations != nil {
				c.locs = u.Locations
			}
			if u.Content != nil {
				c.content = u.Content
			}
		}
	}
	var out []string
	for _, id := range order {
		c := calls[id]
		line := id + " " + c.title + " (" + c.kind + ")"
		for _, l := range c.locs {
			line += " @" + filepath.Base(l.Path)
			if l.Line != nil {
				line += ":" + strconv.Itoa(*l.Line)
			}
		}
		for _, x := range c.content {
			if x.Type == acp.ToolContentDiff {
				old := "(none)"
				if x.OldText != nil {
					old = *x.OldText
				}
				line += fmt.Sprintf(" diff %s %q→%q", filepath.Base(x.Path), old, x.NewText)
			}
		}
		out = append(out, line)
	}
	return out
}
