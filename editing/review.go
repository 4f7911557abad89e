package editing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// Review mode (docs/EDITING.md, Review mode): a task holds every change its
// agents make instead of sending it to the editor. The task's own reads,
// listings and searches see what it holds (an overlay over the editor's
// text); nothing else does — not the editor, not the disk, not commands.
// When the task ends, Review proposes everything it holds as one workspace
// edit, one change annotation per file, and reports what the person
// accepted of each file.

// held is what a task in review mode holds of one file.
type held struct {
	rp      Path
	base    string // the file's text before the task's first change of it
	existed bool   // whether the file existed then
	text    string // its text after the task's last change ("" when deleted)
	exists  bool   // whether it exists after that change
}

// op is the operation the held file amounts to, base to text: "" when the
// task left it as it found it.
func (h *held) op() string {
	switch {
	case h.existed && h.exists:
		if h.base == h.text {
			return ""
		}
		return api.OpUpdate
	case h.exists:
		return api.OpCreate
	case h.existed:
		return api.OpDelete
	}
	return ""
}

// hold records a change in the task's overlay. The caller holds the path's
// lock.
func (t *Task) hold(rp Path, op, old, next string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held == nil {
		t.held = map[string]*held{}
	}
	h := t.held[rp.Rel]
	if h == nil {
		h = &held{rp: rp, base: old, existed: op != api.OpCreate}
		t.held[rp.Rel] = h
		t.heldOrder = append(t.heldOrder, rp.Rel)
	}
	h.text, h.exists = next, op != api.OpDelete
	if !h.exists {
		h.text = ""
	}
}

// current returns the text of a file as the task sees it, and whether it
// exists: what the task holds of it in review mode, else the editor's text
// (Workspace.current).
func (t *Task) current(ctx context.Context, rp Path) (string, bool, error) {
	t.mu.Lock()
	if h := t.held[rp.Rel]; h != nil {
		text, exists := h.text, h.exists
		t.mu.Unlock()
		return text, exists, nil
	}
	t.mu.Unlock()
	return t.ws.current(ctx, rp)
}

// heldFiles returns a copy of what the task holds, by workspace-relative
// path; nil when it holds nothing.
func (t *Task) heldFiles() map[string]held {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.held) == 0 {
		return nil
	}
	out := make(map[string]held, len(t.held))
	for rel, h := range t.held {
		out[rel] = *h
	}
	return out
}

// Held returns how many files the task holds changes of (review mode).
func (t *Task) Held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.held)
}

// createdHeld returns the held files that the task created and that a walk
// of the disk does not find, matching pattern and allowed by the zones, by
// path.
func (w *Workspace) createdHeld(ov map[string]held, pattern string, walked map[string]bool) []held {
	var out []held
	for rel, h := range ov {
		if !h.exists || h.existed || walked[rel] {
			continue
		}
		if ok, _ := doublestar.Match(pattern, rel); !ok || w.refusal(h.rp, "", false, nil) != "" {
			continue
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rp.Rel < out[j].rp.Rel })
	return out
}

// reviewItem is one held file on its way to the person.
type reviewItem struct {
	h   held
	op  string
	d   *Diff
	out *Change
}

// Review proposes every change the task holds as one workspace edit
// labelled label, and returns what became of each file, in the order the
// task first changed them; a file the task left as it found it is not
// proposed and not returned. What the task holds is let go of.
//
// With changeAnnotationSupport (and documentChanges) the edit carries one
// change annotation per file that needs confirmation, on every part of the
// file's change; the person may accept some files, or some edits of a
// file: each file is read back and recorded as applied, applied in part
// (Partial, with the diff of what landed) or rejected. A create or delete
// the client cannot carry, and every file for a client without annotations,
// is put to the person in one window/showMessageRequest with the diffs, and
// applied as in apply mode when they choose Apply.
//
// A file that changed since the task first changed it (in the editor, or by
// another task) is not proposed: its held change would undo that change.
// It is returned not applied, with its diff, so nothing of it is lost.
func (t *Task) Review(ctx context.Context, label string) []Change {
	w := t.ws
	t.mu.Lock()
	order, files := t.heldOrder, t.held
	t.held, t.heldOrder = nil, nil
	t.mu.Unlock()

	var out []Change
	var items []*reviewItem
	for _, rel := range order {
		h := *files[rel]
		op := h.op()
		if op == "" {
			continue
		}
		d := ComputeDiff(h.base, h.text)
		from, to := "a/"+rel, "b/"+rel
		switch op {
		case api.OpCreate:
			from = "/dev/null"
		case api.OpDelete:
			to = "/dev/null"
		}
		ch := Change{Path: rel, Operation: op, Diff: d.Unified(from, to), Before: h.base, Existed: h.existed}
		if op != api.OpDelete {
			ch.NewContent, ch.Spans = h.text, d.Spans()
		}
		cur, exists, err := w.current(ctx, h.rp)
		switch {
		case err != nil:
			ch.Reason = fmt.Sprintf("%s could not be read to propose its change: %v", rel, err)
		case exists != h.existed || (exists && cur != h.base):
			ch.Reason = fmt.Sprintf("%s changed while the task held its change (in the editor, or by another task); the change was not proposed, as it would undo that: its diff is kept here", rel)
		}
		out = append(out, ch)
		if ch.Reason == "" {
			items = append(items, &reviewItem{h: h, op: op, d: d})
		}
	}
	// out is complete: the items point into it from here on.
	k := 0
	for i := range out {
		if k < len(items) && out[i].Path == items[k].h.rp.Rel {
			items[k].out = &out[i]
			k++
		}
	}

	caps := w.ed.Caps()
	annotations := caps.ApplyEdit && caps.DocumentChanges && caps.ChangeAnnotation
	var annotated, confirmed []*reviewItem
	for _, it := range items {
		if annotations && (it.op == api.OpUpdate || caps.ResourceOperation(it.op)) {
			annotated = append(annotated, it)
		} else {
			confirmed = append(confirmed, it)
		}
	}
	if len(annotated) > 0 {
		t.reviewAnnotated(ctx, label, annotated)
	}
	if len(confirmed) > 0 {
		t.reviewConfirmed(ctx, label, confirmed)
	}
	for i := range out {
		c := &out[i]
		if c.Applied {
			if w.changed != nil {
				w.changed(c.Path, c.NewContent, c.Operation == api.OpDelete)
			}
			c.Text = changeText(c.Path, c.Operation, "", api.EditApply, "", ComputeDiff(c.Before, c.NewContent))
			if c.Partial {
				c.Text = fmt.Sprintf("Updated %s, %s.", c.Path, c.Reason)
			}
		} else {
			c.Text = c.Reason
		}
		w.log.Info("held change reviewed", zap.String("task", t.id), zap.String("path", c.Path),
			zap.String("operation", c.Operation), zap.Bool("applied", c.Applied), zap.String("reason", c.Reason))
	}
	return out
}

// reviewAnnotated proposes the items as one annotated edit and records
// what the person accepted of each.
func (t *Task) reviewAnnotated(ctx context.Context, label string, items []*reviewItem) {
	w := t.ws
	caps := w.ed.Caps()
	files := make([]fileEdit, len(items))
	for i, it := range items {
		files[i] = fileEdit{rp: it.h.rp, op: it.op, next: it.h.text, d: it.d, resource: caps.ResourceOperation(it.op)}
	}
	res, err := w.ed.ApplyEdit(ctx, t.workspaceEdit(label, files, true, true), api.Human)
	var reason string
	switch {
	case ctx.Err() != nil:
		reason = fmt.Sprintf("the review ended before the user decided: %v", context.Cause(ctx))
	case errors.Is(err, api.ErrTimeout):
		reason = fmt.Sprintf("the review was not answered in time (%v); the change may or may not be in the editor, look at the file", err)
	case err != nil:
		reason = fmt.Sprintf("the review could not be put to the user: %v", err)
	case !res.Applied:
		reason = res.FailureReason
		if reason == "" {
			reason = "no reason given"
		}
		reason = "the user rejected the review: " + reason
	}
	if reason != "" {
		for _, it := range items {
			it.out.Reason = reason
		}
		return
	}
	for _, it := range items {
		t.landed(ctx, it)
	}
}

// landed records what the person accepted of a file of a confirmed review.
func (t *Task) landed(ctx context.Context, it *reviewItem) {
	w := t.ws
	rel := it.h.rp.Rel
	c := it.out
	_, statErr := os.Lstat(it.h.rp.Abs)
	onDisk := statErr == nil
	switch it.op {
	case api.OpDelete:
		if onDisk {
			c.Reason = fmt.Sprintf("the user kept %s", rel)
			return
		}
		c.Applied = true
		return
	case api.OpCreate:
		if !onDisk {
			c.Reason = fmt.Sprintf("the user did not accept the creation of %s", rel)
			return
		}
	}
	text := it.h.text
	if it.op == api.OpCreate {
		if got, exists, err := w.current(ctx, it.h.rp); err == nil && exists {
			text = got
		}
	} else {
		got, err := w.readBack(ctx, it.h.rp, it.h.base, it.h.text)
		if err != nil {
			c.Reason = err.Error()
			return
		}
		text = got
	}
	c.Applied = true
	if text != it.h.text {
		ld := ComputeDiff(it.h.base, text)
		from := "a/" + rel
		if it.op == api.OpCreate {
			from = "/dev/null"
		}
		c.Diff, c.NewContent, c.Spans = ld.Unified(from, "b/"+rel), text, ld.Spans()
		c.Reason, c.Partial = partialReason(it.d, ld), true
	}
}

// reviewConfirmed puts the items to the person in one message, with their
// diffs, and on Apply carries each out as apply mode does.
func (t *Task) reviewConfirmed(ctx context.Context, label string, items []*reviewItem) {
	w := t.ws
	var b strings.Builder
	fmt.Fprintf(&b, "%s: apply these changes?\n", label)
	for _, it := range items {
		add, del := it.d.Stat()
		fmt.Fprintf(&b, "- %s %s (+%d -%d lines)\n", it.op, it.h.rp.Rel, add, del)
	}
	var diff []string
	for _, it := range items {
		diff = append(diff, strings.SplitAfter(it.out.Diff, "\n")...)
	}
	if len(diff) > 40 {
		diff = append(diff[:40], fmt.Sprintf("… %d more diff lines\n", len(diff)-40))
	}
	msg := b.String() + "\n" + strings.Join(diff, "")
	item, err := w.ed.ShowMessageRequest(ctx, api.ShowMessageRequestParams{
		Type:    api.MessageTypeInfo,
		Message: msg,
		Actions: []api.MessageActionItem{{Title: actionApply}, {Title: actionReject}},
	})
	var reason string
	switch {
	case ctx.Err() != nil:
		reason = fmt.Sprintf("the review ended before the user decided: %v", context.Cause(ctx))
	case err != nil:
		reason = fmt.Sprintf("the review could not be put to the user: %v", err)
	case item == nil:
		reason = "the user dismissed the review"
	case item.Title != actionApply:
		reason = fmt.Sprintf("the user chose %q in the review", item.Title)
	}
	for _, it := range items {
		if reason != "" {
			it.out.Reason = reason
			continue
		}
		unlock, err := w.locks.lock(ctx, it.h.rp.Rel)
		if err != nil {
			it.out.Reason = err.Error()
			continue
		}
		_, err = t.carry(ctx, "", it.h.rp, it.op, it.h.base, it.h.text, it.d, false)
		unlock()
		if err != nil {
			it.out.Reason = err.Error()
			continue
		}
		it.out.Applied = true
	}
}
