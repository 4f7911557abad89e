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
