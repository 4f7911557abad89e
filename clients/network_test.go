package clients

import (
	"bufio"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// firstEvents returns the first n events (blank-line separated) of a fixture.
func firstEvents(t *testing.T, name string, n int) []byte {
	parts := strings.SplitAfter(string(fixture(t, name)), "\n\n")
	return []byte(strings.Join(parts[:n], ""))
}

// dropAfter writes the first events of a stream, then kills the connection.
func dropAfter(t *testing.T, w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	w.(http.Flusher).Flush()
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	_ = conn.Close()
}

func TestDroppedConnectionMidStream(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name+": a connection dropped mid-stream is a network error, retried with a restart", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					dropAfter(t, w, firstEvents(t, pc.text, 3))
					return
				}
				sse(t, pc.text)(w)
			})
			var events []RetryEvent
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, func(e RetryEvent) { events = append(events, e) }))
			var c collect
			resp, err := m.Complete(context.Background(), conversation(), c.on)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) != 1 || !errors.Is(events[0].Err, ErrNetwork) {
				t.Fatalf("events = %+v", events)
			}
			if c.restarts != 1 || c.text != "Hello there." || resp.Text != "Hello there." {
				t.Errorf("restarts %d, streamed %q, text %q", c.restarts, c.text, resp.Text)
			}
		})
		t.Run(pc.name+": a stream that ends cleanly but early is a network error too", func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = w.Write(firstEvents(t, pc.text, 3))
			})
			opts := testOptions(&sleeps{}, nil)
			opts.Retry.MaxAttempts = 1
			m := resolveFake(t, pc, fp.srv.URL, opts)
			_, err := m.Complete(context.Background(), conversation(), nil)
			if !errors.Is(err, ErrNetwork) || !Retryable(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

func TestCancelMidStreamClosesTheConnection(t *testing.T) {
	for _, pc := range providers {
		t.Run(pc.name+": cancelling the context mid-stream ends the call and the server sees the close", func(t *testing.T) {
			closed := make(chan struct{})
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(firstEvents(t, pc.text, 3))
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					close(closed)
				case <-time.After(10 * time.Second):
				}
			})
			m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := m.Complete(ctx, conversation(), func(d Delta) {
				if d.Text != "" {
					cancel()
				}
			})
			if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v", err)
			}
			select {
			case <-closed:
			case <-time.After(5 * time.Second):
				t.Fatal("the server never saw the connection close")
			}
			if fp.count() != 1 {
				t.Errorf("a cancelled call was retried: %d requests", fp.count())
			}
		})
	}
}

func TestDeadlineIsATimeout(t *testing.T) {
	pc := providers[0]
	release := make(chan struct{})
	defer close(release)
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Complete(ctx, conversation(), nil)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestUnreachableServerIsANetworkError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there any more
	var s sleeps
	m, err := Resolve("openai:gpt-4.1-mini", envOf(map[string]string{"OPENAI_API_KEY": testKey, "OPENAI_BASE_URL": "http://" + addr + "/v1"}), testOptions(&s, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Complete(context.Background(), conversation(), nil)
	var me *Error
	if !errors.Is(err, ErrNetwork) || !errors.As(err, &me) || me.Attempts != 4 || len(s.all()) != 3 {
		t.Fatalf("err = %v, waits %v", err, s.all())
	}
	if !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("message %q does not name OPENAI_BASE_URL", err)
	}
}

// connectProxy is an HTTPS proxy that tunnels every CONNECT to target and
// counts the tunnels.
func connectProxy(t *testing.T, target string) (*httptest.Server, *int) {
	tunnels := new(int)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		*tunnels++
		up, err := net.Dial("tcp", target)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(http.StatusOK)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			_ = up.Close()
			return
		}
		go func() { _, _ = io.Copy(up, buf); _ = up.Close() }()
		_, _ = io.Copy(conn, bufio.NewReader(up))
		_ = conn.Close()
	}))
	t.Cleanup(srv.Close)
	return srv, tunnels
}

func TestProxyAndCertificatesFromTheEnvironment(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sse(t, "openai_stream_text.sse")(w) }))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	certFile := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	proxy, tunnels := connectProxy(t, tlsSrv.Listener.Addr().String())
	// The test certificate is valid for example.com; the proxy sends every
	// tunnel to the test server.
	env := map[string]string{
		"OPENAI_API_KEY":  testKey,
		"OPENAI_BASE_URL": "https://example.com/v1",
		"HTTPS_PROXY":     proxy.URL,
		"SSL_CERT_FILE":   certFile,
	}
	t.Run("a call goes through HTTPS_PROXY and trusts SSL_CERT_FILE", func(t *testing.T) {
		m, err := Resolve("openai:gpt-4.1-mini", envOf(env), testOptions(&sleeps{}, nil))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := m.Complete(context.Background(), conversation(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "Hello there." || *tunnels != 1 {
			t.Errorf("text %q, tunnels %d", resp.Text, *tunnels)
		}
	})
	t.Run("without SSL_CERT_FILE the certificate is refused and not retried", func(t *testing.T) {
		delete(env, "SSL_CERT_FILE")
		m, err := Resolve("openai:gpt-4.1-mini", envOf(env), testOptions(&sleeps{}, nil))
		if err != nil {
			t.Fatal(err)
		}
		_, err = m.Complete(context.Background(), conversation(), nil)
		if !errors.Is(err, ErrNetwork) || Retryable(err) || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("an SSL_CERT_FILE without certificates is a configuration error", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "empty.pem")
		_ = os.WriteFile(bad, []byte("not a certificate"), 0o600)
		env["SSL_CERT_FILE"] = bad
		_, err := Resolve("openai:gpt-4.1-mini", envOf(env), Options{})
		assertModelUnavailable(t, err, "SSL_CERT_FILE")
	})
}
