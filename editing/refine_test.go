package editing

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// editList renders edits one a line as "line:char-line:char newText".
func editList(d *Diff) []string {
	var out []string
	for _, e := range d.TextEdits() {
		r := e.Range
		out = append(out, fmt.Sprintf("%d:%d-%d:%d %s", r.Start.Line, r.Start.Character, r.End.Line, r.End.Character, strconv.Quote(e.NewText)))
	}
	return out
}

func TestTextEditsChangeOnlyTheWordsThatChanged(t *testing.T) {
	cases := []struct {
		name     string
		old, new string
		want     []string
	}{
		{"replaces one word of a line", "hello world\n", "goodbye world\n",
			[]string{`0:0-0:5 "goodbye"`}},
		{"keeps the words between two changes", "a := foo(x, y)\n", "a := bar(x, z)\n",
			[]string{`0:5-0:8 "bar"`, `0:12-0:13 "z"`}},
		{"joins changes separated by punctuation and blanks only", "call(x, 1)\n", "call(y; 2)\n",
			[]string{`0:5-0:9 "y; 2"`}},
		{"changes each line of a hunk on its own, keeping the line breaks", "a = 1\nb = 2\n", "a = 10\nb = 20\n",
			[]string{`0:4-0:5 "10"`, `1:4-1:5 "20"`}},
		{"replaces a rewritten line whole", "\tx += 1 // 0a0b\n", "\tchanged(7)\n",
			[]string{`0:0-1:0 "\tchanged(7)\n"`}},
		{"inserts a new line whole beside a changed one", "a := 1\nreturn a\n", "a := 2\nlog(a)\nreturn a\n",
			[]string{`0:5-0:6 "2"`, `1:0-1:0 "log(a)\n"`}},
		{"deletes an old line whole beside a changed one", "a := 1\ndebug(a)\nreturn a\n", "a := 2\nreturn a\n",
			[]string{`0:5-0:6 "2"`, `1:0-2:0 ""`}},
		{"keeps CRLF line breaks", "a = 1\r\nb\r\n", "a = 2\r\nb\r\n",
			[]string{`0:4-0:5 "2"`}},
		{"changes a line break alone", "a = 1\r\nb\n", "a = 1\nb\n",
			[]string{`0:5-1:0 "\n"`}},
		{"adds a final line break at the end of the last line", "x\nfoo bar", "x\nfoo bar\n",
			[]string{`1:7-1:7 "\n"`}},
		{"counts an emoji before the change as two units", "😀 x = 1\n", "😀 x = 2\n",
			[]string{`0:7-0:8 "2"`}},
		{"keeps a combining mark inside its word", "cafe\u0301 bar\n", "cafe\u0301 baz\n",
			[]string{`0:6-0:9 "baz"`}},
		{"changes a word after a lone CR line break", "a\rb = 1\n", "a\rb = 2\n",
			[]string{`1:4-1:5 "2"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := checkDiff(t, c.old, c.new)
			if got := editList(d); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("edits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestRefinementKeepsLineEditsBeyondItsBounds(t *testing.T) {
	defer func(b, p, d, w int) { refineMaxBytes, refinePairs, refineMaxD, refineWork = b, p, d, w }(refineMaxBytes, refinePairs, refineMaxD, refineWork)
	lineEdit := func(t *testing.T, old, new string) {
		t.Helper()
		d := checkDiff(t, old, new)
		edits := d.TextEdits()
		if len(edits) != len(d.hunks) {
			t.Fatalf("%d edits for %d hunks: %v", len(edits), len(d.hunks), editList(d))
		}
		for i, e := range edits {
			if e.Range.Start.Character != 0 || e.Range.End.Character != 0 {
				t.Fatalf("edit %d is not a line edit: %v", i, editList(d))
			}
		}
	}
	t.Run("keeps the line edit of a line longer than refineMaxBytes", func(t *testing.T) {
		long := strings.Repeat("word ", 20_000) // 100 KB
		lineEdit(t, "a\n"+long+"old\nz\n", "a\n"+long+"new\nz\n")
	})
	t.Run("keeps the line edit of a hunk with more line pairs than refinePairs", func(t *testing.T) {
		refinePairs = 2
		lineEdit(t, "a = 1\nb = 2\n", "a = 1 + 1\nc = 3\nb = 2 + 2\n")
	})
	t.Run("pairs lines by rank in a hunk of as many old as new lines beyond refinePairs", func(t *testing.T) {
		refinePairs = 2
		d := checkDiff(t, "a = 1\nb = 2\nc = 3\n", "a = 10\nb = 20\nc = 30\n")
		if got := editList(d); len(got) != 3 || !strings.HasPrefix(got[2], "2:4-2:5") {
			t.Fatalf("edits %v", got)
		}
	})
	t.Run("keeps the line edit when the token diff runs past its bounds", func(t *testing.T) {
		refineMaxD, refineWork = 1, 1<<20
		// no token but the line break occurs once: only Myers aligns them
		lineEdit(t, "x y x y x y\n", "y x y x y x\n")
	})
	t.Run("keeps the line edit of a hunk larger than refineMaxBytes", func(t *testing.T) {
		refineMaxBytes = 10
		lineEdit(t, "hello world\n", "goodbye world\n")
	})
}

// TestRefinedEditsReproduceTheNewText changes words inside lines at random:
// every kind of line break, multi-byte characters, blanks, punctuation and
// lines that are rewritten, inserted or deleted around the changed ones.
func TestRefinedEditsReproduceTheNewText(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	words := []string{"foo", "bar", "x", "😀", "你好", "e\u0301", "(", ")", ",", " ", "  ", "\t", "+=", "_a1"}
	breaks := []string{"\n", "\n", "\r\n", "\r"}
	line := func() string {
		var sb strings.Builder
		for k := rng.Intn(8); k >= 0; k-- {
			sb.WriteString(words[rng.Intn(len(words))])
		}
		return sb.String()
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	refinedSome := false
	for i := 0; i < n; i++ {
		var oldL []string
		for k := rng.Intn(10); k >= 0; k-- {
			oldL = append(oldL, line()+breaks[rng.Intn(len(breaks))])
		}
		if rng.Intn(4) == 0 {
			oldL[len(oldL)-1] = strings.TrimRight(oldL[len(oldL)-1], "\r\n")
		}
		var newL []string
		for _, l := range oldL {
			switch rng.Intn(6) {
			case 0: // change one word
				toks := strings.SplitAfter(l, " ")
				toks[rng.Intn(len(toks))] = words[rng.Intn(len(words))] + " "
				newL = append(newL, strings.Join(toks, ""))
			case 1:
				newL = append(newL, line()+breaks[rng.Intn(len(breaks))], l)
			case 2:
			case 3:
				newL = append(newL, l+words[rng.Intn(len(words))])
			default:
				newL = append(newL, l)
			}
		}
		old, new := strings.Join(oldL, ""), strings.Join(newL, "")
		d := checkDiff(t, old, new)
		for _, e := range d.TextEdits() {
			refinedSome = refinedSome || e.Range.Start.Character > 0
		}
	}
	if !refinedSome {
		t.Fatal("no edit was refined below a line")
	}
}
