package editing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless/headlesstest"
)

const mainGo = "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"

func noApplyCaps() api.Caps {
	c := headlesstest.AllCaps()
	c.ApplyEdit = false
	return c
}

func TestEditInApplyModeGoesStraightToTheEditor(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
	a := e.agent("")
	ch, err := a.Edit(ctx, "main.go", `println("hi")`, `println("hello")`, false)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(mainGo, "hi", "hello", 1)
	if got := e.read(t, "main.go"); got != want {
		t.Fatalf("file = %q, want %q", got, want)
	}
	if !ch.Applied || ch.Operation != api.OpUpdate || ch.NewContent != want || ch.Text != "Updated main.go (+1 -1 lines)." {
		t.Errorf("change = %+v", ch)
	}
	if fmt.Sprint(ch.Spans) != "[{4 4}]" {
		t.Errorf("spans = %v, want [{4 4}]", ch.Spans)
	}
	if !strings.Contains(ch.Diff, "-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n") || !strings.HasPrefix(ch.Diff, "--- a/main.go\n+++ b/main.go\n") {
		t.Errorf("diff = %q", ch.Diff)
	}
	if len(e.ed.Applied()) != 1 || e.ed.Waits()[0] != api.Machine || len(e.ed.Asked()) != 0 {
		t.Fatalf("applied %d edits (waits %v), asked %d times", len(e.ed.Applied()), e.ed.Waits(), len(e.ed.Asked()))
	}
	dc := e.ed.Applied()[0].Edit.DocumentChanges
	if len(dc) != 1 || dc[0].TextDocumentEdit == nil || dc[0].TextDocumentEdit.TextDocument.Version != nil {
		t.Errorf("documentChanges = %+v, want one TextDocumentEdit with a null version", dc)
	}
	if e.ed.Applied()[0].Edit.ChangeAnnotations != nil {
		t.Error("apply mode sent change annotations")
	}
	if !contains(e.obs.accesses, "1 write main.go") {
		t.Errorf("accesses = %q", e.obs.accesses)
	}
}

func TestARefusalReadsOnce(t *testing.T) {
	for _, c := range []struct {
		name, reason, want string
	}{
		{"in the words of the refusal", "rejected by the user", "the change to main.go was rejected by the user"},
		{"with what the editor adds", "Rejected by the user in the refactor preview", "the change to main.go was rejected by the user in the refactor preview"},
		{"without a reason", "", "the change to main.go was rejected by the user"},
		{"with a reason of another kind", "cancelled", "the change to main.go was not applied: cancelled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := refusal("main.go", c.reason)
			if !errors.Is(err, ErrRejected) || err.Error() != c.want {
				t.Errorf("refusal(%q) = %q, want ErrRejected reading %q", c.reason, err, c.want)
			}
		})
	}
	t.Run("as the change's reason", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditPropose, api.Zones{}, map[string]string{"main.go": mainGo})
		e.ed.Refuse("rejected by the user")
		ch, err := e.agent("").Edit(context.Background(), "main.go", "hi", "hello", false)
		if want := "the change to main.go was rejected by the user"; !errors.Is(err, ErrRejected) || ch.Reason != want {
			t.Errorf("Edit = %q, reason %q; want ErrRejected, reason %q", err, ch.Reason, want)
		}
	})
}

func TestProposeMode(t *testing.T) {
	ctx := context.Background()
	noAnnotations := headlesstest.AllCaps()
	noAnnotations.ChangeAnnotation = false
	cases := []struct {
		name       string
		caps       api.Caps
		answer     string // showMessageRequest answer
		refuse     string // applyEdit applied:false reason
		applied    bool
		wantAsked  int
		wantWait   api.Wait
		wantEdits  int
		wantReason string
	}{
		{"applies an annotated edit the user confirms", headlesstest.AllCaps(), "", "", true, 0, api.Human, 1, ""},
		{"refuses an annotated edit the user rejects", headlesstest.AllCaps(), "", "user rejected the change", false, 0, api.Human, 1, "not applied: user rejected the change"},
		{"asks first without annotation support and applies on Apply", noAnnotations, actionApply, "", true, 1, api.Machine, 1, ""},
		{"asks first and refuses on Reject", noAnnotations, actionReject, "", false, 1, 0, 0, `the user chose "Reject"`},
		{"asks first and refuses when dismissed", noAnnotations, "", "", false, 1, 0, 0, "dismissed"},
		{"asks first and writes the file itself without applyEdit", noApplyCaps(), actionApply, "", true, 1, 0, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, c.caps, api.EditPropose, api.Zones{}, map[string]string{"main.go": mainGo})
			e.ed.SetAnswer(c.answer)
			e.ed.Refuse(c.refuse)
			ch, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false)
			if ch.Applied != c.applied || (err == nil) != c.applied {
				t.Fatalf("Applied = %v, err = %v; want applied %v", ch.Applied, err, c.applied)
			}
			if !c.applied {
				if !errors.Is(err, ErrRejected) || !strings.Contains(ch.Reason, c.wantReason) || ch.Text != ch.Reason {
					t.Errorf("err = %v, reason %q; want ErrRejected saying %q", err, ch.Reason, c.wantReason)
				}
				if got := e.read(t, "main.go"); got != mainGo {
					t.Errorf("a refused change reached the file: %q", got)
				}
			} else if got := e.read(t, "main.go"); !strings.Contains(got, "hello") {
				t.Errorf("file = %q", got)
			}
			if len(e.ed.Asked()) != c.wantAsked {
				t.Errorf("asked %d times, want %d", len(e.ed.Asked()), c.wantAsked)
			}
			if c.wantAsked > 0 && !strings.Contains(e.ed.Asked()[0].Message, "+\tprintln(\"hello\")") {
				t.Errorf("question does not show the diff: %q", e.ed.Asked()[0].Message)
			}
			if len(e.ed.Applied()) != c.wantEdits {
				t.Fatalf("applyEdit called %d times, want %d", len(e.ed.Applied()), c.wantEdits)
			}
			if c.wantEdits > 0 {
				if e.ed.Waits()[0] != c.wantWait {
					t.Errorf("wait = %v, want %v", e.ed.Waits()[0], c.wantWait)
				}
				anns := e.ed.Applied()[0].Edit.ChangeAnnotations
				annotated := c.caps.ChangeAnnotation
				if annotated != (len(anns) == 1) {
					t.Fatalf("annotations = %+v", anns)
				}
				for id, an := range anns {
					if !an.NeedsConfirmation {
						t.Error("annotation does not need confirmation")
					}
					for _, ed := range e.ed.Applied()[0].Edit.DocumentChanges[0].TextDocumentEdit.Edits {
						if ed.AnnotationID != id {
							t.Errorf("edit annotation %q, want %q", ed.AnnotationID, id)
						}
					}
				}
			}
		})
	}
}

func TestConflicts(t *testing.T) {
	ctx := context.Background()
	t.Run("refuses a change when the buffer changed since the read", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
		a := e.agent("")
		if _, err := a.Read(ctx, "main.go", 0, 0); err != nil {
			t.Fatal(err)
		}
		e.ed.OpenBuffer(filepath.Join(e.ws.Root(), "main.go"), mainGo+"// typed by the user\n")
		ch, err := a.Edit(ctx, "main.go", "hi", "hello", false)
		if !errors.Is(err, ErrConflict) || ch.Applied || !strings.Contains(ch.Text, "read it again") {
			t.Fatalf("Edit = %+v, %v; want a conflict", ch, err)
		}
		if len(e.ed.Applied()) != 0 {
			t.Fatal("a conflicting change was sent to the editor")
		}
		// after a fresh read the same change goes through
		if _, err := a.Read(ctx, "main.go", 0, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Edit(ctx, "main.go", "hi", "hello", false); err != nil {
			t.Fatalf("Edit after re-reading: %v", err)
		}
	})
	t.Run("refuses a change another agent made stale", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
		task := e.ws.Task("t", "", "")
		a, b := task.Agent("a"), task.Agent("b")
		for _, ag := range []*Agent{a, b} {
			if _, err := ag.Read(ctx, "main.go", 0, 0); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := a.Edit(ctx, "main.go", "hi", "hello", false); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Edit(ctx, "main.go", "hello", "hey", false); err != nil {
			t.Fatalf("the agent that wrote last could not go on: %v", err)
		}
		if _, err := b.Write(ctx, "main.go", "package main\n"); !errors.Is(err, ErrConflict) {
			t.Fatalf("Write by the stale agent = %v, want a conflict", err)
		}
	})
	t.Run("refuses an own write when the disk changed meanwhile", func(t *testing.T) {
		e := newEnv(t, noApplyCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
		// the editor's buffer differs from the disk: the sidecar must not write over either
		e.ed.OpenBuffer(filepath.Join(e.ws.Root(), "main.go"), mainGo+"// unsaved\n")
		_, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false)
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("Edit = %v, want a conflict", err)
		}
		if got := e.read(t, "main.go"); got != mainGo {
			t.Fatalf("file = %q", got)
		}
	})
}

func TestWriteAndDelete(t *testing.T) {
	ctx := context.Background()
	noDocChanges := headlesstest.AllCaps()
	noDocChanges.DocumentChanges = false
	for _, caps := range []struct {
		name string
		caps api.Caps
	}{{"with documentChanges", headlesstest.AllCaps()}, {"with plain changes", noDocChanges}, {"without applyEdit", noApplyCaps()}} {
		t.Run(caps.name, func(t *testing.T) {
			e := newEnv(t, caps.caps, api.EditApply, api.Zones{}, map[string]string{"old.txt": "bye\n"})
			a := e.agent("")
			ch, err := a.Write(ctx, "new/dir/hello.txt", "hello\nworld\n")
			if err != nil || ch.Operation != api.OpCreate || !ch.Applied || ch.Text != "Created new/dir/hello.txt (2 lines)." {
				t.Fatalf("Write = %+v, %v", ch, err)
			}
			if got := e.read(t, "new/dir/hello.txt"); got != "hello\nworld\n" {
				t.Fatalf("created file = %q", got)
			}
			if !strings.HasPrefix(ch.Diff, "--- /dev/null\n+++ b/new/dir/hello.txt\n@@ -0,0 +1,2 @@\n") {
				t.Errorf("diff = %q", ch.Diff)
			}
			if _, err := a.Write(ctx, "old.txt", "x\n"); !errors.Is(err, ErrNotRead) {
				t.Errorf("overwriting an unread file = %v, want ErrNotRead", err)
			}
			if _, err := a.Delete(ctx, "old.txt"); !errors.Is(err, ErrNotRead) {
				t.Errorf("deleting an unread file = %v, want ErrNotRead", err)
			}
			if _, err := a.Read(ctx, "old.txt", 0, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := a.Write(ctx, "old.txt", "bye\n"); !errors.Is(err, ErrNoChange) {
				t.Errorf("writing the same content = %v, want ErrNoChange", err)
			}
			ch, err = a.Delete(ctx, "old.txt")
			if err != nil || ch.Operation != api.OpDelete || ch.Diff != "--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n" {
				t.Fatalf("Delete = %+v, %v", ch, err)
			}
			if _, err := os.Stat(filepath.Join(e.root, "old.txt")); !os.IsNotExist(err) {
				t.Fatalf("old.txt still there: %v", err)
			}
			if _, err := a.Edit(ctx, "missing.txt", "a", "b", false); !errors.Is(err, ErrNotFound) {
				t.Errorf("editing a missing file = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestApplyFailuresAreRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		refuse string
		err    error
		want   error
		says   string
	}{
		{"reports applied:false with its reason", "document is read-only", nil, ErrNotApplied, "document is read-only"},
		{"reports an editor that did not answer", "", fmt.Errorf("workspace/applyEdit: %w", api.ErrTimeout), ErrNotApplied, "may or may not be in the editor"},
		{"reports a failed call", "", errors.New("connection closed"), ErrNotApplied, "connection closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
			e.ed.Refuse(c.refuse)
			e.ed.FailApply(c.err)
			ch, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false)
			if !errors.Is(err, c.want) || ch.Applied || !strings.Contains(ch.Reason, c.says) {
				t.Fatalf("Edit = %+v, %v; want %v saying %q", ch, err, c.want, c.says)
			}
			if contains(e.obs.accesses, "1 write main.go") {
				t.Error("a change that was not applied was reported as a write")
			}
		})
	}
}

func TestWritesOutsideTheScopeAreBlocked(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, map[string]string{"src/a.go": "a\n", "docs/x.md": "x\n"})
	a := e.agent("")
	s, err := CompileScope([]string{"src/**"})
	if err != nil {
		t.Fatal(err)
	}
	a.SetScope(s)
	if _, err := a.Read(ctx, "docs/x.md", 0, 0); err != nil {
		t.Fatalf("reading outside the scope: %v", err)
	}
	ch, err := a.Edit(ctx, "docs/x.md", "x", "y", false)
	var be *BlockedError
	if !errors.As(err, &be) || be.Path != "docs/x.md" || ch.Applied {
		t.Fatalf("Edit = %+v, %v; want a BlockedError", ch, err)
	}
	if _, err := a.Edit(ctx, "src/a.go", "a", "b", false); err != nil {
		t.Fatalf("editing inside the scope: %v", err)
	}
}

func TestInterruptedOwnWriteLeavesTheOldFile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, noApplyCaps(), api.EditApply, api.Zones{}, map[string]string{"main.go": mainGo})
	path := filepath.Join(e.root, "main.go")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	e.ws.renameFn = func(oldpath, newpath string) error {
		// the temp file is complete here: a crash now must not touch the target
		b, err := os.ReadFile(oldpath)
		if err != nil || !strings.Contains(string(b), "hello") {
			t.Errorf("temp file = %q, %v", b, err)
		}
		return errors.New("power cut")
	}
	ch, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false)
	if !errors.Is(err, ErrNotApplied) || ch.Applied {
		t.Fatalf("Edit = %+v, %v; want ErrNotApplied", ch, err)
	}
	if got := e.read(t, "main.go"); got != mainGo {
		t.Fatalf("file = %q after an interrupted write", got)
	}
	ents, _ := os.ReadDir(e.root)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
	e.ws.renameFn = os.Rename
	if _, err := e.agent("").Edit(ctx, "main.go", "hi", "hello", false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after the write = %v, %v; want 0600 kept", fi.Mode(), err)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	isolateGit(t)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "add", "."},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// isolateGit keeps the user's git configuration (~/.gitconfig and
// /etc/gitconfig: commit.gpgsign, hooks, aliases) away from the test's git
// commands and from the ones the code under test runs.
func isolateGit(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func currentBranch(t *testing.T, dir string) string {
	cmd := exec.Command("git", "branch", "--show-current")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestBranchMode(t *testing.T) {
	ctx := context.Background()
	t.Run("switches to agent/<slug> before the first change and applies", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditBranch, api.Zones{}, map[string]string{"main.go": mainGo})
		gitInit(t, e.root)
		task := e.ws.Task("t1", Slug("Add a greet function!"), "")
		a := task.Agent("1")
		ch, err := a.Edit(ctx, "main.go", "hi", "hello", false)
		if err != nil {
			t.Fatal(err)
		}
		if got := currentBranch(t, e.root); got != "agent/add-a-greet-function" || task.Branch() != got {
			t.Fatalf("branch = %q (task says %q)", got, task.Branch())
		}
		if !strings.Contains(ch.Text, "On branch agent/add-a-greet-function") || len(e.ed.Asked()) != 0 || e.ed.Waits()[0] != api.Machine {
			t.Errorf("change = %+v, asked %d", ch, len(e.ed.Asked()))
		}
		// a second task with the same slug gets its own branch
		task2 := e.ws.Task("t2", Slug("Add a greet function!"), "")
		if _, err := task2.Agent("1").Edit(ctx, "main.go", "hello", "hey", false); err != nil {
			t.Fatal(err)
		}
		if got := currentBranch(t, e.root); got != "agent/add-a-greet-function-2" {
			t.Fatalf("second branch = %q", got)
		}
	})
	t.Run("runs git without the repository's hooks, which could be anyone's", func(t *testing.T) {
		t.Setenv("BRANCH_TEST_API_KEY", "sk-branch-0123456789")
		t.Setenv("BRANCH_TEST_PLAIN", "inherited")
		e := newEnv(t, headlesstest.AllCaps(), api.EditBranch, api.Zones{}, map[string]string{"main.go": mainGo})
		gitInit(t, e.root)
		hook := filepath.Join(e.root, ".git", "hooks", "post-checkout")
		seen := filepath.Join(t.TempDir(), "seen")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho \"key=$BRANCH_TEST_API_KEY plain=$BRANCH_TEST_PLAIN\" > "+seen+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		ws, err := New(Config{Root: e.root, Zones: api.DefaultSettings().Zones, EditMode: api.EditBranch, Editor: e.ed,
			UnsetEnv: []string{"BRANCH_TEST_API_KEY"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ws.Task("t1", "hooks", "").Agent("1").Edit(ctx, "main.go", "hi", "hello", false); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(seen); err == nil {
			t.Fatalf("the repository's post-checkout hook ran (and saw %q)", got)
		}
		if got := currentBranch(t, e.root); got != "agent/hooks" {
			t.Fatalf("branch = %q", got)
		}
	})
	t.Run("falls back to propose outside a git repository", func(t *testing.T) {
		e := newEnv(t, headlesstest.AllCaps(), api.EditBranch, api.Zones{}, map[string]string{"main.go": mainGo})
		task := e.ws.Task("t1", "x", "")
		_, err := task.Agent("1").Edit(ctx, "main.go", "hi", "hello", false)
		if err != nil {
			t.Fatal(err)
		}
		if task.Mode() != api.EditPropose || len(e.warn) != 1 || !strings.Contains(e.warn[0], "proposed for approval") {
			t.Fatalf("mode %q, warnings %q", task.Mode(), e.warn)
		}
		if e.ed.Waits()[0] != api.Human || len(e.ed.Applied()[0].Edit.ChangeAnnotations) != 1 {
			t.Errorf("the fallback did not propose: wait %v", e.ed.Waits()[0])
		}
	})
}

func TestSlug(t *testing.T) {
	cases := map[string]string{
		"Add a greet function!":    "add-a-greet-function",
		"  ":                       "task",
		"Fix bug #12 in parser…":   "fix-bug-12-in-parser",
		strings.Repeat("abc ", 30): "abc-abc-abc-abc-abc-abc-abc-abc-abc-abc",
	}
	for in, want := range cases {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChangesRunInParallelAndAWaitOnAFileCanBeCancelled(t *testing.T) {
	ctx := context.Background()
	var files = map[string]string{"n.txt": ""}
	e := newEnv(t, headlesstest.AllCaps(), api.EditApply, api.Zones{}, files)
	task := e.ws.Task("t", "", "")
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			a := task.Agent(fmt.Sprint(i))
			_, err := a.Write(ctx, fmt.Sprintf("f%d.txt", i), fmt.Sprintf("%d\n", i))
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	unlock, err := e.ws.locks.lock(ctx, "n.txt")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := task.Agent("x").Edit(cctx, "n.txt", "a", "b", false); !errors.Is(err, context.Canceled) {
		t.Errorf("a change waiting on a held file = %v, want context.Canceled", err)
	}
	unlock()
	if len(e.ws.locks.m) != 0 {
		t.Errorf("locks left: %v", e.ws.locks.m)
	}
}

func TestProposeModeRecordsWhatLanded(t *testing.T) {
	ctx := context.Background()
	const before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n"
	const proposed = "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nNINE\n"
	cases := []struct {
		name    string
		keep    func(i int) bool
		landed  string // "" when nothing landed
		diff    string // a line the recorded diff has
		notDiff string // a line it must not have
	}{
		{"records the whole change when the person accepts every hunk", nil, proposed, "+NINE", ""},
		{"records only the hunk the person accepted", func(i int) bool { return i == 0 }, "ONE\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\n", "+ONE", "+NINE"},
		{"counts a change of which no hunk was accepted as rejected", func(int) bool { return false }, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, headlesstest.AllCaps(), api.EditPropose, api.Zones{}, map[string]string{"n.txt": before})
			e.ed.KeepTextEdits(c.keep)
			a := e.agent("")
			if _, err := a.Read(ctx, "n.txt", 0, 0); err != nil {
				t.Fatal(err)
			}
			ch, err := a.Write(ctx, "n.txt", proposed)
			if n := len(e.ed.Applied()[0].Edit.DocumentChanges[0].TextDocumentEdit.Edits); n != 2 {
				t.Fatalf("the proposal has %d text edits, want one per hunk (2)", n)
			}
			if c.landed == "" {
				if !errors.Is(err, ErrRejected) || ch.Applied || !strings.Contains(ch.Reason, "accepted none") {
					t.Fatalf("Write = %+v, %v; want a rejection", ch, err)
				}
				if contains(e.obs.accesses, "1 write n.txt") {
					t.Error("a rejected change counted as a write (heat)")
				}
				return
			}
			if err != nil || !ch.Applied {
				t.Fatalf("Write = %+v, %v", ch, err)
			}
			if got := e.read(t, "n.txt"); got != c.landed || ch.NewContent != c.landed {
				t.Fatalf("file %q, NewContent %q; want %q", got, ch.NewContent, c.landed)
			}
			if !strings.Contains(ch.Diff, c.diff+"\n") || (c.notDiff != "" && strings.Contains(ch.Diff, c.notDiff)) {
				t.Errorf("diff = %q", ch.Diff)
			}
			if !contains(e.obs.accesses, "1 write n.txt") {
				t.Errorf("accesses = %q", e.obs.accesses)
			}
			if c.keep == nil {
				if ch.Reason != "" || fmt.Sprint(ch.Spans) != "[{1 1} {9 9}]" {
					t.Errorf("reason %q, spans %v", ch.Reason, ch.Spans)
				}
				return
			}
			if fmt.Sprint(ch.Spans) != "[{1 1}]" {
				t.Errorf("spans = %v, want only line 1", ch.Spans)
			}
			if !strings.Contains(ch.Reason, "accepted +1 -1 of the +2 -2 lines") || !strings.Contains(ch.Text, "+ONE") || strings.Contains(ch.Text, "+NINE") {
				t.Errorf("reason %q, text %q", ch.Reason, ch.Text)
			}
			// The agent knows what the file holds: its next change builds on it.
			if _, err := a.Edit(ctx, "n.txt", "nine", "Nine", false); err != nil {
				t.Errorf("the next change after a partial one: %v", err)
			}
		})
	}
}
