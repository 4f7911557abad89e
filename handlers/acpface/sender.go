package acpface

import (
	"context"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
)

// sender sends one session's updates in the order they were pushed, from a
// goroutine it owns while it has some to send: whoever pushes (a worker
// reading a file, a task's outbox) never waits on the client. flush waits
// until what was pushed before it has been handed to the connection, which
// writes in that order: a question or a prompt's answer sent after a flush
// comes after those updates on the wire.
type sender struct {
	client    *acp.ClientConn
	sessionID string
	log       *zap.Logger

	mu      sync.Mutex
	queue   []acp.SessionUpdate
	running bool
	closed  bool            // after wait: pushes are dropped
	idle    []chan struct{} // flushes waiting for the queue to empty
	done    sync.WaitGroup  // the sending goroutine
}

func newSender(client *acp.ClientConn, sessionID string, log *zap.Logger) *sender {
	return &sender{client: client, sessionID: sessionID, log: log}
}

// push queues an update. It never blocks.
func (s *sender) push(u acp.SessionUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		s.log.Debug("session/update after the session closed, dropped", zap.String("kind", u.UpdateKind()))
		return
	}
	s.queue = append(s.queue, u)
	if !s.running {
		s.running = true
		s.done.Go(s.loop)
	}
}

func (s *sender) loop() {
	ctx := context.Background()
	for {
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		if len(batch) == 0 {
			s.running = false
			for _, ch := range s.idle {
				close(ch)
			}
			s.idle = nil
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		for _, u := range batch {
			// A send fails at once when the connection has ended, and
			// waits (bounded) only while the client is behind in its
			// reading by more than the stream's high-water mark.
			if err := s.client.SessionUpdate(ctx, &acp.SessionNotification{SessionID: s.sessionID, Update: u}); err != nil {
				s.log.Debug("session/update not sent", zap.String("kind", u.UpdateKind()), zap.Error(err))
			}
		}
	}
}

// flush waits until every update pushed before it has been sent, or ctx
// ends.
func (s *sender) flush(ctx context.Context) error {
	s.mu.Lock()
	if !s.running {
		s.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	s.idle = append(s.idle, ch)
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// close drops the updates pushed from now on and waits for the sending
// goroutine to send what was pushed before (after the connection closed,
// its sends fail at once).
func (s *sender) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.done.Wait()
}
