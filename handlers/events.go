package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/workforce"
)

// events turns the tasks' domain events into the LSP face's notifications
// (docs/PROTOCOL.md §5): each update is an agent/taskUpdate, with its seq,
// state and subtasks; a warning is a window/logMessage; and a task with a
// work-done token (the client's workDoneToken, or agentls/<taskId>, which
// it creates with window/workDoneProgress/create when the client can) is
// mirrored on $/progress: begin at its start, a report with each Progress,
// end after its last update. The tasks hand it their events one at a time,
// in order, from their outboxes' goroutines.
type events struct {
	s *Server

	mu     sync.Mutex
	tokens map[string]*api.ProgressToken // the $/progress token of each running task that has one
}

func newEvents(s *Server) *events { return &events{s: s, tokens: map[string]*api.ProgressToken{}} }

func (x *events) Event(ctx context.Context, ev workforce.Event) error {
	n := x.s.notifier
	switch {
	case ev.Start != nil:
		return x.begin(ctx, ev.TaskID, ev.Start)
	case ev.Warning != "":
		return n.LogMessage(ctx, api.MessageTypeWarning, ev.Warning)
	case ev.Update == nil:
		return nil
	}
	err := n.TaskUpdate(ctx, &api.TaskUpdateParams{TaskID: ev.TaskID, SessionID: ev.SessionID, Seq: ev.Seq,
		State: ev.State, Subtasks: ev.Subtasks, Event: *ev.Update})
	tok := x.token(ev.TaskID)
	if tok == nil {
		return err
	}
	if p := ev.Progress; p != nil {
		err = errors.Join(err, n.Progress(ctx, &api.ProgressParams{Token: tok, Value: report(p, ev.Subtasks)}))
	}
	if ev.Final() {
		x.mu.Lock()
		delete(x.tokens, ev.TaskID)
		x.mu.Unlock()
		err = errors.Join(err, n.Progress(ctx, &api.ProgressParams{Token: tok, Value: progressEnd{Kind: "end", Message: oneLine(ev.Update.Summary, 200)}}))
	}
	return err
}

// begin finds the task's work-done token (the run's own, else one it
// creates when the client can) and sends $/progress begin on it; without
// one, the task is not mirrored. ctx is the task's: a stop ends the
// creation.
func (x *events) begin(ctx context.Context, taskID string, st *workforce.Start) error {
	tok := st.Token
	if tok == nil {
		ed := x.s.editor
		if !ed.Caps().WorkDoneProgress {
			return nil
		}
		tok = api.NewProgressToken("agentls/" + taskID)
		if err := ed.WorkDoneProgressCreate(ctx, tok); err != nil {
			if !errors.Is(err, api.ErrUnsupported) {
				x.s.log.Debug("no progress token", zap.String("task", taskID), zap.Error(err))
			}
			return nil
		}
	}
	x.mu.Lock()
	x.tokens[taskID] = tok
	x.mu.Unlock()
	return x.s.notifier.Progress(ctx, &api.ProgressParams{Token: tok,
		Value: progressBegin{Kind: "begin", Title: oneLine(st.Prompt, 100), Cancellable: true}})
}

func (x *events) token(taskID string) *api.ProgressToken {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.tokens[taskID]
}

// taskOf is the running task whose $/progress token is tok ("" for none).
func (x *events) taskOf(tok api.ProgressToken) string {
	x.mu.Lock()
	defer x.mu.Unlock()
	for id, t := range x.tokens {
		if *t == tok {
			return id
		}
	}
	return ""
}

// The values of $/progress (LSP's WorkDoneProgressBegin/Report/End), with
// percentage always sent.
type progressBegin struct {
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	Cancellable bool   `json:"cancellable"`
	Percentage  int    `json:"percentage"`
}

type progressReport struct {
	Kind       string `json:"kind"`
	Message    string `json:"message,omitempty"`
	Percentage int    `json:"percentage"`
}

type progressEnd struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// report says how far a task is: "done/total", then the running
// subtasks' contents, each on a line of its own.
func report(p *workforce.Progress, subs []api.Subtask) progressReport {
	msg := fmt.Sprintf("%d/%d", p.Done, p.Total)
	for _, id := range p.Running {
		for _, s := range subs {
			if s.ID == id {
				msg += " · " + oneLine(s.Content, 60)
			}
		}
	}
	pct := 0
	if p.Total > 0 {
		pct = p.Done * 100 / p.Total
	}
	return progressReport{Kind: "report", Message: msg, Percentage: pct}
}

// oneLine puts s on one line of at most max characters.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}
