package workforce

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/tracking/checkpoint"
)

// Undo answers agent/undo: every file the task (or one subtask of it)
// changed goes back to its text before, from the task's checkpoints,
// through the editor as every change does (docs/EDITING.md, Undo). A task
// still going, here or in another process on the workspace, is refused
// with ErrWrongState; one without checkpoints with ErrUnknownTask.
func (e *Engine) Undo(ctx context.Context, p api.UndoParams, s api.Settings) (*api.UndoResult, error) {
	if p.TaskID == "" {
		return nil, invalid("\"taskId\" is required")
	}
	e.mu.Lock()
	running := e.tasks[p.TaskID] != nil
	e.mu.Unlock()
	if running {
		return nil, fmt.Errorf("%w: task %q is still going; stop it (agent/stop) before undoing it", ErrWrongState, p.TaskID)
	}
	ws := e.cfg.Tracking
	recs, sid, err := ws.Checkpoints.Task(p.SessionID, p.TaskID)
	if errors.Is(err, checkpoint.ErrNoCheckpoint) {
		return nil, fmt.Errorf("%w %q: %w", ErrUnknownTask, p.TaskID, err)
	}
	if err != nil {
		return nil, err
	}
	if going, err := taskGoing(ws.Sessions.Sessions, sid, p.TaskID); err == nil && going {
		return nil, fmt.Errorf("%w: task %q is still going in another agentls on this workspace; stop it before undoing it", ErrWrongState, p.TaskID)
	}
	what := fmt.Sprintf("task %s", p.TaskID)
	if p.SubtaskID != "" {
		what = fmt.Sprintf("subtask %s of task %s", p.SubtaskID, p.TaskID)
		kept := recs[:0:0]
		for _, r := range recs {
			if r.SubtaskID == p.SubtaskID {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			return nil, fmt.Errorf("%w %q: it changed no file of task %q", ErrUnknownSubtask, p.SubtaskID, p.TaskID)
		}
		recs = kept
	}

	// The changes of each file, in the order the task first changed them.
	var files []editing.UndoFile
	index := map[string]int{}
	for _, r := range recs {
		i, ok := index[r.Path]
		if !ok {
			i = len(files)
			index[r.Path] = i
			files = append(files, editing.UndoFile{Path: r.Path})
		}
		f := &files[i]
		if f.Missing != "" {
			continue
		}
		if r.Missing != "" {
			f.Missing = r.Missing
			continue
		}
		before, existed, err1 := ws.Checkpoints.Text(sid, r.Before)
		after, exists, err2 := ws.Checkpoints.Text(sid, r.After)
		if err := errors.Join(err1, err2); err != nil {
			f.Missing = err.Error()
			continue
		}
		f.Steps = append(f.Steps, editing.UndoStep{Before: before, Existed: existed, After: after, Exists: exists})
	}

	w, err := editing.New(editing.Config{
		Root:     e.cfg.Root,
		Zones:    s.Zones,
		EditMode: api.EditApply,
		Editor:   e.cfg.Editor,
		Logger:   e.log,
		Changed:  e.graphChanged,
	})
	if err != nil {
		return nil, invalid("%w", err)
	}
	res := &api.UndoResult{TaskID: p.TaskID, SessionID: sid, Undone: true, Files: []api.UndoFile{}}
	var undone, not []string
	for _, r := range w.Undo(ctx, "agentls: undo "+what, files, p.Partial) {
		f := api.UndoFile{Path: r.Path, Operation: r.Operation, Undone: r.Undone, Reason: r.Reason, Diff: r.Diff}
		for _, l := range r.Lines {
			f.Lines = append(f.Lines, api.LineSpan{StartLine: l.Start, EndLine: l.End})
		}
		res.Files = append(res.Files, f)
		res.Undone = res.Undone && r.Undone
		if r.Undone {
			undone = append(undone, r.Path)
		} else {
			not = append(not, r.Path)
		}
	}
	msg := "Undid " + what + ":"
	if len(undone) > 0 {
		msg += " restored " + strings.Join(undone, ", ") + "."
	}
	if len(not) > 0 {
		msg += " Not undone: " + strings.Join(not, ", ") + "."
	}
	if err := ws.Sessions.Append(sid, api.SessionMessage{Role: "user", Text: msg, TaskID: p.TaskID}); err != nil {
		e.log.Debug("the undo was not added to its session", zap.Error(err))
	}
	return redact.Value(e.cfg.Redactor, res), nil
}

// taskGoing reports whether a session's task is still planning, running or
// waiting, in any process.
func taskGoing(list func() (api.SessionsResult, error), sessionID, taskID string) (bool, error) {
	all, err := list()
	if err != nil {
		return false, err
	}
	for _, se := range all.Sessions {
		if se.SessionID != sessionID {
			continue
		}
		for _, t := range se.Tasks {
			if t.TaskID == taskID {
				switch t.State {
				case api.TaskPlanning, api.TaskRunning, api.TaskWaiting:
					return true, nil
				}
			}
		}
	}
	return false, nil
}
