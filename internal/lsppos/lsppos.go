// Package lsppos converts between byte offsets in a text and LSP positions
// (a zero-based line and a count of UTF-16 code units in that line), in both
// directions, the way gopls's protocol.Mapper does. Every place of agentls
// where byte offsets meet LSP positions goes through it: the edits a diff
// sends (package editing) and the edits an editor applies (ApplyEdits: the
// headless editor's, and the ACP agent's, which applies the workforce's
// edits for a client that takes whole files).
//
// Lines end at "\n", "\r\n" or a lone "\r", the three line breaks of LSP. A
// line break is not part of its line: a position can be at the end of a
// line's content but never between "\r" and "\n". Characters are counted in
// UTF-16 code units: one for a character of the Basic Multilingual Plane,
// two for one beyond it (an emoji, an astral CJK ideograph). A byte that is
// not part of valid UTF-8 is one character of one unit, as editors decode it
// to U+FFFD.
//
// Each direction comes in two forms. The strict ones, OffsetPosition and
// PositionOffset, refuse what does not name a place in the text exactly (an
// offset inside a character or a line break, a line past the last, a
// character past the end of its line or inside a surrogate pair), for code
// that checks what it was given. The clamped ones, Position and Offset,
// never fail: they move such an input to the nearest place before it or, for
// a position past the end of its line or of the text, to that end, which is
// what LSP asks of a client applying an edit.
//
// A Mapper builds its index of line starts once, when it is made; after that
// it is immutable and safe for concurrent use. A conversion costs a binary
// search over the lines plus a walk along one line.
package lsppos

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
)

// Mapper converts between byte offsets of one text and LSP positions.
type Mapper struct {
	text   string
	starts []int // byte offset at which each line starts; starts[0] == 0
}

// NewMapper indexes the lines of text.
func NewMapper(text string) *Mapper {
	return &Mapper{text: text, starts: lineStarts(text)}
}

// lineStarts returns the offset at which each LSP line of text starts. The
// last line may be empty (after a final line break).
func lineStarts(text string) []int {
	starts := make([]int, 1, strings.Count(text, "\n")+2)
	if strings.IndexByte(text, '\r') < 0 {
		// Only "\n" ends lines: let IndexByte find them.
		for i := 0; ; {
			j := strings.IndexByte(text[i:], '\n')
			if j < 0 {
				return starts
			}
			i += j + 1
			starts = append(starts, i)
		}
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return starts
}

// Lines returns the number of lines of the text: one more than the number
// of line breaks.
func (m *Mapper) Lines() int { return len(m.starts) }

// line returns the byte offsets at which line starts and at which its
// content ends (before its line break). line must be in range.
func (m *Mapper) line(line int) (start, end int) {
	start, end = m.starts[line], len(m.text)
	if line+1 < len(m.starts) {
		end = m.starts[line+1] - 1 // the "\n" or the lone "\r"
		if m.text[end] == '\n' && end > start && m.text[end-1] == '\r' {
			end--
		}
	}
	return start, end
}

// lineOf returns the line holding offset off (in [0, len(text)]).
func (m *Mapper) lineOf(off int) int {
	return sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > off }) - 1
}

// OffsetPosition returns the position of byte offset off. It fails when off
// is outside [0, len(text)], inside a character (a multi-byte UTF-8
// sequence) or inside a line break.
func (m *Mapper) OffsetPosition(off int) (api.Position, error) {
	if off < 0 || off > len(m.text) {
		return api.Position{}, fmt.Errorf("offset %d is outside the text (0 to %d)", off, len(m.text))
	}
	line := m.lineOf(off)
	start, end := m.line(line)
	if off > end {
		return api.Position{}, fmt.Errorf("offset %d is inside the line break that ends line %d", off, line)
	}
	units, at := walkBytes(m.text[start:end], off-start)
	if at != off-start {
		return api.Position{}, fmt.Errorf("offset %d is inside a character of line %d", off, line)
	}
	return api.Position{Line: uint32(line), Character: uint32(units)}, nil
}

// Position returns the position of byte offset off, clamped: an offset
// before the text is its start, one past it its end, one inside a character
// that character's start, and one inside a line break the end of its line.
func (m *Mapper) Position(off int) api.Position {
	off = min(max(off, 0), len(m.text))
	line := m.lineOf(off)
	start, end := m.line(line)
	units, _ := walkBytes(m.text[start:end], min(off, end)-start)
	return api.Position{Line: uint32(line), Character: uint32(units)}
}

// PositionOffset returns the byte offset of p. It fails when p's line is
// past the last line, or its character past the end of the line's content
// or between the two units of a surrogate pair.
func (m *Mapper) PositionOffset(p api.Position) (int, error) {
	if int64(p.Line) >= int64(len(m.starts)) {
		return 0, fmt.Errorf("line %d is past the last line (%d)", p.Line, len(m.starts)-1)
	}
	start, end := m.line(int(p.Line))
	at, units := walkUnits(m.text[start:end], int64(p.Character))
	switch {
	case units == int64(p.Character):
		return start + at, nil
	case start+at == end:
		return 0, fmt.Errorf("character %d is past the end of line %d (%d UTF-16 units)", p.Character, p.Line, units)
	default:
		return 0, fmt.Errorf("character %d of line %d is inside a surrogate pair", p.Character, p.Line)
	}
}

// Offset returns the byte offset of p, clamped as an LSP client applies an
// edit: a line past the last is the end of the text, a character past the
// end of its line is the end of the line's content, and a character inside
// a surrogate pair is before that pair.
func (m *Mapper) Offset(p api.Position) int {
	if int64(p.Line) >= int64(len(m.starts)) {
		return len(m.text)
	}
	start, end := m.line(int(p.Line))
	at, _ := walkUnits(m.text[start:end], int64(p.Character))
	return start + at
}

// walkBytes walks the characters of line up to byte n and returns the
// UTF-16 units before the last character boundary at or before n, and that
// boundary.
func walkBytes(line string, n int) (units, at int) {
	for at < n {
		size, u := char(line, at)
		if at+size > n {
			break
		}
		units += u
		at += size
	}
	return units, at
}

// walkUnits walks the characters of line for up to n UTF-16 units and
// returns the byte offset reached and the units walked. It stops early at
// the end of line, or before a character that would take it past n.
func walkUnits(line string, n int64) (at int, units int64) {
	for units < n && at < len(line) {
		size, u := char(line, at)
		if units+int64(u) > n {
			break
		}
		units += int64(u)
		at += size
	}
	return at, units
}

// char returns the length in bytes and in UTF-16 code units of the
// character at line[at]: two units beyond the Basic Multilingual Plane, one
// for an invalid byte (utf8.RuneError of size 1).
func char(line string, at int) (size, units int) {
	if line[at] < utf8.RuneSelf {
		return 1, 1
	}
	r, size := utf8.DecodeRuneInString(line[at:])
	if r >= 0x10000 {
		return size, 2
	}
	return size, 1
}
