package workforce

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/agentls/agentls/tracking"
)

// diagCaps are the capabilities of an editor whose language servers give
// diagnostics.
var diagCaps = api.Caps{ApplyEdit: true, DocumentChanges: true, Diagnostics: true}

// newDiagHarness is newToolHarness with an editor of caps, returned for the
// test to play its language server with.
func newDiagHarness(t *testing.T, files map[string]string, caps api.Caps) (*toolHarness, *headlesstest.Editor) {
	t.Helper()
	h := newToolHarness(t, files)
	ed := headlesstest.New(h.root, caps)
	ws, err := tracking.Open(tracking.Config{Root: h.root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Root: h.root, Editor: ed, Events: h.n, Tracking: ws, Models: h.m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	h.e = e
	return h, ed
}

// compile is the tests' language server: an error at every BROKEN of a
// file, as a compiler reports an undefined name.
func compile(text string) []api.Diagnostic {
	var out []api.Diagnostic
	for i, line := range strings.Split(text, "\n") {
		if c := strings.Index(line, "BROKEN"); c >= 0 {
			out = append(out, api.Diagnostic{
				Range:    api.Range{Start: api.Position{Line: uint32(i), Character: uint32(c)}, End: api.Position{Line: uint32(i), Character: uint32(c + 6)}},
				Severity: api.SeverityError, Source: "compiler", Message: "undefined: BROKEN"})
		}
	}
	return out
}

// langServer plays a language server behind ed: it checks the files
// named and the editor publishes what it finds; serve makes it check every
// file a worker waits on, as a server checks a file that changed.
type langServer struct {
	h     *toolHarness
	ed    *headlesstest.Editor
	mu    sync.Mutex
	check func(abs string) // what it does when a worker waits on abs
}

func newLangServer(h *toolHarness, ed *headlesstest.Editor) *langServer {
	ls := &langServer{h: h, ed: ed}
	ls.check = func(abs string) { ls.publish(abs) }
	h.e.diag.onWait = func(abs string) {
		ls.mu.Lock()
		check := ls.check
		ls.mu.Unlock()
		check(abs)
	}
	return ls
}

// publish checks the file abs as it is on disk, and the editor reports it.
func (ls *langServer) publish(abs string) {
	b, _ := os.ReadFile(abs)
	ls.ed.SetDiagnostics(abs, compile(string(b)))
	ls.h.e.DiagnosticsChanged([]string{fileuri.FromPath(abs)})
}

func TestEditsAreToldTheErrorsTheyIntroduce(t *testing.T) {
	h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n\nfunc main() {\n}\n"}, diagCaps)
	h.settings.Diagnostics.WaitMs = 4000 // a report that differs ends the wait; one that does not, a second of quiet
	ls := newLangServer(h, ed)
	ls.publish(filepath.Join(h.root, "main.go"))
	h.check("edit_file", []toolCase{
		{name: "lists the error an edit introduced, where it is", args: map[string]any{"path": "main.go", "old_string": "func main() {\n}", "new_string": "func main() {\n\tBROKEN()\n}"},
			says: []string{"Updated main.go", "Diagnostics after this change, from the editor's language server: 1 error new.", "main.go:4:2: error: undefined: BROKEN (compiler)", "Fix what this change broke"}},
		{name: "says the fix leaves no new error", args: map[string]any{"path": "main.go", "old_string": "\tBROKEN()\n", "new_string": "\tprintln()\n"},
			says: []string{"Diagnostics: the editor's language server finds no new error or warning after this change."}},
	}, call("read_file", map[string]any{"path": "main.go"}))

	t.Run("an error the file had before is not new, though the edit moved it", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tBROKEN()\n}\n"}, diagCaps)
		h.settings.Diagnostics.WaitMs = 4000
		ls := newLangServer(h, ed)
		ls.publish(filepath.Join(h.root, "main.go"))
		h.check("edit_file", []toolCase{
			{name: "moved down two lines", args: map[string]any{"path": "main.go", "old_string": "package main\n", "new_string": "package main\n\nimport \"os\"\n"},
				says: []string{"finds no new error or warning after this change.", "1 problem main.go had before remain (get_diagnostics lists them)."}},
			{name: "a second error of the same message on a new line is new", args: map[string]any{"path": "main.go", "old_string": "\tBROKEN()\n", "new_string": "\tBROKEN()\n\tBROKEN()\n"},
				says: []string{"1 error new.", "main.go:7:2: error: undefined: BROKEN", "1 problem main.go had before remain"}},
		}, call("read_file", map[string]any{"path": "main.go"}))
	})

	t.Run("reports of the same diagnostics end the wait once the server is quiet", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n"}, diagCaps)
		h.settings.Diagnostics.WaitMs = 4000 // the reports end it after a second of quiet, not the 4 s
		ls := newLangServer(h, ed)
		ls.check = func(abs string) {
			// the server's answer to its opening the file, then its check
			// of the change: nothing changed either time
			h.e.DiagnosticsChanged([]string{fileuri.FromPath(abs)})
			h.e.DiagnosticsChanged([]string{fileuri.FromPath(abs)})
		}
		h.check("edit_file", []toolCase{
			{name: "clean", args: map[string]any{"path": "main.go", "old_string": "package main\n", "new_string": "// Package main.\npackage main\n"},
				says: []string{"finds no new error or warning"}},
		}, call("read_file", map[string]any{"path": "main.go"}))
	})

	t.Run("a first report that changes nothing waits for the next: the change had not reached the server", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n"}, diagCaps)
		h.settings.Diagnostics.WaitMs = 300000
		ls := newLangServer(h, ed)
		var once sync.Once
		ls.check = func(abs string) {
			h.e.DiagnosticsChanged([]string{fileuri.FromPath(abs)}) // the file as it was: no diagnostics
			// once the worker has read that first report, the server's
			// check of the change comes
			ed.OnDiagnostics(func(api.DiagnosticsParams) {
				once.Do(func() { ed.OnDiagnostics(nil); ls.publish(abs) })
			})
		}
		h.check("write_file", []toolCase{
			{name: "broken", args: map[string]any{"path": "main.go", "content": "package main\n\nvar x = BROKEN\n"},
				says: []string{"1 error new.", "main.go:3:9: error: undefined: BROKEN"}},
		}, call("read_file", map[string]any{"path": "main.go"}))
	})

	t.Run("a server that does not report within waitMs is not waited for longer", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n"}, diagCaps)
		h.settings.Diagnostics.WaitMs = 1
		ls := newLangServer(h, ed)
		ls.check = func(string) {}
		h.check("edit_file", []toolCase{
			{name: "silent", args: map[string]any{"path": "main.go", "old_string": "package main\n", "new_string": "package main // x\n"},
				says: []string{"Diagnostics: the editor's language server had not checked main.go again within 1ms of the change; no new problem so far"}},
		}, call("read_file", map[string]any{"path": "main.go"}))
	})

	t.Run("a file of no language is not waited on", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"notes.txt": "a\n"}, diagCaps)
		h.settings.Diagnostics.WaitMs = 300000 // the test would hang if it were waited on
		ls := newLangServer(h, ed)
		ls.check = func(string) { t.Error("a worker waited on notes.txt") }
		_, results := h.run(call("read_file", map[string]any{"path": "notes.txt"}),
			call("edit_file", map[string]any{"path": "notes.txt", "old_string": "a", "new_string": "b"}))
		if len(results) != 2 || results[1].IsError || strings.Contains(results[1].Content, "Diagnostics") {
			t.Fatalf("results = %+v", results)
		}
	})
}

func TestEditsWithoutTheEditorsDiagnostics(t *testing.T) {
	// lint is a diagnostics command: a line of go vet's form for every
	// BROKEN of a Go file of the root.
	const lint = `awk '/BROKEN/ { print "vet: ./" FILENAME ":" FNR ":" index($0, "BROKEN") ": undefined: BROKEN" }' *.go`
	t.Run("the diagnostics command of the language checks each change", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{"main.go": "package main\n\nfunc main() {\n}\n", "other.go": "package main\n\nvar y = BROKEN\n"})
		h.settings.Diagnostics.Commands = map[string]string{"go": lint}
		res := h.check("edit_file", []toolCase{
			{name: "an error introduced", args: map[string]any{"path": "main.go", "old_string": "func main() {\n}", "new_string": "func main() {\n\tBROKEN()\n}"},
				says: []string{"Diagnostics after this change, from `" + lint + "` (the diagnostics setting): 1 error new.", "main.go:4:2: error: undefined: BROKEN", "1 problem the workspace had before remain"}},
			{name: "and fixed", args: map[string]any{"path": "main.go", "old_string": "\tBROKEN()\n", "new_string": ""},
				says: []string{"Diagnostics: `" + lint + "` (the diagnostics setting) finds no new error or warning after this change."}},
		}, call("read_file", map[string]any{"path": "main.go"}))
		// once before the first change, once after each: the run after a
		// change is the next change's run before it
		started := h.events(res.TaskID, api.EventCommandStarted)
		if len(started) != 3 || started[0].Text != lint {
			t.Errorf("commandStarted = %+v", started)
		}
	})
	t.Run("commands: deny runs no diagnostics command", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{"main.go": "package main\n"})
		h.settings.Diagnostics.Commands = map[string]string{"go": lint}
		h.settings.Commands = api.CommandsDeny
		h.check("write_file", []toolCase{
			{name: "said", args: map[string]any{"path": "new.go", "content": "package main\n"},
				says: []string{"Created new.go", "Diagnostics: the diagnostics command `" + lint + "` is not run: the commands setting is deny."}},
		})
	})
	t.Run("in a workspace the person does not trust, the command is asked for", func(t *testing.T) {
		h, ed := newDiagHarness(t, map[string]string{"main.go": "package main\n"}, api.Caps{})
		h.settings.Diagnostics.Commands = map[string]string{"go": lint}
		h.settings.WorkspaceTrust = api.TrustUntrusted
		ed.SetAnswer("Deny")
		h.check("write_file", []toolCase{
			{name: "refused", args: map[string]any{"path": "new.go", "content": "package main\n"},
				says: []string{"Created new.go", "the diagnostics command `" + lint + "` was not run: the user refused"}},
		})
		if asked := ed.Asked(); len(asked) != 1 || !strings.Contains(asked[0].Message, "This workspace is not trusted. agentls wants to run `"+lint+"`") {
			t.Errorf("asked = %+v", asked)
		}
	})
	t.Run("a command that fails without diagnostics says so", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{"main.go": "package main\n"})
		h.settings.Diagnostics.Commands = map[string]string{"go": "echo no checker here >&2; exit 127"}
		h.check("write_file", []toolCase{
			{name: "failed", args: map[string]any{"path": "new.go", "content": "package main\n"},
				says: []string{"the diagnostics command `echo no checker here >&2; exit 127` failed (exit code 127) without a file:line: diagnostic; its output ends: no checker here"}},
		})
	})
	t.Run("without an editor's or a command's, the worker is told, once per language", func(t *testing.T) {
		h := newToolHarness(t, map[string]string{"main.go": "package main\n"})
		h.settings.Diagnostics.Commands = map[string]string{"typescript": "tsc --noEmit"}
		_, results := h.run(call("write_file", map[string]any{"path": "a.go", "content": "package main\n"}),
			call("write_file", map[string]any{"path": "b.go", "content": "package main\n"}),
			call("write_file", map[string]any{"path": "c.txt", "content": "c\n"}))
		if len(results) != 3 {
			t.Fatalf("results = %+v", results)
		}
		if want := "No diagnostics for go files here: the editor gives none, and the diagnostics setting names no command for go."; !strings.Contains(results[0].Content, want) {
			t.Errorf("first = %q, want it to say %q", results[0].Content, want)
		}
		for _, r := range results[1:] {
			if strings.Contains(r.Content, "iagnostics") {
				t.Errorf("told again: %q", r.Content)
			}
		}
	})
}

func TestIntroduced(t *testing.T) {
	at := func(line, char uint32, msg string) api.Diagnostic {
		return api.Diagnostic{Range: api.Range{Start: api.Position{Line: line, Character: char}}, Message: msg}
	}
	old := "a\nb\nc\n"
	new := "a\nx\ny\nc\n" // b became x, y; c moved down one
	diff := editing.ComputeDiff(old, new)
	before := fileDiags{"f.go": {at(0, 0, "on a"), at(1, 0, "on b"), at(2, 1, "on c")}, "g.go": {at(3, 0, "elsewhere")}}
	after := fileDiags{"f.go": {at(0, 0, "on a"), at(2, 0, "on b"), at(3, 1, "on c"), at(3, 1, "on c"), at(0, 0, "new")}, "g.go": {at(3, 0, "elsewhere"), at(4, 0, "elsewhere")}}
	got := introduced(before, after, "f.go", diff)
	var says []string
	for _, f := range got {
		says = append(says, f.rel+":"+f.d.Message)
	}
	// "on b" is on a line that replaced b; one "on c" is c's, moved; the
	// second is new; g.go's lines did not move.
	want := []string{"f.go:new", "f.go:on c", "g.go:elsewhere"}
	if strings.Join(says, ",") != strings.Join(want, ",") {
		t.Errorf("introduced = %v, want %v", says, want)
	}
}

func TestParseDiagnostics(t *testing.T) {
	files := map[string]bool{"main.go": true, "pkg/a.go": true, "app.py": true, "src/a.ts": true, "src/main.rs": true, "web/b.js": true}
	resolve := func(p string) (string, bool) {
		p = strings.TrimPrefix(filepath.ToSlash(p), "./")
		p = strings.TrimPrefix(p, "/work/")
		return p, files[p]
	}
	output := strings.Join([]string{
		"# example",
		"vet: ./main.go:6:2: undefined: y",
		"pkg/a.go:3:14: fmt.Printf format %d has arg \"s\" of wrong type string",
		"app.py:3: error: Name \"x\" is not defined  [name-defined]",
		"app.py:9:5: warning: unused import",
		"src/a.ts(3,5): error TS2304: Cannot find name 'x'.",
		"error[E0425]: cannot find value `x` in this scope",
		" --> src/main.rs:2:5",
		"  |",
		"/work/web/b.js:1:10: 'z' is assigned a value but never used. [no-unused-vars]",
		"/etc/passwd:1:1: outside the workspace",
		"Found 4 errors in 3 files.",
	}, "\n")
	got := parseDiagnostics(output, resolve)
	type line struct {
		rel, message, code string
		severity           api.DiagnosticSeverity
		line, char         uint32
	}
	var lines []line
	for _, f := range []string{"main.go", "pkg/a.go", "app.py", "src/a.ts", "src/main.rs", "web/b.js"} {
		for _, d := range got[f] {
			lines = append(lines, line{f, d.Message, string(d.Code), d.Severity, d.Range.Start.Line, d.Range.Start.Character})
		}
	}
	want := []line{
		{"main.go", "undefined: y", "", api.SeverityError, 5, 1},
		{"pkg/a.go", "fmt.Printf format %d has arg \"s\" of wrong type string", "", api.SeverityError, 2, 13},
		{"app.py", "Name \"x\" is not defined", "name-defined", api.SeverityError, 2, 0},
		{"app.py", "unused import", "", api.SeverityWarning, 8, 4},
		{"src/a.ts", "Cannot find name 'x'.", "TS2304", api.SeverityError, 2, 4},
		{"src/main.rs", "cannot find value `x` in this scope", "E0425", api.SeverityError, 1, 4},
		{"web/b.js", "'z' is assigned a value but never used.", "no-unused-vars", api.SeverityError, 0, 9},
	}
	if len(got) != 6 || len(lines) != len(want) {
		t.Fatalf("parsed %d files: %+v", len(got), lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("diagnostic %d = %+v, want %+v", i, lines[i], want[i])
		}
	}
}

func TestDiagnosticsChangedWakesOnlyWaitersOfTheFile(t *testing.T) {
	var d diagWatch
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(real, "a.go")
	fw, stop := d.watch(a)
	defer stop()
	d.report([]string{fileuri.FromPath(filepath.Join(real, "b.go")), "not a uri", "file:///%zz"})
	if d.watched[a].reports != 0 {
		t.Fatal("another file's report counted")
	}
	d.report([]string{fileuri.FromPath(a), fileuri.FromPath(a)})
	if n := fw.next(t.Context(), nil); n != 2 {
		t.Fatalf("next = %d, want the two reports", n)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err == nil {
		d.report([]string{fileuri.FromPath(filepath.Join(link, "a.go"))})
		if n := fw.next(t.Context(), nil); n != 1 {
			t.Fatalf("next = %d after a report through a symlink", n)
		}
	}
	if !d.reported("x.go") || d.reported("x.py") {
		t.Error("the reported extensions are wrong")
	}
	stop()
	if len(d.watched) != 0 {
		t.Errorf("watched = %v after stop", d.watched)
	}
}
