package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ErrNotStarted: `agentls mcp` was run by hand, without the entry's
// environment.
var ErrNotStarted = errors.New("it serves the editor's tools to an agent that agentls runs, and agentls starts it: " +
	EnvSocket + " and " + EnvToken + " are not set")

// Relay is `agentls mcp`: it connects to the sidecar named by getenv
// (EnvSocket), presents the token (EnvToken) and then carries the MCP
// session between stdin/stdout and the sidecar, byte for byte, until either
// side ends. It returns nil when the session ended cleanly.
//
// The goroutine copying stdin may stay blocked in a read of stdin after
// Relay returns: the process ends right after.
func Relay(ctx context.Context, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	socket, token := getenv(EnvSocket), getenv(EnvToken)
	if socket == "" || token == "" {
		return ErrNotStarted
	}
	d := net.Dialer{Timeout: handshakeTimeout}
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return fmt.Errorf("cannot reach the agentls sidecar at %s (has its task ended?): %w", socket, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.Close() })
	defer stop()
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	b, _ := json.Marshal(hello{Bridge: 1, Token: token})
	if _, err := c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("agentls sidecar: %w", err)
	}
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("agentls sidecar: no answer to the handshake: %w", err)
	}
	var rep reply
	if json.Unmarshal(line, &rep) != nil {
		return fmt.Errorf("agentls sidecar: unreadable answer %q", line)
	}
	if !rep.OK {
		return fmt.Errorf("the agentls sidecar refused the connection: %s", rep.Error)
	}
	_ = c.SetDeadline(time.Time{})

	up := make(chan error, 1)
	go func() {
		_, err := io.Copy(c, stdin)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite() // the sidecar sees the end of the session
		}
		up <- err
	}()
	_, err = io.Copy(stdout, r)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("agentls sidecar: %w", err)
	}
	select {
	case err := <-up:
		if err != nil {
			return fmt.Errorf("stdin: %w", err)
		}
	default:
		// The sidecar ended the session (its subtask ended) while the
		// agent's side is still open.
	}
	return nil
}
