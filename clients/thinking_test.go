package clients

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// thinkingOf collects the thinking a call streams.
type thinkingOf struct{ pieces []string }

func (th *thinkingOf) onDelta(d Delta) {
	if d.Thinking != "" {
		th.pieces = append(th.pieces, d.Thinking)
	}
}

func TestAnthropicThinking(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "anthropic_stream_thinking.sse")(w) })
	m := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil))
	req := conversation()
	req.Thinking = &Thinking{BudgetTokens: 2048}
	var th thinkingOf
	resp, err := m.Complete(context.Background(), req, th.onDelta)
	if err != nil {
		t.Fatal(err)
	}
	body := fp.request(0).Body
	t.Run("asks for thinking with the budget, max_tokens above it", func(t *testing.T) {
		if got := jsonOf(body["thinking"]); got != `{"budget_tokens":2048,"type":"enabled"}` {
			t.Errorf("thinking = %s", got)
		}
		if body["max_tokens"] != float64(1000+2048) {
			t.Errorf("max_tokens = %v, want the answer's 1000 and the budget", body["max_tokens"])
		}
	})
	t.Run("streams the thinking deltas as they come", func(t *testing.T) {
		if strings.Join(th.pieces, "|") != "The user wants greet; |main.go holds main." {
			t.Errorf("pieces = %q", th.pieces)
		}
	})
	t.Run("gives back the signed block and the redacted one, and the tool call", func(t *testing.T) {
		if len(resp.Thinking) != 2 || resp.Thinking[0].Text != "The user wants greet; main.go holds main." ||
			!strings.HasPrefix(resp.Thinking[0].Signature, "EqQBCgIYAhIM") || resp.Thinking[1].Redacted == "" {
			t.Errorf("thinking = %+v", resp.Thinking)
		}
		if len(resp.ToolCalls) != 1 || resp.Text != "" || ThinkingText(resp.Thinking) != resp.Thinking[0].Text {
			t.Errorf("response = %+v", resp)
		}
	})
	t.Run("sends the blocks back first in the assistant turn that follows", func(t *testing.T) {
		req.Messages = append(req.Messages,
			Message{Role: RoleAssistant, ToolCalls: resp.ToolCalls, Thinking: resp.Thinking},
			Message{Role: RoleTool, ToolResults: []ToolResult{{CallID: resp.ToolCalls[0].ID, Content: "package main"}}})
		if _, err := m.Complete(context.Background(), req, nil); err != nil {
			t.Fatal(err)
		}
		msgs := messagesOf(t, fp.request(1).Body)
		want := `[{"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds","thinking":"The user wants greet; main.go holds main.","type":"thinking"},` +
			`{"data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw","type":"redacted_thinking"},` +
			`{"id":"toolu_01Think","input":{"path":"main.go"},"name":"read_file","type":"tool_use"}]`
		if got := jsonOf(msgs[3]["content"]); got != want {
			t.Errorf("content = %s\nwant      %s", got, want)
		}
	})
}

func TestAnthropicWithoutThinkingAsksNone(t *testing.T) {
	pc := providers[1]
	fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "anthropic_stream_thinking.sse")(w) })
	var th thinkingOf
	if _, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), conversation(), th.onDelta); err != nil {
		t.Fatal(err)
	}
	if _, ok := fp.request(0).Body["thinking"]; ok || fp.request(0).Body["max_tokens"] != float64(1000) {
		t.Errorf("body = %v", fp.request(0).Body)
	}
}

func TestOpenAICompatibleReasoning(t *testing.T) {
	pc := providers[0]
	for _, c := range []struct {
		name  string
		think bool
		want  []string
	}{
		{"streams reasoning_content and reasoning as thinking when asked", true, []string{"Greet takes ", "a name."}},
		{"streams none when not asked", false, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			fp := newFakeProvider(t, func(w http.ResponseWriter, r *http.Request, n int) { sse(t, "openai_stream_reasoning.sse")(w) })
			req := conversation()
			if c.think {
				req.Thinking = &Thinking{BudgetTokens: 4096}
			}
			var th thinkingOf
			resp, err := resolveFake(t, pc, fp.srv.URL, testOptions(&sleeps{}, nil)).Complete(context.Background(), req, th.onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(th.pieces, "|") != strings.Join(c.want, "|") || ThinkingText(resp.Thinking) != strings.Join(c.want, "") || resp.Text != "Done." {
				t.Errorf("pieces %q, response %+v", th.pieces, resp)
			}
			if _, ok := fp.request(0).Body["reasoning_effort"]; ok {
				t.Errorf("the request asks OpenAI-style servers for more than they say on their own: %v", fp.request(0).Body)
			}
		})
	}
}

func TestScriptThinks(t *testing.T) {
	thought := strings.Repeat("é", 30) + " and then some more words to think about"
	s, err := ParseScript([]byte(`{"agents": {"1": [{"thinking": "` + thought + `", "text": "ok"}, {"thinking": "` + thought + `", "text": "ok"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("streams its thinking in pieces of whole characters, when asked", func(t *testing.T) {
		req := conversation()
		req.Thinking = &Thinking{BudgetTokens: 1024}
		var th thinkingOf
		resp, err := s.Complete(context.Background(), req, th.onDelta)
		if err != nil {
			t.Fatal(err)
		}
		if len(th.pieces) < 3 || strings.Join(th.pieces, "") != thought || ThinkingText(resp.Thinking) != thought {
			t.Fatalf("pieces %q, thinking %+v", th.pieces, resp.Thinking)
		}
		for _, p := range th.pieces {
			if len(p) > scriptThinkingPiece || !utf8.ValidString(p) {
				t.Errorf("piece %q", p)
			}
		}
	})
	t.Run("thinks nothing aloud when not asked", func(t *testing.T) {
		var th thinkingOf
		resp, err := s.Complete(context.Background(), conversation(), th.onDelta)
		if err != nil || len(th.pieces) != 0 || resp.Thinking != nil || resp.Text != "ok" {
			t.Errorf("pieces %q, response %+v, %v", th.pieces, resp, err)
		}
	})
}
