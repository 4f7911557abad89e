package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// pingData is the small value agent/ping carries in the latency and
// pipelining figures.
var pingData = []byte(`"agentls-wire-benchmark"`)

// pingCall builds a pre-encoded agent/ping carrying data (raw JSON).
func pingCall(data []byte) call {
	params := make([]byte, 0, len(data)+10)
	params = append(params, `{"data":`...)
	params = append(params, data...)
	params = append(params, '}')
	return newCall("agent/ping", params)
}

// payload returns a JSON string of size characters, safe ASCII that no
// encoder escapes, so that an honest echo has exactly the same bytes.
func payload(size int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	b := make([]byte, size+2)
	b[0], b[size+1] = '"', '"'
	for i := range size {
		b[1+i] = alphabet[(i*7+i/len(alphabet))%len(alphabet)]
	}
	return b
}

var errEcho = errors.New("wrong echo")

// checkEcho checks that the result of agent/ping is {"data": sent}. A long
// payload is compared by length and its first and last bytes, which is
// enough to catch truncation and corruption without a second megabyte scan.
func checkEcho(result, sent []byte) error {
	got, err := field(result, "data")
	if err != nil {
		return fmt.Errorf("%w: result %.60s: %w", errEcho, result, err)
	}
	if got == nil {
		return fmt.Errorf("%w: result %.60s has no data", errEcho, result)
	}
	if len(got) != len(sent) {
		return fmt.Errorf("%w: data of %d bytes, sent %d", errEcho, len(got), len(sent))
	}
	const edge = 64
	if len(sent) <= 2*edge {
		if !bytes.Equal(got, sent) {
			return fmt.Errorf("%w: data %.60s, sent %.60s", errEcho, got, sent)
		}
		return nil
	}
	if !bytes.Equal(got[:edge], sent[:edge]) || !bytes.Equal(got[len(got)-edge:], sent[len(sent)-edge:]) {
		return fmt.Errorf("%w: data of the right length but other content", errEcho)
	}
	return nil
}

// echo sends one agent/ping and checks its echo.
func echo(c *conn, k call, data []byte) error {
	id := c.newID()
	if err := c.writeCall(id, k); err != nil {
		return err
	}
	if err := c.flush(); err != nil {
		return err
	}
	m, err := readReply(c, id, k.method)
	if err != nil {
		return err
	}
	return checkEcho(m.result, data)
}

// readReply reads until the reply to id, skipping notifications.
func readReply(c *conn, id int64, method string) (message, error) {
	for {
		body, err := c.readFrame()
		if err != nil {
			return message{}, err
		}
		m, err := scanMessage(body)
		if err != nil {
			return message{}, fmt.Errorf("reply to %s: %w", method, err)
		}
		if err := checkReply(m, method); err != nil {
			if errors.Is(err, errNotification) {
				continue
			}
			return message{}, err
		}
		if m.id != id {
			return message{}, fmt.Errorf("reply to %s has id %d, want %d", method, m.id, id)
		}
		return m, nil
	}
}

// latency is the outcome of the sequential agent/ping figure.
type latency struct {
	perSec   float64
	p50, p99 time.Duration
}

// measurePing sends n agent/ping one after the other, each after the reply
// to the previous one, and times each round trip.
func measurePing(c *conn, n int) (latency, error) {
	if n <= 0 {
		return latency{}, fmt.Errorf("ping count %d: must be positive", n)
	}
	k := pingCall(pingData)
	lat := make([]time.Duration, n)
	begin := time.Now()
	for i := range lat {
		t0 := time.Now()
		if err := echo(c, k, pingData); err != nil {
			return latency{}, fmt.Errorf("ping %d of %d: %w", i+1, n, err)
		}
		lat[i] = time.Since(t0)
	}
	total := time.Since(begin)
	slices.Sort(lat)
	return latency{
		perSec: float64(n) / total.Seconds(),
		p50:    percentile(lat, 50),
		p99:    percentile(lat, 99),
	}, nil
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (len(sorted)*p + 99) / 100 // ceil(n*p/100)
	if rank < 1 {
		rank = 1
	}
	return sorted[rank-1]
}

// measureInflight keeps window agent/ping outstanding until total have been
// answered: one goroutine writes (coalescing every request it may send into
// one flush), the caller's goroutine reads. Replies may come in any order;
// each id must come back exactly once. abort must unblock both sides (close
// the pipes or kill the server); it is called when either side fails.
func measureInflight(c *conn, total, window int, abort func()) (float64, error) {
	if total <= 0 || window <= 0 {
		return 0, fmt.Errorf("in-flight total %d and window %d: must be positive", total, window)
	}
	k := pingCall(pingData)
	base := c.nextID
	c.nextID += int64(total)
	credits := make(chan struct{}, window)
	for range window {
		credits <- struct{}{}
	}
	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		writeErr error
	)
	wg.Add(1)
	begin := time.Now()
	go func() {
		defer wg.Done()
		writeErr = writeWindowed(c, k, base, total, credits, stop)
		if writeErr != nil {
			abort()
		}
	}()
	readErr := readWindowed(c, base, total, credits)
	if readErr != nil {
		close(stop)
		abort()
	}
	wg.Wait()
	elapsed := time.Since(begin)
	if readErr != nil {
		return 0, readErr
	}
	if writeErr != nil {
		return 0, writeErr
	}
	return float64(total) / elapsed.Seconds(), nil
}

// writeWindowed sends total calls with ids base, base+1, …, each once it
// holds a credit; it flushes whenever it would wait for one.
func writeWindowed(c *conn, k call, base int64, total int, credits <-chan struct{}, stop <-chan struct{}) error {
	for i := range total {
		select {
		case <-credits:
		default:
			if err := c.flush(); err != nil {
				return err
			}
			select {
			case <-credits:
			case <-stop:
				return nil
			}
		}
		if err := c.writeCall(base+int64(i), k); err != nil {
			return err
		}
	}
	return c.flush()
}

// readWindowed reads total replies with ids in [base, base+total), each
// once, and returns a credit per reply.
func readWindowed(c *conn, base int64, total int, credits chan<- struct{}) error {
	seen := make([]bool, total)
	for got := 0; got < total; {
		body, err := c.readFrame()
		if err != nil {
			return fmt.Errorf("after %d of %d replies: %w", got, total, err)
		}
		m, err := scanMessage(body)
		if err != nil {
			return fmt.Errorf("reply %d of %d: %w", got+1, total, err)
		}
		if err := checkReply(m, "agent/ping"); err != nil {
			if errors.Is(err, errNotification) {
				continue
			}
			return err
		}
		i := m.id - base
		if i < 0 || i >= int64(total) {
			return fmt.Errorf("reply with id %d, which is not outstanding", m.id)
		}
		if seen[i] {
			return fmt.Errorf("second reply with id %d", m.id)
		}
		seen[i] = true
		if err := checkEcho(m.result, pingData); err != nil {
			return fmt.Errorf("reply with id %d: %w", m.id, err)
		}
		got++
		credits <- struct{}{}
	}
	return nil
}

// measurePayload sends n agent/ping carrying data, one after the other, and
// checks each echo.
func measurePayload(c *conn, n int, data []byte) (float64, error) {
	if n <= 0 {
		return 0, fmt.Errorf("payload count %d: must be positive", n)
	}
	k := pingCall(data)
	begin := time.Now()
	for i := range n {
		if err := echo(c, k, data); err != nil {
			return 0, fmt.Errorf("payload round trip %d of %d: %w", i+1, n, err)
		}
	}
	return float64(n) / time.Since(begin).Seconds(), nil
}
