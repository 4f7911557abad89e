package runner

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// lines is the run's one reader of the terminal's input. A goroutine,
// started with the first question (or with the run's controls), reads line
// after line and hands each to the question waiting for it; a line typed
// while no question waits goes to the idle handler (the controls of a live
// run), or is dropped when there is none. A question that is withdrawn (its context ends) stops waiting
// and leaves nothing behind, so the next question gets the next line: two
// reads never race for one line.
//
// The goroutine belongs to the run and ends with the input: `agentls run`
// exits when the run ends, and a test ends its input.
type lines struct {
	in *bufio.Reader

	start sync.Once
	ended chan struct{} // closed at the end of input

	mu     sync.Mutex
	waiter chan string  // the waiting question's (buffered), nil when none
	idle   func(string) // gets a line no question waits for; nil drops it
}

// begin starts reading, if nothing started it yet.
func (l *lines) begin() { l.start.Do(func() { go l.loop() }) }

// setIdle sets the handler of the lines typed while no question waits
// (nil drops them). It is called on the reading goroutine and must not
// block.
func (l *lines) setIdle(f func(string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idle = f
}

func newLines(r io.Reader) *lines {
	return &lines{in: bufio.NewReader(r), ended: make(chan struct{})}
}

func (l *lines) loop() {
	defer close(l.ended)
	for {
		s, err := l.in.ReadString('\n')
		if s != "" {
			l.mu.Lock()
			w, idle := l.waiter, l.idle
			l.waiter = nil
			l.mu.Unlock()
			switch {
			case w != nil:
				w <- s // buffered: never blocks
			case idle != nil:
				idle(s)
			}
		}
		if err != nil {
			return
		}
	}
}

// next waits for the next line (its newline included); asked shows the
// question once the line to come is the question's. It fails with io.EOF
// when the input has ended and with ctx's error when ctx ends first.
func (l *lines) next(ctx context.Context, asked func()) (string, error) {
	w := make(chan string, 1)
	l.mu.Lock()
	l.waiter = w
	l.mu.Unlock()
	asked()
	l.begin()
	select {
	case s := <-w:
		return s, nil
	case <-l.ended:
		select {
		case s := <-w: // the last line, handed over as the input ended
			return s, nil
		default:
			return "", io.EOF
		}
	case <-ctx.Done():
		l.mu.Lock()
		if l.waiter == w {
			l.waiter = nil
		}
		l.mu.Unlock()
		return "", context.Cause(ctx)
	}
}
