package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/workforce"
)

// workError turns the workforce's errors into the codes of docs/PROTOCOL.md §7.
func workError(method string, err error) error {
	var we *api.Error
	switch {
	case errors.As(err, &we):
		return err // already coded (-32010 from the model resolution)
	case errors.Is(err, workforce.ErrUnknownTask), errors.Is(err, workforce.ErrUnknownSubtask), errors.Is(err, workforce.ErrUnknownSession):
		return api.Errorf(api.CodeUnknownTask, "%s: %v", method, err)
	case errors.Is(err, workforce.ErrWrongState):
		return api.Errorf(api.CodeWrongState, "%s: %v", method, err)
	case errors.Is(err, workforce.ErrInvalid):
		return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// run answers agent/run when the whole task ends. The request stays open
// meanwhile; the read loop goes on (each call runs on its own goroutine).
// $/cancelRequest on it stops the task, which then answers -32800.
func (s *Server) run(ctx context.Context, p api.RunParams) (*api.RunResult, error) {
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "prompt" is required`)
	}
	return withService(api.MethodRun, s.Work, workError, func(e *workforce.Engine) (*api.RunResult, error) {
		return e.Run(ctx, p, s.Settings())
	})
}

func (s *Server) stop(_ context.Context, p api.StopParams) (*api.StopResult, error) {
	return withService(api.MethodStop, s.Work, workError, func(e *workforce.Engine) (*api.StopResult, error) {
		stopped, err := e.Stop(p.TaskID)
		return &api.StopResult{Stopped: stopped}, err
	})
}

// workDoneProgressCancel is LSP's window/workDoneProgress/cancel: the
// person cancelled the progress agentls showed for a task (its begin says
// cancellable), which stops that task as agent/stop does.
func (s *Server) workDoneProgressCancel(_ context.Context, raw json.RawMessage) {
	var p api.WorkDoneProgressCancelParams
	if err := rpc.DecodeParams(raw, &p); err != nil || p.Token == nil {
		s.log.Warn("window/workDoneProgress/cancel without a valid token", zap.Error(err))
		return
	}
	engine := s.engineIfAny()
	if engine == nil {
		return
	}
	if id := s.events.taskOf(*p.Token); id != "" {
		if stopped, _ := engine.Stop(id); stopped {
			s.log.Info("task stopped: its progress was cancelled", zap.String("task", id))
			return
		}
	}
	s.log.Debug("window/workDoneProgress/cancel for no running task", zap.String("token", p.Token.String()))
}

func (s *Server) addSubtask(_ context.Context, p api.AddSubtaskParams) (*api.AddSubtaskResult, error) {
	return withService(api.MethodAddSubtask, s.Work, workError, func(e *workforce.Engine) (*api.AddSubtaskResult, error) {
		id, err := e.AddSubtask(p)
		return &api.AddSubtaskResult{SubtaskID: id}, err
	})
}

func (s *Server) removeSubtask(_ context.Context, p api.SubtaskParams) (*api.Empty, error) {
	return withService(api.MethodRemoveSubtask, s.Work, workError, func(e *workforce.Engine) (*api.Empty, error) {
		return &api.Empty{}, e.RemoveSubtask(p)
	})
}

// undo answers agent/undo: the task's (or subtask's) changes taken back,
// through the editor (docs/EDITING.md, Undo).
func (s *Server) undo(ctx context.Context, p api.UndoParams) (*api.UndoResult, error) {
	if p.TaskID == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "taskId" is required`)
	}
	return withService(api.MethodUndo, s.Work, workError, func(e *workforce.Engine) (*api.UndoResult, error) {
		return e.Undo(ctx, p, s.Settings())
	})
}

func (s *Server) skipSubtask(_ context.Context, p api.SubtaskParams) (*api.Empty, error) {
	return withService(api.MethodSkipSubtask, s.Work, workError, func(e *workforce.Engine) (*api.Empty, error) {
		return &api.Empty{}, e.SkipSubtask(p)
	})
}
