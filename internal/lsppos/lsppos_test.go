package lsppos

import (
	"sort"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
)

func pos(line, char uint32) api.Position { return api.Position{Line: line, Character: char} }

func TestOffsetToPosition(t *testing.T) {
	cases := []struct {
		name string
		text string
		off  int
		want api.Position
	}{
		{"counts an ASCII character as one unit", "abc", 2, pos(0, 2)},
		{"counts an astral-plane character as two units", "a😀b", 5, pos(0, 3)},
		{"counts a CJK character as one unit", "你好", 3, pos(0, 1)},
		{"counts a combining mark as its own unit", "e\u0301x", 3, pos(0, 2)},
		{"starts a new line after LF", "a\nb", 2, pos(1, 0)},
		{"starts a new line after CRLF", "a\r\nb", 3, pos(1, 0)},
		{"starts a new line after a lone CR", "a\rb", 2, pos(1, 0)},
		{"ends a line's content before its CRLF", "ab\r\ncd", 2, pos(0, 2)},
		{"puts the end of a text with a final break on an empty last line", "a\n", 2, pos(1, 0)},
		{"puts the end of a text without a final break on its last line", "a\nb😀", 7, pos(1, 3)},
		{"counts an invalid byte as one unit", "a\xffb", 2, pos(0, 2)},
		{"counts each byte of a truncated sequence as one unit", "\xe4\xbdx", 2, pos(0, 2)},
		{"maps the start of an empty text", "", 0, pos(0, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMapper(c.text)
			got, err := m.OffsetPosition(c.off)
			if err != nil || got != c.want {
				t.Fatalf("OffsetPosition(%d) = %+v, %v; want %+v", c.off, got, err, c.want)
			}
			if got := m.Position(c.off); got != c.want {
				t.Errorf("Position(%d) = %+v, want %+v", c.off, got, c.want)
			}
			back, err := m.PositionOffset(c.want)
			if err != nil || back != c.off {
				t.Errorf("PositionOffset(%+v) = %d, %v; want %d", c.want, back, err, c.off)
			}
			if back := m.Offset(c.want); back != c.off {
				t.Errorf("Offset(%+v) = %d, want %d", c.want, back, c.off)
			}
		})
	}
}

func TestOffsetsThatNameNoPosition(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		off     int
		clamped api.Position
	}{
		{"refuses an offset between CR and LF, clamped to the end of the line", "ab\r\nc", 3, pos(0, 2)},
		{"refuses an offset inside an astral-plane character, clamped to its start", "x😀", 3, pos(0, 1)},
		{"refuses an offset inside a CJK character, clamped to its start", "你", 1, pos(0, 0)},
		{"refuses an offset past the end, clamped to the end", "a\nbc", 5, pos(1, 2)},
		{"refuses a negative offset, clamped to the start", "ab", -1, pos(0, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMapper(c.text)
			if got, err := m.OffsetPosition(c.off); err == nil {
				t.Fatalf("OffsetPosition(%d) = %+v, want an error", c.off, got)
			}
			if got := m.Position(c.off); got != c.clamped {
				t.Errorf("Position(%d) = %+v, want %+v", c.off, got, c.clamped)
			}
		})
	}
}

func TestPositionsThatNameNoOffset(t *testing.T) {
	cases := []struct {
		name    string
		text    string
		p       api.Position
		clamped int
	}{
		{"refuses a line past the last, clamped to the end of the text", "a\nb", pos(2, 0), 3},
		{"refuses a line past the end of a text with a final break", "a\n", pos(2, 0), 2},
		{"refuses a character past the end of its line, clamped to the line's end", "ab\ncd", pos(0, 7), 2},
		{"refuses a character past the end of a CRLF line, clamped before the CR", "ab\r\ncd", pos(0, 3), 2},
		{"refuses a character past the end of a lone-CR line", "ab\rcd", pos(0, 3), 2},
		{"refuses a character past the end of the last line", "a\nb", pos(1, 2), 3},
		{"refuses a character inside a surrogate pair, clamped before the pair", "x😀y", pos(0, 2), 1},
		{"refuses the largest character on an empty text", "", pos(0, 1<<32-1), 0},
		{"refuses the largest line", "abc", pos(1<<32-1, 0), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewMapper(c.text)
			if got, err := m.PositionOffset(c.p); err == nil {
				t.Fatalf("PositionOffset(%+v) = %d, want an error", c.p, got)
			}
			if got := m.Offset(c.p); got != c.clamped {
				t.Errorf("Offset(%+v) = %d, want %d", c.p, got, c.clamped)
			}
		})
	}
}

func TestLines(t *testing.T) {
	cases := []struct {
		text string
		want int
	}{
		{"", 1}, {"a", 1}, {"a\n", 2}, {"a\r\nb", 2}, {"a\rb\r", 3}, {"\r\r\n\n", 4},
	}
	for _, c := range cases {
		if got := NewMapper(c.text).Lines(); got != c.want {
			t.Errorf("Lines of %q = %d, want %d", c.text, got, c.want)
		}
	}
}

// oracle returns the position of every byte offset of text that names one,
// computed in a single walk from the start, independently of Mapper.
func oracle(text string) map[int]api.Position {
	out := map[int]api.Position{}
	var p api.Position
	for i := 0; i < len(text); {
		out[i] = p
		switch {
		case strings.HasPrefix(text[i:], "\r\n"):
			p, i = api.Position{Line: p.Line + 1}, i+2
		case text[i] == '\n' || text[i] == '\r':
			p, i = api.Position{Line: p.Line + 1}, i+1
		default:
			r, size := utf8.DecodeRuneInString(text[i:])
			p.Character += uint32(len(utf16.Encode([]rune{r})))
			i += size
		}
	}
	out[len(text)] = p
	return out
}

func FuzzPositionRoundTrip(f *testing.F) {
	f.Add("", uint32(0), uint32(0))
	f.Add("a😀\r\nb\rc\n", uint32(1), uint32(1))
	f.Add("x😀y\n", uint32(0), uint32(2))
	f.Add("\xff\xe4\xbd\r", uint32(0), uint32(2))
	f.Add("你好\r\n\r\n", uint32(2), uint32(5))
	f.Fuzz(func(t *testing.T, text string, line, char uint32) {
		m := NewMapper(text)
		want := oracle(text)
		var bounds []int // offsets that name a position, ascending
		byPos := map[api.Position]int{}
		for off, p := range want {
			bounds = append(bounds, off)
			byPos[p] = off
		}
		sort.Ints(bounds)
		for off := -1; off <= len(text)+1; off++ {
			p, err := m.OffsetPosition(off)
			w, ok := want[off]
			if ok != (err == nil) || (ok && p != w) {
				t.Fatalf("OffsetPosition(%d) of %q = %+v, %v; want %+v (names a position: %v)", off, text, p, err, w, ok)
			}
			// Clamped: the position of the last offset at or before off.
			i := sort.SearchInts(bounds, min(max(off, 0), len(text))+1) - 1
			if got := m.Position(off); got != want[bounds[i]] {
				t.Fatalf("Position(%d) of %q = %+v, want %+v", off, text, got, want[bounds[i]])
			}
			if !ok {
				continue
			}
			if back, err := m.PositionOffset(p); err != nil || back != off {
				t.Fatalf("PositionOffset(%+v) of %q = %d, %v; want %d", p, text, back, err, off)
			}
			if back := m.Offset(p); back != off {
				t.Fatalf("Offset(%+v) of %q = %d, want %d", p, text, back, off)
			}
		}
		p := api.Position{Line: line, Character: char}
		off, err := m.PositionOffset(p)
		w, ok := byPos[p]
		if ok != (err == nil) || (ok && off != w) {
			t.Fatalf("PositionOffset(%+v) of %q = %d, %v; want %d (names an offset: %v)", p, text, off, err, w, ok)
		}
		// Clamped: the last offset of that line whose character is not past
		// p's, or the end of the text for a line past the last.
		clamped := len(text)
		if int64(line) < int64(m.Lines()) {
			for _, b := range bounds {
				if q := want[b]; q.Line == line && q.Character <= char {
					clamped = b
				}
			}
		}
		if got := m.Offset(p); got != clamped {
			t.Fatalf("Offset(%+v) of %q = %d, want %d", p, text, got, clamped)
		}
	})
}
