package editing

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/testkit"
)

// noResourceCaps is a client with documentChanges but no resource
// operations, as eglot 1.9 advertises itself.
func noResourceCaps() api.Caps {
	c := headlesstest.AllCaps()
	c.CreateFile, c.DeleteFile = false, false
	return c
}

func (e *env) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.root, filepath.FromSlash(rel)))
	return err == nil
}

func TestResourceOperations(t *testing.T) {
	ctx := context.Background()

	t.Run("sends CreateFile and DeleteFile to a client that declared them", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"old.txt": "bye\n"})
		a := e.agent("")
		if _, err := a.Write(ctx, "new/dir/a.txt", "hello\n"); err != nil {
			t.Fatal(err)
		}
		a.Read(ctx, "old.txt", 0, 0)
		if _, err := a.Delete(ctx, "old.txt"); err != nil {
			t.Fatal(err)
		}
		if dc := e.ed.Applied()[0].Edit.DocumentChanges; len(dc) != 2 || dc[0].CreateFile == nil {
			t.Errorf("create sent as %+v", dc)
		}
		if dc := e.ed.Applied()[1].Edit.DocumentChanges; len(dc) != 1 || dc[0].DeleteFile == nil {
			t.Errorf("delete sent as %+v", dc)
		}
	})

	t.Run("writes a new file itself, in a new directory, then shows it through an edit over its whole text, for a client without create", func(t *testing.T) {
		e := newEnv(t, noResourceCaps(), api.EditApply, api.Zones{}, nil)
		var onDisk string
		e.ed.OnApply(func() { onDisk = e.read(t, "new/dir/a.txt") })
		const text = "hello\n😀 wörld"
		ch, err := e.agent("").Write(ctx, "new/dir/a.txt", text)
		if err != nil || !ch.Applied {
			t.Fatalf("Write = %+v, %v", ch, err)
		}
		if onDisk != text {
			t.Errorf("the disk held %q when the edit went out, want the whole file", onDisk)
		}
		if len(e.ed.Applied()) != 1 {
			t.Fatalf("%d edits sent, want 1", len(e.ed.Applied()))
		}
		dc := e.ed.Applied()[0].Edit.DocumentChanges
		if len(dc) != 1 || dc[0].TextDocumentEdit == nil || len(dc[0].TextDocumentEdit.Edits) != 1 {
			t.Fatalf("documentChanges = %+v, want one text edit", dc)
		}
		ed := dc[0].TextDocumentEdit.Edits[0]
		if got, err := applyLSP(text, []api.TextEdit{{Range: ed.Range, NewText: ed.NewText}}); err != nil || got != text {
			t.Errorf("the edit turns the file into %q, %v; want it unchanged", got, err)
		}
		if ed.Range.End.Line != 1 || ed.Range.End.Character != 8 {
			t.Errorf("the edit ends at %+v, want the file's end 1:8 (UTF-16)", ed.Range.End)
		}
		if got := e.read(t, "new/dir/a.txt"); got != text {
			t.Fatalf("file = %q", got)
		}
	})

	t.Run("shows the new file through changes for a client without documentChanges", func(t *testing.T) {
		caps := noResourceCaps()
		caps.DocumentChanges = false
		e := newEnv(t, caps, api.EditApply, api.Zones{}, nil)
		if _, err := e.agent("").Write(ctx, "a.txt", "hello\n"); err != nil {
			t.Fatal(err)
		}
		if len(e.ed.Applied()) != 1 || len(e.ed.Applied()[0].Edit.Changes) != 1 || e.read(t, "a.txt") != "hello\n" {
			t.Fatalf("edits sent %+v, file %q", e.ed.Applied(), e.read(t, "a.txt"))
		}
	})

	t.Run("deletes the file itself and sends no edit to a client without delete", func(t *testing.T) {
		e := newEnv(t, noResourceCaps(), api.EditApply, api.Zones{}, map[string]string{"old.txt": "bye\n"})
		a := e.agent("")
		a.Read(ctx, "old.txt", 0, 0)
		ch, err := a.Delete(ctx, "old.txt")
		if err != nil || !ch.Applied || e.exists("old.txt") {
			t.Fatalf("Delete = %+v, %v; old.txt exists: %v", ch, err, e.exists("old.txt"))
		}
		if len(e.ed.Applied()) != 0 {
			t.Errorf("sent %+v", e.ed.Applied())
		}
	})

	t.Run("takes its file and directories away again when the editor refuses the filling edit", func(t *testing.T) {
		e := newEnv(t, noResourceCaps(), api.EditApply, api.Zones{}, map[string]string{"keep/x.txt": "x\n"})
		e.ed.Refuse("read-only")
		ch, err := e.agent("").Write(ctx, "keep/new/dir/a.txt", "hello\n")
		if !errors.Is(err, ErrNotApplied) || ch.Applied {
			t.Fatalf("Write = %+v, %v; want ErrNotApplied", ch, err)
		}
		if e.exists("keep/new") || !e.exists("keep/x.txt") {
			t.Fatalf("keep/new exists: %v, keep/x.txt exists: %v", e.exists("keep/new"), e.exists("keep/x.txt"))
		}
	})

	for _, approve := range []bool{true, false} {
		name := "asks the person with a message before creating for a client without create, and creates on approval"
		if !approve {
			name = "asks the person with a message before creating for a client without create, and creates nothing on a refusal"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, noResourceCaps(), api.EditPropose, api.Zones{}, nil)
			e.ed.SetAnswer(actionReject)
			if approve {
				e.ed.SetAnswer(actionApply)
			}
			ch, err := e.agent("").Write(ctx, "a.txt", "hello\n")
			if ch.Applied != approve || e.exists("a.txt") != approve || len(e.ed.Asked()) != 1 {
				t.Fatalf("Write = %+v, %v; a.txt exists: %v; asked %d times", ch, err, e.exists("a.txt"), len(e.ed.Asked()))
			}
			if !approve {
				if !errors.Is(err, ErrRejected) || len(e.ed.Applied()) != 0 {
					t.Fatalf("err = %v, %d edits sent; want ErrRejected and none", err, len(e.ed.Applied()))
				}
				return
			}
			if p := e.ed.Applied()[0]; p.Edit.ChangeAnnotations != nil || e.ed.Waits()[0] != api.Machine {
				t.Errorf("edit = %+v, wait %v; want a plain edit once approved", p, e.ed.Waits()[0])
			}
		})
	}

	t.Run("asks the person with a message before deleting for a client without delete", func(t *testing.T) {
		e := newEnv(t, noResourceCaps(), api.EditPropose, api.Zones{}, map[string]string{"old.txt": "bye\n"})
		e.ed.SetAnswer(actionReject)
		a := e.agent("")
		a.Read(ctx, "old.txt", 0, 0)
		if _, err := a.Delete(ctx, "old.txt"); !errors.Is(err, ErrRejected) || !e.exists("old.txt") {
			t.Fatalf("Delete = %v; old.txt exists: %v", err, e.exists("old.txt"))
		}
		if len(e.ed.Asked()) != 1 || !strings.Contains(e.ed.Asked()[0].Message, "delete old.txt") {
			t.Errorf("asked %+v", e.ed.Asked())
		}
	})

	t.Run("never overwrites a file that appeared while the person decided", func(t *testing.T) {
		caps := noResourceCaps()
		caps.ChangeAnnotation = false
		e := newEnv(t, caps, api.EditPropose, api.Zones{}, nil)
		e.ed.OnAsk(func() { testkit.WriteFiles(t, e.root, map[string]string{"a.txt": "the person's\n"}) })
		ch, err := e.agent("").Write(ctx, "a.txt", "hello\n")
		if !errors.Is(err, ErrExists) || ch.Applied {
			t.Fatalf("Write = %+v, %v; want ErrExists", ch, err)
		}
		if got := e.read(t, "a.txt"); got != "the person's\n" || len(e.ed.Applied()) != 0 {
			t.Fatalf("a.txt = %q, %d edits sent", got, len(e.ed.Applied()))
		}
	})

	t.Run("reports a client that claims a create and a delete it did not do", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"old.txt": "bye\n"})
		e.ed.Pretend()
		a := e.agent("")
		ch, err := a.Write(ctx, "a.txt", "hello\n")
		if !errors.Is(err, ErrNotApplied) || ch.Applied || !strings.Contains(err.Error(), "no such file on disk") {
			t.Fatalf("Write = %+v, %v; want ErrNotApplied", ch, err)
		}
		a.Read(ctx, "old.txt", 0, 0)
		ch, err = a.Delete(ctx, "old.txt")
		if !errors.Is(err, ErrNotApplied) || ch.Applied || !strings.Contains(err.Error(), "still on disk") {
			t.Fatalf("Delete = %+v, %v; want ErrNotApplied", ch, err)
		}
	})

	t.Run("creates and deletes for real with an editor that would only pretend, when it declared neither", func(t *testing.T) {
		e := newEnv(t, noResourceCaps(), api.EditApply, api.Zones{}, map[string]string{"old.txt": "bye\n"})
		e.ed.Pretend()
		a := e.agent("")
		if _, err := a.Write(ctx, "new/a.txt", "hello\n"); err != nil || !e.exists("new/a.txt") {
			t.Fatalf("Write = %v; new/a.txt exists: %v", err, e.exists("new/a.txt"))
		}
		a.Read(ctx, "old.txt", 0, 0)
		if _, err := a.Delete(ctx, "old.txt"); err != nil || e.exists("old.txt") {
			t.Fatalf("Delete = %v; old.txt exists: %v", err, e.exists("old.txt"))
		}
	})
}
