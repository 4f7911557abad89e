package clients

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/agentls/agentls/internal/redact"
)

// endpoint is what a provider's errors need to name the fix.
type endpoint struct {
	provider string // "openai", "anthropic", "ollama"
	model    string
	keyVar   string // variable holding the key, "" when none is needed
	urlVar   string // variable holding the base URL
	baseURL  string
	red      *redact.Redactor // knows the key, scrubbed from every message
	now      func() time.Time
}

func (ep *endpoint) errorf(kind error, status int, retryable bool, cause error, format string, args ...any) *Error {
	return &Error{
		Kind: kind, Provider: ep.provider, Model: ep.model, Status: status,
		Message:   ep.red.Echoes(fmt.Sprintf(format, args...)),
		Err:       ep.red.EchoesError(cause),
		retryable: retryable,
	}
}

// apiFailure is an error answer of a provider: an HTTP status, or an error
// event in a stream (status 0 then).
type apiFailure struct {
	status  int
	header  http.Header
	errType string // "rate_limit_error", "invalid_request_error", …
	code    string // "context_length_exceeded", "model_not_found", …
	message string
	cause   error
}

// contextHints are the words providers use for a prompt over the window.
var contextHints = []string{
	"context_length_exceeded", "context length", "context window", "maximum context",
	"prompt is too long", "too many tokens", "input length", "exceeds the model",
}

func isContextTooLong(f apiFailure) bool {
	if f.status == http.StatusRequestEntityTooLarge || f.errType == "request_too_large" {
		return true
	}
	text := strings.ToLower(f.code + " " + f.errType + " " + f.message)
	for _, h := range contextHints {
		if strings.Contains(text, h) {
			return true
		}
	}
	return false
}

func (ep *endpoint) classifyAPI(f apiFailure) *Error {
	detail := strings.TrimSpace(f.message)
	if detail == "" {
		detail = strings.TrimSpace(f.errType + " " + f.code)
	}
	if detail == "" && f.status != 0 {
		detail = http.StatusText(f.status)
	}
	var e *Error
	switch {
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden ||
		f.errType == "authentication_error" || f.errType == "permission_error" || f.code == "invalid_api_key":
		fix := "check the key"
		if ep.keyVar != "" {
			fix = "check " + ep.keyVar
		}
		e = ep.errorf(ErrAuth, f.status, false, f.cause, "the provider refused the key (%s): %s", fix, detail)
	case f.status == http.StatusNotFound || f.errType == "not_found_error" || f.code == "model_not_found":
		e = ep.errorf(ErrModelNotFound, f.status, false, f.cause,
			"model %q not found at %s (check the model name in the spec, or %s): %s", ep.model, ep.baseURL, ep.urlVar, detail)
	case isContextTooLong(f):
		e = ep.errorf(ErrContextTooLong, f.status, false, f.cause, "the conversation is longer than the model's context window: %s", detail)
	case f.status == http.StatusTooManyRequests || f.errType == "rate_limit_error" ||
		f.code == "rate_limit_exceeded" || f.errType == "tokens" || f.errType == "requests":
		e = ep.errorf(ErrRateLimited, f.status, true, f.cause, "rate limited: %s", detail)
	case f.status >= 500 || f.status == http.StatusRequestTimeout || f.status == http.StatusConflict ||
		f.errType == "overloaded_error" || f.errType == "api_error" || f.errType == "server_error":
		e = ep.errorf(ErrServer, f.status, true, f.cause, "the provider failed: %s", detail)
	case f.status >= 400 || f.errType == "invalid_request_error":
		e = ep.errorf(ErrBadRequest, f.status, false, f.cause, "the provider refused the request: %s", detail)
	default:
		// An error event in a stream without a type we know: most likely
		// transient on the provider's side.
		e = ep.errorf(ErrServer, f.status, true, f.cause, "the provider failed mid-stream: %s", detail)
	}
	now := time.Now
	if ep.now != nil {
		now = ep.now
	}
	e.RetryAfter = retryAfter(f.header, now())
	e.detail = ep.red.Echoes(detail)
	return e
}

// classifyTransport classifies an error that is not an API answer: the
// context, the network, or a body that could not be read.
func (ep *endpoint) classifyTransport(ctx context.Context, err error) *Error {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return cancelled(ctx, ep.provider, ep.model, err)
	}
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostnameErr      x509.HostnameError
		certInvalid      x509.CertificateInvalidError
		tlsVerify        *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostnameErr) || errors.As(err, &certInvalid) || errors.As(err, &tlsVerify) {
		return ep.errorf(ErrNetwork, 0, false, err,
			"the TLS certificate of %s is not trusted (a proxy or private CA needs SSL_CERT_FILE): %v", ep.baseURL, err)
	}
	var netErr net.Error
	var opErr *net.OpError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &opErr), errors.As(err, &dnsErr), errors.As(err, &netErr):
		return ep.errorf(ErrNetwork, 0, true, err, "cannot reach %s (%s): %v", ep.baseURL, ep.urlVar, err)
	}
	if strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe") {
		return ep.errorf(ErrNetwork, 0, true, err, "the connection to %s dropped: %v", ep.baseURL, err)
	}
	return ep.errorf(ErrBadResponse, 0, false, err, "unexpected answer from %s: %v", ep.baseURL, err)
}

// errIncomplete is the cause of a stream that ended before its last event.
var errIncomplete = errors.New("the stream ended before the answer was complete")

func (ep *endpoint) incomplete() *Error {
	return ep.errorf(ErrNetwork, 0, true, errIncomplete, "the connection to %s dropped mid-answer: %v", ep.baseURL, errIncomplete)
}
