//go:build unix

package acpface_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
)

// noCaps is a client that offers neither files nor terminals.
var noCaps = &acp.ClientCapabilities{}

// ownWork plans one subtask that reads, edits, creates and deletes files
// and runs a command.
var ownWork = script(map[string][]turn{
	"coordinator": onePlan("Tidy up"),
	"1": {
		{calls: []call{{"read_file", map[string]any{"path": "main.go"}}, {"read_file", map[string]any{"path": "old.txt"}}}},
		{calls: []call{{"edit_file", map[string]any{"path": "main.go", "old_string": "func main() {}", "new_string": "func main() { println(1) }"}}}},
		{calls: []call{{"write_file", map[string]any{"path": "docs/new.md", "content": "# New\n"}}}},
		{calls: []call{{"delete_file", map[string]any{"path": "old.txt"}}}},
		{calls: []call{{"run_command", map[string]any{"command": "echo from-agentls-itself; ls docs"}}}},
		finish("tidied"),
	},
})

func TestClientWithoutFilesOrTerminals(t *testing.T) {
	for _, mode := range []string{"apply", "propose"} {
		t.Run("does the reads, writes and commands itself in "+mode+" mode, showing each diff", func(t *testing.T) {
			e, sid := ready(t, opts{files: map[string]string{"main.go": mainGo, "old.txt": "old\n"}, script: ownWork,
				caps: noCaps, meta: map[string]any{"editMode": mode}})
			e.client.answer = chooses("Apply")
			res, err := e.prompt(t, sid, acp.Text("tidy up"))
			must(t, err)
			if res.StopReason != acp.StopEndTurn || metaOf(t, res.Meta)["state"] != "done" {
				t.Fatalf("prompt = %+v %v", res, metaOf(t, res.Meta))
			}
			for _, m := range []string{acp.MethodFSReadTextFile, acp.MethodFSWriteTextFile, acp.MethodTerminalCreate} {
				if n := e.client.called(m); n != 0 {
					t.Errorf("%s called %d times on a client that does not offer it", m, n)
				}
			}
			if got := e.read(t, "main.go"); got != "package main\n\nfunc main() { println(1) }\n" {
				t.Fatalf("main.go = %q", got)
			}
			if got := e.read(t, "docs/new.md"); got != "# New\n" {
				t.Fatalf("docs/new.md = %q", got)
			}
			if _, err := os.Stat(filepath.Join(e.root, "old.txt")); !os.IsNotExist(err) {
				t.Fatalf("old.txt still there: %v", err)
			}
			var diffs []string
			var output string
			for _, u := range of[acp.ToolCallUpdate](e.client.seen()) {
				for _, c := range u.Content {
					if c.Type == acp.ToolContentDiff && u.Status != "" {
						old := "(new)"
						if c.OldText != nil {
							old = *c.OldText
						}
						diffs = append(diffs, filepath.Base(c.Path)+": "+old+" → "+c.NewText)
					}
					if c.Type == acp.ToolContentContent && strings.Contains(c.Content.Text, "from-agentls-itself") {
						output = c.Content.Text
					}
				}
			}
			want := []string{
				"main.go: " + mainGo + " → package main\n\nfunc main() { println(1) }\n",
				"new.md: (new) → # New\n",
				"old.txt: old\n → ",
			}
			if strings.Join(diffs, "|") != strings.Join(want, "|") {
				t.Fatalf("diffs\n%q\nwant\n%q", diffs, want)
			}
			// Its exit status, then its output with its lines, as a block.
			if !strings.HasPrefix(output, "Exit code 0.\n```\nfrom-agentls-itself\n") || !strings.Contains(output, "\nnew.md\n") || !strings.HasSuffix(output, "\n```") {
				t.Fatalf("the command's output %q", output)
			}
			e.client.mu.Lock()
			asked := len(e.client.permissions)
			e.client.mu.Unlock()
			if wantAsked := map[string]int{"apply": 0, "propose": 3}[mode]; asked != wantAsked {
				t.Fatalf("%d permission requests in %s mode, want %d", asked, mode, wantAsked)
			}
		})
	}
}
