package workforce

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/codegraph"
)

// repoMapWait bounds how long a prompt waits for the code graph's first
// build: a huge workspace plans without its map rather than late.
const repoMapWait = 10 * time.Second

// repoMap is the repo map for a prompt (docs/WORKFORCE.md): the
// workspace's most relevant definitions within settings.repoMapTokens,
// ranked by the code graph, the words of text and the task's heat. "" when
// there is no graph, the map is turned off, or the graph is not built in
// time.
func (t *task) repoMap(text string) string {
	g := t.e.cfg.Graph
	if g == nil || t.settings.RepoMapTokens <= 0 {
		return ""
	}
	heat := map[string]float64{}
	if snap, err := t.e.cfg.Tracking.HeatSnapshot(api.HeatSnapshotParams{TaskID: t.id}); err == nil {
		for _, n := range snap.Nodes {
			heat[n.Path] = n.Heat
		}
	}
	ctx, cancel := context.WithTimeout(t.ctx, repoMapWait)
	defer cancel()
	m, err := g.RepoMap(ctx, codegraph.RepoMapOptions{Tokens: t.settings.RepoMapTokens, Prompt: text, Heat: heat})
	if err != nil {
		t.log.Info("repo map left out of the prompt", zap.Error(err))
		return ""
	}
	return m
}

// graphChanged tells the code graph of a change applied (editing's
// Changed hook, for a task's changes and an undo's): the text that landed,
// saved or not.
func (e *Engine) graphChanged(rel, content string, deleted bool) {
	g := e.cfg.Graph
	if g == nil {
		return
	}
	if deleted {
		g.Changed(rel)
		return
	}
	g.SetContent(rel, content)
}
