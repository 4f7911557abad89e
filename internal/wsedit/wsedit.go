// Package wsedit is the one applier of an LSP WorkspaceEdit, for the two
// places agentls plays the editor: the headless editor (the tests' and
// `agentls run`'s) and the ACP face (an ACP client holds the files, agentls
// applies the edits its workers make). Stage checks every change of an edit
// against the files as they are, all or nothing, as an editor that reports
// failureHandling "abort" must: files that must or must not exist, stale
// versions, text edits that do not fit (lsppos.ApplyEdits), resource
// operations the editor does not perform, paths the caller refuses. Only
// when every change fits does the caller write the staged files, each its
// own way (a buffer, the disk, the client's fs/write_text_file).
//
// Changes are taken in the edit's order: documentChanges as given, or the
// changes map by URI in sorted order; a failure names the index of the
// change in that order (ApplyWorkspaceEditResult.failedChange).
package wsedit

import (
	"fmt"
	"sort"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/lsppos"
)

// File is one file of an edit: as the edit found it and as it leaves it.
type File struct {
	URI string
	// Name is what a failure calls it (a workspace-relative path, or the
	// URI); the loader sets it.
	Name string
	// Existed, Old and Version are the file before the edit: whether it
	// existed, its text, and its version when it is open in a buffer (nil:
	// not open). The loader sets them.
	Existed bool
	Old     string
	Version *int32
	// Exists and Text are the file after the edit.
	Exists bool
	Text   string
	// Touched: a change of the edit is about it.
	Touched bool
	// Confirm: a change of it carries an annotation that needsConfirmation.
	Confirm bool
	// First is the index of the edit's first change to it.
	First int
	// Opened: a text edit made a missing file exist as a new buffer
	// (Options.OpenMissing).
	Opened bool
	// Data is the loader's own.
	Data any
}

// Loader returns the file uri names as it is now, with Name, Existed, Old
// and Version set (and Data, if the caller wants it); an error refuses the
// edit at the change that named it (a path outside the workspace, an
// unreadable file).
type Loader func(uri string) (*File, error)

// Options tune Stage.
type Options struct {
	// Resource says what to do with a resource operation (api.OpCreate,
	// api.OpDelete): skip it, refuse it (an error), or neither (perform
	// it). nil performs every one.
	Resource func(op string) (skip bool, err error)
	// OpenMissing makes a text edit to a missing file open a new buffer for
	// it instead of failing (eglot 1.9 does, for the create it skipped).
	OpenMissing bool
	// CheckVersions refuses a text edit whose document version is not the
	// open buffer's (or names a version for a file that is not open).
	CheckVersions bool
}

// Stage computes every file of edit, loading each once through load. It
// returns the files in the order the edit first names them, or the result
// of an edit that cannot be applied (Applied false, the reason and the
// failed change's index). Nothing is written.
func Stage(edit api.WorkspaceEdit, load Loader, o Options) ([]*File, *api.ApplyWorkspaceEditResult) {
	s := &stager{load: load, o: o, ann: edit.ChangeAnnotations, byURI: map[string]*File{}}
	if len(edit.DocumentChanges) == 0 {
		uris := make([]string, 0, len(edit.Changes))
		for uri := range edit.Changes {
			uris = append(uris, uri)
		}
		sort.Strings(uris)
		for i, uri := range uris {
			if r := s.text(i, uri, nil, edit.Changes[uri], ""); r != nil {
				return nil, r
			}
		}
		return s.order, nil
	}
	for i, dc := range edit.DocumentChanges {
		var r *api.ApplyWorkspaceEditResult
		switch {
		case dc.TextDocumentEdit != nil:
			tde := dc.TextDocumentEdit
			edits := make([]api.TextEdit, len(tde.Edits))
			ann := ""
			for j, ed := range tde.Edits {
				edits[j] = api.TextEdit{Range: ed.Range, NewText: ed.NewText}
				if s.needs(ed.AnnotationID) {
					ann = ed.AnnotationID
				}
			}
			r = s.text(i, tde.TextDocument.URI, tde.TextDocument.Version, edits, ann)
		case dc.CreateFile != nil:
			r = s.create(i, *dc.CreateFile)
		case dc.DeleteFile != nil:
			r = s.delete(i, *dc.DeleteFile)
		}
		if r != nil {
			return nil, r
		}
	}
	return s.order, nil
}

type stager struct {
	load  Loader
	o     Options
	ann   map[string]api.ChangeAnnotation
	byURI map[string]*File
	order []*File
}

// Failed is the result of an edit that cannot be applied at change i.
func Failed(i int, format string, args ...any) *api.ApplyWorkspaceEditResult {
	idx := uint32(i)
	return &api.ApplyWorkspaceEditResult{Applied: false, FailureReason: fmt.Sprintf(format, args...), FailedChange: &idx}
}

func (s *stager) needs(id string) bool { return id != "" && s.ann[id].NeedsConfirmation }

// file loads uri once per edit.
func (s *stager) file(i int, uri string) (*File, *api.ApplyWorkspaceEditResult) {
	if f := s.byURI[uri]; f != nil {
		return f, nil
	}
	f, err := s.load(uri)
	if err != nil {
		return nil, Failed(i, "%v", err)
	}
	f.URI, f.First = uri, i
	f.Exists, f.Text = f.Existed, f.Old
	if f.Name == "" {
		f.Name = uri
	}
	s.byURI[uri] = f
	s.order = append(s.order, f)
	return f, nil
}

func (s *stager) text(i int, uri string, version *int32, edits []api.TextEdit, ann string) *api.ApplyWorkspaceEditResult {
	f, r := s.file(i, uri)
	if r != nil {
		return r
	}
	if !f.Exists && s.o.OpenMissing {
		f.Exists, f.Opened = true, true
	}
	if !f.Exists {
		return Failed(i, "%s does not exist", f.Name)
	}
	if s.o.CheckVersions && version != nil && !f.Opened && (f.Version == nil || *version != *f.Version) {
		have := "not open"
		if f.Version != nil {
			have = fmt.Sprintf("at version %d", *f.Version)
		}
		return Failed(i, "stale edit: %s is %s, the edit is for version %d", f.Name, have, *version)
	}
	text, err := lsppos.ApplyEdits(f.Text, edits)
	if err != nil {
		return Failed(i, "%s: %v", f.Name, err)
	}
	f.Text, f.Touched = text, true
	f.Confirm = f.Confirm || s.needs(ann)
	return nil
}

// resource says whether the editor performs the operation op.
func (s *stager) resource(i int, op string) (skip bool, r *api.ApplyWorkspaceEditResult) {
	if s.o.Resource == nil {
		return false, nil
	}
	skip, err := s.o.Resource(op)
	if err != nil {
		return false, Failed(i, "%v", err)
	}
	return skip, nil
}

func (s *stager) create(i int, c api.CreateFile) *api.ApplyWorkspaceEditResult {
	if skip, r := s.resource(i, api.OpCreate); skip || r != nil {
		return r
	}
	f, r := s.file(i, c.URI)
	if r != nil {
		return r
	}
	if f.Exists && (c.Options == nil || !c.Options.Overwrite) {
		if c.Options != nil && c.Options.IgnoreIfExists {
			return nil
		}
		return Failed(i, "%s already exists", f.Name)
	}
	f.Exists, f.Text, f.Touched = true, "", true
	f.Confirm = f.Confirm || s.needs(c.AnnotationID)
	return nil
}

func (s *stager) delete(i int, d api.DeleteFile) *api.ApplyWorkspaceEditResult {
	if skip, r := s.resource(i, api.OpDelete); skip || r != nil {
		return r
	}
	f, r := s.file(i, d.URI)
	if r != nil {
		return r
	}
	if !f.Exists {
		if d.Options != nil && d.Options.IgnoreIfNotExists {
			return nil
		}
		return Failed(i, "%s does not exist", f.Name)
	}
	f.Exists, f.Text, f.Touched = false, "", true
	f.Confirm = f.Confirm || s.needs(d.AnnotationID)
	return nil
}
