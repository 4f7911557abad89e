package headless

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fsutil"
)

// staged is a file's state while an edit is being checked: nothing touches
// the disk or a buffer until every change of the edit has been checked.
type staged struct {
	path    string
	exists  bool
	text    string
	buffer  bool // an open buffer, edited in place
	opened  bool // a new buffer for a missing file (SkipUndeclaredResourceOps)
	version int32
	touched bool
}

// applyEdit applies a workspace edit all or nothing, as the LSP
// specification asks of an editor that reports failureHandling "abort":
// every change is checked against the current state first (stale versions,
// files that must or must not exist, overlapping edits), and only then is
// anything written, each file atomically.
func (e *Editor) applyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams) (api.ApplyWorkspaceEditResult, error) {
	if needsConfirmation(p.Edit) {
		e.mu.Lock()
		review := e.review
		e.mu.Unlock()
		var accepted *api.WorkspaceEdit
		if review != nil {
			var err error
			if accepted, err = review(ctx, p); err != nil {
				return api.ApplyWorkspaceEditResult{}, err
			}
		}
		if accepted == nil {
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: "the user rejected the change"}, nil
		}
		p.Edit = *accepted
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	files := map[string]*staged{}
	var order []*staged
	load := func(path string) (*staged, error) {
		if f, ok := files[path]; ok {
			return f, nil
		}
		if !within(e.root, path) {
			return nil, fmt.Errorf("%s is outside the workspace", path)
		}
		f := &staged{path: path}
		if b, ok := e.buffers[path]; ok {
			f.exists, f.text, f.buffer, f.version = true, b.text, true, b.version
		} else if data, err := os.ReadFile(path); err == nil {
			f.exists, f.text = true, string(data)
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		files[path] = f
		order = append(order, f)
		return f, nil
	}
	fail := func(i int, format string, args ...any) (api.ApplyWorkspaceEditResult, error) {
		idx := uint32(i)
		return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: fmt.Sprintf(format, args...), FailedChange: &idx}, nil
	}
	type textChange struct {
		uri     string
		version *int32
		edits   []api.TextEdit
	}
	var changes []any
	if len(p.Edit.DocumentChanges) > 0 {
		for _, dc := range p.Edit.DocumentChanges {
			switch {
			case dc.TextDocumentEdit != nil:
				tc := textChange{uri: dc.TextDocumentEdit.TextDocument.URI, version: dc.TextDocumentEdit.TextDocument.Version}
				for _, ed := range dc.TextDocumentEdit.Edits {
					tc.edits = append(tc.edits, api.TextEdit{Range: ed.Range, NewText: ed.NewText})
				}
				changes = append(changes, tc)
			case dc.CreateFile != nil:
				changes = append(changes, *dc.CreateFile)
			case dc.DeleteFile != nil:
				changes = append(changes, *dc.DeleteFile)
			}
		}
	} else {
		uris := make([]string, 0, len(p.Edit.Changes))
		for uri := range p.Edit.Changes {
			uris = append(uris, uri)
		}
		sort.Strings(uris)
		for _, uri := range uris {
			changes = append(changes, textChange{uri: uri, edits: p.Edit.Changes[uri]})
		}
	}
	for i, c := range changes {
		switch c := c.(type) {
		case textChange:
			path, err := uriToPath(c.uri)
			if err != nil {
				return fail(i, "%v", err)
			}
			f, err := load(path)
			if err != nil {
				return fail(i, "%v", err)
			}
			if !f.exists && e.opts.SkipUndeclaredResourceOps {
				f.exists, f.buffer, f.opened = true, true, true
			}
			if !f.exists {
				return fail(i, "%s does not exist", c.uri)
			}
			if c.version != nil && (!f.buffer || *c.version != f.version) {
				have := "not open"
				if f.buffer {
					have = fmt.Sprintf("at version %d", f.version)
				}
				return fail(i, "stale edit: %s is %s, the edit is for version %d", c.uri, have, *c.version)
			}
			text, err := ApplyTextEdits(f.text, c.edits)
			if err != nil {
				return fail(i, "%s: %v", c.uri, err)
			}
			f.text, f.touched = text, true
		case api.CreateFile:
			if skip, err := e.undeclared(api.OpCreate); skip {
				continue
			} else if err != nil {
				return fail(i, "%v", err)
			}
			path, err := uriToPath(c.URI)
			if err != nil {
				return fail(i, "%v", err)
			}
			f, err := load(path)
			if err != nil {
				return fail(i, "%v", err)
			}
			overwrite := c.Options != nil && c.Options.Overwrite
			ignore := c.Options != nil && c.Options.IgnoreIfExists
			if f.exists && !overwrite {
				if ignore {
					continue
				}
				return fail(i, "%s already exists", c.URI)
			}
			f.exists, f.text, f.touched = true, "", true
		case api.DeleteFile:
			if skip, err := e.undeclared(api.OpDelete); skip {
				continue
			} else if err != nil {
				return fail(i, "%v", err)
			}
			path, err := uriToPath(c.URI)
			if err != nil {
				return fail(i, "%v", err)
			}
			f, err := load(path)
			if err != nil {
				return fail(i, "%v", err)
			}
			if !f.exists {
				if c.Options != nil && c.Options.IgnoreIfNotExists {
					continue
				}
				return fail(i, "%s does not exist", c.URI)
			}
			f.exists, f.text, f.touched = false, "", true
		}
	}
	for _, f := range order {
		if !f.touched {
			continue
		}
		if f.opened {
			e.buffers[f.path] = &buffer{text: f.text, version: 1}
			continue
		}
		if f.buffer {
			if !f.exists {
				delete(e.buffers, f.path)
				if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
					return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
				}
				continue
			}
			b := e.buffers[f.path]
			b.text = f.text
			b.version++
			continue
		}
		if !f.exists {
			if err := os.Remove(f.path); err != nil && !os.IsNotExist(err) {
				return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
			}
			continue
		}
		if err := WriteFileAtomic(f.path, []byte(f.text)); err != nil {
			return api.ApplyWorkspaceEditResult{Applied: false, FailureReason: err.Error()}, nil
		}
	}
	return api.ApplyWorkspaceEditResult{Applied: true}, nil
}

// undeclared tells what to do with a resource operation of kind op: go on
// (declared), skip it (undeclared, SkipUndeclaredResourceOps) or refuse it.
func (e *Editor) undeclared(op string) (skip bool, err error) {
	for _, k := range e.opts.Caps.ResourceOperations {
		if k == op {
			return false, nil
		}
	}
	if e.opts.SkipUndeclaredResourceOps {
		return true, nil
	}
	return false, fmt.Errorf("resource operation %q is not in the resourceOperations this editor declared", op)
}

func needsConfirmation(we api.WorkspaceEdit) bool {
	for _, a := range we.ChangeAnnotations {
		if a.NeedsConfirmation {
			return true
		}
	}
	return false
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func uriToPath(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("%q is not a file:// URI", uri)
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// WriteFileAtomic replaces path with data so that a reader (or a crash) sees
// either the old file or the new one, never a part. An existing file's mode
// is kept; a new one gets 0644. Missing parent directories are created.
func WriteFileAtomic(path string, data []byte) error {
	return fsutil.Write(path, data, fsutil.WriteOptions{Perm: 0o644, MkdirAll: true})
}

// ApplyTextEdits applies LSP text edits to text as an LSP client must:
// positions are zero-based lines and UTF-16 code units; "\n", "\r\n" and
// "\r" end lines; a character past the end of its line means the line's
// end and a line past the end of the text means the text's end; edits are
// applied as if simultaneously, in the order given for equal positions, and
// overlapping edits are an error.
func ApplyTextEdits(text string, edits []api.TextEdit) (string, error) {
	if len(edits) == 0 {
		return text, nil
	}
	lines := lineStarts(text)
	type span struct {
		start, end int
		newText    string
		idx        int
	}
	spans := make([]span, len(edits))
	for i, ed := range edits {
		s := offsetOf(text, lines, ed.Range.Start)
		en := offsetOf(text, lines, ed.Range.End)
		if en < s {
			return "", fmt.Errorf("edit %d: range end %d:%d is before its start %d:%d", i,
				ed.Range.End.Line, ed.Range.End.Character, ed.Range.Start.Line, ed.Range.Start.Character)
		}
		spans[i] = span{s, en, ed.NewText, i}
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return "", fmt.Errorf("edits %d and %d overlap", spans[i-1].idx, spans[i].idx)
		}
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.start])
		b.WriteString(sp.newText)
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// lineStarts returns the byte offset at which each line starts.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// offsetOf turns an LSP position into a byte offset of text.
func offsetOf(text string, starts []int, pos api.Position) int {
	if int(pos.Line) >= len(starts) {
		return len(text)
	}
	off := starts[pos.Line]
	end := len(text)
	if int(pos.Line)+1 < len(starts) {
		end = starts[pos.Line+1]
	}
	// The line's content ends before its line break.
	for end > off && (text[end-1] == '\n' || text[end-1] == '\r') {
		end--
	}
	units := int(pos.Character)
	for off < end && units > 0 {
		r, size := utf8.DecodeRuneInString(text[off:end])
		n := 1
		if r >= 0x10000 {
			n = 2
		}
		if n > units {
			break // inside a surrogate pair: stay before the character
		}
		units -= n
		off += size
	}
	return off
}
