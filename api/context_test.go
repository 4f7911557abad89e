package api

import (
	"encoding/json"
	"errors"
	"testing"
)

func f(v float64) *float64 { return &v }

func TestContextSettings(t *testing.T) {
	base := DefaultSettings()
	t.Run("defaults: attachments bounded, thinking off, the heat map's constants, no prices", func(t *testing.T) {
		if base.Attachments != (AttachmentLimits{MaxFileBytes: 256 << 10, MaxImageBytes: 5 << 20, MaxTotalBytes: 20 << 20}) {
			t.Errorf("attachments = %+v", base.Attachments)
		}
		if base.Thinking != (Thinking{Enabled: false, BudgetTokens: 4096}) {
			t.Errorf("thinking = %+v", base.Thinking)
		}
		if base.Heat != (HeatSettings{Decay: 0.95, ContextTurns: 3, CompactionThreshold: 0.5}) {
			t.Errorf("heat = %+v", base.Heat)
		}
		if base.Prices == nil || len(base.Prices) != 0 {
			t.Errorf("prices = %v", base.Prices)
		}
	})
	t.Run("reads each key over the others' defaults", func(t *testing.T) {
		s, _, err := ApplySettings(base, json.RawMessage(`{
			"attachments":{"maxImageBytes":1048576},
			"thinking":{"enabled":true},
			"heat":{"decay":0.9,"compactionThreshold":0},
			"prices":{"ollama:qwen2.5-coder:7b":{"input":0,"output":0,"contextWindow":32768},"openai:gpt-x":{"contextWindow":8192}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if s.Attachments.MaxImageBytes != 1<<20 || s.Attachments.MaxFileBytes != 256<<10 {
			t.Errorf("attachments = %+v", s.Attachments)
		}
		if !s.Thinking.Enabled || s.Thinking.BudgetTokens != 4096 {
			t.Errorf("thinking = %+v", s.Thinking)
		}
		if s.Heat != (HeatSettings{Decay: 0.9, ContextTurns: 3, CompactionThreshold: 0}) {
			t.Errorf("heat = %+v", s.Heat)
		}
		q := s.Prices["ollama:qwen2.5-coder:7b"]
		if !q.Priced() || *q.Input != 0 || q.ContextWindow != 32768 {
			t.Errorf("qwen = %+v", q)
		}
		if x := s.Prices["openai:gpt-x"]; x.Priced() || x.ContextWindow != 8192 {
			t.Errorf("a window alone prices nothing: %+v", x)
		}
		if len(base.Prices) != 0 {
			t.Error("the base settings were changed")
		}
	})
	for _, c := range []struct{ name, raw, key string }{
		{"refuses attachments that are not an object", `{"attachments":5}`, "attachments"},
		{"refuses an unknown key of attachments", `{"attachments":{"maxBytes":1}}`, "attachments.maxBytes"},
		{"refuses a size of zero bytes", `{"attachments":{"maxFileBytes":0}}`, "attachments.maxFileBytes"},
		{"refuses a size in a string", `{"attachments":{"maxImageBytes":"5MB"}}`, "attachments.maxImageBytes"},
		{"refuses a run total below one image", `{"attachments":{"maxTotalBytes":1024}}`, "attachments.maxTotalBytes"},
		{"refuses thinking that is not an object", `{"thinking":true}`, "thinking"},
		{"refuses a budget below Anthropic's least", `{"thinking":{"budgetTokens":100}}`, "thinking.budgetTokens"},
		{"refuses enabled that is not a boolean", `{"thinking":{"enabled":"yes"}}`, "thinking.enabled"},
		{"refuses a decay of 0", `{"heat":{"decay":0}}`, "heat.decay"},
		{"refuses a decay above 1", `{"heat":{"decay":1.5}}`, "heat.decay"},
		{"refuses zero context turns", `{"heat":{"contextTurns":0}}`, "heat.contextTurns"},
		{"refuses a compaction threshold of 1", `{"heat":{"compactionThreshold":1}}`, "heat.compactionThreshold"},
		{"refuses an unknown key of heat", `{"heat":{"interval":100}}`, "heat.interval"},
		{"refuses a price of a model that is not provider:model", `{"prices":{"gpt-4.1":{"input":1,"output":2}}}`, "prices.gpt-4.1"},
		{"refuses an input price without an output price", `{"prices":{"openai:gpt-4.1":{"input":1}}}`, "prices.openai:gpt-4.1"},
		{"refuses a negative price", `{"prices":{"openai:gpt-4.1":{"input":-1,"output":2}}}`, "prices.openai:gpt-4.1.input"},
		{"refuses a cache price without input and output", `{"prices":{"openai:gpt-4.1":{"cacheRead":1}}}`, "prices.openai:gpt-4.1"},
		{"refuses an unknown key of a price", `{"prices":{"openai:gpt-4.1":{"in":1}}}`, "prices.openai:gpt-4.1.in"},
		{"refuses a context window that is not whole", `{"prices":{"openai:gpt-4.1":{"contextWindow":1.5}}}`, "prices.openai:gpt-4.1.contextWindow"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := ApplySettings(base, json.RawMessage(c.raw))
			var se *SettingsError
			if !errors.As(err, &se) || se.Key != c.key {
				t.Fatalf("got %v, want an error naming %s", err, c.key)
			}
			if got.Heat != base.Heat || got.Thinking != base.Thinking || got.Attachments != base.Attachments {
				t.Errorf("a refused setting changed the settings: %+v", got)
			}
		})
	}
}

func TestUsageSums(t *testing.T) {
	priced := Usage{InputTokens: 1000, OutputTokens: 100, Cost: f(0.002)}
	unpriced := Usage{InputTokens: 10, OutputTokens: 1}
	cases := []struct {
		name      string
		got, want Usage
	}{
		{"adds the tokens and the costs of priced parts", priced.Plus(priced), Usage{InputTokens: 2000, OutputTokens: 200, Cost: f(0.004)}},
		{"leaves the cost out when a part is of unknown price", priced.Plus(unpriced), Usage{InputTokens: 1010, OutputTokens: 101}},
		{"keeps the cost over an empty part", Usage{}.Plus(priced), priced},
		{"keeps the later call's context", Usage{ContextTokens: 5, ContextWindow: 100}.Plus(Usage{InputTokens: 7, ContextTokens: 7, ContextWindow: 100}), Usage{InputTokens: 7, ContextTokens: 7, ContextWindow: 100}},
		{"keeps the earlier context when the later call has none", Usage{ContextTokens: 5}.Plus(Usage{}), Usage{ContextTokens: 5}},
		{"drops the context from a total", Usage{InputTokens: 3, ContextTokens: 3, ContextWindow: 9}.Total(), Usage{InputTokens: 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !sameUsage(c.got, c.want) {
				t.Errorf("got %+v (cost %v), want %+v (cost %v)", c.got, costOf(c.got), c.want, costOf(c.want))
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	p := Price{Input: f(3), Output: f(15), CacheRead: f(0.3), CacheWrite: f(3.75)}
	cases := []struct {
		name  string
		price Price
		u     Usage
		want  *float64
	}{
		{"prices input and output per million tokens", p, Usage{InputTokens: 1_000_000, OutputTokens: 100_000}, f(4.5)},
		{"prices the cached part of the input at the cache prices", p, Usage{InputTokens: 1_000_000, CacheReadTokens: 500_000, CacheWriteTokens: 100_000}, f(1.2 + 0.15 + 0.375)},
		{"takes the input price for a cache price not given", Price{Input: f(2), Output: f(8)}, Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000}, f(2)},
		{"rounds to a millionth of a dollar", Price{Input: f(0.4), Output: f(1.6)}, Usage{InputTokens: 1, OutputTokens: 1}, f(0.000002)},
		{"gives no cost without prices", Price{ContextWindow: 8192}, Usage{InputTokens: 5}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.price.Cost(c.u)
			if (got == nil) != (c.want == nil) || got != nil && *got != *Dollars(*c.want) {
				t.Errorf("cost = %v, want %v", deref(got), deref(c.want))
			}
		})
	}
}

func sameUsage(a, b Usage) bool {
	ca, cb := a.Cost, b.Cost
	a.Cost, b.Cost = nil, nil
	return a == b && (ca == nil) == (cb == nil) && (ca == nil || *ca == *cb)
}

func costOf(u Usage) any { return deref(u.Cost) }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
