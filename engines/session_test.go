package engines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/testkit"
)

// fakeHost records what a session does through it and answers as a test
// scripts it.
type fakeHost struct {
	root string

	mu       sync.Mutex
	files    map[string]string // the editor's buffers, by absolute path
	writes   []string          // path=content
	perms    []Permission
	commands []string
	updates  []Update
	decide   func(Permission) Decision
}

func newFakeHost(root string) *fakeHost {
	return &fakeHost{root: root, files: map[string]string{}, decide: func(Permission) Decision { return Allow }}
}

func (h *fakeHost) ReadTextFile(_ context.Context, path string, line, limit int) (string, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.files[path]
	return CutLines(c, line, limit), ok, nil
}

func (h *fakeHost) WriteTextFile(_ context.Context, path, content string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !inside(h.root, path) {
		return errors.New("outside the workspace")
	}
	h.writes = append(h.writes, path+"="+content)
	h.files[path] = content
	return nil
}

func (h *fakeHost) RunCommand(_ context.Context, command, cwd string, _ time.Duration) (api.RunCommandResult, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commands = append(h.commands, command+" in "+cwd)
	return api.RunCommandResult{ExitCode: 3, Output: "ran " + command}, nil
}

func (h *fakeHost) Permission(_ context.Context, p Permission) (Decision, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.perms = append(h.perms, p)
	return h.decide(p), nil
}

func (h *fakeHost) Update(u Update) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.updates = append(h.updates, u)
}

func (h *fakeHost) messages() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, u := range h.updates {
		if u.Kind == UpdateMessage {
			b.WriteString(u.Text)
			b.WriteString("|")
		}
	}
	return b.String()
}

// fakeManager returns a Manager whose engine "fake" is the fake agent
// playing script.
func TestMain(m *testing.M) {
	enginestest.ServeFakeAgent()
	os.Exit(m.Run())
}

func fakeManager(t testing.TB, script ...enginestest.Step) *Manager {
	t.Helper()
	argv, env := enginestest.FakeAgent(t, script...)
	m := NewManager(Options{Version: "test"})
	no := false
	m.Configure(map[string]api.EngineConfig{"fake": {Command: argv, Env: env, Isolate: &no}})
	return m
}

func TestSessionRelaysThroughTheHost(t *testing.T) {
	root := t.TempDir()
	main, out := filepath.Join(root, "main.go"), filepath.Join(root, "out.txt")
	m := fakeManager(t,
		enginestest.Step{Think: "let me look"},
		enginestest.Step{Read: main},
		enginestest.Step{Read: filepath.Join(root, "missing.txt")},
		enginestest.Step{Plan: []string{"read", "write"}},
		enginestest.Step{Write: out, Content: "hello\n"},
		enginestest.Step{Write: "/etc/passwd", Content: "x"},
		enginestest.Step{Exec: "go test ./..."},
		enginestest.Step{Twice: main},
		enginestest.Step{Say: "All done."})
	h := newFakeHost(root)
	h.files[main] = "package main // unsaved\n"
	h.decide = func(p Permission) Decision {
		if p.Kind == "edit" && !inside(root, p.Paths[0]) {
			return Reject
		}
		return Allow
	}
	var pid int
	res, err := m.Run(testkit.Context(t), "fake", Job{Prompt: "do it", Root: root, OnStart: func(p int, _ time.Duration) { pid = p }}, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("reads the editor's buffer, and a missing file as empty", func(t *testing.T) {
		msgs := h.messages()
		if !strings.Contains(msgs, "read: package main // unsaved\n|") || !strings.Contains(msgs, "read: |") {
			t.Fatalf("messages: %q", msgs)
		}
	})
	t.Run("writes through the host, and not outside the workspace", func(t *testing.T) {
		if !slices.Equal(h.writes, []string{out + "=hello\n"}) {
			t.Fatalf("writes: %q", h.writes)
		}
		if !strings.Contains(h.messages(), "write refused") {
			t.Fatalf("the refused write was not refused: %q", h.messages())
		}
	})
	t.Run("asks the host about each write and command, with their paths and command line", func(t *testing.T) {
		if len(h.perms) != 3 || h.perms[0].Paths[0] != out || h.perms[2].Kind != "execute" || h.perms[2].Command != "go test ./..." || !h.perms[0].CanAlways {
			t.Fatalf("permissions: %+v", h.perms)
		}
	})
	t.Run("runs the agent's terminal through the host, with its exit code and output", func(t *testing.T) {
		if !slices.Equal(h.commands, []string{"go test ./... in " + root}) || !strings.Contains(h.messages(), "exit 3: ran go test ./...|") {
			t.Fatalf("commands %q, messages %q", h.commands, h.messages())
		}
	})
	t.Run("merges a tool call's updates by its id", func(t *testing.T) {
		var last *ToolCall
		for _, u := range h.updates {
			if u.Kind == UpdateToolCall && u.ToolCall.ID == "call-7" {
				last = u.ToolCall
			}
		}
		if last == nil || last.Title != "Read "+main || last.Kind != "read" || last.Status != "completed" || !slices.Equal(last.Paths, []string{main}) {
			t.Fatalf("merged call: %+v", last)
		}
	})
	t.Run("tells its thoughts and its plan", func(t *testing.T) {
		var thought, plan bool
		for _, u := range h.updates {
			thought = thought || u.Kind == UpdateThought && u.Text == "let me look"
			plan = plan || u.Kind == UpdatePlan && len(u.Plan) == 2 && u.Plan[0].Status == "in_progress"
		}
		if !thought || !plan {
			t.Fatalf("thought %v plan %v in %+v", thought, plan, h.updates)
		}
	})
	t.Run("ends with the agent's last message and its version", func(t *testing.T) {
		if res.StopReason != "end_turn" || res.Text != "All done." || res.Version != "9.9.9" {
			t.Fatalf("outcome %+v", res)
		}
	})
	t.Run("leaves no process", func(t *testing.T) {
		awaitGone(t, pid)
	})
}

// awaitGone polls until process pid is gone.
func awaitGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for testkit.Alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d is still running", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestStop(t *testing.T) {
	for _, c := range []struct {
		name   string
		script []enginestest.Step
	}{
		{"ends an agent that answers session/cancel", []enginestest.Step{{Hang: true}}},
		{"kills an agent that ignores session/cancel and SIGTERM", []enginestest.Step{{Stubborn: true}}},
		{"kills an agent that stopped reading its input", []enginestest.Step{{Freeze: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			childFile := filepath.Join(t.TempDir(), "child.pid")
			script := append([]enginestest.Step{{Child: childFile}, {Say: "working"}}, c.script...)
			m := fakeManager(t, script...)
			h := newFakeHost(root)
			ctx, cancel := context.WithCancelCause(testkit.Context(t))
			started := make(chan int, 1)
			done := make(chan error, 1)
			go func() {
				_, err := m.Run(ctx, "fake", Job{Prompt: "hang", Root: root, OnStart: func(pid int, _ time.Duration) { started <- pid }}, h)
				done <- err
			}()
			pid := <-started
			for !strings.Contains(h.messages(), "working") {
				time.Sleep(5 * time.Millisecond)
			}
			stopped := time.Now()
			cancel(errors.New("stopped by the user"))
			err := <-done
			took := time.Since(stopped)
			t.Logf("stopped in %v", took)
			if err == nil || err.Error() != "stopped by the user" {
				t.Fatalf("Run returned %v, want the stop's cause", err)
			}
			child, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(childFile)))))
			// Nothing of the agent is left: neither it nor the child it
			// started in a session of its own.
			if testkit.Alive(pid) {
				t.Fatalf("the agent %d still runs after Run returned", pid)
			}
			awaitGone(t, child)
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestSessionFailures(t *testing.T) {
	t.Run("says how an agent that exits mid-prompt ended", func(t *testing.T) {
		m := fakeManager(t, enginestest.Step{Say: "hi"}, enginestest.Step{Exit: 4})
		_, err := m.Run(testkit.Context(t), "fake", Job{Prompt: "x", Root: t.TempDir()}, newFakeHost(t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "fake agent: giving up") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("says a command that does not exist cannot run", func(t *testing.T) {
		m := NewManager(Options{})
		m.Configure(map[string]api.EngineConfig{"nope": {Command: []string{"/no/such/agent"}}})
		_, err := m.Run(testkit.Context(t), "nope", Job{Prompt: "x", Root: t.TempDir()}, newFakeHost(t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), "cannot be used") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("does not wait for ever on an agent that never answers initialize", func(t *testing.T) {
		m := NewManager(Options{})
		m.Configure(map[string]api.EngineConfig{"mute": {Command: []string{"sleep", "300"}}})
		_, err := m.Run(testkit.Context(t), "mute", Job{Prompt: "x", Root: t.TempDir(), CallTimeout: 300 * time.Millisecond, Isolate: new(bool)}, newFakeHost(t.TempDir()))
		if err == nil || !strings.Contains(err.Error(), "initialize") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("names the engines when asked for one that does not exist", func(t *testing.T) {
		_, err := NewManager(Options{}).Run(testkit.Context(t), "nosuch", Job{}, nil)
		if !errors.Is(err, ErrUnknownEngine) || !strings.Contains(err.Error(), "claude") {
			t.Fatalf("got %v", err)
		}
	})
}

func gitInit(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testkit.WriteFiles(t, dir, files)
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "first"}} {
		if _, err := git(context.Background(), dir, args...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIsolation(t *testing.T) {
	for _, inGit := range []bool{true, false} {
		name := "a copy of a workspace that is not in git"
		if inGit {
			name = "a git worktree, with the workspace's uncommitted and untracked files"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			files := map[string]string{"a.txt": "a\n", "b.txt": "b\n", "gone.txt": "bye\n", "secret/key.txt": "the key\n"}
			if inGit {
				gitInit(t, root, files)
				testkit.WriteFiles(t, root, map[string]string{"a.txt": "a, edited\n", "new.txt": "untracked\n"})
			} else {
				testkit.WriteFiles(t, root, files)
			}
			script := []enginestest.Step{{Read: "secret/key.txt"}, {Write: filepath.Join(root, "sneaky.txt"), Content: "x"}, {WriteDisk: "b.txt", Content: "b, by the agent\n"}, {WriteDisk: "c.txt", Content: "c\n"},
				{Exec: "rm gone.txt"}, {Say: "done"}}
			argv, env := enginestest.FakeAgent(t, script...)
			m := NewManager(Options{})
			yes := true
			m.Configure(map[string]api.EngineConfig{"fake": {Command: argv, Env: env, Isolate: &yes}})
			h := newFakeHost(root)
			work := t.TempDir()
			// The host runs the agent's command where it asks: in its worktree.
			var cwd string
			host := &cmdHost{fakeHost: h, run: func(command, dir string) { cwd = dir; _ = os.Remove(filepath.Join(dir, "gone.txt")) }}
			// As the default zones (**/.git/**) and a deny of secret/**
			// close them.
			closed := func(rel string) string {
				if strings.HasPrefix(rel, "secret/") || rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git") {
					return "denied by zones.deny"
				}
				return ""
			}
			res, err := m.Run(testkit.Context(t), "fake", Job{Prompt: "x", Root: root, WorkDir: work, Closed: closed}, host)
			if err != nil {
				t.Fatal(err)
			}
			if msgs := h.messages(); !strings.Contains(msgs, "write refused") {
				t.Fatalf("an isolated agent was let write the workspace itself: %q", msgs)
			}
			if msgs := h.messages(); strings.Contains(msgs, "the key") || !strings.Contains(msgs, "read failed: fs/read_text_file: secret/key.txt is closed to agents by the workspace") {
				t.Fatalf("the agent saw a closed file in its copy: %q", msgs)
			}
			if inside(root, cwd) {
				t.Fatalf("the agent ran in the workspace (%s), not in its own copy", cwd)
			}
			got := map[string]string{}
			for _, c := range res.Changes {
				rel, _ := filepath.Rel(root, c.Path)
				base, next := "<none>", "<none>"
				if c.Base != nil {
					base = *c.Base
				}
				if c.New != nil {
					next = *c.New
				}
				got[rel] = base + " -> " + next
			}
			want := map[string]string{"b.txt": "b\n -> b, by the agent\n", "c.txt": "<none> -> c\n", "gone.txt": "bye\n -> <none>"}
			if len(got) != len(want) {
				t.Fatalf("changes %q, want %q", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("changes %q, want %q", got, want)
				}
			}
			if data, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(data) != "b\n" {
				t.Fatalf("the workspace was written: b.txt is %q", data)
			}
			if left, _ := os.ReadDir(work); len(left) != 0 {
				t.Fatalf("the worktree was left behind: %v", left)
			}
			if inGit {
				out, _ := git(context.Background(), root, "worktree", "list")
				if strings.Count(out, "\n") != 1 {
					t.Fatalf("the repository still lists the worktree:\n%s", out)
				}
				if st, _ := git(context.Background(), root, "status", "--porcelain"); !strings.Contains(st, " M a.txt") || !strings.Contains(st, "?? new.txt") {
					t.Fatalf("the workspace's own changes were touched:\n%s", st)
				}
			}
		})
	}
}

// cmdHost is a fakeHost that runs commands by calling run.
type cmdHost struct {
	*fakeHost
	run func(command, cwd string)
}

func (h *cmdHost) RunCommand(ctx context.Context, command, cwd string, d time.Duration) (api.RunCommandResult, error) {
	h.run(command, cwd)
	return h.fakeHost.RunCommand(ctx, command, cwd, d)
}

// A repository that commits a symlink out of the workspace cannot take an
// isolated agent's reads or writes through it: its fs calls are held
// inside its worktree, symlinks resolved.
func TestIsolationHoldsSymlinksIn(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := t.TempDir()
	testkit.WriteFiles(t, outside, map[string]string{"secret.txt": "the outside secret\n"})
	repo := t.TempDir()
	testkit.WriteFiles(t, repo, map[string]string{"sub/a.txt": "a\n"})
	if err := os.Symlink(outside, filepath.Join(repo, "sub", "link")); err != nil {
		t.Fatal(err)
	}
	gitInit(t, repo, nil)
	root := filepath.Join(repo, "sub")
	script := []enginestest.Step{
		{Read: "link/secret.txt"},
		{Read: filepath.Join(root, "link", "secret.txt")},
		{Write: "link/pwned.txt", Content: "pwned"},
		{Say: "done"},
	}
	argv, env := enginestest.FakeAgent(t, script...)
	m := NewManager(Options{})
	yes := true
	m.Configure(map[string]api.EngineConfig{"fake": {Command: argv, Env: env, Isolate: &yes}})
	h := newFakeHost(root)
	if _, err := m.Run(testkit.Context(t), "fake", Job{Prompt: "x", Root: root, WorkDir: t.TempDir()}, h); err != nil {
		t.Fatal(err)
	}
	msgs := h.messages()
	if strings.Contains(msgs, "the outside secret") {
		t.Fatalf("the agent read a file outside the workspace through a committed symlink: %q", msgs)
	}
	if strings.Count(msgs, "read failed") != 2 {
		t.Fatalf("the reads through the symlink were not refused: %q", msgs)
	}
	if _, err := os.Stat(filepath.Join(outside, "pwned.txt")); !os.IsNotExist(err) {
		t.Fatalf("the agent wrote outside the workspace through a committed symlink (%v): %q", err, msgs)
	}
	if !strings.Contains(msgs, "write failed") {
		t.Fatalf("the write through the symlink was not refused: %q", msgs)
	}
}

// An agent's process never starts in the workspace (a launcher would run a
// copy the repository planted in its node_modules; a program would read the
// repository's configuration from its directory): it works where its
// session's cwd says, isolated or not.
func TestAgentProcessStartsOutsideTheWorkspace(t *testing.T) {
	for _, isolate := range []bool{false, true} {
		t.Run(fmt.Sprintf("isolate %v", isolate), func(t *testing.T) {
			root := t.TempDir()
			gitInit(t, root, map[string]string{"a.txt": "a\n"})
			argv, env := enginestest.FakeAgent(t, enginestest.Step{Report: true})
			m := NewManager(Options{})
			m.Configure(map[string]api.EngineConfig{"fake": {Command: argv, Env: env, Isolate: &isolate}})
			h := newFakeHost(root)
			if _, err := m.Run(testkit.Context(t), "fake", Job{Prompt: "x", Root: root, WorkDir: t.TempDir()}, h); err != nil {
				t.Fatal(err)
			}
			said := h.messages()
			_, dir, _ := strings.Cut(said, " dir: ")
			dir = strings.TrimSuffix(strings.TrimSpace(strings.Split(dir, "|")[0]), "|")
			_, cwd, _ := strings.Cut(said, " cwd: ")
			cwd, _, _ = strings.Cut(cwd, " dir: ")
			if dir == "" || inside(root, dir) {
				t.Fatalf("the agent's process ran in %q, in the workspace %s: %q", dir, root, said)
			}
			if !isolate && cwd != root || isolate && (cwd == root || inside(root, cwd)) {
				t.Fatalf("its session's cwd is %q (workspace %s, isolated %v)", cwd, root, isolate)
			}
		})
	}
}

// A worktree a crash left behind (its run's lock released without the
// worktree removed) is removed by the next start's Sweep, with its
// registration in the repository; one in use is left alone.
func TestSweepRemovesWhatACrashLeft(t *testing.T) {
	if !fsutil.LocksWork {
		t.Skip("no file locks here")
	}
	root := t.TempDir()
	gitInit(t, root, map[string]string{"a.txt": "a\n"})
	work := t.TempDir()
	crashed, err := newWorktree(testkit.Context(t), root, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = crashed.lock.Unlock() // as kill -9 releases it
	// It was the run of a process that ended before this one began.
	before := time.Now().Add(-24 * time.Hour)
	if err := os.Chtimes(crashed.dir, before, before); err != nil {
		t.Fatal(err)
	}
	live, err := newWorktree(testkit.Context(t), root, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer live.remove()
	// A start directory being made now, its lock not taken yet, as
	// workDir makes it: the sweep (which runs beside tasks) leaves it.
	making, err := os.MkdirTemp(work, "start-")
	if err != nil {
		t.Fatal(err)
	}
	removed, err := Sweep(testkit.Context(t), work)
	if err != nil || len(removed) != 1 || removed[0] != crashed.dir {
		t.Fatalf("Sweep = %v, %v; want the crashed worktree %s alone", removed, err, crashed.dir)
	}
	if _, err := os.Stat(making); err != nil {
		t.Fatalf("the start directory being made was removed: %v", err)
	}
	if _, err := os.Stat(live.cwd); err != nil {
		t.Fatalf("the worktree in use was removed: %v", err)
	}
	out, _ := git(context.Background(), root, "worktree", "list", "--porcelain")
	if strings.Contains(out, crashed.dir) || !strings.Contains(out, live.dir) {
		t.Fatalf("the repository's worktrees after the sweep:\n%s", out)
	}
}
