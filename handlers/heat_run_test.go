package handlers_test

import (
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/testkit"
)

// The last thing the run does is a write: the ticker has usually not run
// since, so the snapshot must fold what it has not handled yet.
const writeLastScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Write out.txt"}]}}]}],
  "1": [
    {"toolCalls": [{"name": "write_file", "arguments": {"path": "out.txt", "content": "out\n"}}]},
    {"toolCalls": [{"name": "finish", "arguments": {"summary": "written"}}]}]
}}`

func TestHeatSnapshotAfterARunHoldsItsAccesses(t *testing.T) {
	r := startRun(t, runOpts{script: writeLastScript})
	res, err := r.run(t, api.RunParams{Prompt: "write out.txt", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run: %+v, %v", res, err)
	}
	for _, p := range []api.HeatSnapshotParams{{TaskID: "t1"}, {}} {
		var snap api.HeatSnapshot
		if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, p, &snap); err != nil {
			t.Fatalf("heatSnapshot %+v: %v", p, err)
		}
		var found bool
		for _, n := range snap.Nodes {
			if n.Path == "out.txt" {
				// Heat decays with the clock, which a loaded machine moves on
				// between the write and the snapshot: any heat is enough.
				found = n.LastAction == api.ActionWrite && n.Heat > 0
			}
		}
		if !found {
			t.Errorf("heatSnapshot %+v answered right after the run: %+v, want out.txt just written", p, snap.Nodes)
		}
	}
}
