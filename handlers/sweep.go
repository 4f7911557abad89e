package handlers

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/tracking"
)

// sweepService removes, in the background, the temporary files an earlier
// agentls that crashed left in the workspace (fsutil.SweepTemps: only files
// named as agentls's own, older than this process, that no writer holds).
// It starts once initialize has named the root; the server's close cancels
// it and waits for it.
type sweepService struct {
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	closed bool
}

func (s *Server) startSweep(root string) {
	sw := &s.sweep
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.closed || sw.done != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	sw.cancel, sw.done = cancel, make(chan struct{})
	go func() {
		defer close(sw.done)
		removed, err := fsutil.SweepTemps(ctx, root, fsutil.SweepOptions{Legacy: tracking.RewrittenFiles()})
		if len(removed) > 0 {
			s.log.Info("removed temporary files left by a crash", zap.Strings("files", removed))
		}
		switch {
		case errors.Is(err, context.Canceled):
			s.log.Debug("leftover sweep cancelled", zap.Error(err))
		case err != nil:
			s.log.Warn("leftover sweep incomplete", zap.Error(err))
		}
	}()
}

// closeSweep cancels the sweep and waits for it.
func (s *Server) closeSweep() {
	sw := &s.sweep
	sw.mu.Lock()
	sw.closed = true
	cancel, done := sw.cancel, sw.done
	sw.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}
