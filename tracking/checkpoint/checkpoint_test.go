package checkpoint

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

func update(task, sub, path, before, after string) Change {
	return Change{SessionID: "s1", TaskID: task, SubtaskID: sub, Path: path, Operation: api.OpUpdate, Before: before, Existed: true, After: after}
}

func TestRecordKeepsTheTextsOfEveryChange(t *testing.T) {
	s := Open(t.TempDir(), Options{})
	changes := []Change{
		update("t1", "1", "a.go", "v1\n", "v2\n"),
		{SessionID: "s1", TaskID: "t1", SubtaskID: "2", Path: "new.go", Operation: api.OpCreate, After: "fresh\n"},
		update("t1", "2", "a.go", "v2\n", "v3\n"),
		{SessionID: "s1", TaskID: "t1", SubtaskID: "2", Path: "old.go", Operation: api.OpDelete, Before: "bye\n", Existed: true},
	}
	for _, c := range changes {
		if err := s.Record(c); err != nil {
			t.Fatal(err)
		}
	}
	recs, sid, err := s.Task("", "t1")
	if err != nil || sid != "s1" || len(recs) != 4 {
		t.Fatalf("Task = %d records, %q, %v", len(recs), sid, err)
	}
	for i, r := range recs {
		c := changes[i]
		before, existed, err1 := s.Text(sid, r.Before)
		after, exists, err2 := s.Text(sid, r.After)
		if err1 != nil || err2 != nil || before != c.Before || existed != c.Existed || after != c.After || exists != (c.Operation != api.OpDelete) {
			t.Errorf("record %d = %+v: before %q %v, after %q %v (%v, %v)", i, r, before, existed, after, exists, err1, err2)
		}
		if r.Path != c.Path || r.SubtaskID != c.SubtaskID || r.Operation != c.Operation || r.Missing != "" {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	// v2 is the after of one change and the before of the next: kept once.
	blobs, _ := os.ReadDir(filepath.Join(s.Dir(), "s1", "blobs"))
	if len(blobs) != 5 {
		t.Errorf("%d blobs, want 5 (v1 v2 v3 fresh bye)", len(blobs))
	}
	for _, b := range blobs {
		if fi, _ := b.Info(); fi.Mode().Perm() != 0o600 {
			t.Errorf("blob %s has mode %v, want 0600", b.Name(), fi.Mode().Perm())
		}
	}
}

func TestRecordBounds(t *testing.T) {
	red := redact.FromEnviron([]string{"OPENAI_API_KEY=sk-test-0123456789abcdef"})
	s := Open(t.TempDir(), Options{Redactor: red})
	cases := []struct {
		name    string
		c       Change
		missing string
	}{
		{"does not keep a file larger than MaxText", update("t1", "1", "big", strings.Repeat("x", MaxText+1), "small\n"), "larger than 4 MiB"},
		{"does not keep a file holding a known secret", update("t1", "1", ".env", "KEY=sk-test-0123456789abcdef\n", "KEY=\n"), "holds a secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Record(c.c); err != nil {
				t.Fatal(err)
			}
			recs, _, _ := s.Task("s1", "t1")
			last := recs[len(recs)-1]
			if !strings.Contains(last.Missing, c.missing) {
				t.Fatalf("record = %+v", last)
			}
		})
	}
	t.Run("writes no secret to the state directory", func(t *testing.T) {
		filepath.Walk(s.Dir(), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), "sk-test-0123456789abcdef") {
					t.Errorf("%s holds the secret", p)
				}
			}
			return nil
		})
	})
	t.Run("stops keeping a task's texts past MaxTaskBytes", func(t *testing.T) {
		chunk := strings.Repeat("y", MaxText-10)
		var last Record
		for i := 0; i < MaxTaskBytes/MaxText+2; i++ {
			if err := s.Record(update("t2", "1", "f", fmt.Sprintf("%d%s", i, chunk), fmt.Sprintf("%d%s!", i, chunk))); err != nil {
				t.Fatal(err)
			}
			recs, _, _ := s.Task("s1", "t2")
			last = recs[len(recs)-1]
		}
		if !strings.Contains(last.Missing, "bound of 32 MiB") {
			t.Fatalf("last record = %+v", last)
		}
	})
}

func TestTaskReturnsTheLatestRun(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	newID := func() string { runs++; return fmt.Sprint("run", runs) }
	first := Open(dir, Options{NewID: newID})
	if err := first.Record(update("t1", "1", "a", "1\n", "2\n")); err != nil {
		t.Fatal(err)
	}
	// A later process runs a task of the same id in the same session.
	second := Open(dir, Options{NewID: newID})
	if err := second.Record(update("t1", "1", "b", "x\n", "y\n")); err != nil {
		t.Fatal(err)
	}
	recs, _, err := second.Task("", "t1")
	if err != nil || len(recs) != 1 || recs[0].Path != "b" {
		t.Fatalf("Task = %+v, %v", recs, err)
	}
	if _, _, err := second.Task("", "t9"); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("unknown task: %v", err)
	}
	if _, _, err := second.Task("", "../t1"); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("a task id that is a path: %v", err)
	}
}

func TestOnlyTheMostRecentTasksKeepTheirCheckpoints(t *testing.T) {
	s := Open(t.TempDir(), Options{})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < KeepTasks+3; i++ {
		task := fmt.Sprintf("t%02d", i)
		if err := s.Record(Change{SessionID: fmt.Sprint("s", i%4), TaskID: task, Path: "f", Operation: api.OpUpdate, Before: task + " before\n", Existed: true, After: task + " after\n"}); err != nil {
			t.Fatal(err)
		}
		// Logs age in the order they were written, whatever the clock's grain.
		p := filepath.Join(s.Dir(), fmt.Sprint("s", i%4), task+".jsonl")
		if err := os.Chtimes(p, base.Add(time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < KeepTasks+3; i++ {
		_, sid, err := s.Task("", fmt.Sprintf("t%02d", i))
		if kept := err == nil; kept != (i >= 3) {
			t.Errorf("task %d kept %v (%v)", i, kept, err)
		}
		if err == nil {
			if _, _, err := s.Text(sid, HashText(fmt.Sprintf("t%02d before\n", i))); err != nil {
				t.Errorf("task %d: %v", i, err)
			}
		}
	}
	// The blobs of the pruned tasks went with them.
	if _, _, err := s.Text("s0", HashText("t00 before\n")); err == nil {
		t.Error("a pruned task's text is still kept")
	}
}

func TestDeleteSessionRemovesItsCheckpoints(t *testing.T) {
	s := Open(t.TempDir(), Options{})
	if err := s.Record(update("t1", "1", "a", "1\n", "2\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession("s1"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "s1")); !os.IsNotExist(err) {
		t.Fatalf("the session's checkpoints are still there: %v", err)
	}
}

func TestTextRefusesADamagedText(t *testing.T) {
	s := Open(t.TempDir(), Options{})
	if err := s.Record(update("t1", "1", "a", "1\n", "2\n")); err != nil {
		t.Fatal(err)
	}
	h := HashText("1\n")
	if err := os.WriteFile(filepath.Join(s.Dir(), "s1", "blobs", strings.TrimPrefix(h, "sha256:")), []byte("3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Text("s1", h); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("Text = %v", err)
	}
}
