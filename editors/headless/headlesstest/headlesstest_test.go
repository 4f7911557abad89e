package headlesstest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
)

func TestEditor(t *testing.T) {
	ctx := context.Background()
	t.Run("fails every call it lacks the capability for with ErrUnsupported", func(t *testing.T) {
		e := New(t.TempDir(), api.Caps{})
		errs := []error{
			func() error { _, err := e.ReadFile(ctx, "a", ""); return err }(),
			func() error { _, err := e.ApplyEdit(ctx, api.ApplyWorkspaceEditParams{}, api.Machine); return err }(),
			func() error { _, err := e.Ask(ctx, api.AskParams{Question: "q"}); return err }(),
			func() error { _, err := e.RunCommand(ctx, api.RunCommandParams{Command: "true"}); return err }(),
			e.WorkDoneProgressCreate(ctx, api.NewProgressToken("t")),
		}
		for i, err := range errs {
			if !errors.Is(err, api.ErrUnsupported) {
				t.Errorf("call %d: %v, want ErrUnsupported", i, err)
			}
		}
	})

	t.Run("applies an edit to an open buffer and reads it back before the disk", func(t *testing.T) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("disk\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		e := New(root, AllCaps())
		e.OpenBuffer("a.txt", "buffer\n")
		uri := fileuri.FromPath(filepath.Join(e.Root(), "a.txt"))
		edit := api.WorkspaceEdit{Changes: map[string][]api.TextEdit{uri: {{Range: api.Range{End: api.Position{Character: 6}}, NewText: "edited"}}}}
		if res, err := e.ApplyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: edit}, api.Human); err != nil || !res.Applied {
			t.Fatalf("ApplyEdit = %+v, %v", res, err)
		}
		if text, err := e.ReadFile(ctx, "", uri); err != nil || text != "edited\n" {
			t.Errorf("ReadFile = %q, %v; want the edited buffer", text, err)
		}
		if len(e.Applied()) != 1 || e.Waits()[0] != api.Human {
			t.Errorf("recorded %d edits, waits %v", len(e.Applied()), e.Waits())
		}
		e.CloseBuffer("a.txt")
		if text, _ := e.ReadFile(ctx, "a.txt", ""); text != "disk\n" {
			t.Errorf("after closing the buffer ReadFile = %q, want the disk's", text)
		}
	})

	t.Run("refuses or fails an edit as scripted, without applying it", func(t *testing.T) {
		root := t.TempDir()
		e := New(root, AllCaps())
		create := api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{{CreateFile: &api.CreateFile{URI: fileuri.FromPath(filepath.Join(e.Root(), "n.txt"))}}}}
		e.Refuse("read-only")
		if res, err := e.ApplyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: create}, api.Machine); err != nil || res.Applied || res.FailureReason != "read-only" {
			t.Errorf("refused ApplyEdit = %+v, %v", res, err)
		}
		e.Refuse("")
		e.FailApply(api.ErrTimeout)
		if _, err := e.ApplyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: create}, api.Machine); !errors.Is(err, api.ErrTimeout) {
			t.Errorf("failed ApplyEdit = %v", err)
		}
		if _, err := os.Stat(filepath.Join(root, "n.txt")); !os.IsNotExist(err) {
			t.Errorf("n.txt exists: %v", err)
		}
	})

	t.Run("chooses the first action until an answer is scripted, then that answer or a dismissal", func(t *testing.T) {
		e := New(t.TempDir(), AllCaps())
		p := api.ShowMessageRequestParams{Message: "apply?", Actions: []api.MessageActionItem{{Title: "Apply"}, {Title: "Reject"}}}
		answers := []string{}
		for _, script := range []func(){func() {}, func() { e.SetAnswer("Reject") }, func() { e.SetAnswer("") }} {
			script()
			item, err := e.ShowMessageRequest(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			title := "<dismissed>"
			if item != nil {
				title = item.Title
			}
			answers = append(answers, title)
		}
		if got := answers; len(got) != 3 || got[0] != "Apply" || got[1] != "Reject" || got[2] != "<dismissed>" {
			t.Errorf("answers = %q", got)
		}
		if len(e.Asked()) != 3 {
			t.Errorf("recorded %d questions, want 3", len(e.Asked()))
		}
	})
}
