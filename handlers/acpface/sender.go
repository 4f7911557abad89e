package acpface

import (
	"context"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/internal/queue"
)

// sender sends one session's updates in the order they were pushed, from a
// goroutine it owns while it has some to send (package queue): whoever
// pushes (a worker reading a file, a task's events) never waits on the
// client. flush waits until what was pushed before it has been handed to
// the connection, which writes in that order: a question or a prompt's
// answer sent after a flush comes after those updates on the wire. A bug
// in the sending of one update is logged and the next goes on.
type sender struct {
	client    *acp.ClientConn
	sessionID string
	log       *zap.Logger
	q         *queue.Queue[acp.SessionUpdate]
}

func newSender(client *acp.ClientConn, sessionID string, log *zap.Logger) *sender {
	s := &sender{client: client, sessionID: sessionID, log: log}
	s.q = queue.New(s.send, queue.Options{Name: "session updates", Log: log})
	return s
}

// push queues an update. It never blocks. After close it is dropped.
func (s *sender) push(u acp.SessionUpdate) {
	if !s.q.Push(u) {
		s.log.Debug("session/update dropped: the session is closed or its client far behind", zap.String("kind", u.UpdateKind()))
	}
}

func (s *sender) send(u acp.SessionUpdate) {
	// A send fails at once when the connection has ended, and waits
	// (bounded) only while the client is behind in its reading by more
	// than the stream's high-water mark.
	if err := s.client.SessionUpdate(context.Background(), &acp.SessionNotification{SessionID: s.sessionID, Update: u}); err != nil {
		s.log.Debug("session/update not sent", zap.String("kind", u.UpdateKind()), zap.Error(err))
	}
}

// flush waits until every update pushed before it has been sent, or ctx
// ends.
func (s *sender) flush(ctx context.Context) error { return s.q.Flush(ctx) }

// close drops the updates pushed from now on and waits until what was
// pushed before has been sent (after the connection closed, its sends fail
// at once).
func (s *sender) close() { s.q.Close() }
