package shell_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/shell"
	"github.com/agentls/agentls/internal/testkit"
)

// A repository whose configuration names programs for every hook git has:
// hooks, the fsmonitor, clean/smudge/process filters its .gitattributes
// select, textconv and external diff. None of them runs under shell.Git,
// whatever agentls asks of git.
func TestGitRunsNothingOfTheRepository(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the hostile programs are sh scripts")
	}
	ctx := testkit.Context(t)
	repo, marks := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	mark := func(name string) string { return "touch " + filepath.Join(marks, name) + "; " }
	git := func(args ...string) string {
		t.Helper()
		out, err := shell.Git(ctx, repo, env, args...)
		if err != nil {
			t.Fatalf("%v", err)
		}
		return out
	}
	git("init", "-q", "-b", "main")
	// Planted as a hostile tarball would plant them, after the init.
	hostile := map[string]string{
		"filter.evil.clean":    mark("clean") + "cat",
		"filter.evil.smudge":   mark("smudge") + "cat",
		"filter.evil.process":  mark("process") + "false",
		"filter.evil.required": "true",
		"diff.evil.textconv":   mark("textconv") + "cat",
		"diff.evil.command":    mark("diffcmd") + "true",
		"diff.external":        mark("external") + "true",
		"core.fsmonitor":       mark("fsmonitor") + "true",
		"core.hooksPath":       ".githooks",
		"include.path":         "../included.cfg",
		"merge.evil.driver":    mark("merge") + "true",
	}
	for k, v := range hostile {
		if out, err := (exec(ctx, repo, env, "git", "config", k, v)); err != nil {
			t.Fatalf("git config %s: %v %s", k, err, out)
		}
	}
	testkit.WriteFiles(t, repo, map[string]string{
		".gitattributes":          "* filter=evil diff=evil merge=evil\n",
		".git/included.cfg":       "[filter \"other\"]\n\tclean = " + mark("included") + "cat\n",
		".githooks/pre-commit":    "#!/bin/sh\n" + mark("pre-commit"),
		".githooks/post-checkout": "#!/bin/sh\n" + mark("post-checkout"),
		"a.txt":                   "a\n",
		"b.txt":                   "b\n",
	})
	for _, h := range []string{".githooks/pre-commit", ".githooks/post-checkout"} {
		_ = os.Chmod(filepath.Join(repo, h), 0o755)
	}
	for _, h := range []string{"pre-commit", "post-checkout"} {
		testkit.WriteFiles(t, repo, map[string]string{".git/hooks/" + h: "#!/bin/sh\n" + mark("git-"+h)})
		_ = os.Chmod(filepath.Join(repo, ".git/hooks", h), 0o755)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	testkit.WriteFiles(t, repo, map[string]string{"a.txt": "a, edited\n"})
	git("status", "--porcelain")
	stash := strings.TrimSpace(git("stash", "create"))
	git("diff", "HEAD")
	git("diff", "--cached", "--name-status", "HEAD")
	git("show", "HEAD:a.txt")
	git("switch", "-q", "-c", "agent/x")
	wt := filepath.Join(t.TempDir(), "wt")
	git("worktree", "add", "-q", "--detach", wt, stash)
	git("worktree", "remove", "--force", wt)
	if left, _ := os.ReadDir(marks); len(left) > 0 {
		var names []string
		for _, e := range left {
			names = append(names, e.Name())
		}
		t.Fatalf("the repository's own programs ran: %v", names)
	}
	// The planted configuration is real: plain git runs it.
	_, _ = exec(ctx, repo, env, "git", "status")
	if _, err := os.Stat(filepath.Join(marks, "fsmonitor")); err != nil {
		t.Fatalf("the test's fsmonitor did not run under plain git either: the test proves nothing: %v", err)
	}
}

func TestGitError(t *testing.T) {
	_, err := shell.Git(context.Background(), t.TempDir(), nil, "rev-parse", "--verify", "-q", "nosuchref")
	if err == nil || !strings.HasPrefix(err.Error(), "git rev-parse --verify -q nosuchref: ") {
		t.Fatalf("err = %v: it names the command as asked", err)
	}
}

func exec(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	p, err := shell.Start(shell.ProcSpec{Argv: append([]string{name}, args...), Dir: dir, Env: env})
	if err != nil {
		return "", err
	}
	_ = p.Stdin().Close()
	out, _ := io.ReadAll(p.Stdout())
	<-p.Exited()
	p.Stop(0)
	if err := p.Err(); err != nil {
		return string(out), fmt.Errorf("%w: %s", err, p.StderrTail())
	}
	return string(out), nil
}
