// Package fileuri converts between local paths and the file:// URIs of LSP,
// the one place agentls does so. It stands on go.lsp.dev/uri, which follows
// vscode-uri, the reference the editors follow: every character that is not
// plain in a path is percent-encoded, so a directory named "c#proj 100%done"
// is file:///…/c%23proj%20100%25done and reads back as itself, and a Windows
// drive path C:\x is file:///c%3A/x.
//
// Reading a URI is as lenient as vscode-uri where that is unambiguous (a "%"
// not followed by two hex digits is a plain "%"; "localhost" names this
// machine) and strict where a lenient reading would name another file: a
// query or a fragment (an unescaped "?" or "#"), another host, another
// scheme or a NUL byte is an error that says so.
//
// Two paths do not survive the round trip. One that is not valid UTF-8:
// URIs carry text. And, on POSIX, a directory at the root whose name is a
// letter and a colon ("/C:"), which is written with the letter in lower
// case, as VS Code writes a drive.
//
// The functions are pure and safe for concurrent use.
package fileuri

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"

	"go.lsp.dev/uri"
)

// FromPath returns the file:// URI of path. A relative path is made
// absolute against the working directory first; the path is cleaned.
func FromPath(path string) string {
	if !filepath.IsAbs(path) {
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
	}
	// A clean absolute path never starts with "//" on POSIX, and a UNC
	// path's host becomes the authority: uri.File cannot fail on it.
	return string(uri.File(filepath.Clean(path)))
}

// ToPath returns the local path a file:// URI names, cleaned, with the
// platform's separators.
func ToPath(s string) (string, error) {
	u, err := uri.ParseStrict(s)
	if err != nil {
		return "", fmt.Errorf("%q is not a URI: %w", s, err)
	}
	c := u.Components()
	switch {
	case !strings.EqualFold(c.Scheme, "file"):
		return "", fmt.Errorf("%q is not a file:// URI", s)
	case c.Authority != "" && !strings.EqualFold(c.Authority, "localhost"):
		return "", fmt.Errorf("%q names a file on host %q, not on this machine", s, c.Authority)
	case c.Fragment != "" || strings.Contains(s, "#"):
		return "", fmt.Errorf("%q has a fragment (#%s): a \"#\" in a file name is written %%23", s, c.Fragment)
	case c.Query != "" || strings.Contains(s, "?"):
		return "", fmt.Errorf("%q has a query (?%s): a \"?\" in a file name is written %%3F", s, c.Query)
	case strings.ContainsRune(c.Path, 0):
		return "", fmt.Errorf("%q names a path with a NUL byte", s)
	}
	if runtime.GOOS != "windows" {
		// The path of a file URI is the file's path: "/c:/x" is a
		// directory named "c:", not a drive.
		return filepath.Clean(c.Path), nil
	}
	local, err := uri.From(uri.Components{Scheme: "file", Path: c.Path})
	if err != nil {
		return "", fmt.Errorf("%q is not a file:// URI: %w", s, err)
	}
	return filepath.Clean(local.FsPath()), nil
}
