package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Git runs git as agentls runs it in a repository it did not write (an
// engine's snapshot and worktree, branch mode's switch): none of the
// repository's own code runs. A repository's configuration (.git/config,
// and what it includes) can name programs git runs on its own: hooks, the
// fsmonitor, the clean, smudge and process filters its .gitattributes
// select, textconv and external diff drivers. Each is turned off on the
// command line, which wins over every configuration file:
//
//   - core.hooksPath points at the null device, core.fsmonitor is false,
//     commit and tag signing are off;
//   - every filter.*.{clean,smudge,process} the configuration defines is
//     set empty, and the filters are not required (found with `git config`,
//     which runs nothing);
//   - diff, show and log run with --no-ext-diff and --no-textconv.
//
// agentls runs no other git command that runs drivers (no merge, no
// blame).
//
// git runs in dir, in a process group of its own that is killed when ctx
// ends (with what it started), with env (nil: this process's environment)
// plus GIT_TERMINAL_PROMPT=0 and LC_ALL=C. It returns git's stdout; a
// failure's error holds the end of its stderr.
func Git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	if env == nil {
		env = os.Environ()
	}
	env = append(env[:len(env):len(env)], "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	safe := []string{
		"-c", "core.hooksPath=" + os.DevNull,
		"-c", "core.fsmonitor=false",
		"-c", "commit.gpgsign=false",
		"-c", "tag.gpgsign=false",
	}
	drivers, err := runGit(ctx, dir, env, append(safe, "config", "--null", "--name-only", "--get-regexp",
		`^filter\..+\.(clean|smudge|process)$`))
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		// None defined.
	case err != nil:
		return "", err
	}
	for _, key := range strings.Split(drivers, "\x00") {
		if key = strings.TrimSpace(key); key == "" {
			continue
		}
		safe = append(safe, "-c", key+"=", "-c", key[:strings.LastIndexByte(key, '.')]+".required=false")
	}
	if len(args) > 0 {
		switch args[0] {
		case "diff", "show", "log":
			args = append([]string{args[0], "--no-ext-diff", "--no-textconv"}, args[1:]...)
		}
	}
	return runGit(ctx, dir, env, append(safe, args...))
}

// gitKill bounds the wait for git's output once its group is killed.
const gitKill = 2 * time.Second

func runGit(ctx context.Context, dir string, env, args []string) (string, error) {
	path, err := LookPath("git")
	if err != nil {
		return "", err
	}
	g, err := NewGroup()
	if err != nil {
		return "", err
	}
	defer g.Close()
	cmd := exec.Command(path, args...)
	cmd.Args[0] = "git"
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	errb := &Tail{Max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &out, errb
	cmd.WaitDelay = gitKill
	if err := g.Start(cmd); err != nil {
		return "", fmt.Errorf("git: %w", err)
	}
	stop := context.AfterFunc(ctx, g.Kill)
	err = cmd.Wait()
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return out.String(), &GitError{Args: args, Err: err, Stderr: strings.TrimSpace(errb.String())}
	}
	return out.String(), nil
}

// GitError is a git command that failed.
type GitError struct {
	Args   []string // as run, the safety options included
	Err    error
	Stderr string // its end
}

func (e *GitError) Error() string {
	args := e.Args
	// Name the command as it was asked, not its safety options.
	for len(args) >= 2 && args[0] == "-c" {
		args = args[2:]
	}
	msg := fmt.Sprintf("git %s: %v", strings.Join(args, " "), e.Err)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *GitError) Unwrap() error { return e.Err }
