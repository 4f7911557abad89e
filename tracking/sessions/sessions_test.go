package sessions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/redact"
)

type env struct {
	state, root string
	clock       time.Time
	ids         int
	reports     []string
}

func newEnv(t *testing.T) *env {
	return &env{state: t.TempDir(), root: "/work/project", clock: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)}
}

func (e *env) open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(e.state, e.root, Options{
		Now:      func() time.Time { e.clock = e.clock.Add(time.Second); return e.clock },
		NewID:    func() string { e.ids++; return fmt.Sprintf("s%d", e.ids) },
		OnReport: func(m string) { e.reports = append(e.reports, m) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestStateDir(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	cases := []struct {
		name string
		env  map[string]string
		home func() (string, error)
		want string
		err  error
	}{
		{"prefers AGENTLS_STATE_DIR", map[string]string{"AGENTLS_STATE_DIR": "/s", "XDG_STATE_HOME": "/x"}, home, "/s", nil},
		{"falls back to XDG_STATE_HOME/agentls", map[string]string{"XDG_STATE_HOME": "/x"}, home, "/x/agentls", nil},
		{"falls back to ~/.local/state/agentls", nil, home, "/home/u/.local/state/agentls", nil},
		{"fails without any of them", nil, noHome, "", ErrNoStateDir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := StateDir(func(k string) string { return c.env[k] }, c.home)
			if got != c.want || !errors.Is(err, c.err) {
				t.Errorf("got %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestWorkspaceDirIsTheFirst16HexOfTheRootHash(t *testing.T) {
	// sha256("/work/project") computed independently with sha256sum.
	got := WorkspaceDir("/state", "/work/project")
	if want := filepath.Join("/state", "workspaces", "65d80d2c48b3d23b"); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t)
	s := e.open(t)
	sid, err := s.StartTask("", "t1", "Add a greet function\nand test it")
	must(t, err)
	must(t, s.Append(sid, api.SessionMessage{Role: "user", Text: "Add a greet function", TaskID: "t1"}))
	must(t, s.Append(sid, api.SessionMessage{Role: "assistant", Text: "Done.", TaskID: "t1", SubtaskID: "1"}))
	must(t, s.SetTaskState(sid, "t1", api.TaskDone))
	other, err := s.StartTask("", "t2", "Other")
	must(t, err)
	if _, err := s.StartTask(sid, "t3", "Improve it"); err != nil {
		t.Fatalf("continuing a session: %v", err)
	}
	if _, err := s.StartTask("nope", "t4", "x"); !errors.Is(err, ErrUnknownSession) {
		t.Errorf("unknown session: %v", err)
	}

	list := listOf(t, s)
	if len(list) != 2 || list[0].SessionID != sid || list[1].SessionID != other {
		t.Fatalf("want the continued session first, got %+v", list)
	}
	if list[0].Title != "Add a greet function" || len(list[0].Tasks) != 2 || list[0].Tasks[0].State != api.TaskDone {
		t.Errorf("got %+v", list[0])
	}
	got, err := s.Session(sid)
	must(t, err)
	if len(got.Messages) != 2 || got.Messages[1].Text != "Done." || got.Messages[1].SubtaskID != "1" || got.Messages[0].Time == "" {
		t.Errorf("messages %+v", got.Messages)
	}

	t.Run("refuses to delete a session whose task is going", func(t *testing.T) {
		if err := s.Delete(sid); !errors.Is(err, ErrSessionBusy) {
			t.Errorf("got %v", err)
		}
	})
	t.Run("another store on the workspace sees the task going, not interrupted", func(t *testing.T) {
		s2 := e.open(t)
		defer s2.Close()
		r, err := s2.Session(sid)
		must(t, err)
		if r.Tasks[0].State != api.TaskDone || r.Tasks[1].State != api.TaskPlanning {
			t.Errorf("tasks seen by another store %+v", r.Tasks)
		}
		if len(r.Messages) != 2 {
			t.Errorf("messages seen by another store: %d", len(r.Messages))
		}
		if err := s2.Delete(sid); !errors.Is(err, ErrSessionBusy) {
			t.Errorf("another store deleted a session whose task is going: %v", err)
		}
	})
	t.Run("deletes a session and its history", func(t *testing.T) {
		must(t, s.SetTaskState(sid, "t3", api.TaskStopped))
		must(t, s.Delete(sid))
		if _, err := s.Session(sid); !errors.Is(err, ErrUnknownSession) {
			t.Errorf("after delete: %v", err)
		}
		if _, err := os.Stat(s.msgPath(sid)); !os.IsNotExist(err) {
			t.Errorf("history still on disk: %v", err)
		}
		if err := s.Delete(sid); !errors.Is(err, ErrUnknownSession) {
			t.Errorf("second delete: %v", err)
		}
		if l := listOf(t, e.open(t)); len(l) != 1 {
			t.Errorf("after reopen %d sessions, want 1", len(l))
		}
	})
}

func listOf(t *testing.T, s *Store) []api.SessionInfo {
	t.Helper()
	r, err := s.Sessions()
	if err != nil {
		t.Fatal(err)
	}
	return r.Sessions
}

func stateOf(t *testing.T, s *Store, sessionID, taskID string) string {
	t.Helper()
	r, err := s.Session(sessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range r.Tasks {
		if tk.TaskID == taskID {
			return tk.State
		}
	}
	t.Fatalf("session %s has no task %s: %+v", sessionID, taskID, r.Tasks)
	return ""
}

// die releases a store's owner lock without closing it, as the system does
// when its process is killed.
func die(s *Store) { s.ownerLock.Unlock() }

func owners(t *testing.T, s *Store) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(s.Dir(), ownersDir, "*.lock"))
	must(t, err)
	return names
}

func TestTwoStoresOnOneWorkspace(t *testing.T) {
	t.Run("each keeps the other's sessions when they write in turns", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.open(t), e.open(t)
		defer a.Close()
		defer b.Close()
		sa, err := a.StartTask("", "a1", "from A")
		must(t, err)
		sb, err := b.StartTask("", "b1", "from B")
		must(t, err)
		must(t, a.SetTaskState(sa, "a1", api.TaskDone))
		must(t, b.SetTaskState(sb, "b1", api.TaskDone))
		for _, s := range []*Store{a, b, e.open(t)} {
			if l := listOf(t, s); len(l) != 2 {
				t.Fatalf("%d sessions listed, want A's and B's: %+v", len(l), l)
			}
		}
		if got := stateOf(t, b, sa, "a1"); got != api.TaskDone {
			t.Errorf("B sees A's task %s, want done", got)
		}
	})
	t.Run("one continues a session the other made", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.open(t), e.open(t)
		defer a.Close()
		defer b.Close()
		sid, err := a.StartTask("", "a1", "from A")
		must(t, err)
		must(t, a.SetTaskState(sid, "a1", api.TaskDone))
		if _, err := b.Messages(sid); err != nil {
			t.Fatalf("B does not know A's session: %v", err)
		}
		if _, err := b.StartTask(sid, "b1", "continued in B"); err != nil {
			t.Fatalf("B cannot continue A's session: %v", err)
		}
		must(t, b.Append(sid, api.SessionMessage{Role: "user", Text: "continued in B", TaskID: "b1"}))
		r, err := a.Session(sid)
		must(t, err)
		if len(r.Tasks) != 2 || len(r.Messages) != 1 {
			t.Errorf("A sees %+v", r)
		}
	})
}

func TestInterruptedTasks(t *testing.T) {
	t.Run("a task whose store closed is listed as interrupted", func(t *testing.T) {
		e := newEnv(t)
		a := e.open(t)
		sid, err := a.StartTask("", "t1", "x")
		must(t, err)
		must(t, a.SetTaskState(sid, "t1", api.TaskRunning))
		must(t, a.Close())
		b := e.open(t)
		defer b.Close()
		if got := stateOf(t, b, sid, "t1"); got != api.TaskInterrupted {
			t.Errorf("got %s, want interrupted", got)
		}
		if got := owners(t, b); len(got) != 1 {
			t.Errorf("owner files %v, want only the open store's", got)
		}
	})
	t.Run("a task whose store died is listed as interrupted by a store already open", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.open(t), e.open(t)
		defer b.Close()
		sid, err := a.StartTask("", "t1", "x")
		must(t, err)
		must(t, a.SetTaskState(sid, "t1", api.TaskRunning))
		if got := stateOf(t, b, sid, "t1"); got != api.TaskRunning {
			t.Fatalf("while A lives B sees %s, want running", got)
		}
		die(a)
		if got := stateOf(t, b, sid, "t1"); got != api.TaskInterrupted {
			t.Errorf("after A died B sees %s, want interrupted", got)
		}
		if got := owners(t, b); len(got) != 1 {
			t.Errorf("owner files %v, want the dead store's removed", got)
		}
		must(t, b.Delete(sid))
	})
	t.Run("a task without an owner is listed as interrupted", func(t *testing.T) {
		e := newEnv(t)
		a := e.open(t)
		defer a.Close()
		sid, err := a.StartTask("", "t1", "x")
		must(t, err)
		// sessions.json as a version that recorded no owner left it.
		idx := filepath.Join(a.Dir(), indexName)
		b, _ := os.ReadFile(idx)
		old := string(b)
		b = []byte(strings.Replace(old, `"owner": "`+a.owner+`"`, `"usage2": {}`, 1))
		if string(b) == old {
			t.Fatalf("no owner recorded in %s", old)
		}
		must(t, os.WriteFile(idx, b, 0o600))
		s := e.open(t)
		defer s.Close()
		if got := stateOf(t, s, sid, "t1"); got != api.TaskInterrupted {
			t.Errorf("got %s, want interrupted", got)
		}
	})
	t.Run("InterruptRunning marks only this store's tasks", func(t *testing.T) {
		e := newEnv(t)
		a, b := e.open(t), e.open(t)
		defer a.Close()
		defer b.Close()
		sa, _ := a.StartTask("", "a1", "x")
		sb, _ := b.StartTask("", "b1", "y")
		must(t, b.SetTaskState(sb, "b1", api.TaskWaiting))
		n, err := a.InterruptRunning()
		must(t, err)
		if n != 1 || stateOf(t, b, sa, "a1") != api.TaskInterrupted || stateOf(t, a, sb, "b1") != api.TaskWaiting {
			t.Errorf("marked %d; a1 %s, b1 %s; want 1, interrupted, waiting", n, stateOf(t, b, sa, "a1"), stateOf(t, a, sb, "b1"))
		}
	})
	t.Run("a closed store takes no more changes", func(t *testing.T) {
		e := newEnv(t)
		a := e.open(t)
		sid, _ := a.StartTask("", "t1", "x")
		must(t, a.Close())
		must(t, a.Close())
		if _, err := a.StartTask("", "t2", "x"); !errors.Is(err, ErrClosed) {
			t.Errorf("StartTask after Close: %v", err)
		}
		if err := a.Append(sid, api.SessionMessage{Role: "user", Text: "x"}); !errors.Is(err, ErrClosed) {
			t.Errorf("Append after Close: %v", err)
		}
		if got := stateOf(t, a, sid, "t1"); got != api.TaskInterrupted {
			t.Errorf("a closed store lists its task as %s, want interrupted", got)
		}
	})
}

func TestDamagedFiles(t *testing.T) {
	t.Run("sets a corrupt session list aside and rebuilds it from the histories", func(t *testing.T) {
		e := newEnv(t)
		s := e.open(t)
		sid, _ := s.StartTask("", "t1", "Fix the bug")
		must(t, s.Append(sid, api.SessionMessage{Role: "user", Text: "Fix the bug", TaskID: "t1"}))
		idx := filepath.Join(s.Dir(), indexName)
		os.WriteFile(idx, []byte(`{"version":1,"sessions":[{"sessionId":"s1","ti`), 0o600)

		s2 := e.open(t)
		if len(e.reports) != 1 || !strings.Contains(e.reports[0], "rebuilt") {
			t.Fatalf("reports %v", e.reports)
		}
		asides, _ := filepath.Glob(idx + ".corrupt-*")
		if len(asides) != 1 {
			t.Fatalf("set aside: %v", asides)
		}
		if b, _ := os.ReadFile(asides[0]); !strings.HasSuffix(string(b), `"ti`) {
			t.Errorf("the aside copy is not the damaged file: %q", b)
		}
		r, err := s2.Session(sid)
		must(t, err)
		if r.Title != "Fix the bug" || len(r.Tasks) != 1 || r.Tasks[0].Prompt != "Fix the bug" || len(r.Messages) != 1 {
			t.Errorf("rebuilt %+v", r)
		}
	})
	t.Run("keeps the whole messages of a truncated history", func(t *testing.T) {
		e := newEnv(t)
		s := e.open(t)
		sid, _ := s.StartTask("", "t1", "x")
		must(t, s.Append(sid, api.SessionMessage{Role: "user", Text: "one", TaskID: "t1"}))
		must(t, s.Append(sid, api.SessionMessage{Role: "assistant", Text: "two", TaskID: "t1"}))
		f, _ := os.OpenFile(s.msgPath(sid), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(`{"role":"assistant","text":"thr`)
		f.Close()

		s2 := e.open(t)
		must(t, s2.Append(sid, api.SessionMessage{Role: "user", Text: "four", TaskID: "t1"}))
		r, err := s2.Session(sid)
		must(t, err)
		var texts []string
		for _, m := range r.Messages {
			texts = append(texts, m.Text)
		}
		if strings.Join(texts, ",") != "one,two,four" {
			t.Errorf("messages %v", texts)
		}
		asides, _ := filepath.Glob(s.msgPath(sid) + ".corrupt-*")
		if len(asides) != 1 || len(e.reports) != 1 {
			t.Fatalf("asides %v reports %v", asides, e.reports)
		}
		if b, _ := os.ReadFile(asides[0]); !strings.HasSuffix(string(b), `"thr`) {
			t.Errorf("the aside copy lost the torn line: %q", b)
		}
	})
}

func TestNoSecretIsWritten(t *testing.T) {
	const key = "sk-sessions-0123456789"
	red := redact.New()
	red.Add("OPENAI_API_KEY", key)
	e := newEnv(t)
	s, err := Open(e.state, e.root, Options{Redactor: red})
	must(t, err)
	sid, err := s.StartTask("", "t1", "use the key "+key)
	must(t, err)
	must(t, s.Append(sid, api.SessionMessage{Role: "tool", Text: `run_command {"command":"echo ` + key + `"}`}))
	must(t, s.Append(sid, api.SessionMessage{Role: "assistant", Text: "it printed " + key}))
	err = filepath.WalkDir(s.Dir(), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), key) {
			t.Errorf("%s holds the key:\n%s", path, b)
		}
		return nil
	})
	must(t, err)
	msgs, err := s.Messages(sid)
	must(t, err)
	if len(msgs) != 2 || msgs[1].Text != "it printed [redacted OPENAI_API_KEY]" {
		t.Fatalf("messages = %+v", msgs)
	}
}

func TestEnsure(t *testing.T) {
	t.Run("makes an empty session that the first task continues and titles", func(t *testing.T) {
		e := newEnv(t)
		s := e.open(t)
		defer s.Close()
		must(t, s.Ensure("acp-1"))
		list, err := s.Sessions()
		must(t, err)
		if len(list.Sessions) != 1 || list.Sessions[0].SessionID != "acp-1" || list.Sessions[0].Title != "" || len(list.Sessions[0].Tasks) != 0 {
			t.Fatalf("sessions = %+v", list.Sessions)
		}
		sid, err := s.StartTask("acp-1", "t1", "Add a greet function\nand test it")
		must(t, err)
		if sid != "acp-1" {
			t.Fatalf("StartTask continued %q", sid)
		}
		got, err := s.Session("acp-1")
		must(t, err)
		if got.Title != "Add a greet function" || len(got.Tasks) != 1 {
			t.Fatalf("session = %+v", got)
		}
		// A second task keeps the first one's title.
		_, err = s.StartTask("acp-1", "t2", "something else")
		must(t, err)
		got, _ = s.Session("acp-1")
		if got.Title != "Add a greet function" {
			t.Fatalf("title = %q", got.Title)
		}
	})

	t.Run("leaves a session that exists as it is, even one another process made", func(t *testing.T) {
		e := newEnv(t)
		a := e.open(t)
		defer a.Close()
		sid, err := a.StartTask("", "t1", "first")
		must(t, err)
		b := e.open(t)
		defer b.Close()
		must(t, b.Ensure(sid))
		got, err := b.Session(sid)
		must(t, err)
		if got.Title != "first" || len(got.Tasks) != 1 {
			t.Fatalf("session = %+v", got)
		}
	})

	t.Run("refuses an id that cannot name a file", func(t *testing.T) {
		s := newEnv(t).open(t)
		defer s.Close()
		for _, id := range []string{"", "..", "a/b", strings.Repeat("x", 129)} {
			if err := s.Ensure(id); !errors.Is(err, ErrInvalid) {
				t.Errorf("Ensure(%q) = %v, want ErrInvalid", id, err)
			}
		}
	})
}
