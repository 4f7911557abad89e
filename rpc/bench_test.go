package rpc

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// echoHandler answers every call with its params, as agent/ping does.
type echoHandler struct{}

func (echoHandler) Gate(*Request) error                          { return nil }
func (echoHandler) HandleNotification(context.Context, *Request) {}
func (echoHandler) HandleCall(_ context.Context, req *Request) (any, error) {
	return RawJSON(req.Params()), nil
}

// The benchmarks run both ends in this process over real OS pipes; the
// cross-process figures against other libraries are scripts/bench-wire.sh's.

func BenchmarkRoundTrip(b *testing.B) {
	_, client := pipePair(b, echoHandler{}, echoHandler{})
	ctx := context.Background()
	params := json.RawMessage(`{"data":1}`)
	var out json.RawMessage
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Call(ctx, "agent/ping", params, &out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInFlight64(b *testing.B) {
	_, client := pipePair(b, echoHandler{}, echoHandler{})
	ctx := context.Background()
	params := json.RawMessage(`{"data":1}`)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	for range 64 {
		wg.Go(func() {
			var out json.RawMessage
			for range work {
				if err := client.Call(ctx, "agent/ping", params, &out); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkPayload1MiB(b *testing.B) {
	_, client := pipePair(b, echoHandler{}, echoHandler{})
	ctx := context.Background()
	params := json.RawMessage(`{"data":"` + strings.Repeat("x", 1<<20) + `"}`)
	var out json.RawMessage
	b.SetBytes(int64(2 * len(params)))
	b.ReportAllocs()
	for b.Loop() {
		if err := client.Call(ctx, "agent/ping", params, &out); err != nil {
			b.Fatal(err)
		}
		if len(out) != len(params) {
			b.Fatalf("echo of %d bytes, want %d", len(out), len(params))
		}
	}
}

func BenchmarkParseEnvelope(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"agent/ping","params":{"data":"` + strings.Repeat("abcdefgh", 1<<14) + `"}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := parseEnvelope(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodingJSONValid(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":12,"method":"agent/ping","params":{"data":"` + strings.Repeat("abcdefgh", 1<<14) + `"}}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if !json.Valid(body) {
			b.Fatal("invalid")
		}
	}
}
