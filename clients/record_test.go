package clients

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// timedModel answers from a script and moves a fake clock on by how long
// each agent's answers take.
type timedModel struct {
	answers *Script
	took    map[string]time.Duration

	mu  sync.Mutex
	now time.Time
}

func (m *timedModel) Complete(ctx context.Context, req *Request, onDelta func(Delta)) (*Response, error) {
	m.mu.Lock()
	m.now = m.now.Add(m.took[req.Agent])
	m.mu.Unlock()
	return m.answers.Complete(ctx, req, onDelta)
}

func (m *timedModel) clock() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

func TestRecordKeepsEachTurnsDelay(t *testing.T) {
	answers, err := ParseScript([]byte(`{"agents": {
	  "coordinator": [{"text": "planned"}],
	  "1": [{"text": "slow answer"}],
	  "2": [{"text": "quick answer"}, {"error": "quick failure"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	live := &timedModel{answers: answers, now: time.Unix(1000, 0), took: map[string]time.Duration{
		"coordinator": 40 * time.Millisecond, "1": 1500 * time.Millisecond, "2": 7*time.Millisecond + 900*time.Microsecond}}
	path := filepath.Join(t.TempDir(), "session.json")
	rec := NewRecorder(live, path, nil, nil)
	rec.now = live.clock
	calls := []string{"coordinator", "1", "2", "2"}
	for _, agent := range calls {
		_, _ = rec.Complete(context.Background(), &Request{Agent: agent}, nil)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	replay, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		agent string
		turn  int
		delay int64
		text  string
		err   string
	}{
		{"coordinator", 0, 40, "planned", ""},
		{"1", 0, 1500, "slow answer", ""},
		{"2", 0, 7, "quick answer", ""},
		{"2", 1, 7, "", "quick failure"},
	} {
		turns := replay.Turns(c.agent)
		if c.turn >= len(turns) {
			t.Fatalf("agent %s has %d turns recorded", c.agent, len(turns))
		}
		got := turns[c.turn]
		if got.DelayMs != c.delay || got.Text != c.text || got.Error != c.err {
			t.Errorf("agent %s turn %d recorded as %+v, want delayMs %d, text %q, error %q", c.agent, c.turn+1, got, c.delay, c.text, c.err)
		}
	}
}

func TestRecorderForRecordsEveryModelInOneScript(t *testing.T) {
	first, err := ParseScript([]byte(`{"agents": {"coordinator": [{"text": "from the first model"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	second, err := ParseScript([]byte(`{"agents": {"2:coordinator": [{"text": "from the second model"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "session.json")
	rec := NewRecorder(first, path, nil, nil)
	other := rec.For(second)
	if resp, err := rec.Complete(context.Background(), &Request{Agent: AgentCoordinator, Run: 1}, nil); err != nil || resp.Text != "from the first model" {
		t.Fatalf("run 1: %+v, %v", resp, err)
	}
	if resp, err := other.Complete(context.Background(), &Request{Agent: AgentCoordinator, Run: 2}, nil); err != nil || resp.Text != "from the second model" {
		t.Fatalf("run 2 answered by %+v, %v; want the second model", resp, err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	replay, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"coordinator": "from the first model", "2:coordinator": "from the second model"} {
		if turns := replay.Turns(key); len(turns) != 1 || turns[0].Text != want {
			t.Errorf("%s recorded as %+v, want %q", key, turns, want)
		}
	}
}
