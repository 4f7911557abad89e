package lsppos

import (
	"testing"

	"github.com/agentls/agentls/api"
)

func edit(l1, c1, l2, c2 uint32, text string) api.TextEdit {
	return api.TextEdit{Range: api.Range{Start: pos(l1, c1), End: pos(l2, c2)}, NewText: text}
}

func TestApplyEdits(t *testing.T) {
	cases := []struct {
		name, text string
		edits      []api.TextEdit
		want       string
	}{
		{"replaces a word", "hello world\n", []api.TextEdit{edit(0, 6, 0, 11, "there")}, "hello there\n"},
		{"counts an emoji as two UTF-16 units", "a😀b\n", []api.TextEdit{edit(0, 3, 0, 4, "c")}, "a😀c\n"},
		{"counts CJK as one unit", "中文x", []api.TextEdit{edit(0, 2, 0, 3, "y")}, "中文y"},
		{"keeps combining marks as their own units", "e\u0301x", []api.TextEdit{edit(0, 2, 0, 3, "y")}, "e\u0301y"},
		{"ends a line at CRLF", "a\r\nb\r\n", []api.TextEdit{edit(1, 0, 1, 1, "c")}, "a\r\nc\r\n"},
		{"clamps a character past the line end", "ab\ncd", []api.TextEdit{edit(0, 99, 0, 99, "!")}, "ab!\ncd"},
		{"clamps a character past a CRLF line's end before the CR", "ab\r\ncd", []api.TextEdit{edit(0, 9, 0, 9, "!")}, "ab!\r\ncd"},
		{"stays before an emoji a character falls inside", "x😀y", []api.TextEdit{edit(0, 2, 0, 2, "!")}, "x!😀y"},
		{"clamps a line past the end to the end", "ab", []api.TextEdit{edit(5, 0, 5, 0, "\nz")}, "ab\nz"},
		{"applies several edits as if at once", "abc", []api.TextEdit{edit(0, 2, 0, 3, "C"), edit(0, 0, 0, 1, "A")}, "AbC"},
		{"keeps the order of inserts at one position", "x", []api.TextEdit{edit(0, 0, 0, 0, "1"), edit(0, 0, 0, 0, "2")}, "12x"},
		{"edits an empty file", "", []api.TextEdit{edit(0, 0, 0, 0, "new\n")}, "new\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ApplyEdits(c.text, c.edits)
			if err != nil || got != c.want {
				t.Fatalf("got %q, %v; want %q", got, err, c.want)
			}
		})
	}
	t.Run("refuses overlapping edits", func(t *testing.T) {
		if _, err := ApplyEdits("abcdef", []api.TextEdit{edit(0, 0, 0, 3, "x"), edit(0, 2, 0, 4, "y")}); err == nil {
			t.Fatal("overlap accepted")
		}
	})
}
