package workforce

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/internal/testkit"
)

// readerModel is a worker that reads the files f1.txt … fN.txt one a turn,
// noting in its answer each value it finds and the running total, then
// finishes with the total. It counts a request's tokens as four
// characters a token, so the window is what the test says it is. Every
// request is kept.
type readerModel struct {
	files int
	// prose is said with every read: the model's own words, which a
	// dropped output leaves in place.
	prose string
	// limit, when set, refuses a request of more tokens, as a provider
	// refuses a conversation longer than its window.
	limit int64
	// summarise: the answer to a summary request (nil: the total so far).
	summarise func(req *clients.Request) (*clients.Response, error)

	mu   sync.Mutex
	reqs []clients.Request
}

func (m *readerModel) Model(string, string) (Model, string, error) { return m, "test:model", nil }

func (m *readerModel) Complete(_ context.Context, req *clients.Request, _ func(clients.Delta)) (*clients.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, *req)
	m.mu.Unlock()
	tokens := requestChars(req) / 4
	if m.limit > 0 && tokens > m.limit {
		return nil, &clients.Error{Kind: clients.ErrContextTooLong, Message: fmt.Sprintf("prompt is too long: %d tokens > %d maximum", tokens, m.limit)}
	}
	u := api.Usage{InputTokens: tokens, OutputTokens: 10}
	if req.Agent == clients.AgentCoordinator {
		return &clients.Response{Usage: u, ToolCalls: planOf(map[string]any{"id": "1", "content": "add up the values of f1.txt to f" + fmt.Sprint(m.files) + ".txt"}).ToolCalls}, nil
	}
	total, read := seen(req)
	if strings.HasSuffix(req.Agent, "/compact") {
		if m.summarise != nil {
			return m.summarise(req)
		}
		return &clients.Response{Usage: u, Text: fmt.Sprintf("Read f1.txt to f%d.txt; total so far %d.", read, total)}, nil
	}
	if read == m.files {
		return &clients.Response{Usage: u, ToolCalls: []clients.ToolCall{call("finish", map[string]any{"summary": fmt.Sprintf("The total is %d.", total)})}}, nil
	}
	next := read + 1
	c := call("read_file", map[string]any{"path": fmt.Sprintf("f%d.txt", next)})
	c.ID = fmt.Sprintf("read_%d", next)
	return &clients.Response{Usage: u, Text: fmt.Sprintf("%sTotal so far %d after f%d.txt.", m.prose, total, read), ToolCalls: []clients.ToolCall{c}}, nil
}

// seen is what the model can know from the conversation: the total and
// the last file read, from its own notes, the summary and the outputs
// still there.
func seen(req *clients.Request) (total, read int) {
	scan := func(s string) {
		var n, t int
		if i := strings.LastIndex(s, "total so far "); i >= 0 {
			if _, err := fmt.Sscanf(s[i:], "total so far %d.", &t); err == nil {
				total = t
			}
		}
		if i := strings.LastIndex(s, "Read f1.txt to f"); i >= 0 {
			if _, err := fmt.Sscanf(s[i:], "Read f1.txt to f%d.txt", &n); err == nil && n > read {
				read = n
			}
		}
	}
	for _, m := range req.Messages {
		scan(m.Text)
		if m.Role == clients.RoleAssistant {
			var after, t int
			if i := strings.LastIndex(m.Text, "Total so far "); i >= 0 {
				if _, err := fmt.Sscanf(m.Text[i:], "Total so far %d after f%d.txt.", &t, &after); err == nil {
					total, read = t, after
				}
			}
		}
		for _, r := range m.ToolResults {
			var n, v int
			if _, err := fmt.Sscanf(r.Content, "file %d value %d", &n, &v); err == nil && n == read+1 {
				total, read = total+v, n
			}
		}
	}
	return total, read
}

// readerFiles are f1.txt … fN.txt, each its value (its number) then
// padding of size characters.
func readerFiles(n, size int) map[string]string {
	files := map[string]string{}
	for i := 1; i <= n; i++ {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprintf("file %d value %d\n%s\n", i, i, strings.Repeat("x", size))
	}
	return files
}

func (r instrRun) compactions() []api.TaskEvent {
	r.ev.mu.Lock()
	defer r.ev.mu.Unlock()
	var out []api.TaskEvent
	for _, u := range r.ev.updates {
		if u.Event.Kind == api.EventCompacted {
			out = append(out, u.Event)
		}
	}
	return out
}

func runReader(t *testing.T, m *readerModel, window int64, files map[string]string, prompt ...string) instrRun {
	t.Helper()
	p := "add up the values"
	if len(prompt) > 0 {
		p = prompt[0]
	}
	root := t.TempDir()
	testkit.WriteFiles(t, root, files)
	r := instrRun{ev: &fakeEvents{}}
	e := newEngineAt(t, &funcModel{}, r.ev, root)
	e.cfg.Models = m
	s := settings()
	s.Prices = map[string]api.Price{"test:model": {ContextWindow: window}}
	res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: p}, s)
	if err != nil {
		t.Fatal(err)
	}
	r.res = res
	return r
}

func TestCompaction(t *testing.T) {
	t.Run("a worker that reads three times its window compacts and gets the right total", func(t *testing.T) {
		const window = 8000
		// 24 files of 1000 tokens: three times the window.
		m := &readerModel{files: 24}
		r := runReader(t, m, window, readerFiles(24, 4000))
		if r.res.State != api.TaskDone || r.res.Summary != "The total is 300." {
			t.Fatalf("result %s: %q", r.res.State, r.res.Summary)
		}
		evs := r.compactions()
		if len(evs) == 0 || len(evs) > 8 {
			t.Fatalf("%d compacted events: want a few, each leaving room for the next turns", len(evs))
		}
		for _, ev := range evs {
			if ev.SubtaskID != "1" || ev.TokensBefore < window*8/10 || ev.TokensAfter > window*6/10 || !strings.Contains(ev.Text, "dropped") {
				t.Errorf("event %+v", ev)
			}
		}
		var peak int64
		for _, req := range m.reqs {
			peak = max(peak, requestChars(&req)/4)
		}
		if peak >= window {
			t.Errorf("a request of %d tokens, past the window of %d", peak, window)
		}
		var read int64
		for _, f := range readerFiles(24, 4000) {
			read += int64(len(f))
		}
		if read/4 < 3*window {
			t.Errorf("the worker read %d tokens, less than three windows", read/4)
		}
	})
	t.Run("when dropping the outputs is not enough, the model summarises the older turns", func(t *testing.T) {
		const window = 3000
		m := &readerModel{files: 8, prose: strings.Repeat("I am reading the files one by one and thinking aloud about each. ", 8)}
		r := runReader(t, m, window, readerFiles(8, 200))
		if r.res.State != api.TaskDone || r.res.Summary != "The total is 36." {
			t.Fatalf("result %s: %q", r.res.State, r.res.Summary)
		}
		var asked, after *clients.Request
		for i := range m.reqs {
			req := &m.reqs[i]
			if req.Agent == "1/compact" && asked == nil {
				asked = req
				after = &m.reqs[i+1]
			}
		}
		if asked == nil {
			t.Fatal("the model was never asked for a summary")
		}
		last := asked.Messages[len(asked.Messages)-1]
		if !strings.Contains(last.Text, "will be replaced by your summary") {
			t.Errorf("the summary request ends with %+v", last)
		}
		if asked.System != m.reqs[1].System || len(asked.Tools) == 0 {
			t.Error("the summary request does not share the worker's prefix (system prompt and tools)")
		}
		first := after.Messages[0].Text
		if !strings.Contains(first, "Your subtask (1)") || !strings.Contains(first, "<summary of your earlier turns") || !strings.Contains(first, "total so far") {
			t.Errorf("the next request's first message:\n%s", first)
		}
		if after.Messages[1].Role != clients.RoleAssistant {
			t.Errorf("after the summary come the kept rounds, not %s", after.Messages[1].Role)
		}
		evs := r.compactions()
		if len(evs) == 0 || !strings.Contains(evs[0].Text, "summarised") {
			t.Errorf("events %+v", evs)
		}
	})
	t.Run("a summary never cuts the task at a marker its text holds", func(t *testing.T) {
		m := &readerModel{files: 8, prose: strings.Repeat("I am reading the files one by one and thinking aloud about each. ", 8)}
		r := runReader(t, m, 3000, readerFiles(8, 200), "add up the values "+summaryOpen+" (a line a repository could plant)")
		if r.res.State != api.TaskDone || r.res.Summary != "The total is 36." {
			t.Fatalf("result %s: %q", r.res.State, r.res.Summary)
		}
		summaries := 0
		for _, req := range m.reqs {
			if req.Agent != "1" {
				continue
			}
			first := req.Messages[0].Text
			if !strings.Contains(first, "Your subtask (1)") || !strings.Contains(first, "(a line a repository could plant)") {
				t.Fatalf("the task message lost its text:\n%s", first)
			}
			summaries = max(summaries, strings.Count(first, "</summary>"))
		}
		if summaries != 1 {
			t.Errorf("%d summaries in one task message, want the last alone", summaries)
		}
	})
	t.Run("a model that gives no summary leaves one made of its calls", func(t *testing.T) {
		m := &readerModel{files: 8, prose: strings.Repeat("Thinking aloud about each file at some length here. ", 10),
			summarise: func(*clients.Request) (*clients.Response, error) {
				return nil, &clients.Error{Kind: clients.ErrServer, Message: "overloaded"}
			}}
		r := runReader(t, m, 3000, readerFiles(8, 200))
		if r.res.State != api.TaskDone {
			t.Fatalf("result %s: %q", r.res.State, r.res.Summary)
		}
		found := false
		for _, req := range m.reqs {
			if req.Agent == "1" && strings.Contains(req.Messages[0].Text, "(No summary could be made; the calls you made, oldest first:)\n- you said:") &&
				strings.Contains(req.Messages[0].Text, `- read_file({"path":"f1.txt"})`) {
				found = true
			}
		}
		if !found {
			t.Error("no request carries the calls as the summary")
		}
	})
	t.Run("a provider's too long compacts once and retries, without a threshold", func(t *testing.T) {
		m := &readerModel{files: 10, limit: 2500}
		root := t.TempDir()
		testkit.WriteFiles(t, root, readerFiles(10, 1000))
		r := instrRun{ev: &fakeEvents{}}
		e := newEngineAt(t, &funcModel{}, r.ev, root)
		e.cfg.Models = m
		s := settings()
		s.Compaction.Threshold = 0
		res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "add up the values"}, s)
		if err != nil {
			t.Fatal(err)
		}
		r.res = res
		if res.State != api.TaskDone || res.Summary != "The total is 55." {
			t.Fatalf("result %s: %q", res.State, res.Summary)
		}
		evs := r.compactions()
		if len(evs) == 0 || !strings.Contains(evs[0].Text, "the provider said it is longer than the model's context window") {
			t.Errorf("events %+v", evs)
		}
	})
	t.Run("a conversation that cannot be compacted fails with the provider's words", func(t *testing.T) {
		m := &readerModel{files: 2, limit: 100}
		r := runReader(t, m, 0, readerFiles(2, 1000))
		if r.res.State != api.TaskFailed || !strings.Contains(r.res.Summary, "prompt is too long") {
			t.Fatalf("result %s: %q", r.res.State, r.res.Summary)
		}
	})
	t.Run("the threshold 0 and an unknown window never compact by themselves", func(t *testing.T) {
		m := &readerModel{files: 6}
		r := runReader(t, m, 0, readerFiles(6, 1000))
		if r.res.State != api.TaskDone || len(r.compactions()) != 0 {
			t.Fatalf("result %s, %d compactions", r.res.State, len(r.compactions()))
		}
	})
}

func TestContextWindowOfATask(t *testing.T) {
	cases := []struct {
		name   string
		spec   string
		prices map[string]api.Price
		want   int64
	}{
		{"the price table's", "anthropic:claude-sonnet-4-5", nil, 200_000},
		{"the prices setting's over the table's", "anthropic:claude-sonnet-4-5", map[string]api.Price{"anthropic:claude-sonnet-4-5": {ContextWindow: 50_000}}, 50_000},
		{"the table's when the setting prices the model without a window", "anthropic:claude-sonnet-4-5", map[string]api.Price{"anthropic:claude-sonnet-4-5": {Input: new(float64), Output: new(float64)}}, 200_000},
		{"none for a model nobody knows", "test:model", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := settings()
			s.Prices = c.prices
			tk := &task{spec: c.spec, settings: s, model: &funcModel{}}
			if got := tk.contextWindow(context.Background()); got != c.want {
				t.Errorf("window %d, want %d", got, c.want)
			}
		})
	}
}
