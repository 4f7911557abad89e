package shell

import (
	"strings"
	"sync"
)

// Expand replaces ${NAME}, ${NAME:-default} and ${env:NAME} (VS Code's
// form) in s with values from environ (NAME=value entries, the last one of
// a name winning); an unset NAME gives "" (or the default, as does an empty
// one). Other text, a lone $ included, is left as it is. The mcpServers and
// engines settings take their variables this way, as the editors' own
// settings do.
func Expand(s string, environ []string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		ref := strings.TrimPrefix(s[i+2:i+j], "env:")
		name, def, hasDef := strings.Cut(ref, ":-")
		v, ok := Lookup(environ, name)
		if (!ok || v == "") && hasDef {
			v = def
		}
		b.WriteString(v)
		s = s[i+j+1:]
	}
}

// Lookup returns the value of name in environ, the last entry winning.
func Lookup(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(environ[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Tail is an io.Writer that keeps the last Max bytes written to it: a
// child process's stderr, for the error that says why it ended.
type Tail struct {
	Max int

	mu sync.Mutex
	b  []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.Max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.Max:]...)
	}
	return len(p), nil
}

// String returns what it keeps.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
