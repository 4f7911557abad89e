package shell

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := []string{"HOME=/home/me", "TOKEN=abc", "EMPTY=", "TOKEN=last"}
	for in, want := range map[string]string{
		"plain":                     "plain",
		"${HOME}/x":                 "/home/me/x",
		"Bearer ${TOKEN}":           "Bearer last",
		"${env:TOKEN}":              "last",
		"${MISSING}":                "",
		"${MISSING:-fallback}":      "fallback",
		"${EMPTY:-fallback}":        "fallback",
		"$HOME and ${HOME":          "$HOME and ${HOME",
		"${HOME}${TOKEN}-${NOPE:-}": "/home/melast-",
	} {
		if got := Expand(in, env); got != want {
			t.Errorf("Expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTailKeepsTheLastBytes(t *testing.T) {
	tl := &Tail{Max: 8}
	for _, s := range []string{"abc", "defgh", "ijkl"} {
		if n, err := tl.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := tl.String(); got != "efghijkl" {
		t.Fatalf("kept %q, want the last 8 bytes", got)
	}
	tl.Write([]byte(strings.Repeat("x", 20)))
	if got := tl.String(); got != strings.Repeat("x", 8) {
		t.Fatalf("kept %q after a long write", got)
	}
}
