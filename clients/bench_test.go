package clients

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkScriptComplete measures one scripted answer with a tool call.
func BenchmarkScriptComplete(b *testing.B) {
	turns := `[{"text": "Reading main.go first.", "toolCalls": [{"name": "read_file", "arguments": {"path": "main.go"}}]}]`
	s, err := ParseScript([]byte(`{"agents": {"1": ` + turns + `}}`))
	if err != nil {
		b.Fatal(err)
	}
	req := &Request{Agent: "1"}
	b.ReportAllocs()
	for b.Loop() {
		s.mu.Lock()
		s.next["1"] = 0
		s.mu.Unlock()
		if _, err := s.Complete(context.Background(), req, func(Delta) {}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseScript measures loading the protocol's example script.
func BenchmarkParseScript(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(demoScript)))
	for b.Loop() {
		if _, err := ParseScript([]byte(demoScript)); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkStream measures one streamed call against a local server that
// answers from a fixture: the client's own cost per call (request
// encoding, SSE decoding, assembly), loopback HTTP included.
func benchmarkStream(b *testing.B, pc providerCase) {
	body := fixture(b, pc.tools)
	fp := newFakeProvider(b, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	})
	m, err := Resolve(pc.spec, envOf(pc.env(fp.srv.URL)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	req := conversation()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Complete(context.Background(), req, func(Delta) {}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenAIStream(b *testing.B)    { benchmarkStream(b, providers[0]) }
func BenchmarkAnthropicStream(b *testing.B) { benchmarkStream(b, providers[1]) }
