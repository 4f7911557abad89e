package codegraph

import (
	"testing"

	"github.com/agentls/agentls/internal/lsppos"
)

// TestPositionsAreLSPPositions holds the builder's fast path for ASCII
// texts to lsppos, which every other place of agentls uses.
func TestPositionsAreLSPPositions(t *testing.T) {
	for _, text := range []string{
		"", "a", "ab\ncd\n", "a\r\nb\rc\n\nd", "\r\r\n\n", "x\r", "last line without a break",
		"tabs\tand spaces  \r\n", "é and 😀\nmixed\r\n",
	} {
		m := lsppos.NewMapper(text)
		b := newBuilder([]byte(text))
		for off := -1; off <= len(text)+1; off++ {
			want := m.Position(off)
			if got := b.pos(off); got.Line != want.Line || got.Col != want.Character {
				t.Errorf("%q at %d: %+v, lsppos says %+v", text, off, got, want)
			}
		}
	}
}

func FuzzPositionsAreLSPPositions(f *testing.F) {
	f.Add("a\r\nb\rc\n")
	f.Fuzz(func(t *testing.T, text string) {
		m := lsppos.NewMapper(text)
		b := newBuilder([]byte(text))
		for off := 0; off <= len(text); off++ {
			want := m.Position(off)
			if got := b.pos(off); got.Line != want.Line || got.Col != want.Character {
				t.Fatalf("%q at %d: %+v, lsppos says %+v", text, off, got, want)
			}
		}
	})
}
