package headless

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/rpc"
)

// clientHandler serves the server's reverse calls and records its
// notifications.
type clientHandler Editor

func (h *clientHandler) Gate(*rpc.Request) error { return nil }

func (h *clientHandler) HandleNotification(_ context.Context, req *rpc.Request) {
	e := (*Editor)(h)
	e.mu.Lock()
	n := Notification{Method: req.Method(), Params: append(json.RawMessage(nil), req.Params()...), Seq: len(e.notes) + 1}
	e.notes = append(e.notes, n)
	close(e.noteCond)
	e.noteCond = make(chan struct{})
	e.mu.Unlock()
}

func (h *clientHandler) HandleCall(ctx context.Context, req *rpc.Request) (any, error) {
	e := (*Editor)(h)
	e.mu.Lock()
	e.calls = append(e.calls, ReverseCall{Method: req.Method(), Params: append(json.RawMessage(nil), req.Params()...)})
	override := e.overrides[req.Method()]
	e.mu.Unlock()
	if override != nil {
		return override(ctx, req.Params())
	}
	switch req.Method() {
	case api.MethodReadFile:
		var p api.ReadFileParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		return e.readFile(p)
	case api.MethodApplyEdit:
		var p api.ApplyWorkspaceEditParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		return e.applyEdit(ctx, p)
	case api.MethodRunCommand:
		var p api.RunCommandParams
		if err := rpc.DecodeParams(req.Params(), &p); err != nil {
			return nil, err
		}
		return RunShell(ctx, p), nil
	case api.MethodShowMessageRequest, api.MethodAsk:
		// Nobody is at this editor: a question or an approval is dismissed
		// unless a test scripted an answer with Handle.
		if req.Method() == api.MethodAsk {
			return api.AskResult{Answer: nil}, nil
		}
		return nil, nil
	case api.MethodWorkDoneProgressCreate:
		return nil, nil
	case api.MethodReferences, api.MethodDefinition:
		// No language server serves any document here.
		return nil, nil
	case api.MethodDiagnostics:
		// Nor does any give diagnostics.
		return api.DiagnosticsResult{Items: []api.DocumentDiagnostics{}}, nil
	}
	return nil, api.Errorf(api.CodeMethodNotFound, "method not found: %s", req.Method())
}

func (e *Editor) readFile(p api.ReadFileParams) (any, error) {
	path, err := e.pathOf(p.URI, p.Path)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
	}
	text, err := e.ws.Read(path)
	if err != nil {
		return nil, api.Errorf(api.CodeInvalidParams, "cannot read %s: %v", p.Path, err)
	}
	return api.ReadFileResult{Content: text}, nil
}

// pathOf resolves a reverse call's file: the uri when given, else the
// workspace-relative path.
func (e *Editor) pathOf(uri, rel string) (string, error) {
	if uri != "" {
		return fileuri.ToPath(uri)
	}
	if rel == "" {
		return "", fmt.Errorf("neither uri nor path given")
	}
	return e.abs(rel), nil
}
