package sessions

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

const childEnv = "AGENTLS_SESSIONS_CHILD"

// TestTwoProcesses runs two sidecars on one workspace as two real
// processes (this test binary re-executed as a child that takes commands on
// stdin), and checks that neither loses the other's sessions, whether they
// write in turns or at once, and that a task is listed as interrupted only
// once the process that ran it is gone.
func TestTwoProcesses(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		runChild(t)
		return
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("the children are stopped with SIGKILL")
	}
	tasks := 30
	if testing.Short() || raceEnabled {
		tasks = 10
	}

	t.Run("alternating writes keep both processes' sessions", func(t *testing.T) {
		state := t.TempDir()
		a, b := startChild(t, state), startChild(t, state)
		want := map[string]string{} // task -> session
		for i := range tasks {
			for _, c := range []*child{a, b} {
				task := fmt.Sprintf("%s-%d", c.name, i)
				want[task] = c.do(t, "start - %s", task)
			}
			for _, step := range []string{"state %s %s running", "append %s %s hello", "state %s %s done"} {
				for _, c := range []*child{a, b} {
					task := fmt.Sprintf("%s-%d", c.name, i)
					c.do(t, step, want[task], task)
				}
			}
		}
		checkAll(t, state, want, 1, a, b)
	})

	t.Run("overlapping writes keep both processes' sessions", func(t *testing.T) {
		state := t.TempDir()
		a, b := startChild(t, state), startChild(t, state)
		a.send(t, "loop %d", tasks)
		b.send(t, "loop %d", tasks)
		want := map[string]string{} // task -> session, as each loop reports them
		for _, c := range []*child{a, b} {
			if r := c.reply(t); json.Unmarshal([]byte(r), &want) != nil {
				t.Fatalf("%s: loop answered %q", c.name, r)
			}
		}
		if len(want) != 2*tasks {
			t.Fatalf("the children report %d tasks, want %d", len(want), 2*tasks)
		}
		checkAll(t, state, want, 3, a, b)
	})

	t.Run("a task running in one process is running in the other", func(t *testing.T) {
		state := t.TempDir()
		a := startChild(t, state)
		sid := a.do(t, "start - held")
		a.do(t, "state %s held running", sid)
		b := startChild(t, state) // opens while A runs the task
		if got := b.do(t, "state-of %s held", sid); got != api.TaskRunning {
			t.Fatalf("B lists A's running task as %s", got)
		}
		if got := openObserver(t, state).stateOf(t, sid, "held"); got != api.TaskRunning {
			t.Fatalf("a third store lists A's running task as %s", got)
		}
		a.do(t, "close")
		if got := b.do(t, "state-of %s held", sid); got != api.TaskInterrupted {
			t.Fatalf("after A closed, B lists its task as %s, want interrupted", got)
		}
	})

	t.Run("the task of a killed process is listed as interrupted", func(t *testing.T) {
		state := t.TempDir()
		a, b := startChild(t, state), startChild(t, state)
		sid := a.do(t, "start - held")
		a.do(t, "state %s held running", sid)
		if got := b.do(t, "state-of %s held", sid); got != api.TaskRunning {
			t.Fatalf("B lists A's running task as %s", got)
		}
		if err := b.do(t, "delete %s", sid); !strings.Contains(err, "stop it first") {
			t.Fatalf("B deleting A's busy session: %q, want refused", err)
		}
		a.kill(t)
		if got := b.do(t, "state-of %s held", sid); got != api.TaskInterrupted {
			t.Fatalf("after A was killed, B lists its task as %s, want interrupted", got)
		}
		if got := b.do(t, "delete %s", sid); got != "deleted" {
			t.Fatalf("B deleting the session of a killed process: %q", got)
		}
	})
}

// checkAll checks that the children and a third store each list every task
// of want as done, and that each session holds perTask messages per task.
func checkAll(t *testing.T, state string, want map[string]string, perTask int, cs ...*child) {
	t.Helper()
	obs := openObserver(t, state)
	for _, c := range cs {
		var got map[string]string
		if err := json.Unmarshal([]byte(c.do(t, "list")), &got); err != nil {
			t.Fatal(err)
		}
		var wrong []string
		for task := range want {
			if got[task] != api.TaskDone {
				wrong = append(wrong, fmt.Sprintf("%s:%q", task, got[task]))
			}
		}
		if len(wrong) > 0 {
			slices.Sort(wrong)
			t.Errorf("%s lists %d of %d tasks missing or not done, as %v", c.name, len(wrong), len(want), wrong[:min(len(wrong), 5)])
		}
	}
	list, err := obs.Sessions()
	must(t, err)
	listed := map[string]string{}
	for _, se := range list.Sessions {
		for _, tk := range se.Tasks {
			listed[tk.TaskID] = tk.State
		}
	}
	msgs := map[string]int{}
	for task, sid := range want {
		if listed[task] != api.TaskDone {
			t.Errorf("a third store lists task %s as %q, want done", task, listed[task])
		}
		if _, ok := msgs[sid]; !ok {
			m, err := obs.Messages(sid)
			must(t, err)
			msgs[sid] = len(m)
		}
	}
	perSession := map[string]int{}
	for _, sid := range want {
		perSession[sid] += perTask
	}
	for sid, n := range perSession {
		if msgs[sid] != n {
			t.Errorf("session %s holds %d messages, want %d", sid, msgs[sid], n)
		}
	}
}

type observer struct{ *Store }

func openObserver(t *testing.T, state string) observer {
	t.Helper()
	s, err := Open(state, "/project", Options{})
	must(t, err)
	t.Cleanup(func() { s.Close() })
	return observer{s}
}

func (o observer) stateOf(t *testing.T, sid, task string) string {
	return stateOf(t, o.Store, sid, task)
}

// child is a store in another process, driven one command at a time.
type child struct {
	name    string
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan string
}

var children int

func startChild(t *testing.T, state string) *child {
	t.Helper()
	children++
	name := fmt.Sprintf("p%d", children)
	cmd := exec.Command(os.Args[0], "-test.run=^TestTwoProcesses$")
	cmd.Env = append(os.Environ(), childEnv+"="+name, "CHILD_STATE="+state)
	in, err := cmd.StdinPipe()
	must(t, err)
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	c := &child{name: name, cmd: cmd, in: in, replies: make(chan string, 16)}
	go func() {
		defer close(c.replies)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if r, ok := strings.CutPrefix(sc.Text(), "REPLY "); ok {
				c.replies <- r
			}
		}
	}()
	t.Cleanup(func() {
		c.in.Close()
		c.cmd.Wait()
	})
	c.reply(t) // opened
	return c
}

func (c *child) send(t *testing.T, format string, args ...any) {
	t.Helper()
	if _, err := fmt.Fprintf(c.in, format+"\n", args...); err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
}

func (c *child) reply(t *testing.T) string {
	t.Helper()
	select {
	case r, ok := <-c.replies:
		if !ok {
			t.Fatalf("%s ended without answering", c.name)
		}
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not answer within a minute", c.name)
	}
	return ""
}

// do sends one command and returns its answer.
func (c *child) do(t *testing.T, format string, args ...any) string {
	t.Helper()
	c.send(t, format, args...)
	return c.reply(t)
}

// kill ends the child with SIGKILL and waits until it is gone.
func (c *child) kill(t *testing.T) {
	t.Helper()
	must(t, c.cmd.Process.Signal(syscall.SIGKILL))
	c.cmd.Wait()
}

// runChild serves commands on stdin with a store of its own, one answer
// line each, until stdin ends.
func runChild(t *testing.T) {
	name := os.Getenv(childEnv)
	s, err := Open(os.Getenv("CHILD_STATE"), "/project", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reply := func(format string, args ...any) { fmt.Printf("REPLY "+format+"\n", args...) }
	reply("open")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var err error
		switch f[0] {
		case "start": // start <session|-> <task>
			sid := strings.TrimPrefix(f[1], "-")
			if sid, err = s.StartTask(sid, f[2], "prompt "+f[2]); err == nil {
				reply("%s", sid)
			}
		case "state": // state <session> <task> <state>
			if err = s.SetTaskState(f[1], f[2], f[3]); err == nil {
				reply("ok")
			}
		case "append": // append <session> <task> <text>
			if err = s.Append(f[1], api.SessionMessage{Role: "assistant", Text: f[3], TaskID: f[2]}); err == nil {
				reply("ok")
			}
		case "state-of": // state-of <session> <task>
			var r api.SessionResult
			if r, err = s.Session(f[1]); err == nil {
				st := "missing"
				for _, tk := range r.Tasks {
					if tk.TaskID == f[2] {
						st = tk.State
					}
				}
				reply("%s", st)
			}
		case "list":
			var r api.SessionsResult
			if r, err = s.Sessions(); err == nil {
				states := map[string]string{}
				for _, se := range r.Sessions {
					for _, tk := range se.Tasks {
						states[tk.TaskID] = tk.State
					}
				}
				b, _ := json.Marshal(states)
				reply("%s", b)
			}
		case "delete": // delete <session>
			if err = s.Delete(f[1]); err == nil {
				reply("deleted")
			}
		case "loop": // loop <n>: n whole tasks, two per session
			n, _ := strconv.Atoi(f[1])
			tasks := map[string]string{}
			sid := ""
			for i := 0; i < n && err == nil; i++ {
				task := fmt.Sprintf("%s-%d", name, i)
				if i%2 == 0 {
					sid = ""
				}
				if sid, err = s.StartTask(sid, task, "prompt "+task); err != nil {
					break
				}
				tasks[task] = sid
				err = s.SetTaskState(sid, task, api.TaskRunning)
				for j := 0; j < 3 && err == nil; j++ {
					err = s.Append(sid, api.SessionMessage{Role: "assistant", Text: fmt.Sprintf("m%d", j), TaskID: task})
				}
				if err == nil {
					err = s.SetTaskState(sid, task, api.TaskDone)
				}
			}
			if err == nil {
				b, _ := json.Marshal(tasks)
				reply("%s", b)
			}
		case "close":
			if err = s.Close(); err == nil {
				reply("closed")
			}
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		if err != nil {
			reply("error: %v", err)
		}
	}
}
