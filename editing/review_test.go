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
)

// reviewFiles is the workspace of the review tests: a.txt is updated (two
// words on two lines far apart), b.txt updated, old.txt deleted and
// new.txt created.
var reviewFiles = map[string]string{
	"a.txt":   "alpha one\n2\n3\n4\n5\n6\n7\n8\nomega one\n",
	"b.txt":   "beta = 1\n",
	"old.txt": "bye\n",
}

const (
	reviewA = "alpha two\n2\n3\n4\n5\n6\n7\n8\nomega two\n"
	reviewB = "beta = 2\n"
)

// holdAll makes the agent's four changes and returns its task.
func holdAll(t *testing.T, e *env) (*Task, *Agent) {
	t.Helper()
	ctx := context.Background()
	task := e.ws.Task("t1", "review", api.EditReview)
	a := task.Agent("1")
	for _, p := range []string{"a.txt", "b.txt", "old.txt"} {
		if _, err := a.Read(ctx, p, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	steps := []func() (Change, error){
		func() (Change, error) { return a.Write(ctx, "a.txt", reviewA) },
		func() (Change, error) { return a.Edit(ctx, "b.txt", "1", "2", false) },
		func() (Change, error) { return a.Delete(ctx, "old.txt") },
		func() (Change, error) { return a.Write(ctx, "dir/new.txt", "fresh\n") },
	}
	for i, step := range steps {
		ch, err := step()
		if err != nil || !ch.Applied || !ch.Held || !strings.Contains(ch.Text, "Held for review") {
			t.Fatalf("change %d = %+v, %v", i, ch, err)
		}
	}
	return task, a
}

func TestReviewModeHoldsChangesTheTaskSees(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
	_, a := holdAll(t, e)
	if n := len(e.ed.Applied()); n != 0 {
		t.Fatalf("%d edits reached the editor while the task held its changes", n)
	}
	for p, want := range reviewFiles {
		if got := e.read(t, p); got != want {
			t.Fatalf("%s on disk = %q, want it untouched", p, got)
		}
	}
	if _, err := os.Stat(filepath.Join(e.root, "dir")); !os.IsNotExist(err) {
		t.Fatalf("dir/new.txt was created on disk: %v", err)
	}
	t.Run("reads see the held text", func(t *testing.T) {
		r, err := a.Read(ctx, "a.txt", 0, 0)
		if err != nil || r.Content != reviewA {
			t.Fatalf("Read = %q, %v", r.Content, err)
		}
		if r, err := a.Read(ctx, "dir/new.txt", 0, 0); err != nil || r.Content != "fresh\n" {
			t.Fatalf("Read of the held new file = %q, %v", r.Content, err)
		}
		if _, err := a.Read(ctx, "old.txt", 0, 0); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Read of the held deletion = %v, want ErrNotFound", err)
		}
	})
	t.Run("listings leave out the deleted file and show the created one", func(t *testing.T) {
		l, err := a.List(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(l.Paths, " "); got != "a.txt b.txt dir/new.txt" {
			t.Fatalf("List = %q", got)
		}
		if l, _ := a.List(ctx, "*.go"); len(l.Paths) != 0 {
			t.Fatalf("List(*.go) = %v", l.Paths)
		}
	})
	t.Run("searches read the held text", func(t *testing.T) {
		s, err := a.Search(ctx, "two|fresh|bye|beta = 2", "")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Text; got != "a.txt:1: alpha two\na.txt:9: omega two\nb.txt:1: beta = 2\ndir/new.txt:1: fresh" {
			t.Fatalf("Search = %q", got)
		}
	})
	t.Run("a later change builds on the held text", func(t *testing.T) {
		ch, err := a.Edit(ctx, "dir/new.txt", "fresh", "fresher", false)
		if err != nil || ch.Before != "fresh\n" || !ch.Existed {
			t.Fatalf("Edit = %+v, %v", ch, err)
		}
	})
}

func TestReviewProposesEverythingAsOneAnnotatedEdit(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
	task, _ := holdAll(t, e)
	out := task.Review(ctx, "agentls: review (done)")
	if task.Held() != 0 {
		t.Fatal("the task still holds changes after the review")
	}
	edits := e.ed.Applied()
	if len(edits) != 1 || e.ed.Waits()[0] != api.Human {
		t.Fatalf("%d edits (waits %v), want one that waits on the person", len(edits), e.ed.Waits())
	}
	p := edits[0]
	if p.Label != "agentls: review (done)" || len(p.Edit.ChangeAnnotations) != 4 {
		t.Fatalf("label %q, %d annotations", p.Label, len(p.Edit.ChangeAnnotations))
	}
	// One annotation per file, on every part of its change.
	perFile := map[string]string{}
	note := func(uri, id string) {
		if prev, ok := perFile[uri]; ok && prev != id {
			t.Errorf("%s carries two annotations", uri)
		}
		perFile[uri] = id
		if a := p.Edit.ChangeAnnotations[id]; !a.NeedsConfirmation || !strings.Contains(a.Label, filepath.Base(uri)) {
			t.Errorf("annotation %q = %+v", id, a)
		}
	}
	words := 0
	for _, dc := range p.Edit.DocumentChanges {
		switch {
		case dc.TextDocumentEdit != nil:
			for _, ed := range dc.TextDocumentEdit.Edits {
				note(dc.TextDocumentEdit.TextDocument.URI, ed.AnnotationID)
				if ed.Range.Start.Character > 0 {
					words++
				}
			}
		case dc.CreateFile != nil:
			note(dc.CreateFile.URI, dc.CreateFile.AnnotationID)
		case dc.DeleteFile != nil:
			note(dc.DeleteFile.URI, dc.DeleteFile.AnnotationID)
		}
	}
	if len(perFile) != 4 || words != 3 {
		t.Fatalf("annotated files %v, %d word-level edits (want 4 files, 3 words)", perFile, words)
	}
	want := []string{"a.txt update", "b.txt update", "old.txt delete", "dir/new.txt create"}
	if len(out) != len(want) {
		t.Fatalf("review = %+v", out)
	}
	for i, c := range out {
		if c.Path+" "+c.Operation != want[i] || !c.Applied || c.Partial {
			t.Errorf("review[%d] = %+v, want %s applied", i, c, want[i])
		}
	}
	if e.read(t, "a.txt") != reviewA || e.read(t, "b.txt") != reviewB || e.read(t, "dir/new.txt") != "fresh\n" {
		t.Fatal("the accepted review is not on disk")
	}
	if _, err := os.Stat(filepath.Join(e.root, "old.txt")); !os.IsNotExist(err) {
		t.Fatal("old.txt was not deleted")
	}
}

func TestReviewRecordsWhatThePersonAccepted(t *testing.T) {
	ctx := context.Background()
	t.Run("records a file in part, another not at all, the rest whole", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
		task, _ := holdAll(t, e)
		// a.txt has text edits 0 and 1, b.txt edit 0, new.txt edit 0: keep
		// only the second edit of each document.
		e.ed.KeepTextEdits(func(i int) bool { return i == 1 })
		out := task.Review(ctx, "agentls: review")
		byPath := map[string]Change{}
		for _, c := range out {
			byPath[c.Path] = c
		}
		a := byPath["a.txt"]
		if !a.Applied || !a.Partial || !strings.Contains(a.Reason, "applied in part") || a.NewContent != "alpha one\n2\n3\n4\n5\n6\n7\n8\nomega two\n" {
			t.Errorf("a.txt = %+v", a)
		}
		if strings.Contains(a.Diff, "alpha two") || !strings.Contains(a.Diff, "+omega two") {
			t.Errorf("a.txt's diff is not what landed: %q", a.Diff)
		}
		if b := byPath["b.txt"]; b.Applied || !strings.Contains(b.Reason, "accepted none") {
			t.Errorf("b.txt = %+v", b)
		}
		if d := byPath["old.txt"]; !d.Applied {
			t.Errorf("old.txt = %+v", d)
		}
		if n := byPath["dir/new.txt"]; !n.Applied || !n.Partial || n.NewContent != "" {
			t.Errorf("dir/new.txt, created with none of its text = %+v", n)
		}
	})
	t.Run("leaves every file as it was when the person rejects the review", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
		task, _ := holdAll(t, e)
		e.ed.Refuse("the user rejected the change")
		for _, c := range task.Review(ctx, "agentls: review") {
			if c.Applied || !strings.Contains(c.Reason, "rejected the review") || c.Diff == "" {
				t.Errorf("%s = %+v", c.Path, c)
			}
		}
		for p, want := range reviewFiles {
			if got := e.read(t, p); got != want {
				t.Errorf("%s = %q", p, got)
			}
		}
	})
}

func TestReviewDoesNotProposeAFileThatChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
	task, _ := holdAll(t, e)
	e.ed.OpenBuffer("b.txt", "beta = 1 // typed by the person\n")
	out := task.Review(ctx, "agentls: review")
	for _, c := range out {
		switch c.Path {
		case "b.txt":
			if c.Applied || !strings.Contains(c.Reason, "changed while the task held its change") || !strings.Contains(c.Diff, "+beta = 2") {
				t.Errorf("b.txt = %+v", c)
			}
		default:
			if !c.Applied {
				t.Errorf("%s = %+v", c.Path, c)
			}
		}
	}
	for _, dc := range e.ed.Applied()[0].Edit.DocumentChanges {
		if dc.TextDocumentEdit != nil && strings.HasSuffix(dc.TextDocumentEdit.TextDocument.URI, "/b.txt") {
			t.Fatal("the changed file was proposed")
		}
	}
	if text, _ := e.ed.ReadFile(ctx, "b.txt", ""); text != "beta = 1 // typed by the person\n" {
		t.Fatalf("the person's text became %q", text)
	}
}

func TestReviewWithoutAnnotationsAsksOnce(t *testing.T) {
	ctx := context.Background()
	caps := headlesstest.AllCaps()
	caps.ChangeAnnotation = false
	for _, answer := range []string{actionApply, actionReject} {
		t.Run("answered "+answer, func(t *testing.T) {
			e := newEnv(t, caps, api.EditApply, api.Zones{}, reviewFiles)
			task, _ := holdAll(t, e)
			e.ed.SetAnswer(answer)
			out := task.Review(ctx, "agentls: review (stopped)")
			asked := e.ed.Asked()
			if len(asked) != 1 || !strings.HasPrefix(asked[0].Message, "agentls: review (stopped): apply these changes?") ||
				!strings.Contains(asked[0].Message, "+omega two") {
				t.Fatalf("asked %+v", asked)
			}
			for _, c := range out {
				if c.Applied != (answer == actionApply) {
					t.Errorf("%s = %+v", c.Path, c)
				}
			}
			if answer == actionApply && (e.read(t, "a.txt") != reviewA || e.read(t, "dir/new.txt") != "fresh\n") {
				t.Fatal("the approved changes are not on disk")
			}
			if answer == actionReject && e.read(t, "a.txt") != reviewFiles["a.txt"] {
				t.Fatal("a rejected review changed a.txt")
			}
		})
	}
}

func TestReviewLeavesOutAFileTheTaskLeftAsItFoundIt(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, reviewFiles)
	task := e.ws.Task("t1", "review", api.EditReview)
	a := task.Agent("1")
	if _, err := a.Read(ctx, "b.txt", 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Edit(ctx, "b.txt", "1", "2", false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Edit(ctx, "b.txt", "2", "1", false); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write(ctx, "tmp.txt", "x\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Delete(ctx, "tmp.txt"); err != nil {
		t.Fatal(err)
	}
	if out := task.Review(ctx, "agentls: review"); len(out) != 0 || len(e.ed.Applied()) != 0 {
		t.Fatalf("review = %+v, %d edits", out, len(e.ed.Applied()))
	}
}
