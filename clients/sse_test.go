package clients

import (
	"errors"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	type event struct{ name, data string }
	cases := []struct {
		name   string
		stream string
		want   []event
	}{
		{"reads one event per blank line", "data: a\n\ndata: b\n\n", []event{{"", "a"}, {"", "b"}}},
		{"skips comments and keep-alives", ": keep-alive\n\n:ping\ndata: a\n: between\n\n", []event{{"", "a"}}},
		{"joins data lines with a newline", "data: {\"a\":\ndata: 1}\n\n", []event{{"", "{\"a\":\n1}"}}},
		{"names an event by its event field", "event: message_start\ndata: x\n\nevent: ignored without data\n\ndata: y\n\n",
			[]event{{"message_start", "x"}, {"", "y"}}},
		{"takes off one space after the colon, no more", "data:a\n\ndata:  b\n\n", []event{{"", "a"}, {"", " b"}}},
		{"ends lines at CRLF and at a CR alone", "data: a\r\n\r\ndata: b\r\rdata: c\r\n\r\n", []event{{"", "a"}, {"", "b"}, {"", "c"}}},
		{"ignores id, retry and unknown fields", "id: 3\nretry: 10\nfoo: bar\ndata: a\n\n", []event{{"", "a"}}},
		{"drops an event the body ends before its blank line", "data: a\n\ndata: cut", []event{{"", "a"}}},
		{"keeps an empty data line as an empty line of the data", "data:\ndata: a\n\n", []event{{"", "\na"}}},
		{"reads an empty body as no event", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sr := newSSEReader(strings.NewReader(tc.stream))
			var got []event
			for sr.next() {
				got = append(got, event{sr.name(), string(sr.bytes())})
			}
			if err := sr.failed(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("events = %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("event %d = %q, want %q", i, got[i], tc.want[i])
				}
			}
		})
	}
	t.Run("refuses an event longer than its bound, in lines or in one line", func(t *testing.T) {
		line := "data: " + strings.Repeat("x", 1<<20) + "\n"
		for name, stream := range map[string]string{
			"lines":    strings.Repeat(line, maxEventBytes>>20+1) + "\n",
			"one line": "data: " + strings.Repeat("x", maxEventBytes+1) + "\n\n",
		} {
			sr := newSSEReader(strings.NewReader(stream))
			if sr.next() {
				t.Errorf("%s: an event of %d bytes was read", name, len(sr.bytes()))
			}
			if !errors.Is(sr.failed(), errEventTooLarge) {
				t.Errorf("%s: err = %v", name, sr.failed())
			}
		}
	})
}
