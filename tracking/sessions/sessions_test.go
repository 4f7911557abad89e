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

	list := s.Sessions().Sessions
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

	t.Run("lists a task that was going at a crash as interrupted", func(t *testing.T) {
		s2 := e.open(t)
		r, err := s2.Session(sid)
		must(t, err)
		if r.Tasks[0].State != api.TaskDone || r.Tasks[1].State != api.TaskInterrupted {
			t.Errorf("tasks after reopen %+v", r.Tasks)
		}
		if len(r.Messages) != 2 {
			t.Errorf("messages after reopen: %d", len(r.Messages))
		}
	})
	t.Run("refuses to delete a session whose task is going", func(t *testing.T) {
		if err := s.Delete(sid); !errors.Is(err, ErrSessionBusy) {
			t.Errorf("got %v", err)
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
		if l := e.open(t).Sessions().Sessions; len(l) != 1 {
			t.Errorf("after reopen %d sessions, want 1", len(l))
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
