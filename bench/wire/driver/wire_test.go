package main

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestReadFrame(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    []string
		wantErr string
	}{
		{
			name:  "reads frames back to back",
			input: "Content-Length: 2\r\n\r\n{}Content-Length: 7\r\n\r\n[1,2,3]",
			want:  []string{"{}", "[1,2,3]"},
		},
		{
			name:  "skips a Content-Type header and reads the name in any case",
			input: "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:  4 \r\n\r\nnull",
			want:  []string{"null"},
		},
		{
			name:    "rejects a frame without Content-Length",
			input:   "Content-Type: x\r\n\r\n{}",
			wantErr: "without Content-Length",
		},
		{
			name:    "rejects a Content-Length that is not a number",
			input:   "Content-Length: -3\r\n\r\n{}",
			wantErr: "bad Content-Length",
		},
		{
			name:    "rejects a Content-Length beyond the limit",
			input:   "Content-Length: 999999999\r\n\r\n{}",
			wantErr: "exceeds",
		},
		{
			name:    "rejects a header line without a colon",
			input:   "garbage\r\n\r\n{}",
			wantErr: "malformed header",
		},
		{
			name:    "reports a body cut short",
			input:   "Content-Length: 10\r\n\r\n{}",
			wantErr: "read body",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConn(strings.NewReader(tt.input), io.Discard)
			var got []string
			var err error
			for {
				var body []byte
				body, err = c.readFrame()
				if err != nil {
					break
				}
				got = append(got, string(body))
			}
			if tt.wantErr == "" {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("error %v, want io.EOF after the last frame", err)
				}
				if !slices.Equal(got, tt.want) {
					t.Fatalf("frames %q, want %q", got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestWriteCallFramesAValidRequest(t *testing.T) {
	var out bytes.Buffer
	c := newConn(strings.NewReader(""), &out)
	k := pingCall([]byte(`"x"`))
	for _, id := range []int64{1, 10, 123456789} {
		if err := c.writeCall(id, k); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.writeBody(notification("exit", nil)); err != nil {
		t.Fatal(err)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	r := newConn(&out, io.Discard)
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"agent/ping","params":{"data":"x"}}`,
		`{"jsonrpc":"2.0","id":10,"method":"agent/ping","params":{"data":"x"}}`,
		`{"jsonrpc":"2.0","id":123456789,"method":"agent/ping","params":{"data":"x"}}`,
		`{"jsonrpc":"2.0","method":"exit"}`,
	} {
		body, err := r.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != want {
			t.Errorf("frame %s, want %s", body, want)
		}
	}
}

func TestScanMessage(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    message
		wantErr bool
	}{
		{
			name:  "finds the id after a result, as jsonrpc2 writes it",
			input: `{"jsonrpc":"2.0","result":{"data":"\"id\":5"},"id":12}`,
			want:  message{id: 12, hasID: true, result: []byte(`{"data":"\"id\":5"}`)},
		},
		{
			name:  "finds the id before a result, as vscode-jsonrpc writes it",
			input: ` { "jsonrpc" : "2.0" , "id" : 7 , "result" : null } `,
			want:  message{id: 7, hasID: true, result: []byte(`null`)},
		},
		{
			name:  "keeps the error of an error reply",
			input: `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no [such] {method}"}}`,
			want:  message{id: 3, hasID: true, err: []byte(`{"code":-32601,"message":"no [such] {method}"}`)},
		},
		{
			name:  "takes a null id as no id",
			input: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`,
			want:  message{err: []byte(`{"code":-32700,"message":"parse"}`)},
		},
		{
			name:  "tells a notification by its method",
			input: `{"jsonrpc":"2.0","method":"window/logMessage","params":{"message":"a \\\" b"}}`,
			want:  message{method: []byte(`"window/logMessage"`)},
		},
		{
			name:  "skips a string ending in an escaped backslash",
			input: `{"result":{"data":"a\\"},"id":1}`,
			want:  message{id: 1, hasID: true, result: []byte(`{"data":"a\\"}`)},
		},
		{name: "rejects a string id", input: `{"id":"1","result":1}`, wantErr: true},
		{name: "rejects a negative id", input: `{"id":-1,"result":1}`, wantErr: true},
		{name: "rejects an array", input: `[{"id":1}]`, wantErr: true},
		{name: "rejects an unterminated string", input: `{"result":"abc,"id":1}`, wantErr: true},
		{name: "rejects unbalanced brackets", input: `{"result":{"a":[1}],"id":1}`, wantErr: true},
		{name: "rejects a missing value", input: `{"id":}`, wantErr: true},
		{name: "rejects a truncated object", input: `{"id":1`, wantErr: true},
		{name: "rejects an empty body", input: ``, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scanMessage([]byte(tt.input))
			if tt.wantErr {
				if err == nil {
					t.Fatalf("scanMessage(%s) = %+v, want an error", tt.input, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.id != tt.want.id || got.hasID != tt.want.hasID ||
				!bytes.Equal(got.method, tt.want.method) || !bytes.Equal(got.result, tt.want.result) || !bytes.Equal(got.err, tt.want.err) {
				t.Fatalf("scanMessage(%s)\n got %+v\nwant %+v", tt.input, got, tt.want)
			}
		})
	}
}

func TestCheckEcho(t *testing.T) {
	big := payload(1 << 20)
	corrupt := bytes.Clone(big)
	corrupt[len(corrupt)-2] ^= 0x20
	tests := []struct {
		name   string
		result []byte
		sent   []byte
		ok     bool
	}{
		{"accepts the same small value", []byte(`{"data":"agentls"}`), []byte(`"agentls"`), true},
		{"accepts the same 1 MiB string", append(append([]byte(`{"data":`), big...), '}'), big, true},
		{"rejects a 1 MiB string one byte short", append(append([]byte(`{"data":`), big[:len(big)-2]...), '"', '}'), big, false},
		{"rejects a 1 MiB string with other bytes at its end", append(append([]byte(`{"data":`), corrupt...), '}'), big, false},
		{"rejects another small value of the same length", []byte(`{"data":"agentLS"}`), []byte(`"agentls"`), false},
		{"rejects a result without data", []byte(`{"other":"agentls"}`), []byte(`"agentls"`), false},
		{"rejects a result that is not an object", []byte(`"agentls"`), []byte(`"agentls"`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkEcho(tt.result, tt.sent)
			if tt.ok && err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if !tt.ok && !errors.Is(err, errEcho) {
				t.Fatalf("error %v, want errEcho", err)
			}
		})
	}
}

func TestPayloadIsAPlainJSONStringOfTheSize(t *testing.T) {
	p := payload(1 << 20)
	if len(p) != 1<<20+2 || p[0] != '"' || p[len(p)-1] != '"' {
		t.Fatalf("payload has %d bytes, want a quoted string of %d", len(p), 1<<20)
	}
	if bytes.ContainsAny(p[1:len(p)-1], "\"\\") {
		t.Fatal("payload holds a character an encoder would escape")
	}
}

func TestStatistics(t *testing.T) {
	t.Run("the nearest-rank percentile of 100 values is the value at that rank", func(t *testing.T) {
		v := make([]time.Duration, 100)
		for i := range v {
			v[i] = time.Duration(i + 1)
		}
		if p := percentile(v, 50); p != 50 {
			t.Errorf("p50 = %d, want 50", p)
		}
		if p := percentile(v, 99); p != 99 {
			t.Errorf("p99 = %d, want 99", p)
		}
	})
	t.Run("the p99 of few values is the largest", func(t *testing.T) {
		if p := percentile([]time.Duration{1, 2, 3}, 99); p != 3 {
			t.Errorf("p99 = %d, want 3", p)
		}
	})
	t.Run("the median skips missing values and averages the middle pair", func(t *testing.T) {
		if m := median([]float64{4, math.NaN(), 1, 3, 2}); m != 2.5 {
			t.Errorf("median = %v, want 2.5", m)
		}
		if m := median([]float64{math.NaN()}); !math.IsNaN(m) {
			t.Errorf("median of nothing = %v, want NaN", m)
		}
	})
}

func TestTargetVerdicts(t *testing.T) {
	tests := []struct {
		name     string
		target   target
		v, ratio float64
		want     string
	}{
		{"a ratio at the goal is met", target{figPing, true, 2, false, ""}, 20000, 2, "met"},
		{"a ratio under the goal is missed and shown", target{figPing, true, 3, false, ""}, 1000, 1.26, "missed (1.26x)"},
		{"a value at an inclusive limit is met", target{figSpawn, false, 10, false, ""}, 10, 0.1, "met"},
		{"a value at a strict limit is missed", target{figPingP99, false, 200, true, ""}, 200, 1, "missed by 0%"},
		{"a value over its limit says by how much", target{figRSSIdle, false, 10, false, ""}, 15, 0.3, "missed by 50%"},
		{"a figure not taken has no verdict", target{figRSSIdle, false, 10, false, ""}, math.NaN(), math.NaN(), "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.target.verdict(tt.v, tt.ratio); got != tt.want {
				t.Errorf("verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr bool
	}{
		{"splits on blanks", "node  server.js\t--stdio", []string{"node", "server.js", "--stdio"}, false},
		{"keeps a quoted path with blanks whole", `node "/my repo/server.js"`, []string{"node", "/my repo/server.js"}, false},
		{"keeps single-quoted text literally", `sh -c 'echo "$HOME" \x'`, []string{"sh", "-c", `echo "$HOME" \x`}, false},
		{"unescapes a backslash-escaped blank", `/my\ repo/agentls serve`, []string{"/my repo/agentls", "serve"}, false},
		{"keeps an empty quoted word", `prog ""`, []string{"prog", ""}, false},
		{"rejects an unterminated quote", `node "server.js`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitCommand(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !slices.Equal(got, tt.want) {
				t.Fatalf("splitCommand(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPairedRatio(t *testing.T) {
	samples := func(vals ...float64) []sample {
		out := make([]sample, len(vals))
		for i, v := range vals {
			out[i] = newSample()
			out[i][figPing] = v
		}
		return out
	}
	t.Run("is the median of the ratios of each round, not the ratio of the medians", func(t *testing.T) {
		r := &results{samples: [][]sample{samples(10, 20, 30), samples(30, 10, 90)}, baseline: 0}
		if got := r.pairedRatio(1, figPing); got != 3 {
			t.Errorf("paired ratio = %v, want 3 (ratios 3, 0.5, 3)", got)
		}
	})
	t.Run("pairs only the rounds both servers finished", func(t *testing.T) {
		r := &results{samples: [][]sample{samples(10, 10, 10), samples(20)}, baseline: 0}
		if got := r.pairedRatio(1, figPing); got != 2 {
			t.Errorf("paired ratio = %v, want 2", got)
		}
	})
	t.Run("is missing without a baseline", func(t *testing.T) {
		r := &results{samples: [][]sample{samples(10)}, baseline: -1}
		if got := r.pairedRatio(0, figPing); !math.IsNaN(got) {
			t.Errorf("paired ratio = %v, want NaN", got)
		}
	})
}
