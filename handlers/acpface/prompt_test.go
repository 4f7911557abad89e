//go:build unix

package acpface_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/testkit"
)

// editScript plans one subtask whose worker says something, reads main.go,
// edits it, runs a command and finishes.
func editScript(command string) string {
	return script(map[string][]turn{
		"coordinator": onePlan("Add a greet function"),
		"1": {
			{text: "Reading main.go first.", usage: map[string]int{"inputTokens": 100, "outputTokens": 20},
				calls: []call{{"read_file", map[string]any{"path": "main.go"}}}},
			{calls: []call{{"edit_file", map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() {}\n\nfunc greet() string { return \"hi\" }"}}}},
			{calls: []call{{"run_command", map[string]any{"command": command}}}},
			finish("greet added"),
		},
	})
}

const mainGo = "package main\n\nfunc main() {}\n"

func TestPrompt(t *testing.T) {
	t.Run("runs a task through the client's buffers, files and terminals and reports it as updates", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo}, script: editScript("echo tested"), meta: map[string]any{"editMode": "apply"}})
		res, err := e.prompt(t, sid, acp.Text("Add a greet function"))
		must(t, err)
		if res.StopReason != acp.StopEndTurn {
			t.Fatalf("stop reason %q", res.StopReason)
		}
		m := metaOf(t, res.Meta)
		if m["state"] != "done" || m["taskId"] == "" {
			t.Fatalf("_meta.agentls = %v", m)
		}
		if changes, _ := m["changes"].([]any); len(changes) != 1 || changes[0].(map[string]any)["path"] != "main.go" {
			t.Fatalf("changes = %v", m["changes"])
		}
		if got := e.read(t, "main.go"); !strings.Contains(got, "func greet()") {
			t.Fatalf("main.go = %q", got)
		}
		for _, method := range []string{acp.MethodFSReadTextFile, acp.MethodFSWriteTextFile, acp.MethodTerminalCreate, acp.MethodTerminalRelease} {
			if e.client.called(method) == 0 {
				t.Errorf("%s was never called", method)
			}
		}
		e.client.mu.Lock()
		writes := e.client.writes
		e.client.mu.Unlock()
		if len(writes) != 1 || writes[0].Path != filepath.Join(e.root, "main.go") || !strings.HasPrefix(writes[0].Content, "package main") {
			t.Fatalf("fs/write_text_file = %+v: the whole file, by its absolute path", writes)
		}

		updates := e.client.seen()
		plans := of[acp.Plan](updates)
		if len(plans) == 0 || plans[0].Entries[0].Content != "Add a greet function" {
			t.Fatalf("plans = %+v", plans)
		}
		last := plans[len(plans)-1].Entries[0]
		if last.Status != acp.PlanCompleted || metaOf(t, last.Meta)["state"] != "done" || metaOf(t, last.Meta)["subtaskId"] != "1" {
			t.Fatalf("last plan entry = %+v", last)
		}
		thoughts := ""
		for _, c := range of[acp.AgentThoughtChunk](updates) {
			thoughts += c.Content.Text
		}
		if !strings.Contains(thoughts, "Reading main.go first.") {
			t.Fatalf("thoughts = %q", thoughts)
		}
		calls := of[acp.ToolCall](updates)
		titles := make([]string, len(calls))
		for i, c := range calls {
			titles[i] = c.Title
		}
		if !slices.Equal(titles, []string{"Read main.go", "Edit main.go", "Run `echo tested`"}) {
			t.Fatalf("tool calls %q", titles)
		}
		if calls[0].Kind != acp.KindRead || calls[0].Locations[0].Path != filepath.Join(e.root, "main.go") {
			t.Fatalf("read call %+v", calls[0])
		}
		if cm := metaOf(t, calls[1].Meta); cm["subtaskId"] != "1" || cm["callId"] != "1/2" || cm["tool"] != "edit_file" {
			t.Fatalf("edit call _meta %v", cm)
		}
		// The edit's call ends completed with its diff, then its result.
		var read, edit, run acp.ToolCallUpdate
		for _, u := range of[acp.ToolCallUpdate](updates) {
			switch {
			case u.ToolCallID == calls[0].ToolCallID && u.Status != "":
				read = u
			case u.ToolCallID == calls[1].ToolCallID && u.Status != "":
				edit = u
			case u.ToolCallID == calls[2].ToolCallID && u.Status != "":
				run = u
			}
		}
		if edit.Status != acp.StatusCompleted || len(edit.Content) != 2 || edit.Content[0].Type != acp.ToolContentDiff {
			t.Fatalf("edit's last update %+v", edit)
		}
		diff := edit.Content[0]
		if diff.Path != filepath.Join(e.root, "main.go") || diff.OldText == nil || *diff.OldText != mainGo || !strings.Contains(diff.NewText, "func greet()") {
			t.Fatalf("diff %+v", diff)
		}
		if edit.Locations[0].Line == nil || *edit.Locations[0].Line != 4 {
			t.Fatalf("edit location %+v: the first changed line", edit.Locations)
		}
		if heat := metaOf(t, edit.Meta)["heat"]; heat == nil {
			t.Fatalf("edit's _meta has no heat: %v", metaOf(t, edit.Meta))
		}
		// The file read, as the client shows it: its lines, as a block.
		if len(read.Content) != 1 || read.Content[0].Content.Text != "```\n"+strings.TrimSuffix(mainGo, "\n")+"\n```" {
			t.Fatalf("read's last update %+v", read)
		}
		// The command's output is the terminal's; its result says how it
		// ended.
		if run.Status != acp.StatusCompleted || run.Content[0].Type != acp.ToolContentTerminal || run.Content[1].Content.Text != "Exit code 0." {
			t.Fatalf("run's last update %+v", run)
		}
		usage := of[acp.UsageUpdate](updates)
		if len(usage) == 0 || usage[0].Used != 120 || usage[0].Size == 0 {
			t.Fatalf("usage = %+v", usage)
		}
		msgs := of[acp.AgentMessageChunk](updates)
		if len(msgs) == 0 || msgs[len(msgs)-1].Content.Text != "greet added" {
			t.Fatalf("agent messages %+v", msgs)
		}
		// Nothing of the turn arrives after its answer: the summary is
		// the last update.
		if _, ok := updates[len(updates)-1].Update.(acp.AgentMessageChunk); !ok {
			t.Fatalf("last update %T", updates[len(updates)-1].Update)
		}
	})
}

func TestPromptCodeGraph(t *testing.T) {
	t.Run("gives the workers the workspace's code graph, as the LSP face does", func(t *testing.T) {
		sc := script(map[string][]turn{
			"coordinator": onePlan("Find greet"),
			"1": {
				{calls: []call{{"find_symbol", map[string]any{"name": "greet"}}}},
				finish("found"),
			},
		})
		e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo + "\nfunc greet() string { return \"hi\" }\n"}, script: sc})
		res, err := e.prompt(t, sid, acp.Text("Where is greet?"))
		must(t, err)
		if res.StopReason != acp.StopEndTurn {
			t.Fatalf("stop reason %q", res.StopReason)
		}
		var found string
		for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
			if u.Status == acp.StatusCompleted {
				for _, c := range u.Content {
					if c.Content != nil {
						found += c.Content.Text
					}
				}
			}
		}
		if !strings.Contains(found, "main.go:5") {
			t.Fatalf("find_symbol's result %q: want greet's definition at main.go:5", found)
		}
	})
}

func TestPromptThinkingAndTodos(t *testing.T) {
	t.Run("streams the model's thinking as thoughts marked so, and a worker's todos in its plan entry", func(t *testing.T) {
		sc := script(map[string][]turn{
			"coordinator": onePlan("Add greet"),
			"1": {
				{thinking: "The file is small.", calls: []call{{"todo", map[string]any{"todos": []any{
					map[string]any{"content": "Add greet", "status": "in_progress"},
					map[string]any{"content": "Test greet", "status": "pending"},
				}}}}},
				finish("done"),
			},
		})
		e, sid := ready(t, opts{script: sc, meta: map[string]any{"thinking": map[string]any{"enabled": true}}})
		_, err := e.prompt(t, sid, acp.Text("Add greet"))
		must(t, err)
		updates := e.client.seen()
		thinking := ""
		for _, c := range of[acp.AgentThoughtChunk](updates) {
			if metaOf(t, c.Meta)["thinking"] == true {
				thinking += c.Content.Text
			}
		}
		if thinking != "The file is small." {
			t.Fatalf("thinking %q", thinking)
		}
		var todos []any
		for _, p := range of[acp.Plan](updates) {
			if td, ok := metaOf(t, p.Entries[0].Meta)["todos"].([]any); ok {
				todos = td
			}
		}
		if len(todos) != 2 || todos[0].(map[string]any)["content"] != "Add greet" || todos[1].(map[string]any)["status"] != "pending" {
			t.Fatalf("the plan entry's todos %v", todos)
		}
	})
}

var _ = testkit.Context

// A cwd that is a symlink (macOS's temporary directory, a symlinked home)
// is the workspace it leads to: its files are edited, and the client hears
// of them under the name it gave.
func TestPromptInASymlinkedCwd(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	e := start(t, opts{files: map[string]string{"main.go": mainGo}, script: editScript("echo tested"), meta: map[string]any{"editMode": "apply"}})
	e.initialize(t, opts{meta: map[string]any{"editMode": "apply"}})
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(e.root, link))
	s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: link})
	must(t, err)
	res, err := e.prompt(t, s.SessionID, acp.Text("Add a greet function"))
	must(t, err)
	if m := metaOf(t, res.Meta); m["state"] != "done" {
		t.Fatalf("_meta.agentls = %v", m)
	}
	if got := e.read(t, "main.go"); !strings.Contains(got, "func greet()") {
		t.Fatalf("main.go = %q: the edit did not land", got)
	}
	e.client.mu.Lock()
	writes := e.client.writes
	e.client.mu.Unlock()
	if len(writes) != 1 || writes[0].Path != filepath.Join(link, "main.go") {
		t.Fatalf("fs/write_text_file = %+v: want the file under the cwd the client gave", writes)
	}
}

func TestPromptProgress(t *testing.T) {
	t.Run("says how far the task is in the plan's _meta.agentls.progress", func(t *testing.T) {
		e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo}, script: editScript("echo tested"), meta: map[string]any{"editMode": "apply"}})
		if _, err := e.prompt(t, sid, acp.Text("Add a greet function")); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range of[acp.Plan](e.client.seen()) {
			m := metaOf(t, p.Meta)
			if m["taskId"] == "" {
				t.Errorf("plan _meta.agentls %v has no taskId", m)
			}
			pr, _ := m["progress"].(map[string]any)
			if pr == nil {
				got = append(got, "-")
				continue
			}
			got = append(got, fmt.Sprintf("%v/%v %v%% %v", pr["done"], pr["total"], pr["percentage"], pr["running"]))
		}
		// Planned; the subtask running; done.
		want := []string{"-", "0/1 0% [1]", "1/1 100% <nil>"}
		if !slices.Equal(got, want) {
			t.Errorf("plans' progress %q, want %q", got, want)
		}
	})
}
