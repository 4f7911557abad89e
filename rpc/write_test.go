package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/internal/testkit"
)

// within waits for ch, failing the test after d: a bound against hanging,
// never a measure of speed.
func within[T any](t *testing.T, d time.Duration, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: still waiting after %s", what, d)
		var zero T
		return zero
	}
}

// stalledPipe is a pipe whose reading end nobody reads yet. Closing it at
// the end ends the writes still waiting on it.
func stalledPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	return r, w
}

// notifyBody is a notification whose params hold size bytes, the frame's
// index first.
func writeNote(s *Stream, i, size int) error {
	params := fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", size))
	_, err := s.writeRequest(nil, "note", []byte(params))
	return err
}

func readNotes(t *testing.T, r io.Reader, n int) []int {
	t.Helper()
	br := bufio.NewReader(r)
	var got []int
	for range n {
		var m struct {
			Params struct {
				I int `json:"i"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(readFrame(t, br)), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Params.I)
	}
	return got
}

func TestStreamWriteToASlowReader(t *testing.T) {
	t.Run("never makes a writer wait on a pipe nobody reads, and loses nothing", func(t *testing.T) {
		r, w := stalledPipe(t)
		s := NewStream(strings.NewReader(""), w, nil)
		if s.raw == nil {
			t.Fatal("an os.Pipe end is not written without blocking")
		}
		// 6 MiB: several times what the pipe holds, under the high-water mark.
		done := make(chan error, 1)
		go func() {
			for i := range 96 {
				if err := writeNote(s, i, 64<<10); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
		if err := within(t, 10*time.Second, "writes to a pipe nobody reads", done); err != nil {
			t.Fatal(err)
		}
		got := readNotes(t, r, 96)
		for i, n := range got {
			if n != i {
				t.Fatalf("frame %d arrived as %d", i, n)
			}
		}
		if err := s.Flush(testkit.Context(t)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("keeps each writer's frames whole and in order when many write while the reader is slow", func(t *testing.T) {
		r, w := stalledPipe(t)
		s := NewStream(strings.NewReader(""), w, nil)
		const writers, each = 8, 40
		var wg sync.WaitGroup
		for g := range writers {
			wg.Go(func() {
				for i := range each {
					if err := writeNote(s, g*1000+i, (g*7919+i*104729)%(48<<10)); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		slow := iotestSlowReader{r: r}
		got := readNotes(t, &slow, writers*each)
		wg.Wait()
		next := make([]int, writers)
		for _, n := range got {
			g, i := n/1000, n%1000
			if i != next[g] {
				t.Fatalf("writer %d: frame %d arrived after frame %d", g, i, next[g]-1)
			}
			next[g]++
		}
	})

	t.Run("gives up on a reader that reads nothing for the write timeout", func(t *testing.T) {
		_, w := stalledPipe(t)
		s := NewStream(strings.NewReader(""), w, nil)
		s.SetWriteTimeout(200 * time.Millisecond)
		for i := range 4 { // 4 MiB: the pipe fills, the rest waits in the backlog
			if err := writeNote(s, i, 1<<20); err != nil && !errors.Is(err, ErrWriteStalled) {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		within(t, 10*time.Second, "Stalled", s.Stalled())
		if err := writeNote(s, 99, 1); !errors.Is(err, ErrWriteStalled) {
			t.Fatalf("write after the stall = %v, want ErrWriteStalled", err)
		}
		if err := s.Flush(testkit.Context(t)); !errors.Is(err, ErrWriteStalled) {
			t.Fatalf("Flush = %v, want ErrWriteStalled", err)
		}
	})

	t.Run("waits for a reader that reads slowly but steadily, longer than the timeout in all", func(t *testing.T) {
		r, w := stalledPipe(t)
		s := NewStream(strings.NewReader(""), w, nil)
		s.SetWriteTimeout(time.Second)
		for i := range 128 { // 8 MiB, read 4 KiB a millisecond: over two seconds
			if err := writeNote(s, i, 64<<10); err != nil {
				t.Fatalf("write %d: %v", i, err)
			}
		}
		slow := iotestSlowReader{r: r, step: 4 << 10, pause: time.Millisecond}
		got := readNotes(t, &slow, 128)
		if err := s.Flush(testkit.Context(t)); err != nil {
			t.Fatalf("Flush = %v after %d frames", err, len(got))
		}
		select {
		case <-s.Stalled():
			t.Fatal("gave up on a reader that was reading")
		default:
		}
	})

	t.Run("gives up on a blocking writer whose write lasts the whole timeout", func(t *testing.T) {
		pr, pw := io.Pipe()
		t.Cleanup(func() { _ = pr.Close() })
		s := NewStream(strings.NewReader(""), pw, nil)
		s.SetWriteTimeout(100 * time.Millisecond)
		go func() { _ = writeNote(s, 0, 10) }() // io.Pipe blocks until read: nobody reads
		within(t, 10*time.Second, "Stalled", s.Stalled())
	})
}

// iotestSlowReader reads at most step bytes at a time, pausing between
// reads: an editor that is slow to read.
type iotestSlowReader struct {
	r     io.Reader
	step  int
	pause time.Duration
}

func (s *iotestSlowReader) Read(p []byte) (int, error) {
	step := s.step
	if step == 0 {
		step = 1 << 10
	}
	if s.pause > 0 {
		time.Sleep(s.pause)
	}
	return s.r.Read(p[:min(len(p), step)])
}

// inlineEcho answers every call on the read loop.
type inlineEcho struct{ notes chan string }

func (inlineEcho) Gate(*Request) error  { return nil }
func (inlineEcho) Inline(*Request) bool { return true }
func (h inlineEcho) HandleNotification(_ context.Context, req *Request) {
	h.notes <- req.Method()
}
func (inlineEcho) HandleCall(_ context.Context, req *Request) (any, error) {
	return RawJSON(req.Params()), nil
}

func TestConnWithAClientThatDoesNotRead(t *testing.T) {
	t.Run("goes on reading while the replies it writes on the read loop back up", func(t *testing.T) {
		inR, inW := stalledPipe(t)
		outR, outW := stalledPipe(t)
		h := inlineEcho{notes: make(chan string, 1)}
		server := NewConn(NewStream(inR, outW, nil), nil)
		served := make(chan error, 1)
		go func() { served <- server.Serve(context.Background(), h) }()
		big := `{"data":"` + strings.Repeat("x", 1<<20) + `"}`
		go func() {
			// 4 MiB of replies to a client that reads none of them, then a
			// notification: it is handled. (A failed write shows as the
			// notification missing.)
			for i := range 4 {
				body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"ping","params":` + big + `}`
				_, _ = fmt.Fprintf(inW, "Content-Length: %d\r\n\r\n%s", len(body), body)
			}
			_, _ = fmt.Fprintf(inW, "Content-Length: 34\r\n\r\n%s", `{"jsonrpc":"2.0","method":"after"}`)
		}()
		if got := within(t, 10*time.Second, "the notification sent after the pings", h.notes); got != "after" {
			t.Fatalf("notification %q", got)
		}
		br := bufio.NewReader(outR)
		for i := range 4 {
			if reply := readFrame(t, br); !strings.HasPrefix(reply, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"result":{"data":"xxx`) {
				t.Fatalf("reply %d = %.60s…", i, reply)
			}
		}
		_ = inW.Close()
		if err := within(t, 10*time.Second, "Serve", served); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("lets a notification past the high-water mark wait only as long as its context", func(t *testing.T) {
		inR, _ := stalledPipe(t)
		_, outW := stalledPipe(t)
		conn := NewConn(NewStream(inR, outW, nil), nil)
		go func() { _ = conn.Serve(context.Background(), inlineEcho{}) }()
		t.Cleanup(func() { _ = conn.Close() })
		pad := strings.Repeat("x", 1<<20)
		for conn.stream.backlog.Load() <= writeHighWater {
			if err := conn.Notify(testkit.Context(t), "fill", map[string]string{"pad": pad}); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- conn.Notify(ctx, "waits", map[string]string{}) }()
		waiting := make(chan struct{})
		go func() { // until the notification waits for room
			defer close(waiting)
			for {
				conn.stream.wmu.Lock()
				w := conn.stream.room != nil
				conn.stream.wmu.Unlock()
				if w {
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		within(t, 10*time.Second, "the notification to wait for room", waiting)
		gaveUp := errors.New("the caller gave up")
		cancel(gaveUp)
		if err := within(t, 10*time.Second, "Notify past the high-water mark", errc); !errors.Is(err, gaveUp) {
			t.Fatalf("Notify = %v, want the context's cause", err)
		}
	})
}
