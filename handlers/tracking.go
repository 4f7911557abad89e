package handlers

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/tracking"
)

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
