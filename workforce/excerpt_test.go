package workforce

import (
	"strings"
	"testing"
)

func TestExcerpt(t *testing.T) {
	many := strings.Repeat("line\n", 50)
	for _, c := range []struct {
		name, text   string
		lines, bytes int
		want         string
	}{
		{"keeps a short text whole, lines and all", "a\nb\n", 40, 4096, "a\nb"},
		{"keeps the first lines and says how many are left", many, 3, 4096, "line\nline\nline\n… 47 more lines"},
		{"stops before the line that would pass the bytes", "aaaa\nbbbb\ncccc\n", 40, 12, "aaaa\nbbbb\n… 1 more line"},
		{"cuts one long line, never inside a character", "ééééé", 40, 5, "éé …"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := excerpt(c.text, c.lines, c.bytes); got != c.want {
				t.Fatalf("excerpt = %q, want %q", got, c.want)
			}
		})
	}
}
