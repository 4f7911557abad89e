package clients

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy bounds the retries of a model call.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles each time.
	BaseDelay time.Duration
	// MaxDelay caps one wait, Retry-After included: a provider asking for
	// longer is not waited for.
	MaxDelay time.Duration
	// MaxElapsed caps the time spent on one call, waits included: no retry
	// starts whose wait would end after it.
	MaxElapsed time.Duration
}

// DefaultRetryPolicy is used when Options.Retry is zero: 4 attempts, 1 s
// doubling to at most 30 s, 2 minutes in all.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts: 4,
	BaseDelay:   time.Second,
	MaxDelay:    30 * time.Second,
	MaxElapsed:  2 * time.Minute,
}

// RetryEvent reports one retry, before its wait. The sidecar turns it into
// window/logMessage.
type RetryEvent struct {
	Provider string
	Model    string
	// Attempt is the attempt that failed (1-based); Attempt+1 follows.
	Attempt     int
	MaxAttempts int
	// Delay is the wait before the next attempt.
	Delay time.Duration
	// Err is the classified error of the failed attempt.
	Err *Error
}

// Message is a one-line text for the user.
func (e RetryEvent) Message() string {
	return e.Err.Error() + "; retrying in " + e.Delay.Round(10*time.Millisecond).String() +
		" (attempt " + strconv.Itoa(e.Attempt+1) + " of " + strconv.Itoa(e.MaxAttempts) + ")"
}

// retrier runs attempts under a policy. Its clock, sleep and randomness are
// injected so tests are steady.
type retrier struct {
	policy  RetryPolicy
	onRetry func(RetryEvent)
	sleep   func(context.Context, time.Duration) error
	rand    func() float64
	now     func() time.Time
}

func newRetrier(o *Options) *retrier {
	r := &retrier{policy: o.Retry, onRetry: o.OnRetry, sleep: o.Sleep, rand: o.Rand, now: o.Now}
	if r.policy == (RetryPolicy{}) {
		r.policy = DefaultRetryPolicy
	}
	if r.policy.MaxAttempts < 1 {
		r.policy.MaxAttempts = 1
	}
	if r.sleep == nil {
		r.sleep = sleepCtx
	}
	if r.rand == nil {
		r.rand = rand.Float64
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// do runs attempt until it succeeds, fails with an error that is not
// retryable, or the policy is spent. attempt returns classified errors.
func (r *retrier) do(ctx context.Context, em *emitter, attempt func(context.Context) (*Response, error)) (*Response, error) {
	start := r.now()
	for n := 1; ; n++ {
		resp, err := attempt(ctx)
		if err == nil {
			return resp, nil
		}
		var me *Error
		if !errors.As(err, &me) {
			return nil, err
		}
		me.Attempts = n
		if !me.retryable || n >= r.policy.MaxAttempts {
			return nil, me
		}
		delay := r.backoff(n)
		if me.RetryAfter > 0 {
			delay = me.RetryAfter
		}
		if delay > r.policy.MaxDelay || r.now().Add(delay).Sub(start) > r.policy.MaxElapsed {
			return nil, me
		}
		if r.onRetry != nil {
			r.onRetry(RetryEvent{Provider: me.Provider, Model: me.Model, Attempt: n, MaxAttempts: r.policy.MaxAttempts, Delay: delay, Err: me})
		}
		if err := r.sleep(ctx, delay); err != nil {
			return nil, cancelled(ctx, me.Provider, me.Model, err)
		}
		em.restart()
	}
}

// backoff is BaseDelay·2^(n-1), capped at MaxDelay, with "equal jitter":
// uniformly in [d/2, d), so retries of parallel agents spread out.
func (r *retrier) backoff(n int) time.Duration {
	d := r.policy.BaseDelay
	for i := 1; i < n && d < r.policy.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.policy.MaxDelay)
	half := d / 2
	return half + time.Duration(r.rand()*float64(d-half))
}

// retryAfter reads Retry-After-Ms, then Retry-After (seconds or an HTTP
// date) from h. 0 when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// cancelled classifies the end of ctx.
func cancelled(ctx context.Context, provider, model string, cause error) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(cause, context.DeadlineExceeded) {
		return &Error{Kind: ErrTimeout, Provider: provider, Model: model,
			Message: "no answer before the model timeout (timeouts.modelMs)", Err: context.DeadlineExceeded}
	}
	return &Error{Kind: ErrCancelled, Provider: provider, Model: model, Message: "cancelled", Err: context.Canceled}
}
