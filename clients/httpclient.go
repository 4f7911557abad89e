package clients

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sync"

	"golang.org/x/net/http/httpproxy"
)

// NewHTTPClient returns the HTTP client the providers use: proxies from
// HTTP_PROXY, HTTPS_PROXY and NO_PROXY (or their lower-case forms), and the
// system's certificate authorities plus those in SSL_CERT_FILE, all read
// through env. It has no overall timeout: answers stream for minutes, and
// each call's context bounds it.
func NewHTTPClient(env func(string) string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	proxy := (&httpproxy.Config{
		HTTPProxy:  firstEnv(env, "HTTP_PROXY", "http_proxy"),
		HTTPSProxy: firstEnv(env, "HTTPS_PROXY", "https_proxy"),
		NoProxy:    firstEnv(env, "NO_PROXY", "no_proxy"),
	}).ProxyFunc()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	if file := env("SSL_CERT_FILE"); file != "" {
		pem, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("SSL_CERT_FILE: %w", err)
		}
		if !holdsCertificate(pem) {
			return nil, fmt.Errorf("SSL_CERT_FILE: %s holds no PEM certificate", file)
		}
		// The system's roots and the file's are parsed on the first
		// request that needs TLS: a client of a plain-HTTP server (Ollama,
		// a local OpenAI-compatible one) never parses hundreds of
		// certificates it will not use.
		return &http.Client{Transport: &lazyRoots{plain: tr, pem: pem}}, nil
	}
	return &http.Client{Transport: tr}, nil
}

// lazyRoots sends a request over plain HTTP with plain, and one over TLS
// (to the server or to its proxy) with a clone of plain that has the
// system's roots and those of SSL_CERT_FILE, made for the first such
// request. Neither Transport changes once made.
type lazyRoots struct {
	plain *http.Transport
	pem   []byte

	once   sync.Once
	secure *http.Transport
}

func (l *lazyRoots) RoundTrip(r *http.Request) (*http.Response, error) {
	tlsNeeded := r.URL.Scheme == "https"
	if !tlsNeeded && l.plain.Proxy != nil {
		if u, err := l.plain.Proxy(r); err == nil && u != nil && u.Scheme == "https" {
			tlsNeeded = true
		}
	}
	if !tlsNeeded {
		return l.plain.RoundTrip(r)
	}
	l.once.Do(func() {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		pool.AppendCertsFromPEM(l.pem)
		l.secure = l.plain.Clone()
		l.secure.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	})
	return l.secure.RoundTrip(r)
}

// CloseIdleConnections closes the idle connections of both Transports.
func (l *lazyRoots) CloseIdleConnections() {
	l.plain.CloseIdleConnections()
	if l.secure != nil {
		l.secure.CloseIdleConnections()
	}
}

// holdsCertificate reports whether data has a PEM CERTIFICATE block, without
// parsing one.
func holdsCertificate(data []byte) bool {
	for len(data) > 0 {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if b.Type == "CERTIFICATE" {
			return true
		}
	}
	return false
}

func firstEnv(env func(string) string, names ...string) string {
	for _, n := range names {
		if v := env(n); v != "" {
			return v
		}
	}
	return ""
}

func parseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	return u, nil
}
