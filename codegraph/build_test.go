package codegraph

import (
	"strings"
	"testing"

	"github.com/agentls/agentls/internal/lsppos"
)

// TestPositionsAreLSPPositions holds the builder's positions (its fast
// path for ASCII texts, and its walk along a line that goes on from the
// last position) to lsppos, which every other place of agentls uses.
func TestPositionsAreLSPPositions(t *testing.T) {
	for _, text := range []string{
		"", "a", "ab\ncd\n", "a\r\nb\rc\n\nd", "\r\r\n\n", "x\r", "last line without a break",
		"tabs\tand spaces  \r\n", "é and 😀\nmixed\r\n", "a😀b\r\n中文\xffx\xe2\x82y\r", "\xf0\x9f\x98",
		strings.Repeat("var é = f(😀, x);", 50),
	} {
		checkPositions(t, text)
	}
}

// checkPositions asks the position of every offset of text (and one
// either side) in the order of the text, backwards, and jumping about, of
// one builder, as lsppos gives them.
func checkPositions(t *testing.T, text string) {
	t.Helper()
	m := lsppos.NewMapper(text)
	b := newBuilder([]byte(text))
	var offs []int
	for off := -1; off <= len(text)+1; off++ {
		offs = append(offs, off)
	}
	for off := len(text) + 1; off >= -1; off-- {
		offs = append(offs, off)
	}
	for i := 0; i <= len(text)+2; i++ {
		offs = append(offs, (i*7919)%(len(text)+3)-1)
	}
	for _, off := range offs {
		want := m.Position(off)
		if got := b.pos(off); got.Line != want.Line || got.Col != want.Character {
			t.Fatalf("%q at %d: %+v, lsppos says %+v", text, off, got, want)
		}
	}
}

func FuzzPositionsAreLSPPositions(f *testing.F) {
	f.Add("a\r\nb\rc\n")
	f.Add("é and 😀\nmi\xffxed\r\n")
	f.Fuzz(checkPositions)
}
