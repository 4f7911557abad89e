package headless

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/rpc"
)

func pos(l, c uint32) api.Position { return api.Position{Line: l, Character: c} }

func edit(l1, c1, l2, c2 uint32, text string) api.TextEdit {
	return api.TextEdit{Range: api.Range{Start: pos(l1, c1), End: pos(l2, c2)}, NewText: text}
}

func newEditor(t *testing.T) *Editor {
	root := t.TempDir()
	real, _ := filepath.EvalSymlinks(root)
	e := &Editor{root: real, ws: NewWorkspace(real), overrides: map[string]CallHandler{}}
	e.ws.SetResourceOperations(FullCapabilities().ResourceOperations, false)
	return e
}

func (e *Editor) write(t *testing.T, rel, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.root, rel), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e *Editor) read(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		return "<missing>"
	}
	return string(data)
}

func textEdit(uri string, version *int32, edits ...api.TextEdit) api.DocumentChange {
	var ae []api.AnnotatedTextEdit
	for _, e := range edits {
		ae = append(ae, api.AnnotatedTextEdit{Range: e.Range, NewText: e.NewText})
	}
	return api.DocumentChange{TextDocumentEdit: &api.TextDocumentEdit{
		TextDocument: api.OptionalVersionedTextDocumentIdentifier{URI: uri, Version: version}, Edits: ae}}
}

func TestApplyEdit(t *testing.T) {
	ctx := context.Background()
	t.Run("applies text edits, creates and deletes files, keeping the mode", func(t *testing.T) {
		e := newEditor(t)
		e.write(t, "a.txt", "one\n")
		e.write(t, "gone.txt", "x")
		res, err := e.applyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			textEdit(e.URI("a.txt"), nil, edit(0, 0, 0, 3, "two")),
			{CreateFile: &api.CreateFile{URI: e.URI("sub/new.txt")}},
			textEdit(e.URI("sub/new.txt"), nil, edit(0, 0, 0, 0, "fresh\n")),
			{DeleteFile: &api.DeleteFile{URI: e.URI("gone.txt")}},
		}}})
		if err != nil || !res.Applied {
			t.Fatalf("applyEdit = %+v, %v", res, err)
		}
		if e.read(t, "a.txt") != "two\n" || e.read(t, "sub/new.txt") != "fresh\n" || e.read(t, "gone.txt") != "<missing>" {
			t.Fatalf("files: %q %q %q", e.read(t, "a.txt"), e.read(t, "sub/new.txt"), e.read(t, "gone.txt"))
		}
		if fi, _ := os.Stat(filepath.Join(e.root, "a.txt")); fi.Mode().Perm() != 0o600 {
			t.Fatalf("mode = %v, want 0600 kept", fi.Mode().Perm())
		}
	})

	createAndDelete := func(e *Editor) api.ApplyWorkspaceEditParams {
		e.write(t, "gone.txt", "x")
		return api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			{CreateFile: &api.CreateFile{URI: e.URI("new.txt")}},
			textEdit(e.URI("new.txt"), nil, edit(0, 0, 0, 0, "fresh\n")),
			{DeleteFile: &api.DeleteFile{URI: e.URI("gone.txt")}},
		}}}
	}
	t.Run("refuses a resource operation it did not declare", func(t *testing.T) {
		e := newEditor(t)
		e.ws.SetResourceOperations([]string{"delete"}, false)
		res, _ := e.applyEdit(ctx, createAndDelete(e))
		if res.Applied || res.FailedChange == nil || *res.FailedChange != 0 || e.read(t, "gone.txt") != "x" {
			t.Fatalf("applyEdit = %+v, gone.txt %q", res, e.read(t, "gone.txt"))
		}
	})
	t.Run("skips undeclared resource operations and claims success, as eglot 1.9 does", func(t *testing.T) {
		e := newEditor(t)
		e.ws.SetResourceOperations(nil, true)
		res, _ := e.applyEdit(ctx, createAndDelete(e))
		text, _, open := e.Buffer("new.txt")
		if !res.Applied || e.read(t, "new.txt") != "<missing>" || !open || text != "fresh\n" || e.read(t, "gone.txt") != "x" {
			t.Fatalf("applyEdit = %+v; new.txt on disk %q, in a buffer %v %q; gone.txt %q",
				res, e.read(t, "new.txt"), open, text, e.read(t, "gone.txt"))
		}
	})

	t.Run("applies nothing when one change fails", func(t *testing.T) {
		e := newEditor(t)
		e.write(t, "a.txt", "one\n")
		res, _ := e.applyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			textEdit(e.URI("a.txt"), nil, edit(0, 0, 0, 3, "two")),
			{CreateFile: &api.CreateFile{URI: e.URI("a.txt")}}, // exists: fails
		}}})
		if res.Applied || res.FailedChange == nil || *res.FailedChange != 1 || e.read(t, "a.txt") != "one\n" {
			t.Fatalf("applyEdit = %+v, file %q", res, e.read(t, "a.txt"))
		}
	})

	t.Run("refuses a stale version and edits an open buffer at the right one", func(t *testing.T) {
		e := newEditor(t)
		e.write(t, "a.txt", "disk\n")
		e.OpenBuffer("a.txt", "buffer\n")
		v := int32(7)
		res, _ := e.applyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			textEdit(e.URI("a.txt"), &v, edit(0, 0, 0, 6, "x")),
		}}})
		if res.Applied || !strings.Contains(res.FailureReason, "stale") {
			t.Fatalf("stale edit = %+v", res)
		}
		v = 1
		res, _ = e.applyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			textEdit(e.URI("a.txt"), &v, edit(0, 0, 0, 6, "edited")),
		}}})
		text, version, _ := e.Buffer("a.txt")
		if !res.Applied || text != "edited\n" || version != 2 || e.read(t, "a.txt") != "disk\n" {
			t.Fatalf("buffer edit = %+v, buffer %q v%d, disk %q", res, text, version, e.read(t, "a.txt"))
		}
	})

	t.Run("refuses edits needing confirmation unless confirmed", func(t *testing.T) {
		e := newEditor(t)
		e.write(t, "a.txt", "one\n")
		p := api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{
			DocumentChanges:   []api.DocumentChange{textEdit(e.URI("a.txt"), nil, edit(0, 0, 0, 3, "two"))},
			ChangeAnnotations: map[string]api.ChangeAnnotation{"x": {Label: "agent", NeedsConfirmation: true}},
		}}
		if res, _ := e.applyEdit(ctx, p); res.Applied {
			t.Fatal("applied without confirmation")
		}
		e.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return true, nil })
		if res, _ := e.applyEdit(ctx, p); !res.Applied || e.read(t, "a.txt") != "two\n" {
			t.Fatalf("confirmed edit = %+v", res)
		}
	})

	t.Run("refuses a file outside the workspace", func(t *testing.T) {
		e := newEditor(t)
		res, _ := e.applyEdit(ctx, api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			{CreateFile: &api.CreateFile{URI: "file:///tmp/outside-agentls-test.txt"}},
		}}})
		if res.Applied {
			t.Fatal("created a file outside the workspace")
		}
	})
}

func TestAwaitAndScripting(t *testing.T) {
	e := newEditor(t)
	e.noteCond = make(chan struct{})
	e.served = make(chan struct{})
	h := (*clientHandler)(e)
	go func() {
		time.Sleep(10 * time.Millisecond)
		h.HandleNotification(context.Background(), rpc.NewRequest("agent/taskUpdate", json.RawMessage(`{"seq":1}`), ""))
	}()
	n, err := e.Await(testkit.Context(t), Method("agent/taskUpdate"))
	if err != nil || n.Seq != 1 {
		t.Fatalf("Await = %+v, %v", n, err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := e.Await(short, Method("nothing")); err == nil {
		t.Fatal("Await without a match returned no error")
	}
	e.Handle(api.MethodShowMessageRequest, ChooseAction("Apply"))
	res, err := h.HandleCall(context.Background(), rpc.NewRequest(api.MethodShowMessageRequest,
		json.RawMessage(`{"type":3,"message":"ok?","actions":[{"title":"Reject"},{"title":"Apply"}]}`), "1"))
	if item, ok := res.(api.MessageActionItem); err != nil || !ok || item.Title != "Apply" {
		t.Fatalf("scripted answer = %#v, %v", res, err)
	}
}

func TestAcceptTextEdits(t *testing.T) {
	ann := map[string]api.ChangeAnnotation{"a": {Label: "x", NeedsConfirmation: true}}
	annotated := func(es ...api.TextEdit) []api.AnnotatedTextEdit {
		out := make([]api.AnnotatedTextEdit, len(es))
		for i, e := range es {
			out[i] = api.AnnotatedTextEdit{Range: e.Range, NewText: e.NewText, AnnotationID: "a"}
		}
		return out
	}
	p := api.ApplyWorkspaceEditParams{Edit: api.WorkspaceEdit{
		ChangeAnnotations: ann,
		Changes:           map[string][]api.TextEdit{"file:///w/a": {edit(0, 0, 0, 1, "A"), edit(5, 0, 5, 1, "F")}},
		DocumentChanges: []api.DocumentChange{
			{CreateFile: &api.CreateFile{URI: "file:///w/new", AnnotationID: "a"}},
			{TextDocumentEdit: &api.TextDocumentEdit{TextDocument: api.OptionalVersionedTextDocumentIdentifier{URI: "file:///w/b"},
				Edits: annotated(edit(0, 0, 0, 1, "B"), edit(5, 0, 5, 1, "G"))}},
			{TextDocumentEdit: &api.TextDocumentEdit{TextDocument: api.OptionalVersionedTextDocumentIdentifier{URI: "file:///w/c"},
				Edits: annotated(edit(1, 0, 1, 1, "C"))}},
		},
	}}
	got, err := AcceptTextEdits(func(uri string, i int) bool { return i == 1 })(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if e := got.Changes["file:///w/a"]; len(e) != 1 || e[0].NewText != "F" {
		t.Errorf("changes of a = %+v, want only the second edit", e)
	}
	dc := got.DocumentChanges
	if len(dc) != 2 || dc[0].CreateFile == nil || dc[1].TextDocumentEdit == nil ||
		dc[1].TextDocumentEdit.TextDocument.URI != "file:///w/b" || len(dc[1].TextDocumentEdit.Edits) != 1 ||
		dc[1].TextDocumentEdit.Edits[0].NewText != "G" {
		t.Errorf("documentChanges = %+v: want the create whole, b's second edit, and c left out", dc)
	}
	if len(p.Edit.DocumentChanges[1].TextDocumentEdit.Edits) != 2 {
		t.Error("the proposal itself was changed")
	}
}
