package lsppos

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentls/agentls/api"
)

// ApplyEdits applies LSP text edits to text as an LSP client must:
// positions are zero-based lines and UTF-16 code units; "\n", "\r\n" and
// "\r" end lines; a character past the end of its line means the line's
// end and a line past the end of the text means the text's end; edits are
// applied as if simultaneously, in the order given for equal positions, and
// overlapping edits are an error.
func ApplyEdits(text string, edits []api.TextEdit) (string, error) {
	if len(edits) == 0 {
		return text, nil
	}
	m := NewMapper(text)
	type span struct {
		start, end int
		newText    string
		idx        int
	}
	spans := make([]span, len(edits))
	for i, ed := range edits {
		s := m.Offset(ed.Range.Start)
		en := m.Offset(ed.Range.End)
		if en < s {
			return "", fmt.Errorf("edit %d: range end %d:%d is before its start %d:%d", i,
				ed.Range.End.Line, ed.Range.End.Character, ed.Range.Start.Line, ed.Range.Start.Character)
		}
		spans[i] = span{s, en, ed.NewText, i}
	}
	sort.SliceStable(spans, func(a, b int) bool { return spans[a].start < spans[b].start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return "", fmt.Errorf("edits %d and %d overlap", spans[i-1].idx, spans[i].idx)
		}
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(text[last:sp.start])
		b.WriteString(sp.newText)
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String(), nil
}
