package handlers

import (
	"context"

	"github.com/agentls/agentls/api"
)

// mcpServers answers agent/mcpServers {start?}: every configured server's
// state and tools; with start, the servers not started yet are started and
// waited for first.
func (s *Server) mcpServers(ctx context.Context, p api.MCPServersParams) (*api.MCPServersResult, error) {
	ws, err := s.workspace()
	if err != nil {
		return nil, err
	}
	m, err := ws.MCP()
	if err != nil {
		return nil, err
	}
	res := m.Status(ctx, p.Start)
	return &res, nil
}
