package clients

import (
	"context"
	"testing"
)

// FuzzParseScript checks that no input crashes the loader, and that every
// script it accepts can be replayed and recorded back into a script that
// loads again.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte(demoScript))
	f.Add([]byte(`{"agents": {"1": [{"toolCalls": [{"name": "x", "arguments": null}]}]}}`))
	f.Add([]byte(`{"agents": {"2:1": [{"delayMs": 0, "usage": {"inputTokens": 1, "outputTokens": 2}}]}}`))
	f.Add([]byte(`{"agents": {"a:b:c": [{"error": "boom"}]}}`))
	f.Add([]byte(`{"agents": {"1": [{"usage": {"inputTokens": 10, "outputTokens": 2, "cacheReadTokens": 8, "cacheWriteTokens": 1}}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseScript(data)
		if err != nil {
			return
		}
		rec := NewRecorder(s, t.TempDir()+"/r.json", nil, nil)
		for _, key := range s.Agents() {
			for _, turn := range s.Turns(key) {
				if turn.DelayMs > 0 {
					continue
				}
				_, _ = rec.Complete(context.Background(), &Request{Agent: key}, nil)
			}
		}
		out, err := rec.Marshal()
		if err != nil {
			t.Fatalf("recording an accepted script: %v", err)
		}
		if _, err := ParseScript(out); err != nil {
			t.Fatalf("the recording of an accepted script does not load: %v\n%s", err, out)
		}
	})
}
