package shell

import (
	"bytes"
	"fmt"
	"sync"
	"unicode/utf8"
)

// Bounds of a command's output as the runner keeps it (docs/PROTOCOL.md §4,
// agent/runCommand): its first OutputHead bytes, where the command says
// what it is doing, and its last OutputTail bytes, where test failures and
// summaries are. What lies between is dropped and a marker says how much.
const (
	OutputHead = 256 << 10
	OutputTail = 768 << 10
	// MaxOutput is the most output kept, the marker aside (1 MiB).
	MaxOutput = OutputHead + OutputTail
)

// lineSnap is how far a cut may move to fall at a line's end: a cut never
// splits a UTF-8 character, and it splits a line only when no line ends
// within this many bytes of the bound (or half the part, if smaller).
const lineSnap = 1 << 10

// Marker is the line that stands for n dropped bytes.
func Marker(n int64) string {
	return fmt.Sprintf("\n[… %d bytes of output cut here …]\n", n)
}

// Output is an io.Writer that keeps the head and the tail of what is
// written to it, in bounded memory (at most head + 2×tail bytes), and
// counts the rest. Safe for concurrent use.
type Output struct {
	mu         sync.Mutex
	head, tail []byte
	maxHead    int
	maxTail    int
	total      int64
}

// NewOutput keeps the first head and the last tail bytes written.
func NewOutput(head, tail int) *Output {
	return &Output{maxHead: max(head, 0), maxTail: max(tail, 0)}
}

// Write keeps what fits in the head, then the latest bytes in the tail. It
// never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	o.total += int64(n)
	if room := o.maxHead - len(o.head); room > 0 {
		k := min(room, len(p))
		o.head = append(o.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 || o.maxTail == 0 {
		return n, nil
	}
	if len(p) >= o.maxTail {
		o.tail = append(o.tail[:0], p[len(p)-o.maxTail:]...)
		return n, nil
	}
	o.tail = append(o.tail, p...)
	if len(o.tail) > 2*o.maxTail {
		// Compact: amortised, so a stream of small writes stays linear.
		o.tail = o.tail[:copy(o.tail, o.tail[len(o.tail)-o.maxTail:])]
	}
	return n, nil
}

// Dropped is how many bytes written so far are not kept.
func (o *Output) Dropped() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total - int64(len(o.head)) - int64(min(len(o.tail), o.maxTail))
}

// String is what was written when it fits, else the head, a Marker with
// the number of bytes dropped, and the tail. The cut never splits a UTF-8
// character and falls at a line's end when one is near.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	head := o.head
	tail := o.tail[max(len(o.tail)-o.maxTail, 0):]
	dropped := o.total - int64(len(head)) - int64(len(tail))
	if dropped == 0 {
		return string(head) + string(tail)
	}
	head = cutHead(head)
	tail = cutTail(tail)
	dropped = o.total - int64(len(head)) - int64(len(tail))
	var b bytes.Buffer
	b.Grow(len(head) + len(tail) + 64)
	b.Write(head)
	b.WriteString(Marker(dropped))
	b.Write(tail)
	return b.String()
}

// Cut returns s whole when it is at most head + tail bytes long, else its
// first head and last tail bytes around a Marker, cut as Output cuts.
func Cut(s string, head, tail int) string {
	if len(s) <= head+tail {
		return s
	}
	o := NewOutput(head, tail)
	_, _ = o.Write([]byte(s))
	return o.String()
}

// cutHead ends the head at a line's end when one is near the bound, else
// before a character the bound splits.
func cutHead(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 && len(b)-(i+1) <= min(lineSnap, len(b)/2) {
		return b[:i+1]
	}
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// cutTail starts the tail after a line's end when one is near the bound,
// else at the first whole character.
func cutTail(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < min(lineSnap, len(b)/2) {
		return b[i+1:]
	}
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
