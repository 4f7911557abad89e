package clients

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const demoScript = `{
  "agents": {
    "coordinator": [
      {"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
        {"id": "1", "content": "Add a greet function"},
        {"id": "2", "content": "Test it", "dependsOn": ["1"]}]}}]}
    ],
    "1": [
      {"text": "Reading main.go first.", "toolCalls": [{"name": "read_file", "arguments": {"path": "main.go"}}], "usage": {"inputTokens": 100, "outputTokens": 20}},
      {"toolCalls": [{"name": "finish", "arguments": {"summary": "greet added"}}]}
    ],
    "2": [
      {"error": "provider exploded"}
    ],
    "2:coordinator": [
      {"text": "second run"}
    ]
  }
}`

func TestScript(t *testing.T) {
	s, err := ParseScript([]byte(demoScript))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("parallel agents each get their own turns whatever the order", func(t *testing.T) {
		s, _ := ParseScript([]byte(demoScript))
		var wg sync.WaitGroup
		results := make(map[string][]string)
		var mu sync.Mutex
		for _, agent := range []string{"1", "coordinator", "2"} {
			wg.Go(func() {
				for range len(s.Turns(agent)) {
					resp, err := s.Complete(context.Background(), &Request{Agent: agent}, nil)
					var got string
					if err != nil {
						got = "error: " + err.Error()
					} else {
						got = resp.Text + "|" + resp.ToolCalls[0].Name
					}
					mu.Lock()
					results[agent] = append(results[agent], got)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		want := map[string][]string{
			"coordinator": {"|plan"},
			"1":           {"Reading main.go first.|read_file", "|finish"},
			"2":           {"error: provider exploded"},
		}
		for agent, w := range want {
			if fmt.Sprint(results[agent]) != fmt.Sprint(w) {
				t.Errorf("agent %s got %v, want %v", agent, results[agent], w)
			}
		}
	})
	t.Run("an answer carries its usage, stop reason and streamed deltas", func(t *testing.T) {
		var c collect
		resp, err := s.Complete(context.Background(), &Request{Agent: "1"}, c.on)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Usage.InputTokens != 100 || resp.Usage.OutputTokens != 20 || resp.StopReason != StopToolUse {
			t.Errorf("resp = %+v", resp)
		}
		if c.text != resp.Text || c.args[0] != `{"path": "main.go"}` || c.names[0] != "read_file" {
			t.Errorf("deltas %+v", c)
		}
	})
	t.Run("the N-th run reads the N: keys", func(t *testing.T) {
		resp, err := s.Complete(context.Background(), &Request{Agent: "coordinator", Run: 2}, nil)
		if err != nil || resp.Text != "second run" || resp.StopReason != StopEndTurn {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
	})
	t.Run("an exhausted list fails naming the agent", func(t *testing.T) {
		_, err := s.Complete(context.Background(), &Request{Agent: "coordinator", Run: 2}, nil)
		if !errors.Is(err, ErrScriptExhausted) || err.Error() != "script exhausted for agent 2:coordinator" {
			t.Fatalf("err = %v", err)
		}
		_, err = s.Complete(context.Background(), &Request{Agent: "7"}, nil)
		if err == nil || err.Error() != "script exhausted for agent 7" {
			t.Fatalf("an unknown agent: err = %v", err)
		}
	})
	t.Run("an error turn fails with its message and is not retryable", func(t *testing.T) {
		s, _ := ParseScript([]byte(demoScript))
		_, err := s.Complete(context.Background(), &Request{Agent: "2"}, nil)
		if !errors.Is(err, ErrScriptTurn) || err.Error() != "provider exploded" || Retryable(err) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("delayMs waits on the context", func(t *testing.T) {
		s, err := ParseScript([]byte(`{"agents": {"1": [{"delayMs": 3600000, "text": "late"}]}}`))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = s.Complete(ctx, &Request{Agent: "1"}, nil)
		if !errors.Is(err, ErrCancelled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("tool call ids are unique and the same on every replay", func(t *testing.T) {
		src := `{"agents": {"1": [{"toolCalls": [{"name": "a"}, {"name": "b"}]}, {"toolCalls": [{"name": "a"}]}], "2:1": [{"toolCalls": [{"name": "a"}]}]}}`
		ids := func() []string {
			s, _ := ParseScript([]byte(src))
			var out []string
			for _, req := range []*Request{{Agent: "1"}, {Agent: "1"}, {Agent: "1", Run: 2}} {
				resp, err := s.Complete(context.Background(), req, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range resp.ToolCalls {
					out = append(out, c.ID)
					if string(c.Arguments) != "{}" {
						t.Errorf("arguments = %s, want {}", c.Arguments)
					}
				}
			}
			return out
		}
		a, b := ids(), ids()
		seen := map[string]bool{}
		for _, id := range a {
			if seen[id] {
				t.Errorf("id %q repeats in %v", id, a)
			}
			seen[id] = true
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("ids differ between replays: %v vs %v", a, b)
		}
	})
}

func TestParseScriptRejects(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"a file that is not JSON, with its line", "{\n  \"agents\": {\n    \"1\": [}\n}", "line 3"},
		{"a file without agents", `{}`, `no "agents" object`},
		{"an unknown top-level key", `{"agents": {}, "extra": 1}`, `unknown field "extra"`},
		{"agents that are not an object", `{"agents": []}`, "must be an object"},
		{"an agent whose turns are not a list", `{"agents": {"1": {"text": "x"}}}`, `agent "1": turns must be a list`},
		{"a misspelt turn field, naming agent and turn", `{"agents": {"coordinator": [{"text": "a"}, {"toolcalls": []}]}}`, `agent "coordinator" turn 2: unknown field "toolcalls"`},
		{"a top-level key in the wrong case", `{"Agents": {}}`, `unknown field "Agents"`},
		{"a tool call without a name", `{"agents": {"1": [{"toolCalls": [{"arguments": {}}]}]}}`, `agent "1" turn 1: toolCalls[0]: name is empty`},
		{"arguments that are not an object", `{"agents": {"1": [{"toolCalls": [{"name": "x", "arguments": [1]}]}]}}`, `agent "1" turn 1: toolCalls[0] (x): arguments must be a JSON object`},
		{"a negative delay", `{"agents": {"1": [{"delayMs": -5}]}}`, `agent "1" turn 1: delayMs is -5`},
		{"an error turn with text", `{"agents": {"1": [{"error": "x", "text": "y"}]}}`, `agent "1" turn 1: an "error" turn`},
		{"negative usage", `{"agents": {"1": [{"usage": {"inputTokens": -1}}]}}`, `agent "1" turn 1: usage`},
		{"run 1 written as a prefix", `{"agents": {"1:coordinator": []}}`, `agent "1:coordinator": run numbers start at 2`},
		{"an agent listed twice", `{"agents": {"1": [], "1": []}}`, `agent "1" is listed twice`},
		{"trailing data", `{"agents": {}} {}`, "extra data"},
	} {
		t.Run("rejects "+tc.name, func(t *testing.T) {
			_, err := ParseScript([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestRecordThenReplay(t *testing.T) {
	pc := providers[0]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if n == 1 {
			sse(t, pc.tools)(w)
			return
		}
		if n == 2 {
			errorAnswer(t, 400, "openai_400_context.json", nil)(w)
			return
		}
		sse(t, pc.text)(w)
	})
	real := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	path := filepath.Join(t.TempDir(), "session.json")
	rec := NewRecorder(real, path, nil, nil)

	calls := []*Request{{Agent: "coordinator"}, {Agent: "1"}, {Agent: "1", Run: 2}}
	type answer struct {
		text  string
		calls []ToolCall
		err   string
	}
	var live []answer
	for i, req := range calls {
		resp, err := rec.Complete(context.Background(), req, nil)
		if err != nil {
			live = append(live, answer{err: err.Error()})
		} else {
			live = append(live, answer{text: resp.Text, calls: resp.ToolCalls})
		}
		// After each answer the file holds every turn so far.
		s, lerr := LoadScript(path)
		if lerr != nil {
			t.Fatalf("after call %d the recording does not load: %v", i+1, lerr)
		}
		if n := len(s.Agents()); n != i+1 {
			t.Errorf("after call %d the recording has %d agents", i+1, n)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), `"coordinator"`) || !strings.Contains(string(data), `"2:1"`) {
		t.Errorf("recording:\n%s", data)
	}

	replay, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, req := range calls {
		resp, err := replay.Complete(context.Background(), req, nil)
		if live[i].err != "" {
			if err == nil || err.Error() != live[i].err {
				t.Errorf("call %d: replay err = %v, want %q", i+1, err, live[i].err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if resp.Text != live[i].text || len(resp.ToolCalls) != len(live[i].calls) {
			t.Fatalf("call %d: replay %+v, live %+v", i+1, resp, live[i])
		}
		for j, c := range resp.ToolCalls {
			want := live[i].calls[j]
			if c.Name != want.Name || !jsonEqual(c.Arguments, want.Arguments) {
				t.Errorf("call %d tool %d: replay %s %s, live %s %s", i+1, j, c.Name, c.Arguments, want.Name, want.Arguments)
			}
		}
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && fmt.Sprint(x) == fmt.Sprint(y)
}

func TestRecorderKeepsTheFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "session.json")
	if err := os.WriteFile(path, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := ParseScript([]byte(demoScript))
	rec := NewRecorder(s, path, nil, nil)
	if _, err := rec.Complete(context.Background(), &Request{Agent: "coordinator"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, err = %v", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestRecorderDoesNotRecordCancelledCalls(t *testing.T) {
	s, _ := ParseScript([]byte(`{"agents": {"1": [{"delayMs": 3600000}]}}`))
	path := filepath.Join(t.TempDir(), "session.json")
	rec := NewRecorder(s, path, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rec.Complete(ctx, &Request{Agent: "1"}, nil); !errors.Is(err, ErrCancelled) {
		t.Fatalf("err = %v", err)
	}
	data, _ := rec.Marshal()
	if string(data) != "{\n  \"agents\": {}\n}\n" {
		t.Errorf("recording = %s", data)
	}
}
