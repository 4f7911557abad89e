package editing

import (
	"fmt"
	"strings"
)

// Match stages of edit_file, tried in order until one finds old_string.
const (
	StageExact    = "exact"
	StageTrailing = "ignoring trailing whitespace"
	StageIndent   = "ignoring indentation"
)

// Replacement is the outcome of a staged match.
type Replacement struct {
	Content string // the new content
	Count   int    // occurrences replaced
	Stage   string // the stage that matched
}

// Replace replaces old with new in content, matching old in stages: exactly;
// then line by line ignoring trailing whitespace (and "\r"); then ignoring
// indentation, with new re-indented to the indentation found. old must match
// exactly once unless all is set. The new text takes the line ending of the
// lines it replaces. On a miss the error (wrapping ErrNoMatch) shows the
// closest region of content and what differs, so the model can correct
// itself.
func Replace(name, content, old, new string, all bool) (Replacement, error) {
	if old == "" {
		return Replacement{}, fmt.Errorf("%w: old_string is empty; use write_file to create or overwrite a file", ErrNoMatch)
	}
	if old == new {
		return Replacement{}, fmt.Errorf("%w: old_string and new_string are the same", ErrNoChange)
	}
	switch n := strings.Count(content, old); {
	case n == 1 || (n > 1 && all):
		return Replacement{Content: strings.ReplaceAll(content, old, new), Count: n, Stage: StageExact}, nil
	case n > 1:
		return Replacement{}, ambiguous(name, content, exactLines(content, old), StageExact)
	}
	trailing := func(s string) string { return strings.TrimRight(s, " \t\r") }
	for _, st := range []struct {
		name string
		norm func(string) string
	}{
		{StageTrailing, trailing},
		{StageIndent, func(s string) string { return strings.TrimSpace(s) }},
	} {
		r, found, err := replaceLines(name, content, old, new, all, st.name, st.norm)
		if found {
			return r, err
		}
	}
	return Replacement{}, missError(name, content, old)
}

// exactLines returns the 1-based lines where old starts in content.
func exactLines(content, old string) []int {
	var lines []int
	line, from := 1, 0
	for {
		i := strings.Index(content[from:], old)
		if i < 0 {
			return lines
		}
		line += strings.Count(content[from:from+i], "\n")
		lines = append(lines, line)
		line += strings.Count(old, "\n")
		from += i + len(old)
	}
}

func ambiguous(name, content string, at []int, stage string) error {
	shown := at
	if len(shown) > 10 {
		shown = shown[:10]
	}
	s := make([]string, len(shown))
	for i, l := range shown {
		s[i] = fmt.Sprint(l)
	}
	more := ""
	if len(at) > len(shown) {
		more = ", …"
	}
	how := ""
	if stage != StageExact {
		how = " (" + stage + ")"
	}
	return fmt.Errorf("%w: old_string occurs %d times in %s%s, at lines %s%s; include more surrounding lines to make it unique, or set replace_all",
		ErrAmbiguous, len(at), name, how, strings.Join(s, ", "), more)
}

// fileLine is one line of a text: its content without the line break, and
// where it starts and ends in the text.
type fileLine struct {
	body       string
	start, end int // end excludes the break
	next       int // start of the next line
	crlf       bool
}

func splitFileLines(s string) []fileLine {
	var out []fileLine
	for start := 0; start < len(s); {
		i := strings.IndexByte(s[start:], '\n')
		l := fileLine{start: start}
		if i < 0 {
			l.end, l.next = len(s), len(s)
		} else {
			l.end, l.next = start+i, start+i+1
		}
		if l.end > start && s[l.end-1] == '\r' && i >= 0 {
			l.end--
			l.crlf = true
		}
		l.body = s[l.start:l.end]
		out = append(out, l)
		start = l.next
	}
	return out
}

// replaceLines matches old's lines against content's lines under norm.
// found reports whether this stage decided (a match or an ambiguity).
func replaceLines(name, content, old, new string, all bool, stage string, norm func(string) string) (Replacement, bool, error) {
	endsNL := strings.HasSuffix(old, "\n")
	oldLines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
	want := make([]string, len(oldLines))
	for i, l := range oldLines {
		want[i] = norm(l)
	}
	lines := splitFileLines(content)
	var at []int
	for i := 0; i+len(want) <= len(lines); i++ {
		ok := true
		for k, w := range want {
			if norm(lines[i+k].body) != w {
				ok = false
				break
			}
		}
		if ok {
			at = append(at, i)
			i += len(want) - 1 // matches do not overlap
		}
	}
	switch {
	case len(at) == 0:
		return Replacement{}, false, nil
	case len(at) > 1 && !all:
		ln := make([]int, len(at))
		for i, a := range at {
			ln[i] = a + 1
		}
		return Replacement{}, true, ambiguous(name, content, ln, stage)
	}
	var sb strings.Builder
	last := 0
	for _, i := range at {
		first, end := lines[i], lines[i+len(want)-1]
		stop := end.end
		if endsNL {
			stop = end.next
		}
		repl := new
		if stage == StageIndent {
			repl = reindent(new, oldLines, lines[i:i+len(want)])
		}
		if first.crlf {
			repl = strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
		}
		sb.WriteString(content[last:first.start])
		sb.WriteString(repl)
		last = stop
	}
	sb.WriteString(content[last:])
	return Replacement{Content: sb.String(), Count: len(at), Stage: stage}, true, nil
}

// reindent moves new from the indentation of old's first non-blank line to
// that of the file's matching line.
func reindent(new string, oldLines []string, matched []fileLine) string {
	from, to := "", ""
	for k, l := range oldLines {
		if strings.TrimSpace(l) != "" {
			from, to = indentOf(l), indentOf(matched[k].body)
			break
		}
	}
	if from == to {
		return new
	}
	lines := strings.Split(new, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if strings.HasPrefix(l, from) {
			lines[i] = to + l[len(from):]
		} else {
			lines[i] = to + strings.TrimLeft(l, " \t")
		}
	}
	return strings.Join(lines, "\n")
}

func indentOf(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

// missError describes the region of content closest to old.
func missError(name, content, old string) error {
	lines := splitFileLines(content)
	if len(lines) == 0 {
		return fmt.Errorf("%w: %s is empty", ErrNoMatch, name)
	}
	oldLines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(old, "\r\n", "\n"), "\n"), "\n")
	k := len(oldLines)
	if k > len(lines) {
		k = len(lines)
	}
	probe := oldLines
	if len(probe) > 50 {
		probe = probe[:50]
	}
	best, bestScore := 0, -1.0
	for i := 0; i+k <= len(lines); i++ {
		score := 0.0
		for j, o := range probe {
			if i+j >= len(lines) {
				break
			}
			score += similarity(strings.TrimSpace(lines[i+j].body), strings.TrimSpace(o))
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "old_string was not found in %s, not even ignoring whitespace. The closest part of the file is lines %d-%d:\n", name, best+1, best+k)
	shown := k
	if shown > 20 {
		shown = 20
	}
	for j := 0; j < shown; j++ {
		fmt.Fprintf(&sb, "%d\t%s\n", best+j+1, lines[best+j].body)
	}
	if shown < k {
		fmt.Fprintf(&sb, "…\n")
	}
	for j := 0; j < k && j < len(oldLines); j++ {
		if got := lines[best+j].body; strings.TrimSpace(got) != strings.TrimSpace(oldLines[j]) {
			fmt.Fprintf(&sb, "The first difference is on line %d: old_string has %q, the file has %q. ", best+j+1, oldLines[j], got)
			break
		}
	}
	if len(oldLines) > len(lines) {
		fmt.Fprintf(&sb, "old_string has %d lines, the file only %d. ", len(oldLines), len(lines))
	}
	sb.WriteString("Read the file again and copy old_string from it exactly.")
	return fmt.Errorf("%w: %s", ErrNoMatch, sb.String())
}

// similarity is a cheap score in [0, 1] of how alike two lines are: equal
// lines score 1, others by their common prefix and suffix.
func similarity(a, b string) float64 {
	if a == b {
		return 1
	}
	if len(a)+len(b) == 0 {
		return 1
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return 0.9 * float64(2*(p+s)) / float64(len(a)+len(b))
}
