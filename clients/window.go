package clients

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// WindowTimeout bounds the question of a model's context window: it is
// asked when a task starts, which must not wait long on a provider that
// does not answer.
const WindowTimeout = 5 * time.Second

// ContextWindow returns the context window of m in tokens as its
// provider's model list says: Anthropic's max_input_tokens of the model,
// and, of an OpenAI-compatible server that says it, the model's
// context_length (OpenRouter, Together), max_model_len (vLLM),
// context_window (Groq) or max_context_length (LM Studio). It is 0 when
// the provider does not say (OpenAI's own list, Ollama, the scripted
// model) or cannot be asked. Each model is asked once, bounded by
// WindowTimeout; the answer, or its failure, is kept for the process
// (a call that ctx ended is not).
func ContextWindow(ctx context.Context, m Model) int64 {
	switch v := m.(type) {
	case *Resolved:
		return ContextWindow(ctx, v.Model)
	case *recording:
		return ContextWindow(ctx, v.m)
	case *Recorder:
		return ContextWindow(ctx, v.model)
	case windowed:
		return v.window().get(ctx, v.askWindow)
	}
	return 0
}

// windowed is a model whose provider's list may say its context window.
type windowed interface {
	window() *windowCache
	askWindow(ctx context.Context) (int64, error)
}

// windowCache keeps a model's context window once asked.
type windowCache struct {
	mu    sync.Mutex
	known bool
	n     int64
}

func (c *windowCache) get(ctx context.Context, ask func(context.Context) (int64, error)) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known {
		return c.n
	}
	actx, cancel := context.WithTimeout(ctx, WindowTimeout)
	defer cancel()
	n, err := ask(actx)
	if err != nil && ctx.Err() != nil {
		return 0 // the caller gave up: the next one asks again
	}
	c.known, c.n = true, max(n, 0)
	return c.n
}

func (m *anthropicModel) window() *windowCache { return &m.win }

// askWindow is GET /v1/models/{model}: its max_input_tokens.
func (m *anthropicModel) askWindow(ctx context.Context) (int64, error) {
	info, err := m.client.Models.Get(ctx, m.ep.model, anthropic.ModelGetParams{})
	if err != nil {
		return 0, m.classify(ctx, err)
	}
	if !info.JSON.MaxInputTokens.Valid() {
		return 0, nil
	}
	return info.MaxInputTokens, nil
}

func (m *openaiModel) window() *windowCache { return &m.win }

// windowFields are the members in which OpenAI-compatible servers give a
// model's context window in their model list.
var windowFields = []string{"context_length", "max_model_len", "context_window", "max_context_length"}

// askWindow reads the model's entry of GET {base}/models.
func (m *openaiModel) askWindow(ctx context.Context) (int64, error) {
	data, err := m.conn.models(ctx)
	if err != nil {
		return 0, err
	}
	for _, d := range data {
		if modelID(d) != m.ep.model {
			continue
		}
		for _, k := range windowFields {
			f, ok := d[k]
			if !ok {
				continue
			}
			var n float64
			if json.Unmarshal(f, &n) == nil && n >= 1 && n < 1<<40 {
				return int64(n), nil
			}
		}
		return 0, nil
	}
	return 0, errNotListed
}

// errNotListed: the provider's list does not name the model.
var errNotListed = errors.New("the model is not in the provider's list")
