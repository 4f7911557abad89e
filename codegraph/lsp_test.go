package codegraph

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fileuri"
)

// fakeServer is an editor's language server: it answers from tables keyed
// by "path:line:col" (workspace-relative, 0-based), null for a position it
// does not know, and records every question.
type fakeServer struct {
	root string
	refs map[string][]string // a definition's name -> "path:line:col-col" places
	defs map[string][]string // a reference -> its definitions' names
	err  error               // every call fails so

	mu    sync.Mutex
	asked []string
}

func (s *fakeServer) key(p api.TextDocumentPositionParams) string {
	path, err := fileuri.ToPath(p.TextDocument.URI)
	if err != nil {
		return "bad uri"
	}
	rel, _ := filepath.Rel(s.root, path)
	return fmt.Sprintf("%s:%d:%d", filepath.ToSlash(rel), p.Position.Line, p.Position.Character)
}

// locs turns "path:line:col-col" places into locations; a place starting
// with / is absolute (outside the workspace).
func (s *fakeServer) locs(places []string) []api.Location {
	out := []api.Location{}
	for _, p := range places {
		var path string
		var line, from, to uint32
		i := strings.IndexByte(p, ':')
		path = p[:i]
		if _, err := fmt.Sscanf(p[i+1:], "%d:%d-%d", &line, &from, &to); err != nil {
			panic(p)
		}
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.root, filepath.FromSlash(path))
		}
		out = append(out, api.Location{URI: fileuri.FromPath(path),
			Range: api.Range{Start: api.Position{Line: line, Character: from}, End: api.Position{Line: line, Character: to}}})
	}
	return out
}

func (s *fakeServer) answer(method string, p api.TextDocumentPositionParams, table map[string][]string) ([]api.Location, error) {
	k := s.key(p)
	s.mu.Lock()
	s.asked = append(s.asked, method+" "+k)
	s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	places, ok := table[k]
	if !ok {
		return nil, nil
	}
	return s.locs(places), nil
}

func (s *fakeServer) References(_ context.Context, p api.ReferenceParams) ([]api.Location, error) {
	if !p.Context.IncludeDeclaration {
		return nil, errors.New("the declaration is always asked for")
	}
	return s.answer("references", api.TextDocumentPositionParams{TextDocument: p.TextDocument, Position: p.Position}, s.refs)
}

func (s *fakeServer) Definition(_ context.Context, p api.TextDocumentPositionParams) ([]api.Location, error) {
	return s.answer("definition", p, s.defs)
}

func (s *fakeServer) questions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// refLines are the references as "path:line:col [prov]" (1-based line and
// column, as the tools show them).
func refLines(refs []Reference) string {
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "%s:%d:%d %s", r.Path, r.Pos.Line+1, r.Pos.Col+1, r.Provenance)
		if r.Call {
			b.WriteString(" call")
		}
		if r.In != "" {
			b.WriteString(" in " + r.In)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func TestReferencesWithoutALanguageServer(t *testing.T) {
	g := start(t, Config{Root: fixture(t, "goscope")})
	ctx := context.Background()
	for _, tc := range []struct {
		name, def, path string
		want            string
	}{
		{"a function reached through its import, not a method of a value of the same name", "Errorf", "errs/errs.go",
			"app/main.go:16:11 resolved call in use\nerrs/errs_test.go:10:10 resolved call in TestErrorf\n"},
		{"a method called on a value of unknown type is a guess", "T.Errorf", "errs/t.go",
			"errs/errs_test.go:11:5 name call in TestErrorf\ntarx/reader_test.go:8:4 name call in TestRead\n"},
		{"an imported interface, not the package's own type of the same name", "Reader", "iox/iox.go",
			"app/main.go:10:16 resolved in use\ntarx/reader.go:7:11 resolved in Reader.r\ntarx/reader.go:12:22 resolved in NewReader\n"},
		{"the package's own type, through a dot import too", "Reader", "tarx/reader.go",
			"app/main.go:13:8 resolved in use\ntarx/reader.go:12:31 resolved in NewReader\ntarx/reader.go:13:10 resolved in NewReader\n" +
				"tarx/reader.go:16:11 resolved in Reader.Read\ntarx/reader_test.go:6:9 resolved in TestRead\n"},
		{"an import named by its major version's parent", "N", "rand/v2/rand.go", "app/main.go:15:11 resolved call in use\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs, total, err := g.References(ctx, tc.def, tc.path, 100)
			if err != nil {
				t.Fatal(err)
			}
			if got := refLines(refs); got != tc.want || total != len(refs) {
				t.Errorf("References(%s, %s) = %d in all:\n%s\nwant:\n%s", tc.def, tc.path, total, got, tc.want)
			}
		})
	}
}

func TestReferencesFromTheLanguageServer(t *testing.T) {
	root := fixture(t, "goscope")
	writeFile(t, root, ".gitignore", "gen/\n")
	writeFile(t, root, "gen/gen.go", "package gen\n\nimport \"example.com/w/errs\"\n\nvar E = errs.Errorf(\"gen\")\n")
	ls := &fakeServer{root: root, refs: map[string][]string{
		// errs.Errorf: the declaration, two calls, one in an ignored
		// file, one outside the workspace
		"errs/errs.go:3:5": {"errs/errs.go:3:5-11", "app/main.go:15:10-16", "errs/errs_test.go:9:9-15",
			"gen/gen.go:4:13-19", "/elsewhere/x.go:1:1-7"},
	}}
	g := start(t, Config{Root: root, Server: ls})
	ctx := context.Background()

	t.Run("takes the server's answer, but the declaration and places the graph does not hold", func(t *testing.T) {
		refs, total, err := g.References(ctx, "Errorf", "errs/errs.go", 100)
		if err != nil {
			t.Fatal(err)
		}
		want := "app/main.go:16:11 lsp call in use\nerrs/errs_test.go:10:10 lsp call in TestErrorf\n"
		if got := refLines(refs); got != want || total != 2 {
			t.Errorf("References = %d in all:\n%s\nwant:\n%s", total, got, want)
		}
	})
	t.Run("answers from the graph for what the server has nothing for, and asks no more of that language", func(t *testing.T) {
		before := len(ls.questions())
		refs, _, err := g.References(ctx, "Reader", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if got := refLines(refs); !strings.Contains(got, "app/main.go:10:16 resolved in use") || strings.Contains(got, "lsp") {
			t.Errorf("References = \n%s", got)
		}
		// two definitions of Reader: the first answer, null, was the last
		// question of the request
		if asked := ls.questions()[before:]; len(asked) != 1 {
			t.Errorf("asked %v, want one question", asked)
		}
	})
	t.Run("a symbol's edges say the server found them", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Symbol: "Errorf", Path: "errs/errs.go"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Edges {
			if e.Kind == "calls" {
				got = append(got, fmt.Sprintf("%s -> %s %d %s", e.From, e.To, e.Count, e.Provenance))
			}
		}
		want := []string{"app/main.go#use -> errs/errs.go#Errorf 1 lsp", "errs/errs_test.go#TestErrorf -> errs/errs.go#Errorf 1 lsp"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestLanguageServerFailures(t *testing.T) {
	root := fixture(t, "goscope")
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"an editor without the capability", fmt.Errorf("agent/references: %w", api.ErrUnsupported)},
		{"an editor that does not answer in time", fmt.Errorf("agent/references: %w (5s)", api.ErrTimeout)},
		{"an editor that answers an error", errors.New("agent/references: no such buffer")},
	} {
		t.Run(tc.name+" leaves the graph to answer and is asked once", func(t *testing.T) {
			ls := &fakeServer{root: root, err: tc.err}
			g := start(t, Config{Root: root, Server: ls})
			res, err := g.CodeGraph(context.Background(), Query{Symbol: "Reader", Depth: 3})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, e := range res.Edges {
				if e.Kind == "references" {
					n++
					if e.Provenance != api.ProvenanceResolved {
						t.Errorf("edge %s -> %s is %s", e.From, e.To, e.Provenance)
					}
				}
			}
			if n == 0 {
				t.Error("no references")
			}
			if asked := ls.questions(); len(asked) != 1 {
				t.Errorf("asked %v, want one question", asked)
			}
		})
	}
}

func TestLanguageServerSettlesGuesses(t *testing.T) {
	root := fixture(t, "goscope")
	ls := &fakeServer{root: root,
		refs: map[string][]string{
			// tarx/reader.go's definitions, as the server sees them
			"tarx/reader.go:5:5":   {"tarx/reader.go:5:5-11", "app/main.go:12:7-13"},
			"tarx/reader.go:6:1":   {"tarx/reader.go:6:1-2"},
			"tarx/reader.go:7:1":   {"tarx/reader.go:7:1-5", "app/main.go:12:14-18", "app/main.go:13:7-11"},
			"tarx/reader.go:11:5":  {"tarx/reader.go:11:5-14", "app/main.go:10:7-16"},
			"tarx/reader.go:15:18": {"tarx/reader.go:15:18-22", "app/main.go:11:4-8", "tarx/reader_test.go:6:4-8"},
		},
		defs: map[string][]string{
			// tr.Read() in app/main.go: tarx's, not iox's
			"app/main.go:11:4": {"tarx/reader.go:15:18-22"},
			// tr.r.Read(p) in tarx: iox's
			"tarx/reader.go:16:13": {"iox/iox.go:4:1-5"},
			// t.Errorf: testing's, outside the workspace
			"errs/errs_test.go:10:4": {"/goroot/src/testing/testing.go:1:1-7"},
		}}
	g := start(t, Config{Root: root, Server: ls})
	ctx := context.Background()

	t.Run("a call the graph guesses is what the server defines it as", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Symbol: "use"})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range res.Edges {
			if e.From == "app/main.go#use" && e.Kind == "calls" {
				got = append(got, e.To+" "+string(e.Provenance))
			}
		}
		want := "tarx/reader.go#NewReader resolved\ntarx/reader.go#Reader.Read lsp\nrand/v2/rand.go#N resolved\nerrs/errs.go#Errorf resolved"
		if strings.Join(got, "\n") != want {
			t.Errorf("calls of use:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
		}
	})
	t.Run("a call the server defines outside the workspace is no edge", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Symbol: "TestErrorf"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Edges {
			if e.To == "errs/errs.go#T.Errorf" {
				t.Errorf("t.Errorf is still taken for errs.T.Errorf: %+v", e)
			}
		}
	})
	t.Run("a file's neighbours come from the server where it answers", func(t *testing.T) {
		res, err := g.CodeGraph(ctx, Query{Path: "tarx/reader.go"})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, e := range res.Edges {
			if e.Kind == "references" {
				got[e.From+" -> "+e.To] = fmt.Sprintf("%d %s", e.Count, e.Provenance)
			}
		}
		// who refers to tarx/reader.go is the server's answer; what it
		// refers to, the graph's (iox.Reader twice) and the server's
		// (tr.r.Read): the least sure of them
		if got["app/main.go -> tarx/reader.go"] != "5 lsp" || got["tarx/reader_test.go -> tarx/reader.go"] != "1 lsp" ||
			got["tarx/reader.go -> iox/iox.go"] != "3 resolved" {
			t.Errorf("neighbours: %v", got)
		}
	})
	t.Run("what a file means by a name it uses is the server's definition", func(t *testing.T) {
		defs, total, err := g.FindSymbol(ctx, "Read", "app/main.go", 10)
		if err != nil || total != 1 || defs[0].Path != "tarx/reader.go" || defs[0].Provenance != ByLSP {
			t.Fatalf("FindSymbol = %+v, %d, %v", defs, total, err)
		}
	})
}

func TestLanguageServerBounds(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("package p\n\n")
	for i := range 300 {
		fmt.Fprintf(&b, "func F%d() {}\n", i)
	}
	writeFile(t, root, "go.mod", "module example.com/p\n")
	writeFile(t, root, "p.go", b.String())
	ls := &fakeServer{root: root, refs: map[string][]string{}}
	g := start(t, Config{Root: root, Server: ls})
	if _, err := g.CodeGraph(context.Background(), Query{Path: "p.go"}); err != nil {
		t.Fatal(err)
	}
	// null answers end the asking for Go at once; an editor that answers
	// every question is held to the bound
	for i := range 300 {
		ls.refs[fmt.Sprintf("p.go:%d:5", i+2)] = []string{fmt.Sprintf("p.go:%d:5-%d", i+2, 7+len(fmt.Sprint(i)))}
	}
	before := len(ls.questions())
	if _, err := g.CodeGraph(context.Background(), Query{Path: "p.go"}); err != nil {
		t.Fatal(err)
	}
	if asked := len(ls.questions()) - before; asked != lspCalls {
		t.Errorf("asked %d questions, want the bound, %d", asked, lspCalls)
	}
}

func TestAnswerCounts(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("package p\n\nfunc Target() {}\n\nfunc Busy() {\n")
	for range 30 {
		b.WriteString("\tTarget()\n")
	}
	b.WriteString("}\n")
	for i := range 600 {
		fmt.Fprintf(&b, "func Caller%d() { Target() }\n", i)
	}
	writeFile(t, root, "go.mod", "module example.com/p\n")
	writeFile(t, root, "p.go", b.String())
	g := start(t, Config{Root: root})
	res, err := g.CodeGraph(context.Background(), Query{Symbol: "Target"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Edges {
		if e.From == "p.go#Busy" {
			if e.Count != 30 || len(e.Ranges) != maxRanges {
				t.Errorf("Busy's calls: count %d, %d ranges; want 30, %d", e.Count, len(e.Ranges), maxRanges)
			}
		}
	}
	if !res.Truncated || res.Omitted == 0 || len(res.Nodes) != maxNodes {
		t.Errorf("truncated %v, omitted %d, %d nodes", res.Truncated, res.Omitted, len(res.Nodes))
	}
	shown := 0
	for _, e := range res.Edges {
		if e.Kind == "calls" {
			shown += e.Count
		}
	}
	if shown+res.Omitted != 630 {
		t.Errorf("%d calls shown and %d omitted, want 630 in all", shown, res.Omitted)
	}
}
