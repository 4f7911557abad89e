package api

import (
	"encoding/json"
	"testing"
)

func TestFlattenResourceOperations(t *testing.T) {
	for _, c := range []struct {
		name           string
		workspaceEdit  string
		create, delete bool
	}{
		{"keeps the kinds a client declared", `{"documentChanges":true,"resourceOperations":["create","rename","delete"]}`, true, true},
		{"keeps only create when only create is declared", `{"documentChanges":true,"resourceOperations":["create"]}`, true, false},
		{"has none when the list is absent, as eglot 1.9 sends it", `{"documentChanges":true}`, false, false},
		{"has none without documentChanges, which carry them", `{"resourceOperations":["create","delete"]}`, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p InitializeParams
			raw := `{"capabilities":{"workspace":{"applyEdit":true,"workspaceEdit":` + c.workspaceEdit + `}}}`
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				t.Fatal(err)
			}
			f := p.Capabilities.Flatten()
			if f.ResourceOperation(OpCreate) != c.create || f.ResourceOperation(OpDelete) != c.delete || f.ResourceOperation(OpUpdate) {
				t.Errorf("create %v, delete %v; want %v, %v", f.ResourceOperation(OpCreate), f.ResourceOperation(OpDelete), c.create, c.delete)
			}
		})
	}
}

func TestSubtaskCountsInWords(t *testing.T) {
	for _, c := range []struct {
		name   string
		counts SubtaskCounts
		want   string
	}{
		{"all done", SubtaskCounts{Done: 2}, "2 of 2 subtasks done"},
		{"one", SubtaskCounts{Done: 1}, "1 of 1 subtask done"},
		{"every kind", SubtaskCounts{Done: 1, Skipped: 2, Removed: 3, Failed: 4, Blocked: 5, NotRun: 6}, "1 of 21 subtasks done, 2 skipped, 3 removed, 4 failed, 5 blocked, 6 not run"},
		{"none done", SubtaskCounts{Failed: 1, NotRun: 1}, "0 of 2 subtasks done, 1 failed, 1 not run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.counts.String(); got != c.want {
				t.Errorf("%+v reads %q, want %q", c.counts, got, c.want)
			}
		})
	}
}
