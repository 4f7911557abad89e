package trace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
)

func newTestLog(t *testing.T, root string) *Log {
	t.Helper()
	n := 0
	return Open(root, Options{
		Now:        func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) },
		NewID:      func() string { n++; return fmt.Sprintf("id-%d", n) },
		IntentName: func(id string) string { return map[string]string{"INT-1": "Auth refactor"}[id] },
	})
}

// apply writes content to the workspace as the editor would, then traces it.
func apply(t *testing.T, l *Log, root string, c Change) api.TraceEntry {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(c.Path))
	if c.Operation == api.OpDelete {
		os.Remove(p)
	} else {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, c.Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := l.Record(c)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	return e
}

func numbered(n int, tag string) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", tag, i)
	}
	return b.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestRecordWritesTheContractLine(t *testing.T) {
	root := t.TempDir()
	l := newTestLog(t, root)
	content := []byte("package a\n\nfunc A() {}\n// é ünïcode\nno newline at end")
	apply(t, l, root, Change{
		Path: "src/a.go", Operation: api.OpCreate, Content: content,
		Spans:    []Span{{4, 5}, {1, 2}},
		IntentID: "INT-1", SessionID: "s1", TaskID: "t1", SubtaskID: "2", Model: "script:x.json",
	})
	raw, err := os.ReadFile(filepath.Join(root, RelPath))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(raw, []byte("\n")) != 1 || !bytes.HasSuffix(raw, []byte("\n")) {
		t.Fatalf("want exactly one whole line, got %q", raw)
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "time", "intentId", "sessionId", "taskId", "subtaskId", "model", "path", "operation", "ranges", "fileHash"} {
		if _, ok := got[k]; !ok {
			t.Errorf("field %q missing from %s", k, raw)
		}
	}
	if _, err := time.Parse(time.RFC3339, got["time"].(string)); err != nil {
		t.Errorf("time is not RFC 3339: %v", err)
	}
	// Independent hashes of what is on disk.
	disk, _ := os.ReadFile(filepath.Join(root, "src/a.go"))
	lines := strings.SplitAfter(string(disk), "\n")
	if got["fileHash"] != sha(disk) {
		t.Errorf("fileHash %v, want %s", got["fileHash"], sha(disk))
	}
	ranges := got["ranges"].([]any)
	want := []struct {
		s, e int
		text string
	}{{1, 2, lines[0] + lines[1]}, {4, 5, lines[3] + lines[4]}}
	if len(ranges) != 2 {
		t.Fatalf("ranges %v", ranges)
	}
	for i, w := range want {
		r := ranges[i].(map[string]any)
		if int(r["startLine"].(float64)) != w.s || int(r["endLine"].(float64)) != w.e || r["contentHash"] != sha([]byte(w.text)) {
			t.Errorf("range %d = %v, want %d-%d %s", i, r, w.s, w.e, sha([]byte(w.text)))
		}
	}
	if got["intentId"] != "INT-1" || got["operation"] != "create" || got["path"] != "src/a.go" {
		t.Errorf("got %v", got)
	}
}

func TestRecordWritesNullWithoutAnIntent(t *testing.T) {
	root := t.TempDir()
	l := newTestLog(t, root)
	apply(t, l, root, Change{Path: "a.txt", Operation: api.OpUpdate, Content: []byte("x\n"), Spans: []Span{{1, 1}}})
	raw, _ := os.ReadFile(filepath.Join(root, RelPath))
	if !bytes.Contains(raw, []byte(`"intentId":null`)) {
		t.Errorf("want intentId null in %s", raw)
	}
}

func TestRecordRefusesBadChanges(t *testing.T) {
	cases := []struct {
		name string
		c    Change
	}{
		{"refuses a path that leaves the workspace", Change{Path: "../x", Operation: api.OpUpdate}},
		{"refuses an absolute path", Change{Path: "/etc/x", Operation: api.OpUpdate}},
		{"refuses an unknown operation", Change{Path: "a", Operation: "rename"}},
		{"refuses a span past the end of the file", Change{Path: "a", Operation: api.OpUpdate, Content: []byte("1\n2\n"), Spans: []Span{{2, 3}}}},
		{"refuses a span that starts at 0", Change{Path: "a", Operation: api.OpUpdate, Content: []byte("1\n"), Spans: []Span{{0, 1}}}},
		{"refuses overlapping spans", Change{Path: "a", Operation: api.OpUpdate, Content: []byte("1\n2\n3\n"), Spans: []Span{{1, 2}, {2, 3}}}},
		{"refuses a delete with content", Change{Path: "a", Operation: api.OpDelete, Content: []byte("x")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			if _, err := newTestLog(t, root).Record(c.c); !errors.Is(err, ErrInvalidChange) {
				t.Errorf("err = %v, want ErrInvalidChange", err)
			}
			if _, err := os.Stat(filepath.Join(root, RelPath)); err == nil {
				t.Error("a refused change wrote the trace")
			}
		})
	}
}

func TestIntentMap(t *testing.T) {
	root := t.TempDir()
	l := newTestLog(t, root)
	apply(t, l, root, Change{Path: "src/b.go", Operation: api.OpCreate, Content: []byte("b\n"), Spans: []Span{{1, 1}}, IntentID: "INT-1"})
	apply(t, l, root, Change{Path: "src/a.go", Operation: api.OpCreate, Content: []byte("a\n"), Spans: []Span{{1, 1}}, IntentID: "INT-1"})
	apply(t, l, root, Change{Path: "docs/x.md", Operation: api.OpCreate, Content: []byte("x\n"), Spans: []Span{{1, 1}}, IntentID: "INT-2"})
	apply(t, l, root, Change{Path: "notes.txt", Operation: api.OpCreate, Content: []byte("n\n"), Spans: []Span{{1, 1}}})
	apply(t, l, root, Change{Path: "src/b.go", Operation: api.OpDelete, IntentID: "INT-1"})
	got, err := os.ReadFile(filepath.Join(root, MapRelPath))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Intent map\n\nWhich files each intent changed, from .orchestration/agent_trace.jsonl.\n" +
		"Written by agentls after every traced change; edits here are overwritten.\n" +
		"\n## Without an intent\n\n- `notes.txt`\n" +
		"\n## INT-1: Auth refactor\n\n- `src/a.go`\n- `src/b.go` (deleted since)\n" +
		"\n## INT-2\n\n- `docs/x.md`\n"
	if string(got) != want {
		t.Errorf("intent_map.md:\n%s\nwant:\n%s", got, want)
	}
}

func ids(r api.TraceResult) []string {
	out := []string{}
	for _, e := range r.Entries {
		out = append(out, e.ID)
	}
	return out
}

func TestQueryFollowsLines(t *testing.T) {
	root := t.TempDir()
	l := newTestLog(t, root)
	// id-1: create 10 lines.
	v1 := numbered(10, "v1")
	apply(t, l, root, Change{Path: "a.go", Operation: api.OpCreate, Content: v1, Spans: []Span{{1, 10}}})
	// id-2: two lines inserted at the top (12 lines).
	v2 := append([]byte("new 1\nnew 2\n"), v1...)
	apply(t, l, root, Change{Path: "a.go", Operation: api.OpUpdate, Content: v2, Spans: []Span{{1, 2}}})
	// id-3: line 7 rewritten in place.
	ls := Lines(v2)
	ls[6] = []byte("changed 7\n")
	v3 := bytes.Join(ls, nil)
	apply(t, l, root, Change{Path: "a.go", Operation: api.OpUpdate, Content: v3, Spans: []Span{{7, 7}}})
	// another file, to be left out.
	apply(t, l, root, Change{Path: "b.go", Operation: api.OpCreate, Content: v1, Spans: []Span{{1, 10}}})

	line := func(n int) *int { return &n }
	cases := []struct {
		name string
		line *int
		want []string
	}{
		{"lists every entry of the file without a line", nil, []string{"id-1", "id-2", "id-3"}},
		{"finds the in-place rewrite and the creation under it", line(7), []string{"id-1", "id-3"}},
		{"stops at an insertion that holds the line", line(1), []string{"id-2"}},
		{"shifts a line below an insertion back to its first place", line(12), []string{"id-1"}},
		{"answers nothing for a line past the end", line(40), []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := l.Query("a.go", c.line)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(r); strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	t.Run("stops between two spans of unknown shift", func(t *testing.T) {
		ls := Lines(v3)
		v4 := bytes.Join([][]byte{ls[0], []byte("x\n"), bytes.Join(ls[1:10], nil), []byte("y\n"), bytes.Join(ls[10:], nil)}, nil)
		apply(t, l, root, Change{Path: "a.go", Operation: api.OpUpdate, Content: v4, Spans: []Span{{2, 2}, {12, 12}}})
		if r, _ := l.Query("a.go", line(5)); len(r.Entries) != 0 {
			t.Errorf("got %v, want none", ids(r))
		}
		if r, _ := l.Query("a.go", line(1)); strings.Join(ids(r), ",") != "id-2" {
			t.Errorf("line 1 above both spans: got %v, want id-2", ids(r))
		}
	})
	t.Run("refuses line 0 and a bad path", func(t *testing.T) {
		if _, err := l.Query("a.go", line(0)); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("line 0: %v", err)
		}
		if _, err := l.Query("../a.go", nil); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("../a.go: %v", err)
		}
	})
}

func TestQueryReadsOtherWritersAndSkipsTornLines(t *testing.T) {
	root := t.TempDir()
	a := newTestLog(t, root)
	apply(t, a, root, Change{Path: "f", Operation: api.OpCreate, Content: []byte("1\n"), Spans: []Span{{1, 1}}})
	if r, _ := a.Query("f", nil); len(r.Entries) != 1 {
		t.Fatalf("got %d entries", len(r.Entries))
	}
	// A writer that died mid-line, then another process's whole line.
	f, _ := os.OpenFile(filepath.Join(root, RelPath), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"id":"torn","path":"f","oper`)
	f.Close()
	b := newTestLog(t, root)
	apply(t, b, root, Change{Path: "f", Operation: api.OpUpdate, Content: []byte("2\n"), Spans: []Span{{1, 1}}})
	r, err := a.Query("f", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 2 || r.Entries[1].FileHash != sha([]byte("2\n")) {
		t.Errorf("got %+v, want the two whole entries", r.Entries)
	}
	// The file replaced by a shorter one (a checkout): read from the start.
	os.WriteFile(filepath.Join(root, RelPath), nil, 0o644)
	if r, _ := a.Query("f", nil); len(r.Entries) != 0 {
		t.Errorf("after truncation got %d entries, want 0", len(r.Entries))
	}
}

func TestEnabled(t *testing.T) {
	root := t.TempDir()
	yes, no := true, false
	if Enabled(root, nil) || !Enabled(root, &yes) {
		t.Error("without .orchestration: off unless set")
	}
	os.Mkdir(filepath.Join(root, Dir), 0o755)
	if !Enabled(root, nil) || Enabled(root, &no) {
		t.Error("with .orchestration: on unless set off")
	}
}

func TestMCPEntries(t *testing.T) {
	root := t.TempDir()
	l := newTestLog(t, root)
	v1 := numbered(3, "v1")
	apply(t, l, root, Change{Path: "a.txt", Operation: api.OpCreate, Content: v1, Spans: []Span{{1, 3}}})
	t.Run("records the tool and the file's hash after the call", func(t *testing.T) {
		e, err := l.Record(Change{Path: "a.txt", Operation: api.OpMCP, Content: v1, Tool: "mcp__fs__read_text_file"})
		if err != nil {
			t.Fatal(err)
		}
		if e.Operation != api.OpMCP || e.Tool != "mcp__fs__read_text_file" || e.FileHash != sha(v1) || len(e.Ranges) != 0 {
			t.Fatalf("entry = %+v", e)
		}
	})
	t.Run("passes over a call that left the file as it was when following a line", func(t *testing.T) {
		line := 2
		res, err := l.Query("a.txt", &line)
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Operation != api.OpCreate {
			t.Fatalf("got %+v, %v", res.Entries, err)
		}
	})
	t.Run("stops at a call after which the file differs, naming it", func(t *testing.T) {
		v2 := numbered(4, "v2")
		if err := os.WriteFile(filepath.Join(root, "a.txt"), v2, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Record(Change{Path: "a.txt", Operation: api.OpMCP, Content: v2, Tool: "mcp__fs__write_file"}); err != nil {
			t.Fatal(err)
		}
		line := 2
		res, err := l.Query("a.txt", &line)
		if err != nil || len(res.Entries) != 1 || res.Entries[0].Tool != "mcp__fs__write_file" {
			t.Fatalf("got %+v, %v", res.Entries, err)
		}
		all, _ := l.Query("a.txt", nil)
		if len(all.Entries) != 3 {
			t.Fatalf("by path: %+v", all.Entries)
		}
	})
	t.Run("refuses an mcp entry without its tool", func(t *testing.T) {
		if _, err := l.Record(Change{Path: "a.txt", Operation: api.OpMCP}); !errors.Is(err, ErrInvalidChange) {
			t.Fatalf("got %v", err)
		}
	})
}
