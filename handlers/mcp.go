package handlers

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/mcp"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
)

// mcpService is the server's MCP client, made on first use after
// initialize; its servers follow the mcpServers setting.
type mcpService struct {
	mu     sync.Mutex
	m      *mcp.Manager
	closed bool
}

// MCP returns the MCP client, making it on first use. Its servers start on
// their first need (docs/MCP.md).
func (s *Server) MCP() (*mcp.Manager, error) {
	x := &s.mcp
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m != nil {
		return x.m, nil
	}
	if x.closed {
		return nil, fmt.Errorf("mcp: %w", rpc.ErrClosed)
	}
	s.learnKeys()
	root := s.Root()
	x.m = mcp.New(mcp.Options{Dir: mcpDir(root, s.log), Root: root, Redactor: s.opts.Redactor, Log: s.log, Version: s.opts.Version})
	st := s.Settings()
	x.m.Configure(st.MCPServers, st.Timeouts.MCPStart())
	return x.m, nil
}

// mcpDir is where the stdio MCP servers of root run when their entry names
// no cwd: "mcp" in the workspace's state directory (docs/PROTOCOL.md §6),
// never the workspace. Without a state directory it is "", and the MCP
// client makes a private temporary one.
func mcpDir(root string, log *zap.Logger) string {
	dir, err := tracking.WorkspaceStateDir(root)
	if err != nil {
		log.Warn("MCP servers run in a temporary directory", zap.Error(err))
		return ""
	}
	return filepath.Join(dir, "mcp")
}

// configureMCP gives the MCP client the servers of new settings, when it
// has been made (otherwise it reads them when it is).
func (s *Server) configureMCP(st api.Settings) {
	x := &s.mcp
	x.mu.Lock()
	m := x.m
	x.mu.Unlock()
	if m != nil {
		m.Configure(st.MCPServers, st.Timeouts.MCPStart())
	}
}

// closeMCP stops every MCP server; called after the tasks have ended.
func (s *Server) closeMCP() {
	x := &s.mcp
	x.mu.Lock()
	x.closed = true
	m := x.m
	x.mu.Unlock()
	if m != nil {
		m.Close()
	}
}

// mcpServers answers agent/mcpServers {start?}: every configured server's
// state and tools; with start, the servers not started yet are started and
// waited for first.
func (s *Server) mcpServers(ctx context.Context, p api.MCPServersParams) (*api.MCPServersResult, error) {
	m, err := s.MCP()
	if err != nil {
		return nil, err
	}
	res := m.Status(ctx, p.Start)
	return &res, nil
}
