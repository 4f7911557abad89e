package workforce

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/internal/fileuri"
)

// The diagnostics of a worker's edits (docs/WORKFORCE.md, "Diagnostics").
//
// After edit_file or write_file changes a file, the worker is told the
// errors the change introduced: the diagnostics of the file after it that
// were not there before it, matched by message and by range (a range of an
// unchanged line followed to where the change moved it). They come from:
//
//   - the editor, when it declares experimental.agent.diagnostics: its
//     language servers' diagnostics of the file, asked before the change
//     and after it (agent/diagnostics). After the change agentls waits for
//     the language server to check it again: the editor sends
//     agent/didChangeDiagnostics when a server publishes for the file
//     (Engine.DiagnosticsChanged), and the wait ends at the first publish
//     that differs from what the file had before, or once the server has
//     published nothing for settleQuiet(waitMs) after a publish
//     the same as before (one may be its answer to its opening the file,
//     or to a save, before the change reached it: a count of publishes told
//     a worker of a loaded machine "no new error" before gopls had checked
//     its change), or at diagnostics.waitMs (a server that publishes
//     nothing for a change that changes nothing is waited for that long);
//   - else the command the diagnostics setting names for the file's
//     language, run in the workspace root before and after the change (the
//     run before reuses the last run's output when no change of the task
//     came since), its output read as file:line:col: message lines
//     (parseDiagnostics): every file's diagnostics, so a change that breaks
//     another file is told too;
//   - else none, and the worker is told so, once per language.
//
// get_diagnostics gives a file's, a directory's or the workspace's
// diagnostics as they are, from the same source. What lies in a denied
// zone is left out of both, as the file tools leave it out.

// settleQuiet is how long a server that published the diagnostics a file
// had before the change is given to publish again before its silence is
// taken for "nothing new": a quarter of the wait the person allows
// (diagnostics.waitMs; 500 ms by default), at most 5 s. A loaded machine's
// gopls may take seconds to check a change after it answered the file's
// opening; a person who allows a long wait gets a long one here too.
func settleQuiet(wait time.Duration) time.Duration {
	return min(wait/4, 5*time.Second)
}

// DiagnosticsEditor is an Editor that gives its language servers'
// diagnostics (docs/PROTOCOL.md §4, agent/diagnostics): *rpc.Editor is one.
// A Config.Editor that is one, and declares the diagnostics capability,
// is the source of the workers' diagnostics.
type DiagnosticsEditor interface {
	Diagnostics(ctx context.Context, p api.DiagnosticsParams) (api.DiagnosticsResult, error)
}

// Bounds of what diagnostics the workers are given.
const (
	// maxDiagnostics bounds what is read of one answer or one command's
	// output: a flood is cut, never followed.
	maxDiagnostics = 5000
	// maxEditDiagnostics bounds the new diagnostics an edit's result lists.
	maxEditDiagnostics = 20
	// maxListedDiagnostics bounds what get_diagnostics lists.
	maxListedDiagnostics = 100
	// maxDiagnosticMessage bounds one message as the worker reads it.
	maxDiagnosticMessage = 400
)

// DiagnosticsChanged tells the engine that the editor's language servers
// published the diagnostics of uris anew (agent/didChangeDiagnostics): a
// worker waiting for the diagnostics of its edit of one of them reads them
// now. It never blocks.
func (e *Engine) DiagnosticsChanged(uris []string) { e.diag.report(uris) }

// diagWatch hears the editor's reports of new diagnostics
// (agent/didChangeDiagnostics) for the workers that wait on them.
type diagWatch struct {
	mu      sync.Mutex
	watched map[string]*watchedFile // by absolute path, symlinks resolved
	exts    map[string]bool         // file extensions the editor reported on
	// onWait, when set (tests), is told of every file a worker starts
	// waiting on, once its change is made: the language server of a test
	// checks it then.
	onWait func(abs string)
}

// watchedFile counts the reports of one file that workers wait on.
type watchedFile struct {
	waiters int
	reports int
	changed chan struct{} // closed at the next report
}

// report counts a report of each of uris, for the files waited on.
func (d *diagWatch) report(uris []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.exts == nil {
		d.exts = map[string]bool{}
	}
	for _, uri := range uris {
		p, err := fileuri.ToPath(uri)
		if err != nil {
			continue
		}
		if ext := strings.ToLower(filepath.Ext(p)); ext != "" && len(d.exts) < 256 {
			d.exts[ext] = true
		}
		if len(d.watched) == 0 {
			continue
		}
		f := d.watched[filepath.Clean(p)]
		if f == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				f = d.watched[real]
			}
		}
		if f != nil {
			f.reports++
			close(f.changed)
			f.changed = make(chan struct{})
		}
	}
}

// reported reports whether the editor has reported on a file with the
// extension of name.
func (d *diagWatch) reported(name string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.exts[strings.ToLower(filepath.Ext(name))]
}

// watch starts counting the reports of the file abs; the count starts at
// 0. stop ends it.
func (d *diagWatch) watch(abs string) (w *fileWatch, stop func()) {
	d.mu.Lock()
	if d.watched == nil {
		d.watched = map[string]*watchedFile{}
	}
	f := d.watched[abs]
	if f == nil {
		f = &watchedFile{changed: make(chan struct{})}
		d.watched[abs] = f
	}
	f.waiters++
	w = &fileWatch{d: d, f: f, seen: f.reports}
	d.mu.Unlock()
	var once sync.Once
	return w, func() {
		once.Do(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if f.waiters--; f.waiters == 0 && d.watched[abs] == f {
				delete(d.watched, abs)
			}
		})
	}
}

// fileWatch is one worker's count of the reports of a file.
type fileWatch struct {
	d    *diagWatch
	f    *watchedFile
	seen int
}

// next waits for reports past those seen and returns how many came, or 0
// when deadline passes or ctx ends first.
func (w *fileWatch) next(ctx context.Context, deadline <-chan time.Time) int {
	for {
		w.d.mu.Lock()
		reports, changed := w.f.reports, w.f.changed
		w.d.mu.Unlock()
		if n := reports - w.seen; n > 0 {
			w.seen = reports
			return n
		}
		select {
		case <-changed:
		case <-deadline:
			return 0
		case <-ctx.Done():
			return 0
		}
	}
}

// diagKind is where a file's diagnostics come from.
type diagKind int

const (
	diagNone    diagKind = iota
	diagEditor           // the editor's language servers
	diagCommand          // the command of the diagnostics setting
)

// diagSource is where the diagnostics of the files of one language come
// from.
type diagSource struct {
	kind    diagKind
	lang    string // the code graph's name of the language; "" when none
	command string // diagCommand: the command line
}

// says names the source as the worker reads it.
func (s diagSource) says() string {
	if s.kind == diagCommand {
		return "`" + s.command + "` (the diagnostics setting)"
	}
	return "the editor's language server"
}

// diagnosticsEditor is the engine's editor as a source of diagnostics, or
// nil when it declares none.
func (t *task) diagnosticsEditor() DiagnosticsEditor {
	de, ok := t.e.cfg.Editor.(DiagnosticsEditor)
	if !ok || !t.e.cfg.Editor.Caps().Diagnostics {
		return nil
	}
	return de
}

// diagSourceOf is where the diagnostics of the workspace-relative file rel
// come from.
func (t *task) diagSourceOf(rel string) diagSource {
	lang := codegraph.LangOf(rel).String()
	switch {
	case t.diagnosticsEditor() != nil:
		return diagSource{kind: diagEditor, lang: lang}
	case lang != "" && t.settings.Diagnostics.Commands[lang] != "":
		return diagSource{kind: diagCommand, lang: lang, command: t.settings.Diagnostics.Commands[lang]}
	}
	return diagSource{lang: lang}
}

// fileDiags are diagnostics by workspace-relative path.
type fileDiags map[string][]api.Diagnostic

func (f fileDiags) count() int {
	n := 0
	for _, ds := range f {
		n += len(ds)
	}
	return n
}

// fromEditor asks the editor for the diagnostics of uris (all when none)
// and keeps those of files in the workspace that no zone closes.
func (t *task) fromEditor(ctx context.Context, uris ...string) (fileDiags, error) {
	de := t.diagnosticsEditor()
	if de == nil {
		return nil, fmt.Errorf("%s: %w", api.MethodDiagnostics, api.ErrUnsupported)
	}
	res, err := de.Diagnostics(ctx, api.DiagnosticsParams{URIs: uris})
	if err != nil {
		return nil, err
	}
	out, n := fileDiags{}, 0
	for _, it := range res.Items {
		rp, err := t.edit.Resolve(it.URI)
		if err != nil || rp.Rel == "." || t.edit.Closed(rp.Rel) != "" {
			continue
		}
		for _, d := range it.Diagnostics {
			if n == maxDiagnostics {
				return out, nil
			}
			out[rp.Rel] = append(out[rp.Rel], d)
			n++
		}
	}
	return out, nil
}

// diagBefore is what a worker knows of a file's diagnostics before it
// changes it.
type diagBefore struct {
	src   diagSource
	rp    editing.Path
	files fileDiags // before the change: the file's (editor), every file's (command)
	err   error     // they could not be had
	// watch counts the editor's reports on the file from before the change
	// is made (nil: none are waited for); stop ends it.
	watch *fileWatch
	stop  func()
}

// done ends what b holds.
func (b *diagBefore) done() {
	if b != nil && b.stop != nil {
		b.stop()
	}
}

// diagnosticsBefore takes the diagnostics before a change of rp, from the
// file's source; nil when it has none (the worker is told at the change).
func (w *worker) diagnosticsBefore(ctx context.Context, rp editing.Path) *diagBefore {
	t := w.t
	b := &diagBefore{src: t.diagSourceOf(rp.Rel), rp: rp}
	switch b.src.kind {
	case diagEditor:
		b.files, b.err = t.fromEditor(ctx, rp.URI)
		// Reports are counted from here, before the change is made: the
		// language server may publish before the editor's answer to the
		// change is read. One that comes before the change lands tells
		// what was there before, and does not end the wait (settle).
		if b.err == nil && t.settings.Diagnostics.WaitMs > 0 && (codegraph.LangOf(rp.Rel) != codegraph.LangNone || t.e.diag.reported(rp.Rel)) {
			b.watch, b.stop = t.e.diag.watch(rp.Abs)
		}
	case diagCommand:
		b.files, b.err = w.commandDiagnostics(ctx, b.src.command, true)
	}
	return b
}

// diagnosticsAfter says what the applied change ch did to the diagnostics
// b had: the text appended to the edit's result ("" for nothing to say).
func (w *worker) diagnosticsAfter(ctx context.Context, b *diagBefore, ch editing.Change) string {
	t := w.t
	switch b.src.kind {
	case diagNone:
		return w.noDiagnostics(b.src)
	case diagEditor:
		if b.err != nil {
			return fmt.Sprintf("Diagnostics: the editor could not give those of %s before the change (%v).", b.rp.Rel, b.err)
		}
		after, checked, err := w.settle(ctx, b)
		if err != nil {
			if ctx.Err() != nil {
				return ""
			}
			return fmt.Sprintf("Diagnostics: the editor could not give those of %s after the change (%v).", b.rp.Rel, err)
		}
		return describeChange(b, after, ch, checked, time.Duration(t.settings.Diagnostics.WaitMs)*time.Millisecond)
	}
	if b.err != nil {
		return fmt.Sprintf("Diagnostics: %v.", b.err)
	}
	after, err := w.commandDiagnostics(ctx, b.src.command, false)
	if err != nil {
		if ctx.Err() != nil {
			return ""
		}
		return fmt.Sprintf("Diagnostics: %v.", err)
	}
	return describeChange(b, after, ch, checkedAgain, 0)
}

// noDiagnostics tells the worker, once per language, that its changes of
// such files come without diagnostics, and why.
func (w *worker) noDiagnostics(src diagSource) string {
	key := src.lang
	if w.toldNoDiag[key] {
		return ""
	}
	if w.toldNoDiag == nil {
		w.toldNoDiag = map[string]bool{}
	}
	w.toldNoDiag[key] = true
	if src.lang == "" {
		return "" // a file of no language: nothing checks it, as expected
	}
	return fmt.Sprintf("No diagnostics for %s files here: the editor gives none, and the diagnostics setting names no command for %s. Check your changes by building or testing them (run_command).", src.lang, src.lang)
}

// checked says whether the diagnostics after a change were checked again.
type checked int

const (
	checkedAgain checked = iota // the language server (or the command) checked the change
	notChecked                  // the language server had not reported within diagnostics.waitMs
	notWaited                   // no wait: diagnostics.waitMs is 0, or no language server is known to check such files
)

// settle waits for the editor's language server to check the changed file
// again (see the package's diagnostics comment above) and returns its
// diagnostics then, and whether it reported on the change.
func (w *worker) settle(ctx context.Context, b *diagBefore) (fileDiags, checked, error) {
	t := w.t
	state := notWaited
	if b.watch != nil {
		state = notChecked
		if onWait := t.e.diag.onWait; onWait != nil {
			onWait(b.rp.Abs)
		}
		before := b.files[b.rp.Rel]
		wait := time.Duration(t.settings.Diagnostics.WaitMs) * time.Millisecond
		end, quietEnd := time.Now().Add(wait), time.Time{}
		for {
			limit := end
			if !quietEnd.IsZero() && quietEnd.Before(limit) {
				limit = quietEnd
			}
			timer := time.NewTimer(time.Until(limit))
			n := b.watch.next(ctx, timer.C)
			timer.Stop()
			if n == 0 {
				break
			}
			cur, err := t.fromEditor(ctx, b.rp.URI)
			if err != nil {
				return nil, state, err
			}
			state = checkedAgain
			if !sameDiagnostics(cur[b.rp.Rel], before) {
				return cur, state, nil
			}
			quietEnd = time.Now().Add(settleQuiet(wait))
		}
		if ctx.Err() != nil {
			return nil, state, context.Cause(ctx)
		}
	}
	cur, err := t.fromEditor(ctx, b.rp.URI)
	return cur, state, err
}

// sameDiagnostics reports whether a and b hold the same diagnostics, in any
// order.
func sameDiagnostics(a, b []api.Diagnostic) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[api.Diagnostic]int{}
	for _, d := range a {
		count[d]++
	}
	for _, d := range b {
		if count[d]--; count[d] < 0 {
			return false
		}
	}
	return true
}

// found is one diagnostic of one file.
type found struct {
	rel string
	d   api.Diagnostic
}

// introduced returns the diagnostics of after that before did not have:
// matched by severity, message and start, the start of a diagnostic of
// the changed file rel followed through the change (diff); one on a line
// the change replaced matches one of the same message on the lines that
// replaced it.
func introduced(before, after fileDiags, rel string, diff *editing.Diff) []found {
	type key struct {
		rel      string
		severity api.DiagnosticSeverity
		message  string
	}
	type place struct {
		from, to int // lines
		char     uint32
		exact    bool
	}
	old := map[key][]place{}
	for f, ds := range before {
		for _, d := range ds {
			p := place{from: int(d.Range.Start.Line), to: int(d.Range.Start.Line) + 1, char: d.Range.Start.Character, exact: true}
			if f == rel && diff != nil {
				p.from, p.to, p.exact = diff.MapLine(int(d.Range.Start.Line))
			}
			k := key{f, d.Severity, d.Message}
			old[k] = append(old[k], p)
		}
	}
	var out []found
	for _, f := range slices.Sorted(maps.Keys(after)) {
		for _, d := range after[f] {
			k := key{f, d.Severity, d.Message}
			line := int(d.Range.Start.Line)
			i := slices.IndexFunc(old[k], func(p place) bool {
				if p.exact {
					return p.from == line && p.char == d.Range.Start.Character
				}
				return line >= p.from && line < max(p.to, p.from+1)
			})
			if i >= 0 {
				old[k] = slices.Delete(old[k], i, i+1)
				continue
			}
			out = append(out, found{f, d})
		}
	}
	sortFound(out)
	return out
}

// sortFound orders diagnostics by severity (errors first), then file and
// place.
func sortFound(fs []found) {
	slices.SortStableFunc(fs, func(a, b found) int {
		return cmp.Or(
			cmp.Compare(severityRank(a.d.Severity), severityRank(b.d.Severity)),
			cmp.Compare(a.rel, b.rel),
			cmp.Compare(a.d.Range.Start.Line, b.d.Range.Start.Line),
			cmp.Compare(a.d.Range.Start.Character, b.d.Range.Start.Character),
			cmp.Compare(a.d.Message, b.d.Message))
	})
}

// severityRank orders severities, an error (or none given) first.
func severityRank(s api.DiagnosticSeverity) int {
	if s < api.SeverityError || s > api.SeverityHint {
		return int(api.SeverityError)
	}
	return int(s)
}

// isProblem reports whether a diagnostic is an error or a warning: what an
// edit's result tells.
func isProblem(d api.Diagnostic) bool { return severityRank(d.Severity) <= int(api.SeverityWarning) }

// describeChange is what the worker is told of the diagnostics after its
// change: those it introduced (errors and warnings), or that there are
// none, and how many problems there were before that remain; "" when
// nothing checked a file of no language.
func describeChange(b *diagBefore, after fileDiags, ch editing.Change, state checked, wait time.Duration) string {
	var problems []found
	for _, f := range introduced(b.files, after, b.rp.Rel, editing.ComputeDiff(ch.Before, ch.NewContent)) {
		if isProblem(f.d) {
			problems = append(problems, f)
		}
	}
	remain := 0
	for _, ds := range after {
		for _, d := range ds {
			if isProblem(d) {
				remain++
			}
		}
	}
	remain -= len(problems)
	var sb strings.Builder
	switch {
	case len(problems) > 0:
		errs := 0
		for _, f := range problems {
			if severityRank(f.d.Severity) == int(api.SeverityError) {
				errs++
			}
		}
		fmt.Fprintf(&sb, "Diagnostics after this change, from %s: %s new.\n", b.src.says(), countProblems(errs, len(problems)-errs))
		writeFound(&sb, problems, maxEditDiagnostics)
		if state == notChecked {
			fmt.Fprintf(&sb, "(It had not checked the change within %s: some may be from before it.)\n", wait)
		}
		sb.WriteString("Fix what this change broke before you go on.")
	case state == notWaited && remain == 0:
		return ""
	case state == notWaited:
		fmt.Fprintf(&sb, "Diagnostics: the editor reports no new problem in %s.", b.rp.Rel)
	case state == notChecked:
		fmt.Fprintf(&sb, "Diagnostics: %s had not checked %s again within %s of the change; no new problem so far (get_diagnostics shows what it finds later).", b.src.says(), b.rp.Rel, wait)
	default:
		fmt.Fprintf(&sb, "Diagnostics: %s finds no new error or warning after this change.", b.src.says())
	}
	if remain > 0 {
		where := b.rp.Rel
		if b.src.kind == diagCommand {
			where = "the workspace"
		}
		fmt.Fprintf(&sb, " %d %s %s had before remain (get_diagnostics lists them).", remain, plural(remain, "problem", "problems"), where)
	}
	return strings.TrimSpace(sb.String())
}

// countProblems says "2 errors and 1 warning".
func countProblems(errs, warnings int) string {
	var parts []string
	if errs > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", errs, plural(errs, "error", "errors")))
	}
	if warnings > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", warnings, plural(warnings, "warning", "warnings")))
	}
	return strings.Join(parts, " and ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// writeFound lists diagnostics, one a line, path:line:col: severity:
// message (source code), at most limit of them.
func writeFound(sb *strings.Builder, fs []found, limit int) {
	for i, f := range fs {
		if i == limit {
			fmt.Fprintf(sb, "… and %d more.\n", len(fs)-limit)
			return
		}
		d := f.d
		msg := strings.Join(strings.Fields(d.Message), " ")
		if len(msg) > maxDiagnosticMessage {
			msg = strings.ToValidUTF8(msg[:maxDiagnosticMessage], "") + "…"
		}
		fmt.Fprintf(sb, "%s:%d:%d: %s: %s", f.rel, d.Range.Start.Line+1, d.Range.Start.Character+1, d.Severity, msg)
		if by := strings.TrimSpace(d.Source + " " + string(d.Code)); by != "" {
			fmt.Fprintf(sb, " (%s)", by)
		}
		sb.WriteByte('\n')
	}
}

// errNoDiagnostics: nothing gives diagnostics for what get_diagnostics was
// asked about.
var errNoDiagnostics = errors.New("no diagnostics")
