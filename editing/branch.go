package editing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/shell"
)

// errNotRepo: branch mode in a workspace that is not a git work tree.
var errNotRepo = errors.New("not a git repository")

// gitTimeout bounds each git command branch mode runs.
const gitTimeout = 30 * time.Second

// effectiveMode returns the mode a change of the task is made in. In branch
// mode the first change creates the task's branch (agent/<slug>, with a
// number added when that exists) and later changes are applied on it; a
// workspace that is not a git work tree falls back to propose, once, with a
// warning. Branch mode then applies like apply mode.
func (t *Task) effectiveMode(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mode != api.EditBranch || t.branch != "" {
		if t.mode == api.EditBranch {
			return api.EditApply, nil
		}
		return t.mode, nil
	}
	name, err := t.ws.createBranch(ctx, t.slug)
	if errors.Is(err, errNotRepo) {
		t.mode = api.EditPropose
		msg := fmt.Sprintf("agentls: editMode branch needs a git repository (%v); the changes of this task are proposed for approval instead", err)
		t.ws.log.Warn("branch mode falls back to propose", zap.String("task", t.id), zap.Error(err))
		if t.ws.warn != nil {
			t.ws.warn(ctx, msg)
		}
		return t.mode, nil
	}
	if err != nil {
		return t.mode, err
	}
	t.branch = name
	t.ws.log.Info("branch created", zap.String("task", t.id), zap.String("branch", name))
	return api.EditApply, nil
}

// createBranch runs git switch -c agent/<slug> in the workspace root.
func (w *Workspace) createBranch(ctx context.Context, slug string) (string, error) {
	out, err := w.git(ctx, "rev-parse", "--is-inside-work-tree")
	var ge *shell.GitError
	switch {
	case errors.As(err, &ge):
		return "", fmt.Errorf("%w: %s", errNotRepo, firstLine(ge.Stderr))
	case err != nil:
		return "", fmt.Errorf("%w: git: %w", errNotRepo, err)
	case strings.TrimSpace(out) != "true":
		return "", fmt.Errorf("%w: %s", errNotRepo, firstLine(out))
	}
	base := "agent/" + slug
	for i := 1; i <= 50; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := w.git(ctx, "rev-parse", "--verify", "--quiet", "refs/heads/"+name); err == nil {
			continue // taken
		}
		if _, err := w.git(ctx, "switch", "-q", "-c", name); err != nil {
			return "", fmt.Errorf("%w: %w", ErrBranch, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("%w: branches %s to %s-50 all exist", ErrBranch, base, base)
}

// git runs git in the workspace without its secrets, and without running
// any of the repository's own code (hooks, fsmonitor, filters: shell.Git):
// the switch checks files out.
func (w *Workspace) git(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	return shell.Git(ctx, w.root, redact.Environ(os.Environ(), w.unsetEnv), args...)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
