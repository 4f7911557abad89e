package tracking

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking/trace"
)

// TestCrashAtRandomMoments re-executes this test binary as a child that
// writes sessions, messages and trace lines in a loop, acknowledging each
// write on stdout once it returned (fsynced). The parent kills it with
// SIGKILL after a random number of acknowledgements, many times over the
// same state, and checks after each kill that every file parses, the trace
// holds only whole lines, and nothing acknowledged is missing.
func TestCrashAtRandomMoments(t *testing.T) {
	if testkit.ChildRole() != "" {
		crashChild(t)
		return
	}
	rounds := 20
	if testing.Short() || testkit.Race {
		rounds = 6
	}
	state, root := t.TempDir(), t.TempDir()
	os.Mkdir(filepath.Join(root, trace.Dir), 0o755)
	rng := rand.New(rand.NewPCG(1, uint64(os.Getpid())))

	msgs := map[string][]string{} // session -> acknowledged texts, in order
	traced := map[string]bool{}   // acknowledged trace ids
	tasks := map[string]string{}  // task -> session
	for round := range rounds {
		killAfter := 1 + rng.IntN(120)
		cmd := testkit.Child(t, "writer", "CRASH_STATE="+state, "CRASH_ROOT="+root, "CRASH_ROUND="+strconv.Itoa(round))
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		acks := 0
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "ACK" {
				continue
			}
			switch f[1] {
			case "task":
				tasks[f[3]] = f[2]
			case "msg":
				msgs[f[2]] = append(msgs[f[2]], f[3])
			case "trace":
				traced[f[2]] = true
			}
			if acks++; acks == killAfter {
				cmd.Process.Kill()
				break
			}
		}
		cmd.Wait()
		if acks < killAfter {
			t.Fatalf("round %d: the child stopped after %d acknowledgements:\n%s", round, acks, stderr.String())
		}
		checkAfterCrash(t, round, state, root, msgs, traced, tasks)
	}
}

func checkAfterCrash(t *testing.T, round int, state, root string, msgs map[string][]string, traced map[string]bool, tasks map[string]string) {
	t.Helper()
	var reports []string
	w, err := Open(Config{Root: root, StateDir: state, Report: func(m string) { reports = append(reports, m) }})
	if err != nil {
		t.Fatalf("round %d: Open after a crash: %v", round, err)
	}
	for _, r := range reports {
		if strings.Contains(r, "session list") {
			t.Fatalf("round %d: sessions.json was damaged, an atomic replace must never be: %s", round, r)
		}
	}
	defer w.Close()
	list, err := w.ListSessions()
	if err != nil {
		t.Fatalf("round %d: agent/sessions after a crash: %v", round, err)
	}
	listed := map[string]string{}
	for _, s := range list.Sessions {
		for _, tk := range s.Tasks {
			listed[tk.TaskID] = tk.State
		}
	}
	for task, sid := range tasks {
		st, ok := listed[task]
		if !ok {
			t.Fatalf("round %d: acknowledged task %s of session %s is missing", round, task, sid)
		}
		if st == api.TaskRunning || st == api.TaskPlanning {
			t.Fatalf("round %d: task %s still %s after a crash, want interrupted", round, task, st)
		}
	}
	for sid, want := range msgs {
		r, err := w.Session(api.SessionParams{SessionID: sid})
		if err != nil {
			t.Fatalf("round %d: session %s: %v", round, sid, err)
		}
		var got []string
		for _, m := range r.Messages {
			got = append(got, m.Text)
		}
		if len(got) < len(want) || strings.Join(got[:len(want)], " ") != strings.Join(want, " ") {
			t.Fatalf("round %d: session %s lost acknowledged messages:\n got %v\nwant %v", round, sid, got, want)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, trace.RelPath))
	if err != nil && len(traced) > 0 {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Fatalf("round %d: the trace ends mid-line", round)
	}
	seen := map[string]bool{}
	for i, ln := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if len(raw) == 0 {
			break
		}
		var e api.TraceEntry
		if err := json.Unmarshal(ln, &e); err != nil {
			t.Fatalf("round %d: trace line %d is not whole: %v: %q", round, i+1, err, ln)
		}
		seen[e.ID] = true
	}
	for id := range traced {
		if !seen[id] {
			t.Fatalf("round %d: acknowledged trace entry %s is missing", round, id)
		}
	}
}

// crashChild writes until it is killed.
func crashChild(t *testing.T) {
	state, root, round := os.Getenv("CRASH_STATE"), os.Getenv("CRASH_ROOT"), os.Getenv("CRASH_ROUND")
	w, err := Open(Config{Root: root, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	ack := func(format string, args ...any) { fmt.Printf("ACK "+format+"\n", args...) }
	sid := ""
	for i := 0; ; i++ {
		task := fmt.Sprintf("r%s-t%d", round, i)
		if i%4 == 0 {
			sid = ""
		}
		var err error
		if sid, err = w.Sessions.StartTask(sid, task, "prompt "+task); err != nil {
			t.Fatal(err)
		}
		ack("task %s %s", sid, task)
		must(t, w.Sessions.SetTaskState(sid, task, api.TaskRunning))
		for j := range 3 {
			text := fmt.Sprintf("%s-m%d", task, j)
			must(t, w.Sessions.Append(sid, api.SessionMessage{Role: "assistant", Text: text, TaskID: task, SubtaskID: "1"}))
			ack("msg %s %s", sid, text)
		}
		content := []byte(strings.Repeat(task+" line\n", 1+i%7))
		e, err := w.RecordChange(trace.Change{
			Path: fmt.Sprintf("f%d.txt", i%5), Operation: api.OpUpdate, Content: content,
			Spans: []trace.Span{{Start: 1, End: 1 + i%7}}, SessionID: sid, TaskID: task, SubtaskID: "1", Model: "script:crash",
		})
		must(t, err)
		ack("trace %s", e.ID)
		must(t, w.Sessions.SetTaskState(sid, task, api.TaskDone))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
