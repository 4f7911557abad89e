package acpface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/workforce"
)

// promptMeta is the _meta.agentls of a prompt's answer (docs/ACP.md).
type promptMeta struct {
	TaskID   string         `json:"taskId,omitempty"`
	State    string         `json:"state,omitempty"`
	Subtasks []api.Subtask  `json:"subtasks,omitempty"`
	Changes  []api.Change   `json:"changes,omitempty"`
	Usage    *api.Usage     `json:"usage,omitempty"`
	Heat     []api.HeatNode `json:"heat,omitempty"`
	Command  string         `json:"command,omitempty"`
}

// heatTop is how many of the hottest files a prompt's answer lists.
const heatTop = 10

// Prompt answers session/prompt: a slash command is answered at once;
// anything else is one workforce task, whose updates are the turn's, and
// whose end is the answer (end_turn, or cancelled when session/cancel
// stopped it). One prompt runs at a time in a session.
func (s *Server) Prompt(ctx context.Context, p *acp.PromptRequest) (*acp.PromptResponse, error) {
	se, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	text, atts, err := se.promptText(p.Prompt)
	if err != nil {
		return nil, err
	}
	if name, arg, ok := command(text); ok {
		return se.command(ctx, name, arg)
	}
	if strings.TrimSpace(text) == "" {
		switch len(atts) {
		case 0:
			return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "prompt" holds no text and no image`)
		case 1:
			// A pasted screenshot, nothing typed: the image is the request.
			text = "See the attached image."
		default:
			text = "See the attached images."
		}
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	t := &turn{cancel: cancel, taskID: newSessionID(), done: make(chan struct{})}
	defer close(t.done)
	se.mu.Lock()
	switch {
	case se.closed:
		se.mu.Unlock()
		return nil, api.Errorf(acp.CodeResourceNotFound, "session %q was closed", se.id)
	case se.turn != nil:
		se.mu.Unlock()
		return nil, api.Errorf(api.CodeInvalidRequest, "session %q is already answering a prompt: session/cancel it first", se.id)
	}
	se.turn = t
	settings, intent, stored, forced := se.settings, se.intent, se.stored, se.forced
	se.mu.Unlock()
	defer func() {
		se.mu.Lock()
		se.turn = nil
		se.mu.Unlock()
	}()
	if err := s.checkModel(settings.Model, se.root); err != nil {
		return nil, err
	}
	if !stored {
		if err := se.ws.track.Sessions.Ensure(se.id); err != nil {
			return nil, fmt.Errorf("recording the session: %w", err)
		}
		se.mu.Lock()
		se.stored = true
		se.mu.Unlock()
	}
	se.log.Info("session/prompt", zap.Int("blocks", len(p.Prompt)), zap.String("mode", settings.EditMode), zap.String("engine", forced))
	res, err := se.engine.Run(runCtx, api.RunParams{Prompt: text, TaskID: t.taskID, SessionID: se.id, IntentID: intent, Attachments: atts, Engine: forced}, settings)
	if res == nil {
		return nil, promptError(err)
	}
	// Every event of the task was handed to the session's events before Run
	// returned: the answer leaves after the turn's updates.
	flush, fcancel := context.WithTimeout(context.WithoutCancel(ctx), rpc.DrainTimeout)
	_ = se.out.flush(flush)
	fcancel()
	m := promptMeta{TaskID: res.TaskID, State: res.State, Subtasks: res.Subtasks, Changes: res.Changes, Usage: &res.Usage}
	if snap, err := se.ws.track.HeatSnapshot(api.HeatSnapshotParams{}); err == nil {
		nodes := snap.Nodes
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Heat > nodes[j].Heat })
		m.Heat = nodes[:min(heatTop, len(nodes))]
	}
	meta := acp.MetaOf(acp.MetaKey, m)
	switch res.State {
	case api.TaskFailed:
		// The turn could not be completed, and no stop reason of the
		// schema says so (refusal is the model declining, max_* a bound):
		// the prompt fails, the task's summary its message, its details in
		// the error's data as a success's _meta would hold them.
		se.log.Info("prompt failed", zap.String("task", res.TaskID))
		return nil, failedTurn(res.Summary, meta)
	case api.TaskStopped:
		se.log.Info("prompt answered", zap.String("task", res.TaskID), zap.String("state", res.State), zap.String("stopReason", acp.StopCancelled))
		return &acp.PromptResponse{StopReason: acp.StopCancelled, Meta: meta}, nil
	}
	se.log.Info("prompt answered", zap.String("task", res.TaskID), zap.String("state", res.State), zap.String("stopReason", acp.StopEndTurn))
	return &acp.PromptResponse{StopReason: acp.StopEndTurn, Meta: meta}, nil
}

// failedTurn is the error a prompt whose task failed answers: -32603, the
// task's summary as its message, {"_meta": meta} as its data.
func failedTurn(summary string, meta acp.Meta) error {
	e := api.Errorf(api.CodeInternalError, "%s", summary)
	if b, err := json.Marshal(map[string]acp.Meta{"_meta": meta}); err == nil {
		raw := json.RawMessage(b)
		e.Data = &raw
	}
	return e
}

// promptError is the error of a prompt whose task could not start.
func promptError(err error) error {
	switch {
	case errors.Is(err, workforce.ErrInvalid):
		return api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	case errors.Is(err, workforce.ErrUnknownSession):
		return api.Errorf(acp.CodeResourceNotFound, "%v", err)
	}
	return modelError(err)
}

// Cancel answers session/cancel: the session's prompt stops (every model
// call, question and command of its task), and answers cancelled.
func (s *Server) Cancel(_ context.Context, p *acp.CancelNotification) error {
	se, err := s.session(p.SessionID)
	if err != nil {
		return err
	}
	se.mu.Lock()
	t := se.turn
	se.mu.Unlock()
	if t != nil {
		t.cancel(errCancelled)
		se.log.Info("session/cancel")
	}
	return nil
}

// promptText turns a prompt's blocks into the task's prompt and its
// attachments: text as it is, a resource link as a mention of the file
// (workspace-relative when it is in the workspace), an embedded resource as
// a mention whose text is attached after the prompt, an image as an image
// attachment (its data, or the file its uri names), checked with the run's
// other attachments (docs/PROTOCOL.md §3, Attachments). Audio is refused.
func (se *session) promptText(blocks []acp.ContentBlock) (string, []api.Attachment, error) {
	var b, attached strings.Builder
	var atts []api.Attachment
	for i, c := range blocks {
		switch c.Type {
		case acp.BlockText:
			b.WriteString(c.Text)
		case acp.BlockResourceLink:
			b.WriteString(se.mention(c.URI, c.Name))
		case acp.BlockResource:
			if c.Resource == nil {
				return "", nil, api.Errorf(api.CodeInvalidParams, "invalid params: prompt[%d]: a resource block needs \"resource\"", i)
			}
			name := se.mention(c.Resource.URI, "")
			b.WriteString(name)
			switch {
			case c.Resource.Text != nil:
				fmt.Fprintf(&attached, "\n\n%s, as the user attached it:\n```\n%s\n```", name, strings.TrimSuffix(*c.Resource.Text, "\n"))
			case c.Resource.Blob != nil:
				fmt.Fprintf(&attached, "\n\n%s is a binary file the user attached (%s); it is not shown.", name, orUnknown(c.Resource.MimeType))
			}
		case acp.BlockImage:
			switch {
			case c.Data != "":
				atts = append(atts, api.Attachment{Type: api.AttachImage, Data: c.Data, MimeType: c.MimeType, Name: imageName(c.URI, len(atts))})
			case c.URI != "":
				atts = append(atts, api.Attachment{Type: api.AttachImage, URI: c.URI})
			default:
				return "", nil, api.Errorf(api.CodeInvalidParams, "invalid params: prompt[%d]: an image block needs \"data\" or \"uri\"", i)
			}
		case acp.BlockAudio:
			return "", nil, api.Errorf(api.CodeInvalidParams, "invalid params: prompt[%d]: agentls does not take audio (its promptCapabilities do not offer it): say it in words", i)
		default:
			return "", nil, api.Errorf(api.CodeInvalidParams, "invalid params: prompt[%d]: unknown content block type %q", i, c.Type)
		}
	}
	return b.String() + attached.String(), atts, nil
}

// imageName is what the model and the session call an image of a prompt:
// the last part of its uri, else "image N".
func imageName(uri string, n int) string {
	if uri != "" {
		if i := strings.LastIndexAny(uri, "/\\"); i >= 0 && i+1 < len(uri) {
			return uri[i+1:]
		}
	}
	return fmt.Sprintf("image %d", n+1)
}

func orUnknown(s string) string {
	if s == "" {
		return "type unknown"
	}
	return s
}

// mention names a resource in a prompt: @path for a file in the
// workspace, else its URI.
func (se *session) mention(uri, name string) string {
	if p, err := fileuri.ToPath(uri); err == nil {
		if rp, err := se.dir.Resolve(p); err == nil {
			return "@" + rp.Rel
		}
		return p
	}
	if uri == "" {
		return name
	}
	return uri
}
