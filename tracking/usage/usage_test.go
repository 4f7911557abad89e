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
		{"sums a subtask's calls, with the context of its last call", c.Subtask("t1", "1"), api.Usage{InputTokens: 400, OutputTokens: 30, ContextTokens: 300}},
		{"keeps subtasks apart", c.Subtask("t1", "2"), api.Usage{InputTokens: 50, OutputTokens: 5, ContextTokens: 50}},
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

func TestMeterPricesItsCalls(t *testing.T) {
	c := New()
	price, ok := PriceOf("openai:gpt-4.1-mini", nil)
	if !ok {
		t.Fatal("gpt-4.1-mini has no built-in price")
	}
	m := c.Meter("s", "t1", "1", nil).Priced(price)
	got := m.ModelCall(api.Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, OutputTokens: 100_000})
	t.Run("gives a call its cost at the model's price, cached input at the cache price", func(t *testing.T) {
		// 500k × $0.40 + 500k × $0.10 + 100k × $1.60, per million.
		if got.Cost == nil || *got.Cost != 0.41 {
			t.Errorf("cost = %v", got.Cost)
		}
	})
	t.Run("gives a call its context: its input against the model's window", func(t *testing.T) {
		if got.ContextTokens != 1_000_000 || got.ContextWindow != 1_047_576 {
			t.Errorf("context = %d of %d", got.ContextTokens, got.ContextWindow)
		}
	})
	t.Run("sums the cost of the task", func(t *testing.T) {
		m.ModelCall(api.Usage{InputTokens: 1_000_000})
		if u := c.Task("t1"); u.Cost == nil || *u.Cost != 0.81 || u.ContextTokens != 0 {
			t.Errorf("task = %+v (cost %v)", u, u.Cost)
		}
	})
	t.Run("leaves the cost out once a call of unknown price is counted", func(t *testing.T) {
		c.Meter("s", "t1", "2", nil).ModelCall(api.Usage{InputTokens: 5, OutputTokens: 1})
		if u := c.Task("t1"); u.Cost != nil || u.InputTokens != 2_000_005 {
			t.Errorf("task = %+v (cost %v)", u, *u.Cost)
		}
		if u := c.Session("s"); u.Cost != nil {
			t.Errorf("session cost = %v", *u.Cost)
		}
	})
}

func TestPriceOf(t *testing.T) {
	users := map[string]api.Price{
		"openai:gpt-4.1":        {Input: usd(1), Output: usd(2)},
		"ollama:llama3.1:8b":    {ContextWindow: 131072},
		"OpenAI:my-fine-tune-1": {Input: usd(3), Output: usd(12)},
	}
	cases := []struct {
		name, spec string
		known      bool
		input      float64 // 0: no input price
		window     int64
	}{
		{"knows a model the providers publish a price for", "anthropic:claude-sonnet-4-5", true, 3, 200_000},
		{"knows a dated snapshot by its model", "anthropic:claude-sonnet-4-5-20250929", true, 3, 200_000},
		{"knows an OpenAI snapshot by its model", "openai:gpt-4.1-mini-2025-04-14", true, 0.40, 1_047_576},
		{"takes the user's price over the built-in one", "openai:gpt-4.1", true, 1, 0},
		{"takes a user's window without a price", "ollama:llama3.1:8b", true, 0, 131072},
		{"matches the provider without case", "openai:my-fine-tune-1", true, 3, 0},
		{"invents no price for a model it does not know", "openai:gpt-9", false, 0, 0},
		{"has no price for the scripted model", "script:/w/demo.json", false, 0, 0},
		{"reads no price from a spec without a provider", "gpt-4.1", false, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, ok := PriceOf(c.spec, users)
			if ok != c.known || p.ContextWindow != c.window {
				t.Fatalf("PriceOf(%q) = %+v, %v", c.spec, p, ok)
			}
			if c.input == 0 && p.Input != nil && *p.Input != 0 || c.input != 0 && (p.Input == nil || *p.Input != c.input) {
				t.Errorf("input price = %v, want %v", p.Input, c.input)
			}
		})
	}
}

func TestUsersPrice(t *testing.T) {
	users := map[string]api.Price{"OpenAI:gpt-4.1": {ContextWindow: 64000}}
	if p, ok := UsersPrice("openai:gpt-4.1-2025-04-14", users); !ok || p.ContextWindow != 64000 {
		t.Errorf("the user's entry = %+v, %v", p, ok)
	}
	if p, ok := UsersPrice("anthropic:claude-sonnet-4-5", users); ok {
		t.Errorf("a built-in price is the user's: %+v", p)
	}
}
