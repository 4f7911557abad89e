package clients

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"

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
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("SSL_CERT_FILE: %s holds no PEM certificate", file)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr}, nil
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
