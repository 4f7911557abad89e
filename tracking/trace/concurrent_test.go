package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// TestTwoProcessesAppendWholeLines runs two processes (this test binary
// re-executed) that append to one trace at once, with lines far longer than
// PIPE_BUF, and checks that every line is whole and every entry is there.
func TestTwoProcessesAppendWholeLines(t *testing.T) {
	if testkit.ChildRole() != "" {
		appendChild(t)
		return
	}
	n := 300
	if testing.Short() || testkit.Race {
		n = 60
	}
	root := t.TempDir()
	var cmds []*exec.Cmd
	for _, name := range []string{"alpha", "beta"} {
		cmd := testkit.Child(t, name, "TRACE_ROOT="+root, "TRACE_N="+strconv.Itoa(n))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("%s output:\n%s", name, out.String())
			}
		})
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child: %v", err)
		}
	}
	f, err := os.Open(filepath.Join(root, RelPath))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	count := map[string]int{}
	lines := 0
	for sc.Scan() {
		lines++
		var e api.TraceEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d is torn or interleaved: %v", lines, err)
		}
		if len(e.Ranges) != 64 {
			t.Fatalf("line %d has %d ranges, want 64", lines, len(e.Ranges))
		}
		count[e.SessionID]++
	}
	if count["alpha"] != n || count["beta"] != n {
		t.Errorf("entries per writer %v, want %d each", count, n)
	}
	if r, err := Open(root, Options{}).Query("shared.txt", nil); err != nil || len(r.Entries) != 2*n {
		t.Errorf("Query: %d entries, %v; want %d", len(r.Entries), err, 2*n)
	}
}

func appendChild(t *testing.T) {
	name := testkit.ChildRole()
	root := os.Getenv("TRACE_ROOT")
	n, _ := strconv.Atoi(os.Getenv("TRACE_N"))
	l := Open(root, Options{})
	var content bytes.Buffer
	var spans []Span
	for i := 1; i <= 128; i++ {
		fmt.Fprintf(&content, "%s writes line %d\n", name, i)
		if i%2 == 1 {
			spans = append(spans, Span{i, i})
		}
	}
	for i := range n {
		_, err := l.Record(Change{
			Path: "shared.txt", Operation: api.OpUpdate, Content: content.Bytes(), Spans: spans,
			SessionID: name, TaskID: strconv.Itoa(i), SubtaskID: "1", Model: "script:test",
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
