package main

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"
)

// fakeMode is how the in-process fake server answers agent/ping.
type fakeMode int

const (
	fakeHonest        fakeMode = iota // echo the data, a log notification now and then
	fakeShort                         // echo the data one byte short
	fakeCorrupt                       // echo data of the same length with other bytes
	fakeSwapPairs                     // answer each pair of requests in reverse order
	fakeDuplicate                     // answer the first request twice
	fakeError                         // answer with a JSON-RPC error
	fakeWrongID                       // answer with an id one higher
	fakeServerRequest                 // send a request to the client before answering
)

// fakeServer answers agent/ping over in-memory pipes, the way a server over
// stdio would, with the fault its mode names. It lives until the driver side
// closes.
type fakeServer struct {
	client *conn
	abort  func()
	done   chan struct{}
}

func startFake(t *testing.T, mode fakeMode) *fakeServer {
	t.Helper()
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	var once sync.Once
	abort := func() {
		once.Do(func() {
			reqR.CloseWithError(io.ErrClosedPipe)
			respW.CloseWithError(io.ErrClosedPipe)
		})
	}
	f := &fakeServer{client: newConn(respR, reqW), abort: abort, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		defer abort()
		serveFake(newConn(reqR, respW), mode)
	}()
	t.Cleanup(func() {
		abort()
		reqW.Close()
		<-f.done
	})
	return f
}

// serveFake reads in one goroutine and answers in another, as a real server
// does, so that a large reply and a large request can cross.
func serveFake(c *conn, mode fakeMode) {
	requests := make(chan []byte, 128)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(requests)
		for {
			body, err := c.readFrame()
			if err != nil {
				return
			}
			select {
			case requests <- bytes.Clone(body):
			case <-quit:
				return
			}
		}
	}()
	defer wg.Wait()
	defer close(quit)

	var held []byte // fakeSwapPairs: the reply waiting for its pair
	n := 0
	for body := range requests {
		m, err := scanMessage(body)
		if err != nil || !m.hasID {
			continue
		}
		n++
		params, _ := field(body, "params")
		data, _ := field(params, "data")
		id := m.id
		switch mode {
		case fakeShort:
			data = append(append([]byte{}, data[:len(data)-2]...), '"')
		case fakeCorrupt:
			data = bytes.ToUpper(data)
		case fakeWrongID:
			id++
		}
		result := append(append([]byte(`{"data":`), data...), '}')
		var reply []byte
		if mode == fakeError {
			reply = []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"broken"},"id":` + strconv.FormatInt(id, 10) + `}`)
		} else {
			// The id after the result, as go.lsp.dev/jsonrpc2 writes it.
			reply = append(append([]byte(`{"jsonrpc":"2.0","result":`), result...), `,"id":`+strconv.FormatInt(id, 10)+`}`...)
		}
		switch {
		case mode == fakeHonest && n%3 == 0:
			_ = c.writeBody([]byte(`{"jsonrpc":"2.0","method":"window/logMessage","params":{"type":3,"message":"\"id\":7 {"}}`))
		case mode == fakeServerRequest:
			_ = c.writeBody([]byte(`{"jsonrpc":"2.0","id":99,"method":"workspace/configuration","params":{}}`))
		}
		if mode == fakeSwapPairs {
			if held == nil {
				held = reply
				continue
			}
			_ = c.writeBody(reply)
			reply, held = held, nil
		}
		_ = c.writeBody(reply)
		if mode == fakeDuplicate && n == 1 {
			_ = c.writeBody(reply)
		}
		if err := c.flush(); err != nil {
			return
		}
	}
}

func TestFiguresAgainstAnHonestServer(t *testing.T) {
	t.Run("sequential pings are counted and timed", func(t *testing.T) {
		f := startFake(t, fakeHonest)
		l, err := measurePing(f.client, 200)
		if err != nil {
			t.Fatal(err)
		}
		if l.perSec <= 0 || l.p50 <= 0 || l.p99 < l.p50 {
			t.Errorf("latency = %+v, want a positive rate and 0 < p50 <= p99", l)
		}
	})
	t.Run("pipelined pings come back once each, notifications skipped", func(t *testing.T) {
		f := startFake(t, fakeHonest)
		rate, err := measureInflight(f.client, 1000, 64, f.abort)
		if err != nil {
			t.Fatal(err)
		}
		if rate <= 0 {
			t.Errorf("rate = %v, want positive", rate)
		}
	})
	t.Run("replies out of order are accepted in the pipelined figure", func(t *testing.T) {
		f := startFake(t, fakeSwapPairs)
		if _, err := measureInflight(f.client, 1000, 64, f.abort); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a large payload round trip is checked and counted", func(t *testing.T) {
		f := startFake(t, fakeHonest)
		rate, err := measurePayload(f.client, 3, payload(256<<10))
		if err != nil {
			t.Fatal(err)
		}
		if rate <= 0 {
			t.Errorf("rate = %v, want positive", rate)
		}
	})
}

func TestFiguresDetectAWrongServer(t *testing.T) {
	figures := []struct {
		name string
		run  func(f *fakeServer) error
	}{
		{"sequential ping", func(f *fakeServer) error { _, err := measurePing(f.client, 10); return err }},
		{"pipelined ping", func(f *fakeServer) error { _, err := measureInflight(f.client, 256, 64, f.abort); return err }},
		{"payload round trip", func(f *fakeServer) error { _, err := measurePayload(f.client, 2, payload(1<<20)); return err }},
	}
	faults := []struct {
		name string
		mode fakeMode
		want string // in the error message
		is   error  // or errors.Is
	}{
		{name: "an echo one byte short fails", mode: fakeShort, is: errEcho},
		{name: "an echo of the right length but other bytes fails", mode: fakeCorrupt, is: errEcho},
		{name: "an error reply fails and shows the error", mode: fakeError, want: "broken"},
		{name: "a reply with an id never sent fails", mode: fakeWrongID, want: "id"},
		{name: "a request from the server fails", mode: fakeServerRequest, want: "workspace/configuration"},
		{name: "a second reply to one id fails", mode: fakeDuplicate, want: "id 1"},
	}
	for _, fault := range faults {
		for _, fig := range figures {
			t.Run(fault.name+" in the "+fig.name+" figure", func(t *testing.T) {
				f := startFake(t, fault.mode)
				err := fig.run(f)
				switch {
				case err == nil:
					t.Fatal("no error, want one")
				case fault.is != nil && !errors.Is(err, fault.is):
					t.Fatalf("error %v, want one that is %v", err, fault.is)
				case fault.want != "" && !bytes.Contains([]byte(err.Error()), []byte(fault.want)):
					t.Fatalf("error %v, want one that mentions %q", err, fault.want)
				}
			})
		}
	}
}
