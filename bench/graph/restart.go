package main

// -mode restart: agentls started on the tree as an editor starts it, with
// LSP framing on its stdin and stdout. A first start builds and stores
// the graph (its first answer waits for the build); each of the next ones
// is timed from the process's start and from its initialize request to
// the answer to its first agent/codeGraph request (and the CPU time the
// process took to it), the stored graph being
// read in place. It speaks the wire itself: the benchmark imports nothing
// of the project but the graph.

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func restart(o options, bin string, runs int, editorWatches bool) error {
	if bin == "" {
		return errors.New("-mode restart needs -agentls")
	}
	tree, err := filepath.Abs(o.tree)
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "agentls-graph-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	q := map[string]any{"symbol": o.symbol}
	if o.update != "" {
		q = map[string]any{"path": o.update}
	}
	// the first start builds the graph and stores it
	first, err := startOnce(bin, tree, o.state, home, q, editorWatches)
	if err != nil {
		return fmt.Errorf("first start: %w", err)
	}
	fmt.Printf("restart_build_answer %.1f ms\n", first.fromStart.Seconds()*1000)
	for range runs {
		r, err := startOnce(bin, tree, o.state, home, q, editorWatches)
		if err != nil {
			return err
		}
		fmt.Printf("restart_answer %.1f ms\n", r.fromStart.Seconds()*1000)
		fmt.Printf("restart_answer_from_initialize %.1f ms\n", r.fromInit.Seconds()*1000)
		fmt.Printf("restart_answer_cpu %.0f ms\n", r.cpu.Seconds()*1000)
		fmt.Printf("rss_restart %.1f MiB\n", r.rss)
	}
	return nil
}

type startTimes struct {
	fromStart, fromInit time.Duration
	rss                 float64       // the process's peak resident memory at the answer
	cpu                 time.Duration // its CPU time at the answer, in hundredths of a second
}

// startOnce starts agentls, initializes it on tree, asks q, and shuts it
// down. With editorWatches the client says it can watch files for agentls
// (as VS Code does), so that agentls does not watch the disk itself.
func startOnce(bin, tree, state, home string, q map[string]any, editorWatches bool) (startTimes, error) {
	var r startTimes
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "AGENTLS_STATE_DIR="+state, "HOME="+home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=")
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	c := &client{in: in, out: bufio.NewReader(outPipe)}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	uri := (&url.URL{Scheme: "file", Path: filepath.ToSlash(tree)}).String()
	caps := map[string]any{}
	if editorWatches {
		caps = map[string]any{"workspace": map[string]any{"didChangeWatchedFiles": map[string]any{"dynamicRegistration": true}}}
	}
	t1 := time.Now()
	if _, err := c.call("initialize", map[string]any{"processId": os.Getpid(), "rootUri": uri,
		"capabilities": caps, "clientInfo": map[string]any{"name": "bench-graph"}}); err != nil {
		return r, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		return r, err
	}
	if _, err := c.call("agent/codeGraph", q); err != nil {
		return r, fmt.Errorf("agent/codeGraph: %w", err)
	}
	r.fromStart, r.fromInit = time.Since(t0), time.Since(t1)
	r.cpu = procCPU(cmd.Process.Pid)
	r.rss = statusMiB("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/status", "VmHWM:")
	if _, err := c.call("shutdown", nil); err != nil {
		return r, fmt.Errorf("shutdown: %w", err)
	}
	return r, c.notify("exit", nil)
}

// client speaks JSON-RPC with LSP framing to one server, answering the
// server's own requests with a null result.
type client struct {
	in   io.Writer
	out  *bufio.Reader
	next int
}

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

func (c *client) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(c.in, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

func (c *client) notify(method string, params any) error {
	return c.write(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

func (c *client) call(method string, params any) (json.RawMessage, error) {
	c.next++
	id := strconv.Itoa(c.next)
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		m, err := c.read()
		if err != nil {
			return nil, err
		}
		switch {
		case m.Method != "" && m.ID != nil:
			if err := c.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": nil}); err != nil {
				return nil, err
			}
		case m.Method == "" && string(m.ID) == id:
			if m.Error != nil {
				return nil, errors.New(m.Error.Message)
			}
			return m.Result, nil
		}
	}
}

func (c *client) read() (*message, error) {
	n := -1
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			if n, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, err
			}
		}
	}
	if n < 0 {
		return nil, errors.New("a message without Content-Length")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.out, body); err != nil {
		return nil, err
	}
	m := &message{}
	return m, json.Unmarshal(body, m)
}
