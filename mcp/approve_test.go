package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

// ToolsApproved starts a server only once its Approve said yes, asks about
// each server once, and keeps a refusal: neither Tools nor Status's start
// starts a declined server.
func TestToolsApproved(t *testing.T) {
	_, yesURL := httpServer(t, &probe{hanging: make(chan struct{}, 1)})
	_, noURL := httpServer(t, &probe{hanging: make(chan struct{}, 1)})
	m := newManager(t, Options{}, map[string]api.MCPServer{"yes": {URL: yesURL}, "no": {URL: noURL}}, 10*time.Second)
	var asked []string
	approve := func(_ context.Context, name string, _ api.MCPServer) error {
		asked = append(asked, name)
		if name == "no" {
			return errors.New("the person said no")
		}
		return nil
	}
	tools := m.ToolsApproved(ctxT(t), approve)
	if findTool(tools, "mcp__yes__echo") == nil || findTool(tools, "mcp__no__echo") != nil {
		t.Fatalf("tools %v: want the approved server's alone", tools)
	}
	m.ToolsApproved(ctxT(t), approve)
	if strings.Join(asked, ",") != "no,yes" {
		t.Fatalf("asked %v: want each server once, in name order", asked)
	}
	st := m.Status(ctxT(t), true)
	for _, s := range st.Servers {
		switch s.Name {
		case "no":
			if s.State != api.MCPNotStarted || !strings.Contains(s.Error, "not started: the person said no") {
				t.Fatalf("the declined server: %+v", s)
			}
		case "yes":
			if s.State != api.MCPReady {
				t.Fatalf("the approved server: %+v", s)
			}
		}
	}
	t.Run("an approval cut short by the caller decides nothing", func(t *testing.T) {
		_, url := httpServer(t, &probe{hanging: make(chan struct{}, 1)})
		m := newManager(t, Options{}, map[string]api.MCPServer{"later": {URL: url}}, 10*time.Second)
		ctx, cancel := context.WithCancel(ctxT(t))
		cancel()
		m.ToolsApproved(ctx, func(ctx context.Context, _ string, _ api.MCPServer) error { return ctx.Err() })
		if tools := m.ToolsApproved(ctxT(t), func(context.Context, string, api.MCPServer) error { return nil }); findTool(tools, "mcp__later__echo") == nil {
			t.Fatalf("tools %v after a yes", tools)
		}
	})
}
