package handlers

import (
	"context"
	"encoding/json"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// maxDiagnosticsURIs bounds what one agent/didChangeDiagnostics is read
// of: a language server's first publish of a big workspace may name many
// files, none of which a worker waits on yet.
const maxDiagnosticsURIs = 10000

// didChangeDiagnostics hands agent/didChangeDiagnostics to the task
// engine, whose workers wait on the editor's diagnostics of their edits
// (docs/PROTOCOL.md §3). Before the first task there is no engine and no
// one to tell.
func (s *Server) didChangeDiagnostics(_ context.Context, raw json.RawMessage) {
	var p api.DidChangeDiagnosticsParams
	if err := json.Unmarshal(raw, &p); err != nil {
		s.log.Debug("agent/didChangeDiagnostics ignored: its params are not {uris: [string]}", zap.Error(err))
		return
	}
	if len(p.URIs) > maxDiagnosticsURIs {
		p.URIs = p.URIs[:maxDiagnosticsURIs]
	}
	if e := s.engineIfAny(); e != nil {
		e.DiagnosticsChanged(p.URIs)
	}
}
