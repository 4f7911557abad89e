package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/workforce"
)

// workService is the server's task engine, made on the first agent/run.
type workService struct {
	mu     sync.Mutex
	engine *workforce.Engine
	models *workforce.Models
	closed bool
}

// Work returns the task engine, making it on first use.
func (s *Server) Work() (*workforce.Engine, error) {
	w := &s.work
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.engine != nil {
		return w.engine, nil
	}
	if w.closed {
		return nil, fmt.Errorf("tasks: %w", rpc.ErrClosed)
	}
	ws, err := s.Tracking()
	if err != nil {
		return nil, err
	}
	env := s.opts.Getenv
	if env == nil {
		env = os.Getenv
	}
	for _, name := range clients.KeyVars {
		s.opts.Redactor.Add(name, env(name))
	}
	onRetry := func(ev clients.RetryEvent) { s.reportToUser("agentls: " + ev.Message()) }
	w.models = workforce.NewModels(env, s.Root(), s.opts.Record, onRetry, s.log, s.opts.Redactor)
	w.engine, err = workforce.New(workforce.Config{
		Root:     s.Root(),
		Editor:   s.editor,
		Notifier: s.notifier,
		Tracking: ws,
		Models:   w.models,
		Graph:    s.Graph(),
		Logger:   s.log,
		Redactor: s.opts.Redactor,
	})
	return w.engine, err
}

// closeWork stops every task and waits until each has ended and written its
// session; the recording, if any, is written a last time.
func (s *Server) closeWork() {
	w := &s.work
	w.mu.Lock()
	w.closed = true
	engine, models := w.engine, w.models
	w.mu.Unlock()
	if engine != nil {
		engine.Close()
	}
	if models != nil {
		if err := models.Close(); err != nil {
			s.log.Warn("recording not written", zap.Error(err))
			s.reportToUser("agentls: the recording could not be written: " + err.Error())
		}
	}
}

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
		return api.Errorf(api.CodeInvalidParams, "%v", err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

// run answers agent/run when the whole task ends. The request stays open
// meanwhile; the read loop goes on (each call runs on its own goroutine).
// $/cancelRequest on it stops the task, which then answers -32800.
func (s *Server) run(ctx context.Context, raw json.RawMessage) (any, error) {
	var p api.RunParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Prompt) == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "prompt" is required`)
	}
	engine, err := s.Work()
	if err != nil {
		return nil, err
	}
	res, err := engine.Run(ctx, p, s.Settings())
	if err != nil {
		return nil, workError(api.MethodRun, err)
	}
	return res, nil
}

func (s *Server) stop(_ context.Context, raw json.RawMessage) (any, error) {
	var p api.StopParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	engine, err := s.Work()
	if err != nil {
		return nil, err
	}
	stopped, err := engine.Stop(p.TaskID)
	if err != nil {
		return nil, workError(api.MethodStop, err)
	}
	return &api.StopResult{Stopped: stopped}, nil
}

func (s *Server) addSubtask(_ context.Context, raw json.RawMessage) (any, error) {
	var p api.AddSubtaskParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	engine, err := s.Work()
	if err != nil {
		return nil, err
	}
	id, err := engine.AddSubtask(p)
	if err != nil {
		return nil, workError(api.MethodAddSubtask, err)
	}
	return &api.AddSubtaskResult{SubtaskID: id}, nil
}

func (s *Server) removeSubtask(_ context.Context, raw json.RawMessage) (any, error) {
	var p api.SubtaskParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	engine, err := s.Work()
	if err != nil {
		return nil, err
	}
	if err := engine.RemoveSubtask(p); err != nil {
		return nil, workError(api.MethodRemoveSubtask, err)
	}
	return &api.Empty{}, nil
}

func (s *Server) skipSubtask(_ context.Context, raw json.RawMessage) (any, error) {
	var p api.SubtaskParams
	if err := rpc.DecodeParams(raw, &p); err != nil {
		return nil, err
	}
	engine, err := s.Work()
	if err != nil {
		return nil, err
	}
	if err := engine.SkipSubtask(p); err != nil {
		return nil, workError(api.MethodSkipSubtask, err)
	}
	return &api.Empty{}, nil
}
