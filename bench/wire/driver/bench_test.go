package main

import (
	"bytes"
	"io"
	"testing"
)

// The driver's own cost per message, to show it is far below any server's.

func BenchmarkWriteCall(b *testing.B) {
	c := newConn(bytes.NewReader(nil), io.Discard)
	k := pingCall(pingData)
	b.ReportAllocs()
	for i := range b.N {
		if err := c.writeCall(int64(i), k); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.flush(); err != nil {
		b.Fatal(err)
	}
}

// replyStream is n frames of the reply to agent/ping carrying data.
func replyStream(n int, data []byte) []byte {
	body := append(append([]byte(`{"jsonrpc":"2.0","id":123456,"result":{"data":`), data...), `}}`...)
	var s bytes.Buffer
	for range n {
		s.WriteString("Content-Length: ")
		s.WriteString(itoa(len(body)))
		s.WriteString("\r\n\r\n")
		s.Write(body)
	}
	return s.Bytes()
}

func itoa(n int) string { return string(appendInt(nil, n)) }

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// benchmarkReadReply reads, scans and checks one reply per iteration.
func benchmarkReadReply(b *testing.B, data []byte) {
	batch := max(1, min(64, (4<<20)/len(data)))
	stream := replyStream(batch, data)
	r := bytes.NewReader(stream)
	c := newConn(r, io.Discard)
	b.SetBytes(int64(len(stream) / batch))
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%batch == 0 {
			r.Reset(stream)
		}
		body, err := c.readFrame()
		if err != nil {
			b.Fatal(err)
		}
		m, err := scanMessage(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := checkEcho(m.result, data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadReplyPing(b *testing.B) { benchmarkReadReply(b, pingData) }
func BenchmarkReadReply1MiB(b *testing.B) { benchmarkReadReply(b, payload(1<<20)) }
