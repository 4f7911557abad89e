package editing

import (
	"context"
	"fmt"
	"path"

	"github.com/agentls/agentls/api"
)

// Walker is the workspace as readers that are not agents see it (the code
// graph): the same walk as list_files and search_files, judged by the same
// rules (containment, symlinks resolved, .git, the zones, .gitignore), with
// nothing to report to an observer and no editor behind it. A Walker is
// safe for concurrent use; each call judges afresh, so a changed
// .gitignore or zone is seen by the next call.
type Walker struct {
	w *Workspace
}

// NewWalker returns the Walker of the workspace at root with these zones.
func NewWalker(root string, zones api.Zones) (*Walker, error) {
	w, err := New(Config{Root: root, Zones: zones, Editor: noEditor{}})
	if err != nil {
		return nil, err
	}
	return &Walker{w: w}, nil
}

// Root returns the workspace root (absolute, symlinks resolved).
func (wk *Walker) Root() string { return wk.w.root }

// Walk calls fn with every regular file matching pattern (a doublestar
// glob, workspace-relative; "**" is every file) that an agent may see: rel
// is the name the walk reached it by, abs where it really is. An error
// from fn ends the walk and is returned; so is ctx's end.
func (wk *Walker) Walk(ctx context.Context, pattern string, fn func(rel, abs string) error) error {
	return wk.w.walk(ctx, pattern, func(rel string, real Path) error { return fn(rel, real.Abs) })
}

// Visible reports whether the walk would reach the file rel
// (workspace-relative, "/" separators) by that name, and where it really
// is. A name that does not exist, is not a regular file, or is hidden by
// any rule of the walk is not visible.
func (wk *Walker) Visible(rel string) (abs string, ok bool) {
	rel = path.Clean(rel)
	if rel == "." || rel == "" {
		return "", false
	}
	f := newWalkFS(wk.w)
	e := f.lookup(rel)
	if !e.visible || !e.regular {
		return "", false
	}
	return e.real.Abs, true
}

// noEditor is the editor of a Walker: it has none, and walks never call it.
type noEditor struct{}

var errNoEditor = fmt.Errorf("a walker has no editor: %w", api.ErrUnsupported)

func (noEditor) Caps() api.Caps { return api.Caps{} }

func (noEditor) ReadFile(context.Context, string, string) (string, error) {
	return "", errNoEditor
}

func (noEditor) ApplyEdit(context.Context, api.ApplyWorkspaceEditParams, api.Wait) (api.ApplyWorkspaceEditResult, error) {
	return api.ApplyWorkspaceEditResult{}, errNoEditor
}

func (noEditor) ShowMessageRequest(context.Context, api.ShowMessageRequestParams) (*api.MessageActionItem, error) {
	return nil, errNoEditor
}
