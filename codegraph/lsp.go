package codegraph

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
)

// LanguageServer is the editor's language server as the graph asks it:
// the reverse calls agent/references and agent/definition
// (docs/PROTOCOL.md §4), which the editor answers from gopls, pyright,
// rust-analyzer or whatever it runs for the file. *rpc.Editor satisfies
// it. A call fails with an error wrapping api.ErrUnsupported when the
// editor did not advertise it; a nil answer means the editor has no
// language server for the file.
type LanguageServer interface {
	References(ctx context.Context, p api.ReferenceParams) ([]api.Location, error)
	Definition(ctx context.Context, p api.TextDocumentPositionParams) ([]api.Location, error)
}

// The bounds of what one query asks of the language server: past them,
// the graph answers what is left (docs/PROTOCOL.md §3).
const (
	lspCalls     = 128              // calls a query makes at most
	lspParallel  = 4                // at once
	lspCallTime  = 5 * time.Second  // one call
	lspQueryTime = 20 * time.Second // every call of a query
	lspMaxLocs   = 20000            // locations read of one answer
)

// lspAsk is one question: a position in a file of the graph.
type lspAsk struct {
	path string
	lang Lang
	pos  Pos
}

// lspLoc is a location of an answer, in a file of the workspace.
type lspLoc struct {
	path       string
	start, end Pos
}

// lspAnswer is the answer to one question; ok is false when the server
// was not asked (the bounds, no server for the file) or could not answer.
type lspAnswer struct {
	locs []lspLoc
	ok   bool
}

// asker asks the language server the questions of one query, within the
// bounds above. A nil asker asks nothing. Safe for concurrent use.
type asker struct {
	ls    LanguageServer
	roots []string // the workspace root, as resolved and as configured
	log   *zap.Logger
	until time.Time

	mu     sync.Mutex
	left   int
	off    bool             // a call failed: the rest of the query asks nothing
	silent map[silence]bool // what the server had nothing for
	tried  map[silence]bool // what the server was asked once already
}

// silence is a question the server answered null for a language: no more
// of it are asked in the query.
type silence struct {
	refs bool
	lang Lang
}

// newAsker returns the asker of one query, nil when the graph has no
// language server to ask.
func (g *Graph) newAsker() *asker {
	if g.cfg.Server == nil {
		return nil
	}
	roots := []string{g.Root()}
	if abs, err := filepath.Abs(g.cfg.Root); err == nil && abs != g.Root() {
		roots = append(roots, abs)
	}
	return &asker{ls: g.cfg.Server, roots: roots, log: g.log, until: time.Now().Add(lspQueryTime),
		left: lspCalls, silent: map[silence]bool{}, tried: map[silence]bool{}}
}

// references asks where the definitions at qs are referred to
// (agent/references, the declarations included: a server that knows the
// name names at least its declaration, so an empty answer is no answer).
func (a *asker) references(ctx context.Context, qs []lspAsk) []lspAnswer {
	return a.ask(ctx, true, qs)
}

// definitions asks what the names at qs are defined as (agent/definition).
func (a *asker) definitions(ctx context.Context, qs []lspAsk) []lspAnswer {
	return a.ask(ctx, false, qs)
}

// take reserves one call for a question on a file of lang, or says no.
func (a *asker) take(refs bool, lang Lang) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.off || a.left <= 0 || a.silent[silence{refs, lang}] || !time.Now().Before(a.until) {
		return false
	}
	a.left--
	return true
}

// ask asks the questions, the first of each kind (method, language) in
// the query alone, so that a server without an answer for the language
// is asked no more, then the others lspParallel at a time.
func (a *asker) ask(ctx context.Context, refs bool, qs []lspAsk) []lspAnswer {
	out := make([]lspAnswer, len(qs))
	if a == nil || len(qs) == 0 {
		return out
	}
	done := make([]bool, len(qs))
	for i, q := range qs {
		k := silence{refs, q.lang}
		a.mu.Lock()
		first := !a.tried[k]
		a.tried[k] = true
		a.mu.Unlock()
		if !first {
			continue
		}
		done[i] = true
		if ctx.Err() == nil && a.take(refs, q.lang) {
			out[i] = a.one(ctx, refs, q)
		}
	}
	p := pool.New().WithMaxGoroutines(lspParallel)
	for i, q := range qs {
		if done[i] || ctx.Err() != nil || !a.take(refs, q.lang) {
			continue
		}
		p.Go(func() { out[i] = a.one(ctx, refs, q) })
	}
	p.Wait()
	return out
}

// one asks one question.
func (a *asker) one(ctx context.Context, refs bool, q lspAsk) lspAnswer {
	deadline := time.Now().Add(lspCallTime)
	if a.until.Before(deadline) {
		deadline = a.until
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	uri := fileuri.FromPath(filepath.Join(a.roots[0], filepath.FromSlash(q.path)))
	at := api.TextDocumentPositionParams{TextDocument: api.TextDocumentIdentifier{URI: uri},
		Position: api.Position{Line: q.pos.Line, Character: q.pos.Col}}
	var locs []api.Location
	var err error
	method := api.MethodDefinition
	if refs {
		method = api.MethodReferences
		locs, err = a.ls.References(ctx, api.ReferenceParams{TextDocument: at.TextDocument, Position: at.Position,
			Context: api.ReferenceContext{IncludeDeclaration: true}})
	} else {
		locs, err = a.ls.Definition(ctx, at)
	}
	switch {
	case err != nil:
		// No capability, a timeout, an error: the graph answers the
		// rest of the query.
		a.mu.Lock()
		a.off = true
		a.mu.Unlock()
		if !errors.Is(err, api.ErrUnsupported) {
			a.log.Info("code graph: the editor's language server did not answer; the graph answers instead",
				zap.String("method", method), zap.String("path", q.path), zap.Error(err))
		}
		return lspAnswer{}
	case locs == nil || (refs && len(locs) == 0):
		// No language server for the file's language.
		a.mu.Lock()
		a.silent[silence{refs, q.lang}] = true
		a.mu.Unlock()
		return lspAnswer{}
	case len(locs) == 0:
		return lspAnswer{}
	}
	ans := lspAnswer{ok: true, locs: []lspLoc{}}
	for i, l := range locs {
		if i == lspMaxLocs {
			break
		}
		rel, ok := a.rel(l.URI)
		if !ok {
			continue // outside the workspace: a library, the standard library
		}
		ans.locs = append(ans.locs, lspLoc{path: rel,
			start: Pos{Line: l.Range.Start.Line, Col: l.Range.Start.Character},
			end:   Pos{Line: l.Range.End.Line, Col: l.Range.End.Character}})
	}
	return ans
}

// rel is the workspace-relative path of a file:// URI, when it names a
// file inside the workspace.
func (a *asker) rel(uri string) (string, bool) {
	p, err := fileuri.ToPath(uri)
	if err != nil {
		return "", false
	}
	for _, root := range a.roots {
		r, err := filepath.Rel(root, p)
		if err != nil || r == "." || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || filepath.IsAbs(r) {
			continue
		}
		return filepath.ToSlash(r), true
	}
	return "", false
}
