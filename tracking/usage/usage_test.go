package usage

import (
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
)

type turns struct{ got []int64 }

func (t *turns) Turn(in int64) { t.got = append(t.got, in) }

func TestCounterSumsPerSubtaskTaskAndSession(t *testing.T) {
	c := New()
	var tr turns
	m1 := c.Meter("s", "t1", "1", &tr)
	m2 := c.Meter("s", "t1", "2", nil)
	m1.ModelCall(api.Usage{InputTokens: 100, OutputTokens: 10})
	m1.ModelCall(api.Usage{InputTokens: 300, OutputTokens: 20})
	m2.ModelCall(api.Usage{InputTokens: 50, OutputTokens: 5})
	c.Add("s", "t2", "", api.Usage{InputTokens: 7, OutputTokens: -3})
	cases := []struct {
		name      string
		got, want api.Usage
	}{
		{"sums a subtask's calls", c.Subtask("t1", "1"), api.Usage{InputTokens: 400, OutputTokens: 30}},
		{"keeps subtasks apart", c.Subtask("t1", "2"), api.Usage{InputTokens: 50, OutputTokens: 5}},
		{"sums a task's subtasks", c.Task("t1"), api.Usage{InputTokens: 450, OutputTokens: 35}},
		{"takes a negative count as zero", c.Task("t2"), api.Usage{InputTokens: 7}},
		{"sums a session's tasks", c.Session("s"), api.Usage{InputTokens: 457, OutputTokens: 35}},
		{"knows nothing of other sessions", c.Session("other"), api.Usage{}},
	}
	for _, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			if cs.got != cs.want {
				t.Errorf("got %+v, want %+v", cs.got, cs.want)
			}
		})
	}
	t.Run("tells the turn hook each call's input tokens", func(t *testing.T) {
		if len(tr.got) != 2 || tr.got[0] != 100 || tr.got[1] != 300 {
			t.Errorf("turns %v", tr.got)
		}
	})
}

func TestCounterIsSafeForConcurrentUse(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				c.Add("s", "t", "1", api.Usage{InputTokens: 1, OutputTokens: 2})
			}
		})
	}
	wg.Wait()
	if got := c.Session("s"); got.InputTokens != 8000 || got.OutputTokens != 16000 {
		t.Errorf("got %+v", got)
	}
}
