package handlers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
)

// trackingService is the server's tracking.Workspace, opened on first use
// (after initialize, when the root is known), with the heat ticker it owns.
type trackingService struct {
	mu     sync.Mutex
	ws     *tracking.Workspace
	err    error
	cancel context.CancelFunc
	done   chan struct{}
	closed bool
}

// Tracking returns the workspace's tracking (heat map, intents, trace,
// sessions, usage), opening it on first use. It starts the heat ticker,
// which sends agent/heatUpdate until the server closes.
func (s *Server) Tracking() (*tracking.Workspace, error) {
	t := &s.track
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ws != nil || t.err != nil {
		return t.ws, t.err
	}
	if t.closed {
		return nil, fmt.Errorf("tracking: %w", rpc.ErrClosed)
	}
	ws, err := tracking.Open(tracking.Config{
		Root:     s.Root(),
		Trace:    func() *bool { return s.Settings().Trace },
		Heat:     s.notifier,
		Report:   s.reportToUser,
		Logger:   s.log,
		Redactor: s.opts.Redactor,
	})
	if err != nil {
		t.err = err
		s.log.Error("tracking unavailable", zap.Error(err))
		return nil, err
	}
	ws.Heat.SetTuning(s.Settings().Heat)
	ctx, cancel := context.WithCancel(context.Background())
	t.ws, t.cancel, t.done = ws, cancel, make(chan struct{})
	go func() {
		defer close(t.done)
		_ = ws.Run(ctx)
	}()
	return ws, nil
}

// tuneHeat applies the heat setting to the heat map, when the tracking is
// open (it takes the settings in force when it opens).
func (s *Server) tuneHeat(h api.HeatSettings) {
	t := &s.track
	t.mu.Lock()
	ws := t.ws
	t.mu.Unlock()
	if ws != nil {
		ws.Heat.SetTuning(h)
	}
}

// closeTracking stops the heat ticker, waits for it, and closes the
// workspace's tracking: the tasks still going are marked interrupted and
// the session store's owner lock is released, so a sidecar of another
// editor on the same workspace sees them ended.
func (s *Server) closeTracking() {
	t := &s.track
	t.mu.Lock()
	t.closed = true
	ws, cancel, done := t.ws, t.cancel, t.done
	t.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if ws != nil {
		if err := ws.Close(); err != nil {
			s.log.Warn("tracking not closed", zap.Error(err))
		}
	}
}

// reportWait bounds how long a warning waits for room when the editor has
// not read the last 8 MiB agentls sent it: the callers (a model client's
// retry, the session store) must not block.
const reportWait = time.Second

// reportToUser shows a warning the person should see (window/logMessage).
func (s *Server) reportToUser(msg string) {
	ctx, cancel := context.WithTimeout(context.Background(), reportWait)
	defer cancel()
	msg = s.opts.Redactor.String(msg)
	err := s.notifier.LogMessage(ctx, api.MessageTypeWarning, msg)
	switch {
	case err == nil:
	case errors.Is(err, rpc.ErrClosed):
		s.log.Debug("logMessage not sent", zap.Error(err))
	default:
		// In the log at least.
		s.log.Warn("warning not shown: the editor is not reading", zap.String("warning", msg), zap.Error(err))
	}
}

// trackingError turns tracking's sentinel errors into the codes of
// docs/PROTOCOL.md §7.
func trackingError(method string, err error) error {
	switch {
	case errors.Is(err, tracking.ErrUnknownSession), errors.Is(err, tracking.ErrUnknownTask):
		return api.Errorf(api.CodeUnknownTask, "%s: %v", method, err)
	case errors.Is(err, tracking.ErrSessionBusy):
		return api.Errorf(api.CodeWrongState, "%s: %v", method, err)
	case errors.Is(err, tracking.ErrInvalidParams):
		return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	}
	return fmt.Errorf("%s: %w", method, err)
}

func (s *Server) heatSnapshot(_ context.Context, p api.HeatSnapshotParams) (api.HeatSnapshot, error) {
	return withService(api.MethodHeatSnapshot, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.HeatSnapshot, error) {
		return ws.HeatSnapshot(p)
	})
}

func (s *Server) trace(_ context.Context, p api.TraceParams) (api.TraceResult, error) {
	if p.Path == "" {
		return api.TraceResult{}, api.Errorf(api.CodeInvalidParams, `invalid params: "path" is required (workspace-relative, / separators)`)
	}
	return withService(api.MethodTrace, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.TraceResult, error) {
		return ws.TraceEntries(p)
	})
}

func (s *Server) sessions(_ context.Context, _ struct{}) (api.SessionsResult, error) {
	return withService(api.MethodSessions, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.SessionsResult, error) {
		return ws.ListSessions()
	})
}

func (s *Server) session(_ context.Context, p api.SessionParams) (api.SessionResult, error) {
	if err := requireSession(p); err != nil {
		return api.SessionResult{}, err
	}
	return withService(api.MethodSession, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.SessionResult, error) {
		return ws.Session(p)
	})
}

func (s *Server) deleteSession(_ context.Context, p api.SessionParams) (api.Empty, error) {
	if err := requireSession(p); err != nil {
		return api.Empty{}, err
	}
	return withService(api.MethodDeleteSession, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.Empty, error) {
		return ws.DeleteSession(p)
	})
}

// intents answers agent/intents. The file is read as the gate reads it: a
// broken file is a result that says why, not an error.
func (s *Server) intents(_ context.Context, _ struct{}) (api.IntentsResult, error) {
	return withService(api.MethodIntents, s.Tracking, trackingError, func(ws *tracking.Workspace) (api.IntentsResult, error) {
		return ws.IntentList(), nil
	})
}

func requireSession(p api.SessionParams) error {
	if p.SessionID == "" {
		return api.Errorf(api.CodeInvalidParams, `invalid params: "sessionId" is required`)
	}
	return nil
}
