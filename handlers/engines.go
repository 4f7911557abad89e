package handlers

import (
	"context"
	"path/filepath"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines"
)

// enginesService is the server's engines (docs/ENGINES.md), made on first
// use after initialize; they follow the engines setting.
type enginesService struct {
	mu sync.Mutex
	m  *engines.Manager
}

// Engines returns the engines, making them on first use.
func (s *Server) Engines() *engines.Manager {
	x := &s.engines
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		s.learnKeys()
		x.m = engines.NewManager(engines.Options{
			Lookup:  engines.Lookup{Getenv: s.getenv()},
			Log:     s.log,
			Version: s.opts.Version,
		})
		x.m.Configure(s.Settings().Engines)
	}
	return x.m
}

// configureEngines gives the engines new settings, when they have been
// made (otherwise they read them when they are).
func (s *Server) configureEngines(st api.Settings) {
	x := &s.engines
	x.mu.Lock()
	m := x.m
	x.mu.Unlock()
	if m != nil {
		m.Configure(st.Engines)
	}
}

// engineWorkDir is where isolated engines get their worktrees.
func engineWorkDir(stateDir string) string { return filepath.Join(stateDir, "engines") }

// enginesList answers agent/engines {probe?}: every engine, whether it can
// take a subtask and why not.
func (s *Server) enginesList(ctx context.Context, p api.EnginesParams) (*api.EnginesResult, error) {
	list := s.Engines().List(ctx, p.Probe)
	s.log.Debug("engines listed", zap.Int("engines", len(list)), zap.Bool("probe", p.Probe))
	return &api.EnginesResult{Engines: list}, nil
}
