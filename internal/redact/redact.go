// Package redact is where agentls decides what is secret and takes it out of
// everything it writes or sends: logs, notifications, tool results given to
// the model, the trace, sessions and recordings. It also names the variables
// that the commands agentls starts must not inherit.
//
// What is secret:
//
//   - the value of every environment variable whose name says it holds a
//     secret (IsSecretName: API_KEY, APIKEY, ACCESS_KEY, PRIVATE_KEY,
//     SECRET_KEY, TOKEN, SECRET, PASSWORD, PASSWD as the last word of the
//     name, or SECRET anywhere in it, e.g. OPENAI_API_KEY, GITHUB_TOKEN,
//     AWS_SECRET_ACCESS_KEY, DB_PASSWORD);
//   - the keys the model clients resolved (Add), whatever they are named;
//   - the password of a proxy URL (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, in
//     either case).
//
// A value shorter than MinLen is not redacted: replacing "abc" everywhere
// would mangle ordinary text. Such a variable is still kept from commands.
// A value is replaced with "[redacted NAME]", NAME being its variable.
//
// A Redactor is safe for concurrent use; a nil *Redactor redacts nothing.
// Adding a secret is rare and takes a lock; redacting takes none.
package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// MinLen is the length under which a value is not redacted.
const MinLen = 8

// secretWords are the last words (split on "_") of a secret variable's name;
// secretPairs the last two. A name holding SECRET anywhere is secret too.
var (
	secretWords = []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY"}
	secretPairs = []string{"API_KEY", "ACCESS_KEY", "PRIVATE_KEY", "SECRET_KEY", "AUTH_KEY"}
)

// IsSecretName reports whether an environment variable's name says it holds
// a secret, e.g. OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY,
// PGPASSWORD. Names like MAX_TOKENS or TOKEN_URL are not.
func IsSecretName(name string) bool {
	n := strings.ToUpper(name)
	if strings.Contains(n, "SECRET") {
		return true
	}
	words := strings.Split(n, "_")
	last := words[len(words)-1]
	for _, w := range secretWords {
		if last == w || (len(words) == 1 && strings.HasSuffix(last, w)) {
			return true
		}
	}
	if len(words) >= 2 {
		pair := words[len(words)-2] + "_" + last
		if slices.Contains(secretPairs, pair) {
			return true
		}
	}
	return false
}

// isProxyName reports whether a variable holds a proxy URL.
func isProxyName(name string) bool {
	switch strings.ToUpper(name) {
	case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "FTP_PROXY":
		return true
	}
	return false
}

// Redactor replaces known secret values.
type Redactor struct {
	mu     sync.Mutex          // serialises changes
	names  map[string]bool     // secret variables, kept from commands
	values map[string]string   // secret value → its name
	snap   atomic.Pointer[set] // what redacting reads
}

// set is an immutable snapshot of the secrets.
type set struct {
	values []string          // longest first
	forms  []string          // values and their JSON-escaped forms
	plain  *strings.Replacer // values → labels
	echo   *strings.Replacer // values and the pieces of them providers echo → labels
}

// New returns a Redactor that knows no secret yet.
func New() *Redactor {
	return &Redactor{names: map[string]bool{}, values: map[string]string{}}
}

// FromEnviron returns a Redactor that knows the secrets of an environment
// ("NAME=value" entries, as os.Environ gives them).
func FromEnviron(environ []string) *Redactor {
	r := New()
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		switch {
		case IsSecretName(name):
			r.Add(name, value)
		case isProxyName(name):
			if u, err := url.Parse(value); err == nil && u.User != nil {
				if pw, ok := u.User.Password(); ok {
					r.addValue(name, pw)
				}
			}
		}
	}
	return r
}

// Add makes a variable secret: its value is redacted (when at least MinLen
// long) and commands do not inherit it (Unset). An empty value still marks
// the name.
func (r *Redactor) Add(name, value string) {
	if r == nil || name == "" {
		return
	}
	r.mu.Lock()
	r.names[name] = true
	r.mu.Unlock()
	r.addValue(name, value)
}

// AddValue makes a value secret without naming a variable: it is redacted
// as "[redacted LABEL]" (when at least MinLen long) but nothing is unset
// for commands. For secrets that come from settings rather than the
// environment, such as an MCP server's Authorization header.
func (r *Redactor) AddValue(label, value string) {
	if r == nil || label == "" {
		return
	}
	r.addValue(label, value)
}

func (r *Redactor) addValue(name, value string) {
	if len(value) < MinLen {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.values[value]; ok {
		return
	}
	r.values[value] = name
	r.snap.Store(build(r.values))
}

func build(values map[string]string) *set {
	s := &set{}
	for v := range values {
		s.values = append(s.values, v)
	}
	// Longest first: a secret that holds another is replaced whole.
	sort.Slice(s.values, func(i, j int) bool {
		if len(s.values[i]) != len(s.values[j]) {
			return len(s.values[i]) > len(s.values[j])
		}
		return s.values[i] < s.values[j]
	})
	var plain, echo []string
	for _, v := range s.values {
		l := label(values[v])
		plain = append(plain, v, l)
		s.forms = append(s.forms, v)
		for _, f := range escapedForms(v) {
			if f != v {
				s.forms = append(s.forms, f)
			}
		}
	}
	echo = append(echo, plain...)
	// Providers echo a masked key: its first 8 and last 4 characters
	// around asterisks ("sk-test-*****cdef").
	for _, v := range s.values {
		if len(v) >= 12 {
			l := label(values[v])
			echo = append(echo, v[:8], l, v[len(v)-4:], l)
		}
	}
	s.plain = strings.NewReplacer(plain...)
	s.echo = strings.NewReplacer(echo...)
	return s
}

// label is the text that replaces a value of the variable name.
func label(name string) string {
	clean := strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r == '.' || (r >= '0' && r <= '9') || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') {
			return r
		}
		return -1
	}, name)
	if clean == "" {
		clean = "secret"
	}
	return "[redacted " + clean + "]"
}

// escapedForms are the ways encoding/json writes v inside a string, with
// and without HTML escaping.
func escapedForms(v string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(v); err == nil {
			s := strings.TrimSuffix(b.String(), "\n")
			out = append(out, s[1:len(s)-1])
		}
	}
	return out
}

func (r *Redactor) load() *set {
	if r == nil {
		return nil
	}
	return r.snap.Load()
}

// Known reports whether the Redactor knows at least one value to redact.
func (r *Redactor) Known() bool { return r.load() != nil }

// String returns s with every known secret replaced by its label.
func (r *Redactor) String(s string) string {
	set := r.load()
	if set == nil || !set.contains(s) {
		return s
	}
	return set.plain.Replace(s)
}

// Echoes is String for text quoted from a model provider: it also replaces
// the first 8 and the last 4 characters of every secret of 12 or more,
// which providers echo around a mask. Only for such text: elsewhere four
// characters would match ordinary words.
func (r *Redactor) Echoes(s string) string {
	set := r.load()
	if set == nil {
		return s
	}
	return set.echo.Replace(s)
}

func (s *set) contains(text string) bool {
	for _, v := range s.values {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// containsForm reports whether b may hold a secret, escaped or not.
func (s *set) containsForm(b []byte) bool {
	for _, f := range s.forms {
		if bytes.Contains(b, []byte(f)) {
			return true
		}
	}
	return false
}

// JSON returns the JSON document b with every known secret replaced inside
// its strings (object keys included); numbers and the structure are never
// touched, so the result is valid JSON whenever b is. Escaped strings are
// decoded before they are matched. b is returned as is when it holds no
// secret.
func (r *Redactor) JSON(b []byte) []byte {
	set := r.load()
	if set == nil {
		return b
	}
	if !set.containsForm(b) && bytes.IndexByte(b, '\\') < 0 {
		return b // no secret, and no escape that could hide one
	}
	var out []byte
	last := 0 // b[last:] is not copied yet
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		end, escaped := i+1, false
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		if end >= len(b) {
			break // not a whole string: left as is
		}
		raw := b[i : end+1]
		var text string
		if escaped {
			if json.Unmarshal(raw, &text) != nil {
				i = end
				continue
			}
		} else {
			text = string(raw[1 : len(raw)-1])
		}
		if set.contains(text) {
			enc, err := marshalString(set.plain.Replace(text))
			if err == nil {
				out = append(out, b[last:i]...)
				out = append(out, enc...)
				last = end + 1
			}
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

func marshalString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Value returns v with every known secret replaced in its strings, through
// its JSON form: v itself when it holds none, else a copy decoded from the
// redacted JSON (the zero value if that cannot be decoded, so that a secret
// never goes through). For the values agentls sends: notifications, results.
func Value[T any](r *Redactor, v T) T {
	set := r.load()
	if set == nil {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	red := r.JSON(b)
	if bytes.Equal(red, b) {
		return v
	}
	var out T
	if err := json.Unmarshal(red, &out); err != nil {
		var zero T
		return zero
	}
	return out
}

// Error returns err with its text redacted: err itself when its text holds
// no secret. errors.Is still sees the original chain; errors.As and Unwrap
// do not, since they would reach the secret.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, orig: err}
}

// EchoesError is Error with Echoes, for errors of a model provider's SDK,
// and it always wraps: their chain holds the request, headers included,
// which errors.As must not reach.
func (r *Redactor) EchoesError(err error) error {
	if err == nil {
		return nil
	}
	return &redactedError{msg: r.Echoes(err.Error()), orig: err}
}

type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string { return e.msg }

// Is lets errors.Is see sentinel values of the original chain
// (context.Canceled, io.ErrUnexpectedEOF, …) without exposing its text.
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// Unset returns the secret variables, sorted, but those named in pass:
// the names the commands agentls starts must not inherit.
func (r *Redactor) Unset(pass []string) []string {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.names))
	for n := range r.names {
		if !slices.Contains(pass, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Environ returns environ without the variables named in unset.
func Environ(environ, unset []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(unset, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Stream redacts a text that arrives in pieces, as a model's answer
// streams: a secret split across pieces is still replaced whole. The end of
// the text that could begin a secret is held back until the next piece
// shows it is not one, or until Flush. A Stream is for one goroutine.
type Stream struct {
	r       *Redactor
	pending string
}

// Stream returns a Stream over r's secrets.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write takes the next piece and returns what can be shown of the text so
// far, redacted.
func (s *Stream) Write(piece string) string {
	set := s.r.load()
	if set == nil {
		out := s.pending + piece
		s.pending = ""
		return out
	}
	text := set.plain.Replace(s.pending + piece)
	hold := 0
	for _, v := range set.values {
		for k := min(len(v)-1, len(text)); k > hold; k-- {
			if strings.HasSuffix(text, v[:k]) {
				hold = k
				break
			}
		}
	}
	s.pending = text[len(text)-hold:]
	return text[:len(text)-hold]
}

// Flush returns what Write held back, at the end of the text.
func (s *Stream) Flush() string {
	out := s.pending
	s.pending = ""
	return out
}

// Reset drops what Write held back: the text starts over.
func (s *Stream) Reset() { s.pending = "" }
