package shell

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestOutput(t *testing.T) {
	write := func(o *Output, parts ...string) string {
		for _, p := range parts {
			_, _ = o.Write([]byte(p))
		}
		return o.String()
	}
	for _, c := range []struct {
		name       string
		head, tail int
		parts      []string
		want       string
	}{
		{"keeps an output that fits whole", 4, 4, []string{"abc", "def", "gh"}, "abcdefgh"},
		{"keeps the head and the tail around the count of bytes cut", 4, 4, []string{"abcdef", "ghijklmn"}, "abcd" + Marker(6) + "klmn"},
		{"keeps the latest tail across many small writes", 2, 3, []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, "ab" + Marker(5) + "hij"},
		{"ends the head at a line's end near the bound", 8, 8, []string{"one\ntwoXX", strings.Repeat("-", 20), "YYthree\nfour"}, "one\n" + Marker(33) + "four"},
		{"never splits a character at the head", 5, 4, []string{"abcd€", "…………", "wxyz"}, "abcd" + Marker(15) + "wxyz"},
		{"never splits a character at the tail", 4, 5, []string{"abcd", "…………", "€wxyz"}, "abcd" + Marker(15) + "wxyz"},
		{"keeps nothing but the count with no room", 0, 0, []string{"abc"}, Marker(3)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := write(NewOutput(c.head, c.tail), c.parts...); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}

	t.Run("cuts a string as it cuts a stream", func(t *testing.T) {
		s := "FIRST\n" + strings.Repeat("é\n", 50000) + "LAST\n"
		got := Cut(s, 8<<10, 16<<10)
		if !strings.HasPrefix(got, "FIRST\n") || !strings.HasSuffix(got, "\nLAST\n") || !strings.Contains(got, "bytes of output cut here") || len(got) > 24<<10+100 || !utf8.ValidString(got) {
			t.Errorf("Cut gave %d bytes: %.20q…", len(got), got)
		}
		if short := "a\nb\n"; Cut(short, 1, 1) != "a\nb" && Cut(short, 2, 2) != short {
			t.Error("a short output was changed")
		}
	})

	t.Run("takes writes from several goroutines", func(t *testing.T) {
		o := NewOutput(10, 10)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 100 {
					_, _ = o.Write([]byte("xy"))
				}
			})
		}
		wg.Wait()
		if o.Dropped() != 1600-20 {
			t.Errorf("dropped %d", o.Dropped())
		}
	})
}
