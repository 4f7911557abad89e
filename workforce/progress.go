package workforce

import (
	"context"
	"errors"

	"github.com/agentls/agentls/api"
	"go.uber.org/zap"
)

// progress mirrors a task on $/progress (docs/PROTOCOL.md §5): begin with the
// prompt, report with the running subtasks and done/total, end with the
// summary. Without a token (none given, and the client cannot create one)
// it does nothing.
type progress struct {
	out   *outbox
	token *api.ProgressToken
	log   *zap.Logger
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

func newProgress(ctx context.Context, ed Editor, out *outbox, token *api.ProgressToken, taskID string, log *zap.Logger) *progress {
	p := &progress{out: out, log: log}
	if token != nil {
		p.token = token
		return p
	}
	if !ed.Caps().WorkDoneProgress {
		return p
	}
	tok := api.NewProgressToken("agentls/" + taskID)
	if err := ed.WorkDoneProgressCreate(ctx, tok); err != nil {
		if !errors.Is(err, api.ErrUnsupported) {
			log.Debug("no progress token", zap.Error(err))
		}
		return p
	}
	p.token = tok
	return p
}

func (p *progress) send(v any) {
	if p.token == nil {
		return
	}
	p.out.push(note{progress: &api.ProgressParams{Token: p.token, Value: v}})
}

func (p *progress) begin(prompt string) {
	p.send(progressBegin{Kind: "begin", Title: oneLine(prompt, 100), Cancellable: true})
}

// report sends a report. It is called from several goroutines.
func (p *progress) report(msg string, pct int) {
	p.send(progressReport{Kind: "report", Message: msg, Percentage: pct})
}

func (p *progress) end(summary string) {
	p.send(progressEnd{Kind: "end", Message: oneLine(summary, 200)})
}
