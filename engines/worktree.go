package engines

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/shell"
)

// Bounds of a worktree made by copying (a workspace that is not in git).
const (
	maxCopyFiles = 20000
	maxCopyBytes = 256 << 20
	// maxChangeBytes bounds a file an isolated engine changed that is
	// brought back (a larger one is reported, not brought back).
	maxChangeBytes = 8 << 20
)

// worktree is an isolated engine's own copy of the workspace: a git
// worktree at a snapshot of the workspace as it is on disk (tracked
// changes and untracked files included), or a plain copy where the
// workspace is not in git. changes compares it with the snapshot.
type worktree struct {
	dir  string       // what to remove
	root string       // the workspace's root
	cwd  string       // the workspace's root inside it
	held *contain.Dir // cwd, held: the agent's fs calls are resolved in it
	repo string       // the repository it belongs to ("" : a copy)
	base string       // the snapshot commit (git) …
	// … or the copied files' contents by workspace-relative path (a copy).
	copied map[string]string
	// closed says why a workspace-relative path is closed to agents.
	closed func(string) string
	// lock is held while the worktree is in use: Sweep leaves it alone.
	lock *fsutil.FileLock
}

// hidden reports whether the workspace-relative path rel is closed to
// agents: it is left out of the worktree.
func (w *worktree) hidden(rel string) bool {
	return w.closed != nil && rel != "." && w.closed(filepath.ToSlash(rel)) != ""
}

// gitEnv is git's environment for a snapshot: without the secrets, the
// user's or the system's configuration, and with an identity for the
// snapshot commit.
func gitEnv() []string {
	return shell.Environ(os.Environ(), redact.FromEnviron(os.Environ()).Unset(nil), map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_AUTHOR_NAME": "agentls", "GIT_AUTHOR_EMAIL": "agentls@localhost",
		"GIT_COMMITTER_NAME": "agentls", "GIT_COMMITTER_EMAIL": "agentls@localhost",
	})
}

// git runs git in a repository agentls did not write, running none of its
// code (shell.Git).
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return shell.Git(ctx, dir, gitEnv(), args...)
}

// newWorktree makes the worktree of the workspace root under parent.
func newWorktree(ctx context.Context, root, parent string, closed func(string) string) (*worktree, error) {
	if parent == "" {
		return nil, errors.New("no directory for worktrees was given")
	}
	dir, lock, err := workDir(parent, "wt-")
	if err != nil {
		return nil, err
	}
	w := &worktree{dir: dir, root: root, closed: closed, lock: lock}
	if top, err := git(ctx, root, "rev-parse", "--show-toplevel"); err == nil {
		err = w.fromGit(ctx, root, strings.TrimSpace(top))
	} else {
		err = w.fromCopy(root)
	}
	if err == nil {
		w.held, err = contain.New(w.cwd)
	}
	if err != nil {
		w.remove()
		return nil, err
	}
	return w, nil
}

// fromGit adds a detached worktree at a snapshot commit of the workspace:
// its tracked files as on disk (git stash create), then its untracked,
// not ignored files committed on top.
func (w *worktree) fromGit(ctx context.Context, root, top string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	realTop, err := filepath.EvalSymlinks(top)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(realTop, realRoot)
	if err != nil {
		return err
	}
	start := "HEAD"
	if _, err := git(ctx, top, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
		return errors.New("the repository has no commit yet: make one, or run the engine with isolate: false")
	}
	if stash, err := git(ctx, top, "stash", "create"); err == nil && strings.TrimSpace(stash) != "" {
		start = strings.TrimSpace(stash)
	}
	wtDir := filepath.Join(w.dir, "tree")
	if _, err := git(ctx, top, "worktree", "add", "--detach", wtDir, start); err != nil {
		return err
	}
	w.repo = top
	w.cwd = filepath.Join(wtDir, rel)
	untracked, err := git(ctx, top, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return err
	}
	for _, f := range strings.Split(untracked, "\x00") {
		if f == "" {
			continue
		}
		if err := copyFile(filepath.Join(top, f), filepath.Join(wtDir, f)); err != nil {
			return err
		}
	}
	// What the zones close stays out of the agent's sight.
	err = filepath.WalkDir(w.cwd, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(w.cwd, p)
		if d.Name() == ".git" {
			// The worktree's own .git (a file in a worktree, a directory
			// in a nested repository): git's, not the agent's, whatever
			// the zones say of .git (the default **/.git/** matches it).
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if w.hidden(rel) {
			if d.IsDir() {
				if err := os.RemoveAll(p); err != nil {
					return err
				}
				return filepath.SkipDir
			}
			return os.Remove(p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if _, err := git(ctx, wtDir, "add", "-A"); err != nil {
		return err
	}
	if _, err := git(ctx, wtDir, "commit", "-q", "--allow-empty", "--no-verify", "-m", "agentls: the workspace when the engine started"); err != nil {
		return err
	}
	base, err := git(ctx, wtDir, "rev-parse", "HEAD")
	if err != nil {
		return err
	}
	w.base = strings.TrimSpace(base)
	return nil
}

// fromCopy copies the workspace (but .git) into the worktree.
func (w *worktree) fromCopy(root string) error {
	w.cwd = filepath.Join(w.dir, "tree")
	w.copied = map[string]string{}
	total := 0
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if d.Name() == ".git" || w.hidden(rel) {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(w.cwd, rel), 0o755)
		}
		if w.hidden(rel) {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil // symlinks and devices stay out
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		total += len(data)
		if len(w.copied) >= maxCopyFiles || total > maxCopyBytes {
			return fmt.Errorf("the workspace is too big to copy for an isolated engine (over %d files or %d MiB) and is not in git: put it in git, or run the engine with isolate: false", maxCopyFiles, maxCopyBytes>>20)
		}
		w.copied[filepath.ToSlash(rel)] = string(data)
		return os.WriteFile(filepath.Join(w.cwd, rel), data, 0o644)
	})
}

func copyFile(from, to string) error {
	fi, err := os.Lstat(from)
	if err != nil || !fi.Mode().IsRegular() {
		return nil // gone meanwhile, or not a file
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, data, fi.Mode().Perm())
}

// changes lists the files the engine changed, created or deleted under
// the workspace's root in its worktree, with their contents before and
// after, as workspace paths; root is the workspace root they are told in.
func (w *worktree) changes(ctx context.Context) ([]FileChange, error) {
	root := w.root
	if w.repo == "" {
		return w.copyChanges(root)
	}
	tree := filepath.Join(w.dir, "tree")
	if _, err := git(ctx, tree, "add", "-A"); err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(tree, w.cwd)
	out, err := git(ctx, tree, "diff", "--cached", "--name-status", "--no-renames", "-z", w.base, "--", rel)
	if err != nil {
		return nil, err
	}
	fields := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	var list []FileChange
	for i := 0; i+1 < len(fields); i += 2 {
		status, path := fields[i], fields[i+1]
		inWT, _ := filepath.Rel(rel, path)
		ch := FileChange{Path: filepath.Join(root, inWT)}
		if status != "A" {
			old, err := git(ctx, tree, "show", w.base+":"+path)
			if err != nil {
				return nil, err
			}
			ch.Base = &old
		}
		if status != "D" {
			data, err := os.ReadFile(filepath.Join(tree, path))
			if err != nil {
				return nil, err
			}
			s := string(data)
			ch.New = &s
		}
		list = append(list, ch)
	}
	return list, nil
}

func (w *worktree) copyChanges(root string) ([]FileChange, error) {
	var list []FileChange
	seen := map[string]bool{}
	err := filepath.WalkDir(w.cwd, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(w.cwd, p)
		key := filepath.ToSlash(rel)
		seen[key] = true
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(data)
		if old, ok := w.copied[key]; ok {
			if old != s {
				list = append(list, FileChange{Path: filepath.Join(root, rel), Base: &old, New: &s})
			}
			return nil
		}
		list = append(list, FileChange{Path: filepath.Join(root, rel), New: &s})
		return nil
	})
	if err != nil {
		return nil, err
	}
	for key, old := range w.copied {
		if !seen[key] {
			old := old
			list = append(list, FileChange{Path: filepath.Join(root, filepath.FromSlash(key)), Base: &old})
		}
	}
	return list, nil
}

// remove deletes the worktree (and its entry in the repository).
func (w *worktree) remove() {
	if w.repo != "" {
		ctx := context.Background()
		if _, err := git(ctx, w.repo, "worktree", "remove", "--force", filepath.Join(w.dir, "tree")); err != nil {
			_, _ = git(ctx, w.repo, "worktree", "prune")
		}
	}
	_ = os.RemoveAll(w.dir)
	if w.repo != "" {
		_, _ = git(context.Background(), w.repo, "worktree", "prune")
	}
	if w.lock != nil {
		_ = w.lock.Unlock()
	}
}

// lockName is the file of a work directory (a worktree, an agent's start
// directory) whose lock its engine's run holds: Sweep leaves a held one
// alone.
const lockName = "lock"

// workDir makes a directory for one engine run under parent (made 0700
// when missing; "": the system's temporary directory), named prefix and a
// random part, and takes its lock.
func workDir(parent, prefix string) (string, *fsutil.FileLock, error) {
	if parent != "" {
		if err := os.MkdirAll(parent, 0o700); err != nil {
			return "", nil, err
		}
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", nil, err
	}
	lock, err := fsutil.LockFile(filepath.Join(dir, lockName))
	if err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, lock, nil
}

// Sweep removes what the engine runs of a process that ended without
// cleaning up (kill -9, a crash) left in workDir: each worktree and start
// directory whose lock no running agentls holds, unchanged since this
// process started (a run of this process or of another one makes its
// directory, then its lock: one changed since may be that), and a worktree's
// registration in the repository it was added to (git worktree prune
// there). Where file locks do not work nothing is removed. It returns the
// directories removed.
func Sweep(ctx context.Context, workDir string) ([]string, error) {
	if !fsutil.LocksWork {
		return nil, nil
	}
	entries, err := os.ReadDir(workDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	repos := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, "wt-") && !strings.HasPrefix(name, "start-") {
			continue
		}
		if ctx.Err() != nil {
			return removed, ctx.Err()
		}
		if fi, err := e.Info(); err != nil || fsutil.ChangedSinceStart(fi) {
			continue // gone, or perhaps being made
		}
		dir := filepath.Join(workDir, name)
		lock, err := fsutil.TryLockFile(filepath.Join(dir, lockName))
		switch {
		case errors.Is(err, fsutil.ErrLocked):
			continue // in use
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			continue
		}
		if repo := registeredIn(filepath.Join(dir, "tree")); repo != "" {
			repos[repo] = true
		}
		if err := os.RemoveAll(dir); err == nil {
			removed = append(removed, dir)
		}
		if lock != nil {
			_ = lock.Unlock()
		}
	}
	for repo := range repos {
		_, _ = shell.Git(ctx, repo, gitEnv(), "worktree", "prune")
	}
	return removed, nil
}

// registeredIn is the git directory of the repository a worktree was added
// to, read from its .git file ("gitdir: <repo>/.git/worktrees/<name>"),
// or "" when it is no worktree.
func registeredIn(tree string) string {
	b, _, err := contain.ReadRegular(filepath.Join(tree, ".git"), 4<<10)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || filepath.Base(filepath.Dir(gitdir)) != "worktrees" {
		return ""
	}
	return filepath.Dir(filepath.Dir(gitdir))
}

// Text reports whether a brought-back content is text the editing pipeline
// can carry, and says why not.
func (c FileChange) Text() error {
	for _, s := range []*string{c.Base, c.New} {
		if s == nil {
			continue
		}
		if len(*s) > maxChangeBytes {
			return fmt.Errorf("%s is over %d MiB", c.Path, maxChangeBytes>>20)
		}
		if !utf8.ValidString(*s) || strings.IndexByte(*s, 0) >= 0 {
			return fmt.Errorf("%s is not text", c.Path)
		}
	}
	return nil
}
