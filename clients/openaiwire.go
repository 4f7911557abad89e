package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// This file is the HTTP side of the OpenAI wire, which chat completions,
// the Responses API and the model list share: the URL of each call, the
// headers, the bearer key, redirects kept on the configured server, and
// the error answers read into an apiFailure. The request and event types
// of each API are in openai.go and responses.go: only the fields sent and
// read, with the API's own names.

// maxErrorBody bounds the error answer read from a provider.
const maxErrorBody = 1 << 20

// maxListBody bounds the model list read from a provider.
const maxListBody = 16 << 20

// openaiConn reaches one server that speaks the OpenAI API. Safe for
// concurrent use; nothing in it changes once its first call is made.
type openaiConn struct {
	ep      *endpoint
	key     string      // sent as a bearer token; "" sends none
	header  http.Header // openaiHeaders, for OpenAI's own API; nil for Ollama
	hc      *http.Client
	base    *url.URL // nil when ep.baseURL is not a URL (baseErr says why)
	baseErr error
}

// CustomHeadersVar names the headers sent to OpenAI's API beside the key,
// one "Name: value" a line, for a gateway in front of it: their values may
// be a gateway's token, and are kept as secret as the key (the endpoint's
// redactor here, core.Secure for the rest of the process).
const CustomHeadersVar = "OPENAI_CUSTOM_HEADERS"

// CustomHeaderValues are the values of the headers CustomHeadersVar names.
func CustomHeaderValues(env func(string) string) []string {
	var out []string
	for _, line := range strings.Split(env(CustomHeadersVar), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "" {
			if v := strings.TrimSpace(value); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}

// openaiHeaders are the headers the OpenAI SDKs read from the environment:
// the organization and project a key may belong to (OPENAI_ORG_ID,
// OPENAI_PROJECT_ID), and OPENAI_CUSTOM_HEADERS, one "Name: value" a line,
// for a gateway in front of the API. The key is never among them.
func openaiHeaders(env func(string) string) http.Header {
	h := http.Header{}
	for _, line := range strings.Split(env(CustomHeadersVar), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && name != "" {
			h.Set(name, strings.TrimSpace(value))
		}
	}
	if v := env("OPENAI_ORG_ID"); v != "" {
		h.Set("OpenAI-Organization", v)
	}
	if v := env("OPENAI_PROJECT_ID"); v != "" {
		h.Set("OpenAI-Project", v)
	}
	return h
}

func newOpenAIConn(ep *endpoint, key string, hc *http.Client) *openaiConn {
	c := &openaiConn{ep: ep, key: key}
	u, err := url.Parse(ep.baseURL)
	if err == nil && (u.Scheme == "" || u.Host == "") {
		err = errors.New("it has no scheme or host")
	}
	if err != nil {
		c.baseErr = err
	} else {
		// The calls' paths are relative to the base's path, its last
		// segment included ("…/v1" + "chat/completions").
		if u.Path != "" && !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
			if u.RawPath != "" {
				u.RawPath += "/"
			}
		}
		c.base = u
	}
	// A copy of the client that follows redirects on the configured server
	// alone: the key in its header goes nowhere else.
	guarded := *hc
	next := hc.CheckRedirect
	guarded.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if c.base == nil || !sameOrigin(req.URL, c.base) {
			return fmt.Errorf("%w (%s), which is not followed", errOtherOrigin, req.URL.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	c.hc = &guarded
	return c
}

// errOtherOrigin: a redirect to another scheme, host or port than the base
// URL's.
var errOtherOrigin = errors.New("the server redirected the request to another origin")

// sameOrigin reports whether a and b have the same scheme, host and port.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return "443"
	case "http":
		return "80"
	}
	return ""
}

// statusError is an answer with an HTTP error status, its body read (up
// to maxErrorBody). It holds nothing of the request, so nothing of the key.
type statusError struct {
	status int
	header http.Header
	body   []byte
}

func (e *statusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.status, http.StatusText(e.status))
}

// do sends one request (body marshalled as JSON when not nil) to path,
// relative to the base URL, and returns the answer when its status is
// below 400. Otherwise the error is a *statusError, the transport's, or
// the base URL's.
func (c *openaiConn) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	if c.base == nil {
		return nil, c.ep.errorf(ErrBadRequest, 0, false, c.baseErr, "%s %q is not a URL: %v", c.ep.urlVar, c.ep.baseURL, c.baseErr)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.ResolveReference(&url.URL{Path: path}).String(), rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = append([]string(nil), v...)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "agentls")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		raw, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &statusError{status: resp.StatusCode, header: resp.Header, body: raw}
	}
	return resp, nil
}

// events posts body to path and hands the data of each event of the
// streamed answer to fn, in order, until the body ends, a "data: [DONE]"
// event comes, or fn fails. The answer is closed before events returns.
func (c *openaiConn) events(ctx context.Context, path string, body []byte, fn func(data []byte) error) error {
	resp, err := c.do(ctx, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sr := newSSEReader(resp.Body)
	for sr.next() {
		data := sr.bytes()
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			return nil
		}
		if err := fn(data); err != nil {
			return err
		}
	}
	return sr.failed()
}

// models is GET {base}/models (not paginated): the entries of its "data",
// each member of each kept raw.
func (c *openaiConn) models(ctx context.Context) ([]map[string]json.RawMessage, error) {
	resp, err := c.do(ctx, http.MethodGet, "models", nil)
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxListBody+1))
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	if len(raw) > maxListBody {
		return nil, c.ep.errorf(ErrBadResponse, 0, false, nil, "the model list of %s is larger than %d bytes", c.ep.baseURL, maxListBody)
	}
	var page struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := decodeLenient(raw, &page); err != nil {
		return nil, c.ep.errorf(ErrBadResponse, 0, false, err, "unexpected answer from %s: the model list cannot be read: %v", c.ep.baseURL, err)
	}
	return page.Data, nil
}

// marshalBody is a request's JSON, or the request's error.
func (c *openaiConn) marshalBody(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, c.ep.errorf(ErrBadRequest, 0, false, err, "cannot encode the request: %v", err)
	}
	return b.Bytes(), nil
}

// classify turns an error of a call into a classified *Error: an HTTP
// error status, an error event of a stream, the context's end, or the
// transport's failure.
func (c *openaiConn) classify(ctx context.Context, err error) *Error {
	if ctx.Err() != nil {
		return cancelled(ctx, c.ep.provider, c.ep.model, ctx.Err())
	}
	var me *Error
	if errors.As(err, &me) {
		return me
	}
	var se *statusError
	if errors.As(err, &se) {
		f := errorBody(se.body)
		f.status, f.header, f.cause = se.status, se.header, se
		return c.ep.classifyAPI(f)
	}
	var ev *streamError
	if errors.As(err, &ev) {
		f := errorBody(ev.data)
		f.cause = errors.New("error event in the stream")
		if n, err := strconv.Atoi(f.code); err == nil && n >= 400 {
			f.status = n
		}
		return c.ep.classifyAPI(f)
	}
	return c.ep.classifyTransport(ctx, err)
}

// streamError is an event of a stream that carries an "error" member.
type streamError struct{ data []byte }

func (e *streamError) Error() string { return "error event in the stream" }

// errorBody reads what an error answer (or an error event) says: its
// "error" object's message, type and code; or its "error" string (some
// compatible servers, Ollama among them); or a top-level "message". A body
// that is not JSON says nothing: the status speaks for it.
func errorBody(raw []byte) apiFailure {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message wireString      `json:"message"`
	}
	if decodeLenient(raw, &body) != nil {
		return apiFailure{}
	}
	var e struct {
		Message wireString `json:"message"`
		Type    wireString `json:"type"`
		Code    wireString `json:"code"`
	}
	if decodeLenient(body.Error, &e) == nil {
		if e.Message == "" {
			e.Message = body.Message
		}
		return apiFailure{message: string(e.Message), errType: string(e.Type), code: string(e.Code)}
	}
	var s string
	if json.Unmarshal(body.Error, &s) == nil && s != "" {
		return apiFailure{message: s}
	}
	return apiFailure{message: string(body.Message)}
}

// errorMessageOf finds error.message (or a string "error", or a top-level
// message) in a body; a body that is not JSON is its own message.
func errorMessageOf(raw []byte) string {
	if !json.Valid(raw) {
		return strings.TrimSpace(string(raw))
	}
	return errorBody(raw).message
}

// hasError reports whether an event's "error" member is there and not
// null: such an event is the server's report of a failure, whatever else
// it holds.
func hasError(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

// decodeLenient decodes a JSON object into v as the OpenAI SDKs do: a
// member of another type than v's field (a number where a string is
// expected, an object where a list is) is left at its zero value rather
// than failing the whole; but the data must be a JSON object.
func decodeLenient(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errors.New("not a JSON object")
	}
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return nil
	}
	return err
}

// wireString is a string member read leniently: a string is itself, null
// is "", and any other JSON value (a number, or the object some servers
// send as a call's arguments) is its JSON text.
type wireString string

func (s *wireString) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = wireString(v)
	case string(b) == "null":
		*s = ""
	default:
		*s = wireString(b)
	}
	return nil
}

// wireInt is an integer member read leniently: a number (5 or 5.0), or a
// string that holds one; anything else is 0.
type wireInt int64

func (n *wireInt) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if json.Unmarshal(b, &s) != nil {
			return nil
		}
	}
	*n = 0
	if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
		*n = wireInt(i)
	} else if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && f > -1<<62 && f < 1<<62 {
		*n = wireInt(f)
	}
	return nil
}
