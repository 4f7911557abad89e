package handlers

import (
	"context"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// enginesList answers agent/engines {probe?}: every engine, whether it can
// take a subtask and why not.
func (s *Server) enginesList(ctx context.Context, p api.EnginesParams) (*api.EnginesResult, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	list := ws.Engines().List(ctx, p.Probe)
	s.log.Debug("engines listed", zap.Int("engines", len(list)), zap.Bool("probe", p.Probe))
	return &api.EnginesResult{Engines: list}, nil
}
