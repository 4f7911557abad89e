package workforce

import (
	"testing"

	"github.com/agentls/agentls/api"
)

func TestFinish(t *testing.T) {
	t.Run("refuses a blank summary, and the worker goes on", func(t *testing.T) {
		h := newToolHarness(t, nil)
		res := h.check("finish", []toolCase{
			{name: "a blank summary", args: map[string]any{"summary": "\n"}, isErr: true, says: []string{"finish needs summary"}},
			{name: "no summary", args: map[string]any{}, isErr: true, says: []string{"finish needs summary"}},
		})
		if res.State != api.TaskDone || res.Summary != "done" {
			t.Errorf("run = %+v", res)
		}
	})

	t.Run("ends the worker with its summary and runs no call after it", func(t *testing.T) {
		h := newToolHarness(t, nil)
		res, results := h.run(call("finish", map[string]any{"summary": "all done"}), call("write_file", map[string]any{"path": "late.txt", "content": "x"}))
		if res.State != api.TaskDone || res.Summary != "all done" || len(results) != 0 {
			t.Errorf("run = %+v, results %+v", res, results)
		}
		if len(res.Changes) != 0 {
			t.Errorf("a call after finish ran: %+v", res.Changes)
		}
	})
}
