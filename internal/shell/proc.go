package shell

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Proc is a long-lived child process agentls supervises: an MCP server, an
// engine, the server the headless editor drives. It runs in a Group of its
// own (killed with this process, even by kill -9), its stdin and stdout
// are pipes this process owns (Wait never closes them under a reader), and
// the end of its stderr is kept to say why it failed.
//
// Every child process of agentls is started here or by Run (a command
// line) or Git: no other package calls exec.Command.
type Proc struct {
	cmd    *exec.Cmd
	group  *Group
	stdin  *os.File // ours: the child's input
	stdout *os.File // ours: the child's output
	tail   *Tail

	exited chan struct{} // closed when the process has been reaped
	err    error         // Wait's, once exited is closed

	stopOnce sync.Once
}

// ProcSpec is what Start starts.
type ProcSpec struct {
	Argv []string // the program (looked up in the PATH of this process, never in Dir) and its arguments
	Dir  string   // where it runs
	Env  []string // its whole environment (Environ builds it)
	// Stderr, when set, receives the child's stderr as well as its tail
	// being kept.
	Stderr io.Writer
	// StderrKeep is how much of the end of stderr is kept (4 KiB).
	StderrKeep int
}

// Start starts spec's program in a new Group with pipes for its stdin and
// stdout. The program is resolved before it runs: a relative name with a
// slash is refused (it would be resolved against Dir, a directory the
// repository may have written), and a bare name is looked up in this
// process's PATH, whose relative entries are skipped for the same reason.
func Start(spec ProcSpec) (*Proc, error) {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return nil, errors.New("no command to start")
	}
	path, err := LookPath(spec.Argv[0])
	if err != nil {
		return nil, err
	}
	g, err := NewGroup()
	if err != nil {
		return nil, err
	}
	keep := spec.StderrKeep
	if keep <= 0 {
		keep = 4 << 10
	}
	p := &Proc{group: g, tail: &Tail{Max: keep}, exited: make(chan struct{})}
	cmd := exec.Command(path, spec.Argv[1:]...)
	cmd.Args[0] = spec.Argv[0]
	cmd.Dir, cmd.Env = spec.Dir, spec.Env
	cmd.Stderr = p.tail
	if spec.Stderr != nil {
		cmd.Stderr = io.MultiWriter(p.tail, spec.Stderr)
	}
	// A child that leaves stderr open in a grandchild must not hold Wait
	// once the group is killed.
	cmd.WaitDelay = time.Second
	inR, inW, err := os.Pipe()
	if err != nil {
		g.Close()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		g.Close()
		closeAll(inR, inW)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	err = g.Start(cmd)
	closeAll(inR, outW)
	if err != nil {
		g.Close()
		closeAll(inW, outR)
		return nil, fmt.Errorf("starting %s: %w", spec.Argv[0], err)
	}
	p.cmd, p.stdin, p.stdout = cmd, inW, outR
	go func() {
		// Ends when the process does; Stop always kills the group.
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// Stdin is the child's input.
func (p *Proc) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the child's output.
func (p *Proc) Stdout() io.ReadCloser { return p.stdout }

// Pid is the child's process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Group is the group the child and what it starts run in.
func (p *Proc) Group() *Group { return p.group }

// Exited is closed once the child has ended and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is how the child ended (Wait's error); valid once Exited is closed.
func (p *Proc) Err() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// Stop ends the child and everything it started: SIGTERM to its group (and
// to the processes it started that left the group), up to grace for them
// to exit (none on Windows, where the job is closed at once), then SIGKILL
// to what is left. It returns once the child is reaped and closes the
// pipes; stopping again does nothing.
func (p *Proc) Stop(grace time.Duration) {
	p.stopOnce.Do(func() {
		strays := strayDescendants(p.Pid(), p.group.ID())
		if grace > 0 {
			p.group.Terminate()
			signalAll(strays, false)
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		// What is left, and what the children started meanwhile.
		strays = append(strays, strayDescendants(p.Pid(), p.group.ID())...)
		p.group.Kill()
		signalAll(strays, true)
		_ = p.stdin.Close()
		<-p.exited
		p.group.Close()
		_ = p.stdout.Close()
	})
}

// ExitReason says how the child ended, with the end of its stderr on one
// line ("" while it runs): "it exited with status 0", "it exited: exit
// status 1; its last output: …".
func (p *Proc) ExitReason() string {
	select {
	case <-p.exited:
	default:
		return ""
	}
	var ee *exec.ExitError
	r := "it exited with status 0"
	switch {
	case p.err == nil:
	case errors.As(p.err, &ee):
		r = "it exited: " + ee.String()
	default:
		r = "it exited: " + p.err.Error()
	}
	if t := p.StderrTail(); t != "" {
		r += "; its last output: " + t
	}
	return r
}

// StderrTail is the end of the child's stderr on one line, at most 600
// bytes.
func (p *Proc) StderrTail() string {
	t := strings.Join(strings.Fields(p.tail.String()), " ")
	if len(t) > 600 {
		t = "…" + t[len(t)-600:]
	}
	return t
}
