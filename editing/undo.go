package editing

import (
	"context"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// Undo (docs/EDITING.md, Undo): a task's changes of a file are taken back
// one by one, newest first, each against the file as it is now. A change is
// taken back by a three-way line merge: the lines it changed go back to
// what they were, provided they still hold what it wrote; lines changed
// since elsewhere in the file stay as they are. Where someone changed the
// lines the change wrote, the file is refused, naming those lines.

// UndoStep is one change of a file, as its checkpoint keeps it.
type UndoStep struct {
	Before  string // the text before the change ("" when it did not exist)
	Existed bool
	After   string // the text after it ("" when it deleted the file)
	Exists  bool
}

// UndoFile is a file to take a task's changes back from: its changes in
// the order they were made. Missing, when set, says why they cannot be
// (their texts were not kept).
type UndoFile struct {
	Path    string
	Steps   []UndoStep
	Missing string
}

// UndoResult is what became of one file.
type UndoResult struct {
	Path string
	// Operation is what the undo does to the file: api.OpUpdate (its text
	// restored), api.OpCreate (recreated), api.OpDelete (deleted), or ""
	// when the file is already as it was.
	Operation string
	Undone    bool
	Reason    string     // why it was not undone, or a note
	Lines     []LineSpan // the lines changed since, in the current text, that refused it
	Diff      string     // the unified diff of the undo
}

// errRefused is what refuses a file: the reason and the lines.
type undoRefusal struct {
	reason string
	lines  []LineSpan
}

// Undo takes the changes of files back, through the editor as every change
// is made (workspace/applyEdit, else the sidecar's own atomic writes), one
// file at a time. Every file is checked first: when one is refused (its
// changed lines were changed since, its checkpoint was not kept, it cannot
// be read or is outside the zones) nothing is undone unless partial, in
// which case the others are. label names the undo in the editor.
func (w *Workspace) Undo(ctx context.Context, label string, files []UndoFile, partial bool) []UndoResult {
	t := w.Task("undo", "undo", api.EditApply)
	type plan struct {
		rp        Path
		cur, next string
		op        string
		d         *Diff
	}
	out := make([]UndoResult, len(files))
	plans := make([]*plan, len(files))
	refused := 0
	for i, f := range files {
		out[i].Path = f.Path
		refuse := func(r undoRefusal) {
			out[i].Reason, out[i].Lines = r.reason, r.lines
			refused++
		}
		if f.Missing != "" {
			refuse(undoRefusal{reason: fmt.Sprintf("%s: its text before the task was not kept (%s)", f.Path, f.Missing)})
			continue
		}
		rp, err := w.Resolve(f.Path)
		if err == nil {
			if reason := w.refusal(rp, "", true, nil); reason != "" {
				err = &BlockedError{Path: rp.Rel, Reason: reason}
			}
		}
		if err != nil {
			refuse(undoRefusal{reason: err.Error()})
			continue
		}
		cur, exists, err := w.current(ctx, rp)
		if err != nil {
			refuse(undoRefusal{reason: fmt.Sprintf("%s cannot be read: %v", f.Path, err)})
			continue
		}
		text, ex := cur, exists
		var no *undoRefusal
		for k := len(f.Steps) - 1; k >= 0 && no == nil; k-- {
			text, ex, no = revertStep(f.Path, text, ex, f.Steps[k])
		}
		if no != nil {
			refuse(*no)
			continue
		}
		p := &plan{rp: rp, cur: cur, next: text}
		switch {
		case exists && !ex:
			p.op = api.OpDelete
		case !exists && ex:
			p.op = api.OpCreate
		case exists && cur != text:
			p.op = api.OpUpdate
		}
		out[i].Operation = p.op
		if p.op == "" {
			out[i].Undone, out[i].Reason = true, fmt.Sprintf("%s is already as it was before", f.Path)
			continue
		}
		p.d = ComputeDiff(cur, text)
		from, to := "a/"+rp.Rel, "b/"+rp.Rel
		switch p.op {
		case api.OpCreate:
			from = "/dev/null"
		case api.OpDelete:
			to = "/dev/null"
		}
		out[i].Diff = p.d.Unified(from, to)
		plans[i] = p
	}
	if refused > 0 && !partial {
		for i := range out {
			if plans[i] != nil || (out[i].Undone && out[i].Operation == "") {
				out[i].Undone = false
				others := "another file"
				if refused > 1 {
					others = fmt.Sprintf("%d other files", refused)
				}
				out[i].Reason = fmt.Sprintf("%s: not undone, as %s could not be and the undo was not partial", out[i].Path, others)
			}
		}
		return out
	}
	for i, p := range plans {
		if p == nil {
			continue
		}
		err := func() error {
			unlock, err := w.locks.lock(ctx, p.rp.Rel)
			if err != nil {
				return err
			}
			defer unlock()
			// The text may have moved on since it was checked.
			if cur, exists, err := w.current(ctx, p.rp); err != nil || cur != p.cur || exists != (p.op != api.OpCreate) {
				return fmt.Errorf("%w: %s changed while the undo was being prepared; ask again", ErrConflict, p.rp.Rel)
			}
			_, err = t.carry(ctx, fmt.Sprintf("%s: %s %s", label, p.op, p.rp.Rel), p.rp, p.op, p.cur, p.next, p.d, false)
			return err
		}()
		if err != nil {
			out[i].Reason = err.Error()
			continue
		}
		out[i].Undone = true
		if w.changed != nil {
			w.changed(p.rp.Rel, p.next, p.op == api.OpDelete)
		}
		w.log.Info("undone", zap.String("label", label), zap.String("path", p.rp.Rel), zap.String("operation", p.op))
	}
	return out
}

// revertStep takes one change back from the file as it is now (text, and
// whether it exists), or says why it cannot.
func revertStep(rel, text string, exists bool, st UndoStep) (string, bool, *undoRefusal) {
	switch {
	case st.Existed && st.Exists: // an update
		if !exists {
			return "", false, &undoRefusal{reason: fmt.Sprintf("%s was deleted since the task changed it", rel)}
		}
		merged, lines := revertLines(text, st.After, st.Before)
		if len(lines) > 0 {
			return "", false, &undoRefusal{reason: fmt.Sprintf("%s: %s changed since the task wrote %s", rel, spanWords(lines), pronoun(lines)), lines: lines}
		}
		return merged, true, nil
	case st.Exists: // a create
		if !exists {
			return "", false, nil // deleted since: as it was before
		}
		if text != st.After {
			lines := ComputeDiff(st.After, text).Spans()
			if len(lines) == 0 {
				lines = []LineSpan{{Start: 1, End: 1}}
			}
			return "", false, &undoRefusal{reason: fmt.Sprintf("%s: %s changed since the task created the file", rel, spanWords(lines)), lines: lines}
		}
		return "", false, nil
	case st.Existed: // a delete
		if exists && text != st.Before {
			return "", false, &undoRefusal{reason: fmt.Sprintf("%s was created again since the task deleted it", rel)}
		}
		return st.Before, true, nil
	}
	return text, exists, nil
}

// pronoun is "it" for one line, "them" for more.
func pronoun(spans []LineSpan) string {
	if len(spans) == 1 && spans[0].End <= spans[0].Start {
		return "it"
	}
	return "them"
}

// spanWords writes line spans for a person: "line 4", "lines 5-8 and 12".
func spanWords(spans []LineSpan) string {
	var parts []string
	lines := 0
	for _, s := range spans {
		if s.End <= s.Start {
			parts = append(parts, fmt.Sprint(s.Start))
			lines++
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", s.Start, s.End))
			lines += 2
		}
	}
	word := "lines "
	if lines == 1 {
		word = "line "
	}
	if len(parts) > 1 {
		return word + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return word + parts[0]
}

// revertLines takes the change after → before back from cur, a later
// version of after: the lines the change wrote (its hunks, in after) are
// replaced by what they were, wherever they are in cur. It fails, with the
// lines of cur that changed over them (1-based), when cur changed any of
// those lines since (but to what they were before the change: that is
// taken back already), or inserted lines where the change deleted some.
func revertLines(cur, after, before string) (string, []LineSpan) {
	if cur == after {
		return before, nil
	}
	back := ComputeDiff(after, before) // the hunks to take back, in after
	since := ComputeDiff(after, cur)   // what changed since, in after
	var conflicts []LineSpan
	for _, r := range back.hunks {
		for _, d := range since.hunks {
			if d.a0 == r.a0 && d.a1 == r.a1 &&
				cur[since.newLines[d.b0]:since.newLines[d.b1]] == before[back.newLines[r.b0]:back.newLines[r.b1]] {
				continue // taken back already, the same way
			}
			if overlaps(r, d) {
				s := LineSpan{Start: d.b0 + 1, End: d.b1}
				if d.b1 == d.b0 { // lines deleted since: the line before the gap
					s = LineSpan{Start: max(d.b0, 1), End: max(d.b0, 1)}
				}
				if n := len(conflicts); n == 0 || conflicts[n-1] != s {
					conflicts = append(conflicts, s)
				}
			}
		}
	}
	if len(conflicts) > 0 {
		return "", conflicts
	}
	// Where an after line is in cur: shifted by the hunks of since before
	// it. An insertion since at the start of a hunk taken back stays before
	// it, one at its end stays after it.
	at := func(line int, end bool) int {
		shift := 0
		for _, d := range since.hunks {
			if d.a1 > line || (end && d.a0 == line && d.a1 == line) {
				break
			}
			shift += (d.b1 - d.b0) - (d.a1 - d.a0)
		}
		return line + shift
	}
	var b strings.Builder
	pos := 0 // in cur, bytes
	for _, r := range back.hunks {
		start := since.newLines[at(r.a0, false)]
		end := since.newLines[at(r.a1, true)]
		b.WriteString(cur[pos:start])
		b.WriteString(before[back.newLines[r.b0]:back.newLines[r.b1]])
		pos = end
	}
	b.WriteString(cur[pos:])
	return b.String(), nil
}

// overlaps reports whether a hunk taken back (r) and a hunk changed since
// (d), both in after's lines, touch the same lines: ranges that share a
// line, an insertion strictly inside the other's range, or two insertions
// at one place.
func overlaps(r, d hunk) bool {
	switch re, de := r.a0 == r.a1, d.a0 == d.a1; {
	case re && de:
		return r.a0 == d.a0
	case re:
		return d.a0 < r.a0 && r.a0 < d.a1
	case de:
		return r.a0 < d.a0 && d.a0 < r.a1
	}
	return r.a0 < d.a1 && d.a0 < r.a1
}
