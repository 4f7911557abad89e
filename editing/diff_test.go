package editing

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/internal/lsppos"
	"github.com/agentls/agentls/internal/testkit"
)

// applyLSP applies TextEdits to text as an editor does
// (headless.ApplyTextEdits), after checking that every range names exact
// positions of text, in order: a diff must never rely on an editor clamping
// a position that is past a line's end or inside a character.
func applyLSP(text string, edits []api.TextEdit) (string, error) {
	m := lsppos.NewMapper(text)
	last := 0
	for i, e := range edits {
		start, err := m.PositionOffset(e.Range.Start)
		if err != nil {
			return "", fmt.Errorf("edit %d starts nowhere: %w", i, err)
		}
		end, err := m.PositionOffset(e.Range.End)
		if err != nil {
			return "", fmt.Errorf("edit %d ends nowhere: %w", i, err)
		}
		if start < last || end < start {
			return "", fmt.Errorf("edit %d overlaps, is out of order or ends before it starts", i)
		}
		last = end
	}
	return headless.ApplyTextEdits(text, edits)
}

// applyUnified applies a unified diff to old, checking every context and
// deleted line, and returns the result.
func applyUnified(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	if !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("missing headers")
	}
	var out []string
	pos := 0 // next old line to copy
	var last *string
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		if l == "" {
			continue
		}
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var fs, fc, ts, tc int
			if err := parseHunkHeader(l, &fs, &fc, &ts, &tc); err != nil {
				return "", err
			}
			start := fs - 1
			if fc == 0 {
				start = fs
			}
			if start < pos {
				return "", fmt.Errorf("hunk %q goes back", l)
			}
			out = append(out, oldLines[pos:start]...)
			pos = start
			if len(out) != ts-1 && !(tc == 0 && len(out) == ts) {
				return "", fmt.Errorf("hunk %q: new side starts at %d, have %d lines", l, ts, len(out))
			}
		case strings.HasPrefix(l, `\ No newline at end of file`):
			if last == nil {
				return "", fmt.Errorf("no-newline marker without a line")
			}
			*last = strings.TrimSuffix(*last, "\n")
		default:
			body := l[1:]
			switch l[0] {
			case ' ', '-':
				if pos >= len(oldLines) || strings.TrimSuffix(oldLines[pos], "\n") != strings.TrimSuffix(body, "\n") {
					return "", fmt.Errorf("line %d: diff has %q, old has %q", pos+1, body, at(oldLines, pos))
				}
				pos++
				if l[0] == ' ' {
					out = append(out, body)
					last = &out[len(out)-1]
				} else {
					last = new(string)
				}
			case '+':
				out = append(out, body)
				last = &out[len(out)-1]
			default:
				return "", fmt.Errorf("bad diff line %q", l)
			}
		}
	}
	out = append(out, oldLines[pos:]...)
	return strings.Join(out, ""), nil
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "<end>"
}

func parseHunkHeader(l string, fs, fc, ts, tc *int) error {
	var a, b string
	if _, err := fmt.Sscanf(l, "@@ -%s +%s @@", &a, &b); err != nil {
		return fmt.Errorf("hunk header %q: %w", l, err)
	}
	parse := func(s string, start, count *int) error {
		n, c, found := strings.Cut(s, ",")
		var err error
		if *start, err = strconv.Atoi(n); err != nil {
			return err
		}
		*count = 1
		if found {
			*count, err = strconv.Atoi(c)
		}
		return err
	}
	if err := parse(a, fs, fc); err != nil {
		return err
	}
	return parse(b, ts, tc)
}

// checkDiff asserts that the diff's LSP edits, gotextdiff edits and unified
// diff all turn old into new.
func checkDiff(t testing.TB, old, new string) *Diff {
	t.Helper()
	d := ComputeDiff(old, new)
	got, err := applyLSP(old, d.TextEdits())
	if err != nil {
		t.Fatalf("applying LSP edits: %v\nold=%q\nnew=%q", err, old, new)
	}
	if got != new {
		t.Fatalf("LSP edits give %q, want %q (old %q)", got, new, old)
	}
	uni := d.Unified("a/f", "b/f")
	got, err = applyUnified(old, uni)
	if err != nil {
		t.Fatalf("applying unified diff: %v\nold=%q\nnew=%q\n%s", err, old, new, uni)
	}
	if got != new {
		t.Fatalf("unified diff gives %q, want %q\n%s", got, new, uni)
	}
	if d.Empty() != (old == new) {
		t.Fatalf("Empty() = %v for old==new %v", d.Empty(), old == new)
	}
	return d
}

func TestDiffReproducesNewText(t *testing.T) {
	cases := []struct{ name, old, new string }{
		{"keeps equal texts equal", "a\nb\n", "a\nb\n"},
		{"creates content in an empty file", "", "hello\nworld\n"},
		{"empties a file", "hello\nworld\n", ""},
		{"changes a line in the middle", "a\nb\nc\n", "a\nB\nc\n"},
		{"inserts at the start", "b\nc\n", "a\nb\nc\n"},
		{"appends at the end of a file with a final newline", "a\nb\n", "a\nb\nc\n"},
		{"appends to a file without a final newline", "a\nb", "a\nb\nc"},
		{"adds the missing final newline", "a\nb", "a\nb\n"},
		{"removes the final newline", "a\nb\n", "a\nb"},
		{"changes the last line without a newline", "a\nb", "a\nB"},
		{"replaces an emoji line", "x\n😀 smile\ny\n", "x\n😀 grin\ny\n"},
		{"edits after emoji on a last line without newline", "a\n😀😀", "a\n😀😀!"},
		{"edits CJK text", "你好\n世界\n", "你好\n地球\n"},
		{"edits combining marks", "e\u0301\ncafe\u0301\n", "e\u0301\ncafé\n"},
		{"keeps CRLF line ends", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n"},
		{"converts LF to CRLF", "a\nb\n", "a\r\nb\r\n"},
		{"handles lone CR line breaks", "a\rb\rc\n", "a\rB\rc\n"},
		{"handles a lone CR before the edit point", "a\r\nb\rc", "a\r\nb\rcd"},
		{"deletes a line at the end of a CRLF file without final break", "a\r\nb\r\nc", "a\r\nb"},
		{"replaces every line", "a\nb\nc\n", "x\ny\nz\n"},
		{"handles repeated lines", "}\n}\n}\n", "}\n}\n"},
		{"moves a block", "a\nb\nc\nd\ne\n", "d\ne\na\nb\nc\n"},
		{"edits a single line without newline", "x", "y"},
		{"turns a blank file into a newline", "", "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkDiff(t, c.old, c.new) })
	}
}

func TestTextEditsUseUTF16Columns(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           api.Range
	}{
		{"counts an emoji as two units at the end of a file", "a\n😀x", "a\n😀y",
			api.Range{Start: api.Position{Line: 1, Character: 2}, End: api.Position{Line: 1, Character: 3}}},
		{"counts CJK as one unit each", "你好", "你",
			api.Range{End: api.Position{Line: 0, Character: 2}}},
		{"counts combining marks as their own units", "e\u0301", "e",
			api.Range{End: api.Position{Line: 0, Character: 2}}},
		{"ends a range before the next line on CRLF", "a\r\nb\r\n", "a\r\nc\r\n",
			api.Range{Start: api.Position{Line: 1}, End: api.Position{Line: 2}}},
		{"inserts at the end of a file with a final newline", "a\n", "a\nb\n",
			api.Range{Start: api.Position{Line: 1}, End: api.Position{Line: 1}}},
		{"inserts into an empty file at 0:0", "", "x",
			api.Range{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := checkDiff(t, c.old, c.new)
			edits := d.TextEdits()
			if len(edits) != 1 {
				t.Fatalf("got %d edits, want 1: %+v", len(edits), edits)
			}
			if edits[0].Range != c.want {
				t.Errorf("range = %+v, want %+v", edits[0].Range, c.want)
			}
		})
	}
}

func TestDiffSpansAndStat(t *testing.T) {
	d := checkDiff(t, "a\nb\nc\nd\ne\n", "a\nB\nc\nd\nE\nF\n")
	spans := d.Spans()
	want := []LineSpan{{2, 2}, {5, 6}}
	if fmt.Sprint(spans) != fmt.Sprint(want) {
		t.Errorf("Spans() = %v, want %v", spans, want)
	}
	add, del := d.Stat()
	if add != 3 || del != 2 {
		t.Errorf("Stat() = +%d -%d, want +3 -2", add, del)
	}
	if d.Coarse {
		t.Error("a small diff was coarse")
	}
}

func TestUnifiedMatchesTheStandardForm(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"writes a creation as -0,0", "", "a\nb\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"writes a deletion as +0,0", "a\n", "", "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"},
		{"marks a missing final newline", "a\nb", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from, to := "a/f", "b/f"
			if c.old == "" {
				from = "/dev/null"
			}
			if c.new == "" {
				to = "/dev/null"
			}
			got := ComputeDiff(c.old, c.new).Unified(from, to)
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestDiffGolden holds the diff of each testdata/diff/NAME.txtar (its
// files old and new) to NAME.golden: the unified diff the person reads and
// the LSP edits the editor applies, one a line. -update rewrites the golden files.
func TestDiffGolden(t *testing.T) {
	archives, err := filepath.Glob("testdata/diff/*.txtar")
	if err != nil || len(archives) == 0 {
		t.Fatalf("no archives in testdata/diff: %v", err)
	}
	for _, path := range archives {
		name := strings.TrimSuffix(filepath.Base(path), ".txtar")
		t.Run(name, func(t *testing.T) {
			a := testkit.ReadArchive(t, path)
			d := checkDiff(t, a.File(t, "old"), a.File(t, "new"))
			var b strings.Builder
			b.WriteString(d.Unified("a/"+name+".go", "b/"+name+".go"))
			b.WriteString("\nLSP edits (line:character, UTF-16):\n")
			for _, e := range d.TextEdits() {
				r := e.Range
				fmt.Fprintf(&b, "%d:%d-%d:%d %s\n", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character, strconv.Quote(e.NewText))
			}
			got := b.String()
			testkit.Golden(t, strings.TrimSuffix(path, ".txtar")+".golden", got)
		})
	}
}

func TestDiffFallbacksStayExact(t *testing.T) {
	defer func(d, w, f, fl int) { myersMaxD, myersWork, workFactor, workFloor = d, w, f, fl }(myersMaxD, myersWork, workFactor, workFloor)
	t.Run("replaces a region whole when Myers is bounded", func(t *testing.T) {
		myersMaxD, myersWork = 2, 100
		// no unique lines: only Myers can align these
		old := strings.Repeat("x\ny\n", 20)
		new := strings.Repeat("y\nx\nx\n", 15)
		d := checkDiff(t, old, new)
		if !d.Coarse {
			t.Error("expected a coarse diff")
		}
	})
	t.Run("replaces the rest whole when the work budget runs out", func(t *testing.T) {
		myersMaxD, myersWork, workFactor, workFloor = 1000, 4_000_000, 0, 10
		old, new := genFile(2000, 1), genFile(2000, 1)
		new = mutate(rand.New(rand.NewSource(1)), new, 200)
		d := checkDiff(t, old, new)
		if !d.Coarse {
			t.Error("expected a coarse diff")
		}
	})
}

func TestDiffRandomTexts(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	n := 2000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		old := randText(rng)
		var new string
		if rng.Intn(3) == 0 {
			new = randText(rng)
		} else {
			new = mutate(rng, old, rng.Intn(5))
		}
		checkDiff(t, old, new)
	}
}

// randText builds text from a small alphabet of lines so lines repeat, with
// every kind of line break, multi-byte runes and sometimes no final newline.
func randText(rng *rand.Rand) string {
	atoms := []string{"a", "b", "}", "", "😀", "你", "e\u0301", " x", "\t"}
	breaks := []string{"\n", "\n", "\n", "\r\n", "\r"}
	var sb strings.Builder
	for n := rng.Intn(12); n > 0; n-- {
		for k := rng.Intn(3); k >= 0; k-- {
			sb.WriteString(atoms[rng.Intn(len(atoms))])
		}
		if n > 1 || rng.Intn(3) > 0 {
			sb.WriteString(breaks[rng.Intn(len(breaks))])
		}
	}
	return sb.String()
}

func FuzzDiffReproducesNewText(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("", "x")
	f.Add("x\r\ny", "x\ry\n")
	f.Add("😀\n你好", "😀\n你好\n")
	f.Fuzz(func(t *testing.T, old, new string) {
		if !utf8.ValidString(old) || !utf8.ValidString(new) {
			t.Skip("editors hold text, not bytes")
		}
		checkDiff(t, old, new)
	})
}

func TestDiffMapLine(t *testing.T) {
	old := "a\nb\nc\nd\ne\n"
	new := "a\nx\ny\nc\ne\nf\n" // b replaced by x, y; d deleted; f added
	d := ComputeDiff(old, new)
	type mapped struct {
		from, to int
		exact    bool
	}
	for line, want := range map[int]mapped{
		0: {0, 1, true},  // a stays
		1: {1, 3, false}, // b became x, y
		2: {3, 4, true},  // c moved down one
		3: {4, 4, false}, // d was deleted
		4: {4, 5, true},  // e moved back
		5: {6, 7, true},  // the end moved with f
	} {
		from, to, exact := d.MapLine(line)
		if got := (mapped{from, to, exact}); got != want {
			t.Errorf("MapLine(%d) = %+v, want %+v", line, got, want)
		}
	}
	// An unchanged line of the old text holds the same text in the new.
	oldLines, newLines := strings.Split(old, "\n"), strings.Split(new, "\n")
	for i := range oldLines[:len(oldLines)-1] {
		if from, _, exact := d.MapLine(i); exact && newLines[from] != oldLines[i] {
			t.Errorf("line %d %q maps to %d %q", i, oldLines[i], from, newLines[from])
		}
	}
}
