package editing

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentls/agentls/api"
	"go.uber.org/zap"
)

// Change is the outcome of write_file, edit_file or delete_file: what the
// model reads, and the structured record the run's changes and the trace log
// are made of.
type Change struct {
	Path      string // workspace-relative
	Operation string // api.OpCreate, api.OpUpdate or api.OpDelete
	Applied   bool
	// Reason is why it was not applied; for a change the person accepted
	// only part of, how much landed ("" for a change applied whole).
	Reason string
	// Diff is the unified diff of the change: of what landed, when the
	// person accepted only part of a proposal.
	Diff string
	// NewContent is the file after the change ("" after a delete), and Spans
	// its changed lines (1-based, inclusive), for the trace log.
	NewContent string
	Spans      []LineSpan
	// Before is the file's text before the change, and Existed whether it
	// existed: what a checkpoint keeps to undo the change.
	Before  string
	Existed bool
	// Held: in review mode, the change is held by the task, which sees it,
	// and is proposed with the task's other changes when the task ends.
	Held bool
	// Partial: the person accepted only part of a proposal; Diff,
	// NewContent and Spans are those of what landed.
	Partial bool
	Stage   string // edit_file: the match stage that found old_string
	Text    string // what the model reads
}

// RPC returns the change as the run result lists it.
func (c Change) RPC() api.Change {
	return api.Change{Path: c.Path, Operation: c.Operation, Applied: c.Applied, Diff: c.Diff}
}

// Write replaces the content of a file, or creates it (with its
// directories). Overwriting a file needs a read of it first.
func (a *Agent) Write(ctx context.Context, p, content string) (Change, error) {
	return a.change(ctx, p, func(rel, cur string, exists bool) (string, string, string, error) {
		if !exists {
			return api.OpCreate, content, "", nil
		}
		if _, ok := a.lastSeen(rel); !ok {
			return "", "", "", fmt.Errorf("%w: %s exists and you have not read it; read it before overwriting it, or use edit_file", ErrNotRead, rel)
		}
		if cur == content {
			return "", "", "", fmt.Errorf("%w: %s already has this content", ErrNoChange, rel)
		}
		return api.OpUpdate, content, "", nil
	})
}

// Edit replaces old with new in a file, with the staged matching of Replace.
func (a *Agent) Edit(ctx context.Context, p, old, new string, all bool) (Change, error) {
	return a.change(ctx, p, func(rel, cur string, exists bool) (string, string, string, error) {
		if !exists {
			return "", "", "", fmt.Errorf("%w: %s; use write_file to create it", ErrNotFound, rel)
		}
		r, err := Replace(rel, cur, old, new, all)
		if err != nil {
			return "", "", "", err
		}
		if r.Content == cur {
			return "", "", "", fmt.Errorf("%w: the edit leaves %s as it is", ErrNoChange, rel)
		}
		return api.OpUpdate, r.Content, r.Stage, nil
	})
}

// Delete deletes a file. It needs a read of the file first.
func (a *Agent) Delete(ctx context.Context, p string) (Change, error) {
	return a.change(ctx, p, func(rel, cur string, exists bool) (string, string, string, error) {
		if !exists {
			return "", "", "", fmt.Errorf("%w: %s", ErrNotFound, rel)
		}
		if _, ok := a.lastSeen(rel); !ok {
			return "", "", "", fmt.Errorf("%w: read %s before deleting it", ErrNotRead, rel)
		}
		return api.OpDelete, "", "", nil
	})
}

// buildFunc decides a change from the current text: the operation, the new
// content and the match stage.
type buildFunc func(rel, cur string, exists bool) (op, next, stage string, err error)

func (a *Agent) change(ctx context.Context, p string, build buildFunc) (Change, error) {
	w := a.task.ws
	ch := Change{Path: p}
	fail := func(err error) (Change, error) {
		ch.Applied = false
		ch.Reason = err.Error()
		ch.Text = err.Error()
		return ch, err
	}
	rp, err := w.Access(a.who, p, true, a.Scope())
	if err != nil {
		return fail(err)
	}
	ch.Path = rp.Rel
	if rp.Rel == "." {
		return fail(fmt.Errorf("%w: the workspace root is not a file", ErrIsDir))
	}
	unlock, err := w.locks.lock(ctx, rp.Rel)
	if err != nil {
		return fail(err)
	}
	defer unlock()

	cur, exists, err := a.task.current(ctx, rp)
	if err != nil {
		return fail(err)
	}
	if h, ok := a.lastSeen(rp.Rel); ok {
		switch {
		case !exists:
			return fail(fmt.Errorf("%w: %s was deleted since you last read it; list or read again before changing it", ErrConflict, rp.Rel))
		case HashContent(cur) != h:
			return fail(fmt.Errorf("%w: %s changed since you last read it (edited in the editor or by another agent); read it again and redo the change", ErrConflict, rp.Rel))
		}
	}
	op, next, stage, err := build(rp.Rel, cur, exists)
	if err != nil {
		return fail(err)
	}
	ch.Operation, ch.Stage, ch.Before, ch.Existed = op, stage, cur, exists
	d := ComputeDiff(cur, next)
	from, to := "a/"+rp.Rel, "b/"+rp.Rel
	switch op {
	case api.OpCreate:
		from = "/dev/null"
	case api.OpDelete:
		to = "/dev/null"
	}
	ch.Diff = d.Unified(from, to)
	if op != api.OpDelete {
		ch.NewContent = next
		ch.Spans = d.Spans()
	}

	mode, landed, err := a.task.apply(ctx, rp, op, cur, next, d)
	if err != nil {
		w.log.Info("change not applied", zap.String("task", a.who.TaskID), zap.String("agent", a.who.AgentID),
			zap.String("path", rp.Rel), zap.String("operation", op), zap.Error(err))
		return fail(err)
	}
	ch.Applied = true
	ch.Held = mode == api.EditReview
	if op == api.OpDelete {
		a.forget(rp.Rel)
	} else {
		a.remember(rp.Rel, landed)
	}
	w.accessed(a.who, rp.Rel, api.ActionWrite)
	if w.changed != nil && !ch.Held {
		// a held change (review mode) is told when the person has
		// reviewed it, and only if it landed
		w.changed(rp.Rel, landed, op == api.OpDelete)
	}
	if op != api.OpDelete && landed != next {
		// The person took only part of the proposal: what is recorded
		// (the run's changes, the trace, the events) is what landed.
		ld := ComputeDiff(cur, landed)
		ch.Diff, ch.NewContent, ch.Spans = ld.Unified(from, to), landed, ld.Spans()
		ch.Reason, ch.Partial = partialReason(d, ld), true
		w.log.Info("change applied in part", zap.String("task", a.who.TaskID), zap.String("agent", a.who.AgentID),
			zap.String("path", rp.Rel), zap.String("operation", op), zap.String("reason", ch.Reason))
		ch.Text = partialText(rp.Rel, ch.Reason, ch.Diff)
		return ch, nil
	}
	ch.Text = changeText(rp.Rel, op, stage, mode, a.task.Branch(), d)
	return ch, nil
}

// partialReason says how much of a proposed change landed: in lines, and
// in edits, which tell apart two changes of one line when only one landed.
func partialReason(proposed, landed *Diff) string {
	pa, pd := proposed.Stat()
	la, ld := landed.Stat()
	pe, le := len(proposed.TextEdits()), len(landed.TextEdits())
	return fmt.Sprintf("applied in part: the user accepted +%d -%d of the +%d -%d lines proposed (%d of %d %s)", la, ld, pa, pd, le, pe, plural(pe, "edit", "edits"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// partialText tells the model what of its change landed, with the diff of
// it (its first 40 lines).
func partialText(rel, reason, diff string) string {
	s := fmt.Sprintf("Updated %s, %s; the rest was rejected and is not in the file. What landed:\n\n", rel, reason)
	lines := strings.SplitAfter(diff, "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("… %d more diff lines\n", len(lines)-40))
	}
	return s + strings.Join(lines, "") + "\nRead the file again before changing it further."
}

func changeText(rel, op, stage, mode, branch string, d *Diff) string {
	add, del := d.Stat()
	var s string
	switch op {
	case api.OpCreate:
		s = fmt.Sprintf("Created %s (%d lines).", rel, add)
	case api.OpDelete:
		s = fmt.Sprintf("Deleted %s.", rel)
	default:
		s = fmt.Sprintf("Updated %s (+%d -%d lines).", rel, add, del)
	}
	if stage != "" && stage != StageExact {
		s += " old_string matched " + stage + "."
	}
	switch {
	case mode == api.EditPropose:
		s += " The user approved it."
	case mode == api.EditReview:
		s += " Held for review: the user reviews every change of this task together when it ends. Your reads see it; commands (run_command) run on the files as they are on disk, without it."
	case branch != "":
		s += " On branch " + branch + "."
	}
	return s
}

// Actions of the propose question.
const (
	actionApply  = "Apply"
	actionReject = "Reject"
)

// apply carries a change out in the task's edit mode and returns the mode
// used and the text the file holds after it: next, unless the person
// accepted only part of a proposed edit. It returns nil only when the
// change is in the editor (or on disk), or, in review mode, held by the
// task.
func (t *Task) apply(ctx context.Context, rp Path, op, old, next string, d *Diff) (mode, landed string, err error) {
	mode, err = t.effectiveMode(ctx)
	if err != nil {
		return mode, "", err
	}
	if mode == api.EditReview {
		t.hold(rp, op, old, next)
		return mode, next, nil
	}
	landed, err = t.carry(ctx, "", rp, op, old, next, d, mode == api.EditPropose)
	return mode, landed, err
}

// carry makes one change in the editor (or on disk): proposed for the
// person's approval when propose, else applied at once. label names the
// edit ("": "agentls: <op> <path>"). It returns the text the file holds
// after it: next, unless the person accepted only part of a proposed edit.
//
// How a change reaches the editor (docs/PROTOCOL.md §4): an update is a text
// edit. A create or a delete is a CreateFile or DeleteFile in the edit only
// when the client declared that kind in resourceOperations. Otherwise the
// sidecar creates the file itself (atomically, exclusively) and the edit
// replaces the file's whole text with itself, so the editor's buffer shows
// it — the file goes again if the edit is not applied — or it deletes the
// file itself. Such a change is confirmed in propose mode with a message:
// an annotated edit would show the person nothing to confirm. Without
// workspace/applyEdit the sidecar writes every change itself.
func (t *Task) carry(ctx context.Context, label string, rp Path, op, old, next string, d *Diff, propose bool) (landed string, err error) {
	w := t.ws
	caps := w.ed.Caps()
	resource := caps.ResourceOperation(op)
	viaEdit := caps.ApplyEdit && (op != api.OpDelete || resource)
	annotated := propose && caps.ApplyEdit && caps.DocumentChanges && caps.ChangeAnnotation &&
		(op == api.OpUpdate || resource)
	if propose && !annotated {
		if err := w.confirm(ctx, rp.Rel, op, d); err != nil {
			return "", err
		}
	}
	if !viaEdit {
		return next, w.writeOwn(rp, op, old, next)
	}
	var undo func()
	if op == api.OpCreate && !resource {
		if undo, err = w.createOwn(rp, next); err != nil {
			return "", err
		}
	}
	wait := api.Machine
	if annotated {
		wait = api.Human
	}
	if label == "" {
		label = fmt.Sprintf("agentls: %s %s", op, rp.Rel)
	}
	edit := t.workspaceEdit(label, []fileEdit{{rp: rp, op: op, next: next, d: d, resource: resource}}, caps.DocumentChanges, annotated)
	res, err := w.ed.ApplyEdit(ctx, edit, wait)
	if (err != nil || !res.Applied) && undo != nil {
		if errors.Is(err, api.ErrUnsupported) {
			return next, nil // the file is on disk; the editor cannot be told
		}
		undo()
	}
	switch {
	case err == nil && res.Applied:
		if resource {
			if err := w.checkDisk(rp, op); err != nil {
				return "", err
			}
		}
		if annotated && op != api.OpDelete {
			return w.readBack(ctx, rp, old, next)
		}
		return next, nil
	case err == nil:
		if annotated {
			return "", refusal(rp.Rel, res.FailureReason)
		}
		reason := res.FailureReason
		if reason == "" {
			reason = "no reason given"
		}
		return "", fmt.Errorf("%w: the editor did not apply the change to %s: %s", ErrNotApplied, rp.Rel, reason)
	case errors.Is(err, api.ErrTimeout):
		return "", fmt.Errorf("%w: %w; the change to %s may or may not be in the editor, read it again", ErrNotApplied, err, rp.Rel)
	case !errors.Is(err, api.ErrUnsupported):
		return "", fmt.Errorf("%w: %s: %w", ErrNotApplied, rp.Rel, err)
	}
	return next, w.writeOwn(rp, op, old, next)
}

// readBack returns the text a confirmed edit left in the file, read as the
// agent reads (agent/readFile, else the disk): an editor that lets the
// person accept part of a proposal (per hunk, or some edits of a preview)
// still answers applied: true. A file that holds its old text is a
// rejection. When the file cannot be read back, the editor's word stands.
func (w *Workspace) readBack(ctx context.Context, rp Path, old, next string) (string, error) {
	text, exists, err := w.current(ctx, rp)
	switch {
	case err != nil:
		w.log.Warn("a confirmed change could not be read back; recording it as proposed",
			zap.String("path", rp.Rel), zap.Error(err))
		return next, nil
	case !exists, text == next:
		return next, nil
	case text == old:
		return "", rejected("the user accepted none of the change to %s", rp.Rel)
	}
	return text, nil
}

// refusal is the error of a proposal the editor answered applied: false,
// worded so that the refusal reads once: an editor's reason is often the
// very words ErrRejected says ("rejected by the user"), and the error then
// says them once, with whatever the reason adds ("in the refactor
// preview"); another reason is given as the editor wrote it.
func refusal(rel, reason string) error {
	reason = strings.TrimSpace(reason)
	said := ErrRejected.Error()
	switch {
	case reason == "":
		return rejected("the change to %s was %s", rel, said)
	case len(reason) >= len(said) && strings.EqualFold(reason[:len(said)], said):
		return rejected("the change to %s was %s%s", rel, said, reason[len(said):])
	}
	return rejected("the change to %s was not applied: %s", rel, reason)
}

// rejected is an error that wraps ErrRejected without saying its words:
// its message says how the person refused, once.
func rejected(format string, args ...any) error {
	return &rejection{msg: fmt.Sprintf(format, args...)}
}

type rejection struct{ msg string }

func (r *rejection) Error() string { return r.msg }
func (r *rejection) Unwrap() error { return ErrRejected }

// confirm asks the person to approve a change with window/showMessageRequest.
func (w *Workspace) confirm(ctx context.Context, rel, op string, d *Diff) error {
	add, del := d.Stat()
	verb := map[string]string{api.OpCreate: "create", api.OpUpdate: "change", api.OpDelete: "delete"}[op]
	msg := fmt.Sprintf("agentls wants to %s %s (+%d -%d lines).", verb, rel, add, del)
	if preview := d.Unified("a/"+rel, "b/"+rel); preview != "" {
		lines := strings.SplitAfter(preview, "\n")
		if len(lines) > 40 {
			lines = append(lines[:40], fmt.Sprintf("… %d more diff lines\n", len(lines)-40))
		}
		msg += "\n\n" + strings.Join(lines, "")
	}
	item, err := w.ed.ShowMessageRequest(ctx, api.ShowMessageRequestParams{
		Type:    api.MessageTypeInfo,
		Message: msg,
		Actions: []api.MessageActionItem{{Title: actionApply}, {Title: actionReject}},
	})
	switch {
	case err != nil:
		return fmt.Errorf("%w: asking the user to approve the change to %s: %w", ErrNotApplied, rel, err)
	case item == nil:
		return rejected("the user dismissed the change to %s", rel)
	case item.Title != actionApply:
		return rejected("the user chose %q for the change to %s", item.Title, rel)
	}
	return nil
}

// fileEdit is the change of one file within a workspace edit: to next,
// with the diff d from its current text; resource puts a create or delete
// in as a CreateFile or DeleteFile.
type fileEdit struct {
	rp       Path
	op       string
	next     string
	d        *Diff
	resource bool
}

// workspaceEdit builds the edit of some changes, each of one file, in
// order: documentChanges where the client has them (TextDocumentEdit with a
// null version: the sidecar keeps no text in sync, the conflict check
// guards unsaved text), else changes. A file's create or delete is a
// CreateFile or DeleteFile when its resource is set; without it a create is
// a text edit that replaces the whole text of the file the sidecar made
// with itself. annotated gives each file one change annotation that needs
// confirmation, labelled with its operation and path, and puts it on every
// part of that file's change: its text edits (refined to words) and its
// CreateFile or DeleteFile.
func (t *Task) workspaceEdit(label string, files []fileEdit, docChanges, annotated bool) api.ApplyWorkspaceEditParams {
	p := api.ApplyWorkspaceEditParams{Label: label}
	if annotated {
		p.Edit.ChangeAnnotations = map[string]api.ChangeAnnotation{}
	}
	for _, f := range files {
		var ann string
		if annotated {
			add, del := f.d.Stat()
			t.mu.Lock()
			t.seq++
			ann = fmt.Sprintf("agentls/%s/%d", t.id, t.seq)
			t.mu.Unlock()
			p.Edit.ChangeAnnotations[ann] = api.ChangeAnnotation{
				Label:             fmt.Sprintf("agentls: %s %s", f.op, f.rp.Rel),
				NeedsConfirmation: true,
				Description:       fmt.Sprintf("+%d -%d lines", add, del),
			}
		}
		var edits []api.TextEdit
		switch {
		case f.op == api.OpCreate && f.resource:
			edits = []api.TextEdit{{NewText: f.next}} // into the empty file CreateFile made
		case f.op == api.OpCreate:
			edits = wholeText(f.next) // the file is on disk already
		case f.op == api.OpUpdate:
			edits = f.d.TextEdits()
		}
		if !docChanges {
			if f.op == api.OpDelete {
				continue
			}
			if p.Edit.Changes == nil {
				p.Edit.Changes = map[string][]api.TextEdit{}
			}
			p.Edit.Changes[f.rp.URI] = edits
			continue
		}
		textEdit := func(edits []api.TextEdit) api.DocumentChange {
			ae := make([]api.AnnotatedTextEdit, len(edits))
			for i, e := range edits {
				ae[i] = api.AnnotatedTextEdit{Range: e.Range, NewText: e.NewText, AnnotationID: ann}
			}
			return api.DocumentChange{TextDocumentEdit: &api.TextDocumentEdit{
				TextDocument: api.OptionalVersionedTextDocumentIdentifier{URI: f.rp.URI},
				Edits:        ae,
			}}
		}
		switch {
		case f.op == api.OpCreate && f.resource:
			p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, api.DocumentChange{CreateFile: &api.CreateFile{URI: f.rp.URI, Options: &api.CreateFileOptions{}, AnnotationID: ann}})
			if f.next != "" {
				p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, textEdit(edits))
			}
		case f.op == api.OpDelete:
			p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, api.DocumentChange{DeleteFile: &api.DeleteFile{URI: f.rp.URI, Options: &api.DeleteFileOptions{}, AnnotationID: ann}})
		default:
			p.Edit.DocumentChanges = append(p.Edit.DocumentChanges, textEdit(edits))
		}
	}
	return p
}

// wholeText is one edit replacing the whole of text with itself (the range
// of a deletion of all of it): applied to the file as the sidecar wrote it,
// it changes nothing and brings the file into the editor.
func wholeText(text string) []api.TextEdit {
	edits := ComputeDiff(text, "").TextEdits()
	if len(edits) != 1 {
		return []api.TextEdit{{NewText: text}}
	}
	edits[0].NewText = text
	return edits
}
