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

// WalkDirs calls fn with the directory rel (workspace-relative, "." for
// the root) and every directory under it that the walk would enter, by
// the name the walk reaches it and where it really is, parents first. A
// directory reached through a symlink is not entered (its target is
// walked by its own name when it is in the workspace). An error from fn
// ends the walk and is returned; so is ctx's end. A rel the walk would not
// enter calls fn for nothing.
func (wk *Walker) WalkDirs(ctx context.Context, rel string, fn func(rel, abs string) error) error {
	rel = path.Clean(rel)
	if rel == "" {
		rel = "."
	}
	f := newWalkFS(wk.w)
	var walk func(rel string) error
	walk = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		e := f.lookup(rel)
		if !e.visible || !e.dir || e.linked {
			return nil
		}
		if err := fn(rel, e.real.Abs); err != nil {
			return err
		}
		ents, err := f.ReadDir(rel)
		if err != nil {
			return nil // gone meanwhile, or unreadable: nothing under it to watch
		}
		for _, d := range ents {
			if d.IsDir() {
				if err := walk(joinRel(rel, d.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(rel)
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
