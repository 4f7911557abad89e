package editing

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
)

// ReadResult is what read_file gives back.
type ReadResult struct {
	Path      string // workspace-relative
	Text      string // what the model reads: the lines asked for, and a note when cut
	Content   string // the whole file
	Lines     int    // lines in the file
	From, To  int    // lines shown, 1-based inclusive (0, 0: none)
	Truncated bool   // fewer lines shown than the file has from From on
}

// Read reads a file as the editor has it (open buffer with unsaved edits,
// else the disk; the disk itself when the client cannot read files), or as
// the task holds it in review mode. offset
// is the first line to show (1-based; 0 means 1), limit the number of lines
// (0: up to Limits.ReadLines). Binary files are refused. The whole content is
// remembered for the conflict check of later changes.
func (a *Agent) Read(ctx context.Context, p string, offset, limit int) (ReadResult, error) {
	w := a.task.ws
	rp, err := w.Access(a.who, p, false, nil)
	if err != nil {
		return ReadResult{}, err
	}
	content, exists, err := a.task.current(ctx, rp)
	if err != nil {
		return ReadResult{}, err
	}
	if !exists {
		return ReadResult{}, fmt.Errorf("%w: %s", ErrNotFound, rp.Rel)
	}
	a.remember(rp.Rel, content)
	w.accessed(a.who, rp.Rel, api.ActionRead)
	return w.view(rp.Rel, content, offset, limit), nil
}

// current returns the text of a file as the editor has it, and whether it
// exists. Whether it exists is decided by the disk: a file the editor has in
// a buffer but was never saved does not exist yet.
func (w *Workspace) current(ctx context.Context, rp Path) (string, bool, error) {
	fi, err := os.Stat(rp.Abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("%s: %w", rp.Rel, err)
	case fi.IsDir():
		return "", true, fmt.Errorf("%w: %s is a directory; use list_files", ErrIsDir, rp.Rel)
	case !fi.Mode().IsRegular():
		return "", true, fmt.Errorf("%w: %s is not a regular file", ErrBadPath, rp.Rel)
	case fi.Size() > w.limits.FileBytes:
		return "", true, fmt.Errorf("%w: %s is %d bytes, more than the %d agentls reads whole; read a part of it with run_command (sed -n, head)", ErrTooLarge, rp.Rel, fi.Size(), w.limits.FileBytes)
	}
	text, err := w.ed.ReadFile(ctx, rp.Rel, rp.URI)
	if errors.Is(err, api.ErrUnsupported) {
		var b []byte
		b, _, err = contain.ReadRegular(rp.Abs, w.limits.FileBytes)
		text = string(b)
	}
	if err != nil {
		return "", true, fmt.Errorf("reading %s: %w", rp.Rel, err)
	}
	if isBinary(text) {
		return "", true, fmt.Errorf("%w: %s is not a text file (it holds NUL bytes or is not UTF-8)", ErrBinary, rp.Rel)
	}
	return text, true, nil
}

// isBinary reports whether s is not text: a NUL byte in its first 8000 bytes
// (git's test), or not valid UTF-8.
func isBinary(s string) bool {
	head := s
	if len(head) > 8000 {
		head = head[:8000]
	}
	return strings.IndexByte(head, 0) >= 0 || !utf8.ValidString(s)
}

// view cuts the lines [offset, offset+limit) out of content within the
// limits, with a note saying what was left out.
func (w *Workspace) view(rel, content string, offset, limit int) ReadResult {
	res := ReadResult{Path: rel, Content: content}
	if content == "" {
		res.Text = "(empty file)"
		return res
	}
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	res.Lines = len(lines)
	if offset <= 0 {
		offset = 1
	}
	if limit <= 0 || limit > w.limits.ReadLines {
		limit = w.limits.ReadLines
	}
	if offset > len(lines) {
		res.Text = fmt.Sprintf("(%s has %d lines; offset %d is past the end)", rel, len(lines), offset)
		return res
	}
	var sb strings.Builder
	to := offset - 1
	cutLines := 0
	for to < len(lines) && to-(offset-1) < limit {
		line := lines[to]
		if n := w.limits.LineChars; len(line) > n {
			cut := n
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut] + " … [line cut]\n"
			cutLines++
		}
		if sb.Len()+len(line) > w.limits.ReadBytes && to > offset-1 {
			break
		}
		sb.WriteString(line)
		to++
	}
	res.From, res.To = offset, to
	res.Truncated = to < len(lines)
	var notes []string
	if offset > 1 || res.Truncated {
		more := ""
		if res.Truncated {
			more = fmt.Sprintf("; read on with offset %d", to+1)
		}
		notes = append(notes, fmt.Sprintf("lines %d-%d of %d shown%s", offset, to, len(lines), more))
	}
	if cutLines > 0 {
		notes = append(notes, fmt.Sprintf("%d long lines cut at %d bytes", cutLines, w.limits.LineChars))
	}
	if len(notes) > 0 {
		if !strings.HasSuffix(sb.String(), "\n") {
			sb.WriteByte('\n')
		}
		sb.WriteString("[" + strings.Join(notes, "; ") + "]")
	}
	res.Text = sb.String()
	return res
}

// ListResult is what list_files gives back.
type ListResult struct {
	Paths   []string // workspace-relative, in walk order
	Omitted int      // matching files left out by the limit
	More    bool     // counting stopped: at least Omitted were left out
	Text    string   // what the model reads
}

// errStopWalk ends a walk early without an error.
var errStopWalk = errors.New("stop walk")

// List lists the files matching a doublestar pattern ("" means "**"),
// leaving out .git, .gitignore'd files and denied zones, at most
// Limits.ListEntries of them. In review mode the files the task deleted are
// left out and those it created are listed (after the others).
func (a *Agent) List(ctx context.Context, pattern string) (ListResult, error) {
	w := a.task.ws
	pattern, err := w.walkPattern(pattern)
	if err != nil {
		return ListResult{}, err
	}
	var res ListResult
	countCap := 100 * w.limits.ListEntries
	add := func(rel string) error {
		if len(res.Paths) < w.limits.ListEntries {
			res.Paths = append(res.Paths, rel)
			return nil
		}
		res.Omitted++
		if res.Omitted >= countCap {
			res.More = true
			return errStopWalk
		}
		return nil
	}
	ov := a.task.heldFiles() // review mode: what the task holds
	walked := map[string]bool{}
	err = w.walk(ctx, pattern, func(rel string, real Path) error {
		if h, ok := ov[real.Rel]; ok {
			walked[real.Rel] = true
			if !h.exists {
				return nil // the task deleted it
			}
		}
		return add(rel)
	})
	if err == nil {
		for _, h := range w.createdHeld(ov, pattern, walked) {
			if err = add(h.rp.Rel); err != nil {
				break
			}
		}
	}
	if err != nil && !errors.Is(err, errStopWalk) {
		return ListResult{}, err
	}
	var sb strings.Builder
	for _, p := range res.Paths {
		sb.WriteString(p + "\n")
	}
	switch {
	case len(res.Paths) == 0:
		sb.WriteString(fmt.Sprintf("(no files match %q)", pattern))
	case res.More:
		fmt.Fprintf(&sb, "[more than %d further files not shown; narrow the pattern]", res.Omitted)
	case res.Omitted > 0:
		fmt.Fprintf(&sb, "[%d further files not shown; narrow the pattern]", res.Omitted)
	}
	res.Text = strings.TrimSuffix(sb.String(), "\n")
	return res, nil
}

// walkPattern validates a listing or search glob. A pattern without "/"
// matches a file name at any depth ("*.go" is "**/*.go"). Repeated "**"
// segments are one: the walk would otherwise reach a file once for every
// way the segments can split its directories ("**/**" lists a file d
// directories deep d+1 times).
func (w *Workspace) walkPattern(p string) (string, error) {
	p = strings.TrimPrefix(strings.ReplaceAll(strings.TrimSpace(p), `\`, "/"), "./")
	if p == "" || p == "." {
		return "**", nil
	}
	if !strings.Contains(p, "/") && p != "**" {
		p = "**/" + p
	}
	p = collapseDoubleStars(p)
	if err := api.ValidateGlob(p); err != nil {
		return "", fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	if strings.HasPrefix(p, "../") || strings.Contains(p, "/../") {
		return "", fmt.Errorf("%w: %q leaves the workspace", ErrBadPattern, p)
	}
	return p, nil
}

// collapseDoubleStars makes each run of "**" segments of a pattern one.
func collapseDoubleStars(p string) string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return strings.Join(out, "/")
}

// SearchMatch is one matching line.
type SearchMatch struct {
	Path string // workspace-relative
	Line int    // 1-based
	Text string // the line, cut to Limits.LineChars
}

// SearchResult is what search_files gives back.
type SearchResult struct {
	Matches []SearchMatch
	Omitted int    // matching lines left out by the limit
	Files   int    // files with a match
	Skipped int    // files too large to search
	Text    string // "path:line: text" lines, and a note when cut
}

// Search finds the lines matching a regular expression (RE2 syntax) in the
// text files matching glob ("" means all), with the same visibility as List.
// Files are read from the disk, or in review mode as the task holds them;
// binary files and files larger than Limits.SearchFileBytes are skipped.
func (a *Agent) Search(ctx context.Context, expr, glob string) (SearchResult, error) {
	w := a.task.ws
	re, err := regexp.Compile(expr)
	if err != nil {
		return SearchResult{}, fmt.Errorf("%w: regex %q: %w", ErrBadPattern, expr, err)
	}
	pattern, err := w.walkPattern(glob)
	if err != nil {
		return SearchResult{}, err
	}
	var res SearchResult
	search := func(rel, real, text string) {
		found := false
		for n := 1; len(text) > 0; n++ {
			line := text
			if i := strings.IndexByte(text, '\n'); i >= 0 {
				line, text = text[:i], text[i+1:]
			} else {
				text = ""
			}
			line = strings.TrimSuffix(line, "\r")
			if !re.MatchString(line) {
				continue
			}
			found = true
			if len(res.Matches) >= w.limits.SearchMatches {
				res.Omitted++
				continue
			}
			if max := w.limits.LineChars; len(line) > max {
				for max > 0 && !utf8.RuneStart(line[max]) {
					max--
				}
				line = line[:max] + " …"
			}
			res.Matches = append(res.Matches, SearchMatch{Path: rel, Line: n, Text: line})
		}
		if found {
			res.Files++
			w.accessed(a.who, real, api.ActionSearch)
		}
	}
	ov := a.task.heldFiles() // review mode: what the task holds
	walked := map[string]bool{}
	err = w.walk(ctx, pattern, func(rel string, real Path) error {
		if h, ok := ov[real.Rel]; ok {
			walked[real.Rel] = true
			if h.exists && int64(len(h.text)) <= w.limits.SearchFileBytes {
				search(rel, real.Rel, h.text)
			} else if h.exists {
				res.Skipped++
			}
			return nil
		}
		// real is where the walk judged the file to be: read that, not the
		// name, whose symlinks were followed when it was judged.
		b, _, err := contain.ReadRegular(real.Abs, w.limits.SearchFileBytes)
		if errors.Is(err, contain.ErrTooLarge) {
			res.Skipped++
			return nil
		}
		if err != nil || isBinary(string(b)) {
			return nil
		}
		search(rel, real.Rel, string(b))
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	for _, h := range w.createdHeld(ov, pattern, walked) {
		if int64(len(h.text)) > w.limits.SearchFileBytes {
			res.Skipped++
			continue
		}
		search(h.rp.Rel, h.rp.Rel, h.text)
	}
	var sb strings.Builder
	for _, m := range res.Matches {
		fmt.Fprintf(&sb, "%s:%d: %s\n", m.Path, m.Line, m.Text)
	}
	if len(res.Matches) == 0 {
		fmt.Fprintf(&sb, "(no matches for %q)\n", expr)
	}
	if res.Omitted > 0 {
		fmt.Fprintf(&sb, "[%d more matches not shown; narrow the regex or the glob]\n", res.Omitted)
	}
	if res.Skipped > 0 {
		fmt.Fprintf(&sb, "[%d files larger than %d bytes not searched]\n", res.Skipped, w.limits.SearchFileBytes)
	}
	res.Text = strings.TrimSuffix(sb.String(), "\n")
	return res, nil
}
