package wsedit_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/wsedit"
)

// files is a loader over a map of URI → text (absent: the file does not
// exist), with versions for the open ones.
func files(texts map[string]string, versions map[string]int32) wsedit.Loader {
	return func(uri string) (*wsedit.File, error) {
		if strings.Contains(uri, "outside") {
			return nil, errors.New(uri + " is outside the workspace")
		}
		f := &wsedit.File{}
		if t, ok := texts[uri]; ok {
			f.Existed, f.Old = true, t
		}
		if v, ok := versions[uri]; ok {
			f.Version = &v
		}
		return f, nil
	}
}

func edit(uri string, version *int32, text string) api.DocumentChange {
	return api.DocumentChange{TextDocumentEdit: &api.TextDocumentEdit{
		TextDocument: api.OptionalVersionedTextDocumentIdentifier{URI: uri, Version: version},
		Edits:        []api.AnnotatedTextEdit{{Range: api.Range{End: api.Position{Line: 99}}, NewText: text}},
	}}
}

func TestStage(t *testing.T) {
	v := func(n int32) *int32 { return &n }
	load := files(map[string]string{"file:///a": "a\n", "file:///b": "b\n"}, map[string]int32{"file:///b": 4})
	for _, c := range []struct {
		name   string
		edit   api.WorkspaceEdit
		o      wsedit.Options
		failed int    // -1: applies
		says   string // the failure reason, or each file as uri=text (exists) / uri=- (gone)
	}{
		{"applies text edits, creates and deletes in order", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			edit("file:///a", nil, "A\n"),
			{CreateFile: &api.CreateFile{URI: "file:///c"}}, edit("file:///c", nil, "C\n"),
			{DeleteFile: &api.DeleteFile{URI: "file:///b"}},
		}}, wsedit.Options{}, -1, "file:///a=A\n file:///c=C\n file:///b=-"},
		{"takes the changes map in URI order", api.WorkspaceEdit{Changes: map[string][]api.TextEdit{
			"file:///b": {{NewText: "x"}}, "file:///a": {{NewText: "y"}},
		}}, wsedit.Options{}, -1, "file:///a=ya\n file:///b=xb\n"},
		{"refuses a text edit to a missing file at its index", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{
			edit("file:///a", nil, "A\n"), edit("file:///gone", nil, "x"),
		}}, wsedit.Options{}, 1, "file:///gone does not exist"},
		{"refuses a create over a file", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{{CreateFile: &api.CreateFile{URI: "file:///a"}}}}, wsedit.Options{}, 0, "file:///a already exists"},
		{"refuses a path the loader refuses", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{edit("file:///outside", nil, "x")}}, wsedit.Options{}, 0, "outside the workspace"},
		{"refuses a stale version", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{edit("file:///b", v(3), "x")}}, wsedit.Options{CheckVersions: true}, 0, "stale edit: file:///b is at version 4, the edit is for version 3"},
		{"refuses a version for a file that is not open", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{edit("file:///a", v(1), "x")}}, wsedit.Options{CheckVersions: true}, 0, "is not open"},
		{"skips a resource operation the editor does not perform", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{{DeleteFile: &api.DeleteFile{URI: "file:///a"}}}},
			wsedit.Options{Resource: func(string) (bool, error) { return true, nil }}, -1, ""},
		{"opens a missing file's buffer when asked to", api.WorkspaceEdit{DocumentChanges: []api.DocumentChange{edit("file:///new", nil, "N\n")}}, wsedit.Options{OpenMissing: true}, -1, "file:///new=N\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, failed := wsedit.Stage(c.edit, load, c.o)
			if c.failed >= 0 {
				if failed == nil || failed.Applied || failed.FailedChange == nil || int(*failed.FailedChange) != c.failed || !strings.Contains(failed.FailureReason, c.says) {
					t.Fatalf("Stage = %+v, want failed change %d saying %q", failed, c.failed, c.says)
				}
				return
			}
			if failed != nil {
				t.Fatalf("Stage failed: %+v", *failed)
			}
			var b strings.Builder
			for _, f := range got {
				if !f.Touched {
					continue
				}
				if b.Len() > 0 {
					b.WriteString(" ")
				}
				if f.Exists {
					b.WriteString(f.URI + "=" + f.Text)
				} else {
					b.WriteString(f.URI + "=-")
				}
			}
			if b.String() != c.says {
				t.Fatalf("staged %q, want %q", b.String(), c.says)
			}
		})
	}
}
