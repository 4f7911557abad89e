package clients

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The kinds of model error. Every error Complete returns matches exactly one
// of them with errors.Is; errors.As with *Error gives the details.
var (
	// ErrAuth: the key is missing, wrong or not allowed. Not retried; the
	// message names the variable to set.
	ErrAuth = errors.New("authentication failed")
	// ErrModelNotFound: the provider does not know the model. Not retried.
	ErrModelNotFound = errors.New("model not found")
	// ErrContextTooLong: the conversation does not fit the model's context
	// window. Not retried: the caller must shorten it.
	ErrContextTooLong = errors.New("context too long")
	// ErrRateLimited: too many requests or tokens. Retried after
	// Retry-After or the backoff.
	ErrRateLimited = errors.New("rate limited")
	// ErrServer: the provider failed or is overloaded (5xx, 529, 408,
	// overloaded_error). Retried.
	ErrServer = errors.New("provider error")
	// ErrNetwork: the connection failed or dropped mid-stream. Retried,
	// unless it is a certificate problem.
	ErrNetwork = errors.New("network error")
	// ErrCancelled: the context was cancelled. Also matches
	// context.Canceled.
	ErrCancelled = errors.New("cancelled")
	// ErrTimeout: the context's deadline passed. Also matches
	// context.DeadlineExceeded.
	ErrTimeout = errors.New("timed out")
	// ErrBadRequest: the provider refused the request for another reason.
	// Not retried.
	ErrBadRequest = errors.New("request refused")
	// ErrBadResponse: the provider's answer could not be understood.
	// Not retried.
	ErrBadResponse = errors.New("malformed answer")
	// ErrScriptTurn: a scripted turn with "error" set.
	ErrScriptTurn = errors.New("scripted error")
	// ErrScriptExhausted: the scripted agent has no turn left.
	ErrScriptExhausted = errors.New("script exhausted")
)

// Error is a classified model error.
type Error struct {
	// Kind is one of the Err* values above.
	Kind error
	// Provider and Model name what was called ("openai", "gpt-4.1-mini").
	Provider string
	Model    string
	// Status is the HTTP status, 0 when there was none.
	Status int
	// Message says what happened and, where there is one, the fix. It
	// never holds a key.
	Message string
	// RetryAfter is what the provider asked to wait, 0 when it did not say.
	RetryAfter time.Duration
	// Attempts is how many attempts were made before giving up.
	Attempts int
	// Err is the underlying error (scrubbed of keys, and hiding the
	// Anthropic SDK's error, whose request holds the key in a header), if
	// any. The OpenAI client's errors hold nothing of the request.
	Err error

	retryable bool
	detail    string // what the provider said, scrubbed of the key ("" when it said nothing)
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		if e.Model != "" {
			b.WriteString(":")
			b.WriteString(e.Model)
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is matches the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether another attempt may succeed.
func (e *Error) Retryable() bool { return e.retryable }

// Retryable reports whether err is a model error that another attempt may
// cure (rate limit, server error, network error).
func Retryable(err error) bool {
	var me *Error
	return errors.As(err, &me) && me.retryable
}
