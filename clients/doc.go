// Package clients holds the sidecar's outbound connections to the models
// that think for it: OpenAI (chat completions, and the Responses API for the
// reasoning summaries of its reasoning models) and any OpenAI-compatible
// server, Anthropic, Ollama, and the scripted model, all behind one small
// interface, plus a Recorder that turns any session into a replayable script,
// and what a person needs to choose a model: ListModels (what each provider
// the environment sets up offers) and CheckModel (whether a model works, and
// if not, why, in words the person can act on).
//
// # Guarantees
//
//   - Complete is safe for concurrent use by several agents on every model
//     this package returns. The scripted model keeps one cursor per agent,
//     so each agent answers from its own list whatever order the scheduler
//     runs them in.
//   - The context bounds a call end to end: cancelling it closes the HTTP
//     connection (the server sees the close) and Complete returns an error
//     that matches both ErrCancelled and context.Canceled. A context whose
//     deadline passes gives ErrTimeout and context.DeadlineExceeded.
//   - Deltas are delivered in order on the calling goroutine, before
//     Complete returns, never after. When a retried attempt had already
//     streamed something, a Delta with Restart set comes first: whatever
//     streamed before it belongs to a failed attempt and must be discarded.
//     The Response always holds the complete answer of the attempt that
//     succeeded.
//   - Errors are classified (errors.Is with ErrAuth, ErrModelNotFound,
//     ErrContextTooLong, ErrRateLimited, ErrServer, ErrNetwork, ErrCancelled,
//     ErrTimeout, ErrBadRequest, ErrBadResponse, ErrScriptTurn,
//     ErrScriptExhausted; errors.As with *Error for the details). Rate limits,
//     server errors and network errors are retried here, never by the
//     Anthropic SDK (its retries are switched off), with exponential backoff
//     and jitter, honouring Retry-After, bounded in attempts and in total
//     time; each retry is reported through Options.OnRetry before its wait.
//   - API keys never appear in an error message or a log line: messages are
//     written by this package, and anything quoted from a provider is
//     scrubbed of the key first.
//   - ListModels and CheckModel never fail on a provider's failure: each
//     provider that fails is reported with the kind of problem (api.Problem*)
//     and a message that names the variable, URL or model to fix, never the
//     key. They make no retries and are bounded (ListTimeout, CheckTimeout);
//     only the end of their context ends them early.
//   - Requests are shaped for the providers' prompt caches: Anthropic's
//     carry cache_control breakpoints on the tools, the system prompt and
//     the two newest turns (the API's four); OpenAI's own API is given the
//     request's CacheKey as prompt_cache_key, and no other server is.
//     ContextWindow asks a provider's model list for a model's window once
//     per model, bounded by WindowTimeout.
//   - The OpenAI wire (chat completions, the Responses API, the model
//     list, server-sent events) is this package's own: no OpenAI SDK is
//     linked, whose package initialisers alone kept about 6 MiB of the
//     executable resident in every process, a session that never calls
//     OpenAI included. Its key goes to the configured server only: a
//     redirect to another origin is not followed.
//   - Proxies (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) and extra certificate
//     authorities (SSL_CERT_FILE) are read from the environment that Resolve
//     is given.
package clients
