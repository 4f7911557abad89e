package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// serverSpec names a server and the command that starts it on stdio.
type serverSpec struct {
	Name string
	Argv []string
}

// initializeParams are the params the driver sends with initialize.
const initializeParams = `{"processId":null,"rootUri":null,"capabilities":{}}`

var (
	callInitialize = newCall("initialize", []byte(initializeParams))
	callShutdown   = newCall("shutdown", nil)
	notifInit      = notification("initialized", []byte(`{}`))
	notifExit      = notification("exit", nil)
)

// proc is one running server: the child process, the driver's ends of its
// stdin and stdout, and the tail of its stderr for error reports. The
// goroutine that waits on the process is owned by proc and ends when the
// process does; close always ends the process.
type proc struct {
	*conn
	spec    serverSpec
	cmd     *exec.Cmd
	started time.Time
	stdin   *os.File
	stdout  *os.File
	stderr  *tailWriter
	exited  chan struct{}
	waitErr error // valid once exited is closed

	mu      sync.Mutex
	aborted string // why the driver killed the process, if it did
}

// start spawns the server with pipes on stdin, stdout and stderr.
func start(spec serverSpec) (*proc, error) {
	if len(spec.Argv) == 0 {
		return nil, fmt.Errorf("server %s: empty command", spec.Name)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("server %s: stdin pipe: %w", spec.Name, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("server %s: stdout pipe: %w", spec.Name, err)
	}
	p := &proc{
		conn:   newConn(outR, inW),
		spec:   spec,
		stdin:  inW,
		stdout: outR,
		stderr: &tailWriter{max: 16 << 10},
		exited: make(chan struct{}),
	}
	p.cmd = exec.Command(spec.Argv[0], spec.Argv[1:]...)
	p.cmd.Stdin = inR
	p.cmd.Stdout = outW
	p.cmd.Stderr = p.stderr
	p.started = time.Now()
	err = p.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("server %s: start %s: %w", spec.Name, spec.Argv[0], err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid is the server's process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// guard kills the server if the work it guards takes longer than d; the
// returned func ends the guard.
func (p *proc) guard(d time.Duration, what string) (stop func()) {
	t := time.AfterFunc(d, func() { p.abort(fmt.Sprintf("%s did not finish within %s", what, d)) })
	return func() { t.Stop() }
}

// abort kills the server and closes the driver's pipe ends, which unblocks
// any read or write in progress.
func (p *proc) abort(reason string) {
	p.mu.Lock()
	if p.aborted == "" {
		p.aborted = reason
	}
	p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	p.stdin.Close()
	p.stdout.Close()
}

// fail turns an I/O or protocol error into one that says what happened to the
// server: the driver's reason for killing it, or how it exited, and the end
// of its stderr.
func (p *proc) fail(what string, err error) error {
	p.mu.Lock()
	reason := p.aborted
	p.mu.Unlock()
	msg := fmt.Sprintf("%s: %s", p.spec.Name, what)
	if reason != "" {
		msg += ": " + reason
	} else {
		select {
		case <-p.exited:
			msg += fmt.Sprintf(": server exited (%v)", p.waitErr)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if tail := p.stderr.String(); tail != "" {
		msg += "\nstderr of " + p.spec.Name + ":\n" + tail
	}
	return fmt.Errorf("%s: %w", msg, err)
}

// roundTrip sends one pre-encoded call and returns its reply.
func (p *proc) roundTrip(k call) (message, error) {
	id := p.newID()
	if err := p.writeCall(id, k); err != nil {
		return message{}, err
	}
	if err := p.flush(); err != nil {
		return message{}, err
	}
	return readReply(p.conn, id, k.method)
}

var errNotification = errors.New("notification")

// checkReply accepts a successful reply, returns errNotification for a
// notification from the server, and an error for anything else.
func checkReply(m message, method string) error {
	switch {
	case m.method != nil && !m.hasID:
		return errNotification
	case m.method != nil:
		return fmt.Errorf("unexpected request %s from the server (the driver answers none)", m.method)
	case !m.hasID:
		return fmt.Errorf("reply without id while waiting for %s: error %s", method, m.err)
	case m.err != nil:
		return fmt.Errorf("%s answered an error: %s", method, m.err)
	case m.result == nil:
		return fmt.Errorf("reply to %s has neither result nor error", method)
	}
	return nil
}

// initialize sends initialize and initialized and returns the time from the
// spawn to the initialize reply.
func (p *proc) initialize(timeout time.Duration) (time.Duration, error) {
	defer p.guard(timeout, "initialize")()
	if _, err := p.roundTrip(callInitialize); err != nil {
		return 0, p.fail("initialize", err)
	}
	elapsed := time.Since(p.started)
	if err := p.writeBody(notifInit); err != nil {
		return 0, p.fail("initialized", err)
	}
	if err := p.flush(); err != nil {
		return 0, p.fail("initialized", err)
	}
	return elapsed, nil
}

// stop ends the server the polite way (shutdown, exit) and reports its exit
// code; a server that does not exit in time is killed and that is an error.
func (p *proc) stop(timeout time.Duration) (int, error) {
	defer p.close()
	stopGuard := p.guard(timeout, "shutdown and exit")
	defer stopGuard()
	if _, err := p.roundTrip(callShutdown); err != nil {
		return -1, p.fail("shutdown", err)
	}
	if err := p.writeBody(notifExit); err != nil {
		return -1, p.fail("exit", err)
	}
	if err := p.flush(); err != nil {
		return -1, p.fail("exit", err)
	}
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(timeout):
		return -1, p.fail("exit", errors.New("server still running after exit"))
	}
	return p.cmd.ProcessState.ExitCode(), nil
}

// close kills the server if it still runs and waits for it.
func (p *proc) close() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	p.stdin.Close()
	p.stdout.Close()
}

// memStat is the memory of a process as /proc/<pid>/status reports it.
type memStat struct {
	rss, hwm int64 // bytes
}

var errNoProcfs = errors.New("no /proc on this system")

// readMem reads VmRSS and VmHWM of pid.
func readMem(pid int) (memStat, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, statErr := os.Stat("/proc/self/status"); statErr != nil {
				return memStat{}, errNoProcfs
			}
		}
		return memStat{}, fmt.Errorf("read status of %d: %w", pid, err)
	}
	var m memStat
	var haveRSS, haveHWM bool
	for line := range bytes.Lines(data) {
		if v, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			m.rss, haveRSS = parseKB(v)
		} else if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			m.hwm, haveHWM = parseKB(v)
		}
	}
	if !haveRSS || !haveHWM {
		return memStat{}, fmt.Errorf("status of %d lacks VmRSS or VmHWM", pid)
	}
	return m, nil
}

// parseKB parses "   1234 kB\n" into bytes.
func parseKB(v []byte) (int64, bool) {
	f := bytes.Fields(v)
	if len(f) != 2 || string(f[1]) != "kB" {
		return 0, false
	}
	n, err := strconv.ParseInt(string(f[0]), 10, 64)
	if err != nil {
		return 0, false
	}
	return n << 10, true
}

// cpuTime is the CPU time pid's threads have run so far, summed from
// /proc/<pid>/task/*/schedstat (nanoseconds). Threads that already ended
// are not counted; Go and Node keep theirs.
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "schedstat"))
	if err != nil || len(tasks) == 0 {
		return 0, errNoProcfs
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended between the glob and the read
		}
		f := bytes.Fields(data)
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse %s: %w", t, err)
		}
		total += ns
	}
	return time.Duration(total), nil
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailWriter) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}
