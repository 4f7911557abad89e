package fileuri

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFromPath(t *testing.T) {
	cases := []struct{ name, path, want string }{
		{"escapes a # so that it is not a fragment", "/w/c#proj", "file:///w/c%23proj"},
		{"escapes a % so that it is not an escape", "/w/100%done", "file:///w/100%25done"},
		{"escapes a space", "/w/c#proj 100%done/a.go", "file:///w/c%23proj%20100%25done/a.go"},
		{"escapes a ? so that it is not a query", "/w/a?b", "file:///w/a%3Fb"},
		{"writes non-ASCII names as UTF-8 escapes", "/w/naïve/ü.go", "file:///w/na%C3%AFve/%C3%BC.go"},
		{"cleans the path", "/w/./a/../b/", "file:///w/b"},
		{"names the root", "/", "file:///"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := FromPath(c.path); got != c.want {
				t.Errorf("FromPath(%q) = %q, want %q", c.path, got, c.want)
			}
		})
	}
}

func TestFromPathOfADrivePath(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("C:/x is a drive path on Windows only")
	}
	// Not file://C:/x, whose host would be "C:".
	if got, want := FromPath(`C:\x`), "file:///c%3A/x"; got != want {
		t.Errorf("FromPath(C:\\x) = %q, want %q", got, want)
	}
}

func TestToPath(t *testing.T) {
	cases := []struct{ name, uri, want string }{
		{"decodes an escaped #", "file:///w/c%23proj", "/w/c#proj"},
		{"decodes an escaped % and space", "file:///w/c%23proj%20100%25done/a.go", "/w/c#proj 100%done/a.go"},
		{"keeps a % that starts no escape, as some clients send it", "file:///w/100%done", "/w/100%done"},
		{"decodes UTF-8 escapes", "file:///w/na%C3%AFve", "/w/naïve"},
		{"accepts localhost as this machine", "file://localhost/w/x", "/w/x"},
		{"accepts an upper-case scheme", "FILE:///w/x", "/w/x"},
		{"cleans the path", "file:///w/./a/../b/", "/w/b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ToPath(c.uri)
			if want := filepath.FromSlash(c.want); err != nil || got != want {
				t.Errorf("ToPath(%q) = %q, %v; want %q", c.uri, got, err, want)
			}
		})
	}
}

func TestToPathOfADrivePath(t *testing.T) {
	want := "/c:/x" // on POSIX, a directory named "c:"
	if runtime.GOOS == "windows" {
		want = `c:\x`
	}
	for _, u := range []string{"file:///c%3A/x", "file:///C:/x"} {
		if got, err := ToPath(u); err != nil || got != want {
			t.Errorf("ToPath(%q) = %q, %v; want %q", u, got, err, want)
		}
	}
}

func TestToPathRefuses(t *testing.T) {
	cases := []struct{ name, uri, says string }{
		{"an unescaped # that would cut the name at a fragment", "file:///w/c#proj", "%23"},
		{"an unescaped ? that would cut the name at a query", "file:///w/a?b", "%3F"},
		{"another scheme", "https://example.com/x", "not a file://"},
		{"a file on another host", "file://server/share/x", `host "server"`},
		{"a drive letter written as the host", "file://C:/x", `host "c:"`},
		{"a path without a scheme", "w/x", "not a URI"},
		{"an empty string", "", "not a URI"},
		{"a NUL byte", "file:///w/a%00b", "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ToPath(c.uri)
			if err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("ToPath(%q) = %q, %v; want an error saying %q", c.uri, got, err, c.says)
			}
		})
	}
}

func FuzzFileURIRoundTrip(f *testing.F) {
	for _, p := range []string{"/w/c#proj 100%done", "/a?b/%41", "/ü/😀", "//x", "/"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if !utf8.ValidString(p) || strings.ContainsRune(p, 0) || !strings.HasPrefix(p, "/") {
			t.Skip("paths are absolute text without NUL")
		}
		want := filepath.Clean(p)
		if len(want) >= 3 && want[2] == ':' && 'A' <= want[1] && want[1] <= 'Z' {
			// "/C:" is written as VS Code writes a drive, in lower case.
			want = "/" + strings.ToLower(want[1:2]) + want[2:]
		}
		u := FromPath(p)
		got, err := ToPath(u)
		if err != nil || got != want {
			t.Fatalf("ToPath(FromPath(%q) = %q) = %q, %v; want %q", p, u, got, err, want)
		}
	})
}
