//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/testkit"
	"golang.org/x/sys/unix"
)

// slowEditorScript plans one subtask whose worker says something bigger
// than the pipe holds (2 MiB, sent twice: as a delta and as the message),
// then runs a command the sidecar runs itself, which writes its pid to
// pidFile and sleeps until it is killed.
func slowEditorScript(t *testing.T, pidFile string) string {
	t.Helper()
	big := strings.Repeat("y", 2<<20)
	command := fmt.Sprintf("echo $$ > %[1]s.tmp && mv %[1]s.tmp %[1]s && exec sleep 60", pidFile)
	script := map[string]any{"agents": map[string]any{
		"coordinator": []any{map[string]any{"toolCalls": []any{map[string]any{"name": "plan", "arguments": map[string]any{
			"subtasks": []any{map[string]any{"id": "1", "content": "say a lot, then wait"}}}}}}},
		"1": []any{map[string]any{"text": big, "toolCalls": []any{map[string]any{"name": "run_command", "arguments": map[string]any{"command": command}}}}},
	}}
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// startSlowEditor starts the binary for a workspace and a state directory
// with the script, as an editor that makes no reverse call necessary: it
// neither runs commands nor reads files for agentls (agentls does both
// itself), and agent/run brings its own progress token.
func startSlowEditor(t *testing.T, root, state, script string, args ...string) *headless.Editor {
	t.Helper()
	caps := headless.FullCapabilities()
	caps.RunCommand, caps.ReadFile = false, false
	ed, err := headless.Start(testkit.Context(t), headless.Options{
		Root:                  root,
		Command:               append([]string{binary, "serve", "--log-level", "debug"}, args...),
		Env:                   append(os.Environ(), "AGENTLS_STATE_DIR="+state),
		Caps:                  caps,
		InitializationOptions: map[string]any{"model": "script:" + script, "commands": "allow", "editMode": "apply"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	return ed
}

// poll calls cond until it holds, failing after bound: a bound against
// hanging, never a measure of speed.
func poll(t *testing.T, bound time.Duration, what string, cond func() bool) time.Time {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %s", what, bound)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Now()
}

func readPid(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	poll(t, 20*time.Second, "the command to start", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

// sessionState reads a task's state from the session index on disk
// (docs/PROTOCOL.md §6): what the server recorded, seen without the wire.
func sessionState(state, taskID string) string {
	files, _ := filepath.Glob(filepath.Join(state, "workspaces", "*", "sessions.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var idx struct {
			Sessions []struct {
				Tasks []struct{ TaskID, State string }
			}
		}
		if json.Unmarshal(b, &idx) != nil {
			continue
		}
		for _, s := range idx.Sessions {
			for _, tk := range s.Tasks {
				if tk.TaskID == taskID {
					return tk.State
				}
			}
		}
	}
	return ""
}

func processGone(pid int) bool { return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) }

// TestEditorThatPausesReading drives the built binary over its real pipes
// with an editor that stops reading stdout for seconds while agentls has
// megabytes to send it: the task goes on, agent/stop sent during the pause
// stops it during the pause, and once the editor reads again every event
// arrives, in order, seq without a gap.
func TestEditorThatPausesReading(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	pidFile := filepath.Join(t.TempDir(), "pid")
	ed := startSlowEditor(t, root, state, slowEditorScript(t, pidFile))

	ed.PauseReading()
	paused := time.Now()
	runDone := make(chan error, 1)
	var res api.RunResult
	go func() {
		runDone <- ed.Call(testkit.Context(t), api.MethodRun, api.RunParams{Prompt: "say a lot", TaskID: "t1", WorkDoneToken: api.NewProgressToken("p1")}, &res)
	}()
	// The command runs after the 2 MiB message: the task went on although
	// nothing it sent was read.
	pid := readPid(t, pidFile)

	// Replies to pings, written by the read loop, back up too.
	pingData := strings.Repeat("z", 1<<20)
	pings := make(chan error, 2)
	for range 2 {
		go func() {
			var pong struct{ Data string }
			err := ed.Call(testkit.Context(t), api.MethodPing, map[string]string{"data": pingData}, &pong)
			if err == nil && pong.Data != pingData {
				err = fmt.Errorf("ping answered %d bytes, want %d", len(pong.Data), len(pingData))
			}
			pings <- err
		}()
	}

	stopSent := time.Now()
	stopDone := make(chan error, 1)
	var stop api.StopResult
	go func() { stopDone <- ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t1"}, &stop) }()

	cancelled := poll(t, 20*time.Second, "the command to be killed while the editor does not read", func() bool { return processGone(pid) })
	ended := poll(t, 20*time.Second, "the task to end while the editor does not read", func() bool { return sessionState(state, "t1") == api.TaskStopped })
	select {
	case err := <-stopDone:
		t.Fatalf("agent/stop answered while the editor was not reading (%v): the test did not pause it", err)
	default:
	}
	// An editor busy for seconds, as a person would see it.
	time.Sleep(time.Until(paused.Add(2 * time.Second)))
	ed.ResumeReading()

	if err := <-stopDone; err != nil || !stop.Stopped {
		t.Fatalf("agent/stop = %+v, %v", stop, err)
	}
	replied := time.Now()
	if err := <-runDone; err != nil || res.State != api.TaskStopped {
		t.Fatalf("agent/run = %s, %v; want stopped", res.State, err)
	}
	for range 2 {
		if err := <-pings; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("stop while the editor was not reading: command killed %s after agent/stop was sent, task ended after %s; "+
		"the reply was read %s after it was sent, once the editor read again (pause %s)",
		cancelled.Sub(stopSent).Round(time.Millisecond), ended.Sub(stopSent).Round(time.Millisecond),
		replied.Sub(stopSent).Round(time.Millisecond), replied.Sub(paused).Round(time.Millisecond))

	// Notifications are recorded by the editor's notification goroutine:
	// the last ones may be recorded just after the reply was read.
	for what, match := range map[string]func(headless.Notification) bool{
		"the progress end": func(n headless.Notification) bool {
			return n.Method == api.MethodProgress && strings.Contains(string(n.Params), `"kind":"end"`)
		},
		"the last taskUpdate": func(n headless.Notification) bool {
			var u api.TaskUpdateParams
			return n.Method == api.MethodTaskUpdate && n.Decode(&u) == nil &&
				u.Event.Kind == api.EventStateChanged && u.State == api.TaskStopped
		},
	} {
		if _, err := ed.Await(testkit.Context(t), match); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var seqs []uint64
	var sawBig, sawEnd bool
	var progress []string
	for _, n := range ed.Notifications() {
		switch n.Method {
		case api.MethodTaskUpdate:
			var u api.TaskUpdateParams
			if err := n.Decode(&u); err != nil {
				t.Fatal(err)
			}
			if u.TaskID != "t1" {
				continue
			}
			seqs = append(seqs, u.Seq)
			if u.Event.Kind == api.EventMessage && len(u.Event.Text) == 2<<20 {
				sawBig = true
			}
			sawEnd = u.Event.Kind == api.EventStateChanged && u.State == api.TaskStopped
		case api.MethodProgress:
			var p struct {
				Value struct{ Kind string } `json:"value"`
			}
			if err := n.Decode(&p); err != nil {
				t.Fatal(err)
			}
			progress = append(progress, p.Value.Kind)
		}
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("taskUpdate %d has seq %d: seqs %v", i, s, seqs)
		}
	}
	if !sawBig || !sawEnd {
		t.Errorf("the 2 MiB message arrived: %v; the last update says stopped: %v (%d updates)", sawBig, sawEnd, len(seqs))
	}
	if len(progress) < 2 || progress[0] != "begin" || progress[len(progress)-1] != "end" {
		t.Errorf("$/progress kinds %v, want begin … end", progress)
	}
	if code, err := ed.Shutdown(testkit.Context(t)); err != nil || code != 0 {
		t.Fatalf("exit code %d, %v", code, err)
	}
}

// TestEditorThatStopsReading: an editor that never reads again is given up
// on after the write timeout: the running task is interrupted (its command
// killed, its session says interrupted) and the process exits 3.
func TestEditorThatStopsReading(t *testing.T) {
	root, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	pidFile := filepath.Join(t.TempDir(), "pid")
	ed := startSlowEditor(t, root, state, slowEditorScript(t, pidFile), "--write-timeout", "1s")

	ed.PauseReading() // for good
	paused := time.Now()
	go func() {
		_ = ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "say a lot", TaskID: "t1", WorkDoneToken: api.NewProgressToken("p1")}, nil)
	}()
	pid := readPid(t, pidFile)
	// The editor reads nothing, so it cannot see the end of the output:
	// wait for the server's exit without reaping it (waitid WNOWAIT), then
	// read again, to the end, for Wait to report the code. ECHILD: the
	// supervisor reaped it already, which it does as soon as it exits.
	gone := make(chan error, 1)
	go func() {
		var info unix.Siginfo
		gone <- unix.Waitid(unix.P_PID, ed.Pid(), &info, unix.WEXITED|unix.WNOWAIT, nil)
	}()
	select {
	case err := <-gone:
		if err != nil && !errors.Is(err, unix.ECHILD) {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30s after the editor stopped reading, with --write-timeout 1s\n%s", ed.Stderr())
	}
	exited := time.Now()
	ed.ResumeReading()
	code, err := ed.Wait(testkit.Context(t))
	if err != nil || code != 3 {
		t.Fatalf("exit code %d, %v; want 3\n%s", code, err, ed.Stderr())
	}
	t.Logf("exited %s after the editor stopped reading (--write-timeout 1s)", exited.Sub(paused).Round(time.Millisecond))
	if !strings.Contains(ed.Stderr(), "the editor stopped reading") {
		t.Errorf("no log line says why:\n%s", ed.Stderr())
	}
	if !processGone(pid) {
		t.Errorf("the command's process %d outlived the server", pid)
	}
	if got := sessionState(state, "t1"); got != api.TaskInterrupted {
		t.Errorf("the session records the task %q, want %q", got, api.TaskInterrupted)
	}

	// The next server over the same workspace lists it so.
	next := startSlowEditor(t, root, state, slowEditorScript(t, pidFile))
	var list api.SessionsResult
	if err := next.Call(testkit.Context(t), api.MethodSessions, nil, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || len(list.Sessions[0].Tasks) != 1 || list.Sessions[0].Tasks[0].State != api.TaskInterrupted {
		t.Fatalf("agent/sessions = %+v, want t1 interrupted", list)
	}
}

// TestInputEndingInsideAFrame: the end of stdin inside a frame is not a
// clean end: it is logged with what was missing and the exit code is 1,
// even after shutdown; at a frame boundary after shutdown it is 0.
func TestInputEndingInsideAFrame(t *testing.T) {
	frame := func(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }
	lifecycle := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}`) +
		frame(`{"jsonrpc":"2.0","method":"initialized","params":{}}`) +
		frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	cases := []struct {
		name  string
		input string
		code  int
		log   string
	}{
		{"exits 0 when the input ends at a frame boundary after shutdown", lifecycle, 0, "input ended"},
		{"exits 1 and says all the body is missing after a Content-Length of 2 GiB",
			lifecycle + "Content-Length: 2147483648\r\n\r\n", 1,
			"the input ended inside a frame: 2147483648 of the 2147483648 body bytes announced are missing"},
		{"exits 1 and says how many bytes a body cut short misses",
			lifecycle + "Content-Length: 100\r\n\r\n" + `{"jsonrpc":"2.0"`, 1,
			"the input ended inside a frame: 84 of the 100 body bytes announced are missing"},
		{"exits 1 when the input ends inside a header", lifecycle + "Content-Length: 10\r\n", 1,
			"the input ended inside the header of a frame announcing 10 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.CommandContext(testkit.Context(t), binary, "serve")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "AGENTLS_STATE_DIR="+filepath.Join(t.TempDir(), "state"))
			cmd.Stdin = strings.NewReader(c.input)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(stderr.String(), c.log) {
				t.Fatalf("exit %d, want %d, with a log saying %q:\n%s", code, c.code, c.log, stderr.String())
			}
		})
	}
}
