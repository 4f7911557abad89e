package editing

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing/editingtest"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/internal/fileuri"
)

// The user's files are held to the hostile table as an agent's reads are,
// but a refusal is the person's: the observer hears of none.
func TestUserFilesAreRefusedAsAnAgentsReads(t *testing.T) {
	e, h := hostileEnv(t)
	for _, c := range h.Cases {
		if c.Write {
			continue // the user's files are read, never written
		}
		t.Run(c.Name, func(t *testing.T) {
			_, text, err := e.ws.UserFile(context.Background(), c.Path, 0)
			if want := refusalErr[c.Want]; !errors.Is(err, want) {
				t.Fatalf("UserFile(%q) = %q, %v; want an error wrapping %v", c.Path, text, err, want)
			}
			if !strings.Contains(err.Error(), c.Reason) {
				t.Errorf("UserFile(%q) = %q; want it to say %q", c.Path, err, c.Reason)
			}
			if _, data, err := e.ws.UserImage(c.Path, 1<<20); !errors.Is(err, refusalErr[c.Want]) || strings.Contains(string(data), editingtest.Secret) {
				t.Errorf("UserImage(%q) = %q, %v", c.Path, data, err)
			}
		})
	}
	if len(e.obs.blocked) != 0 {
		t.Errorf("the observer heard of the user's refusals: %q", e.obs.blocked)
	}
}

func TestUserFile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, headlessCaps(), "apply", zonesDeny("private/**"), map[string]string{
		"main.go":        "package main\n",
		"bin.dat":        "PK\x03\x04\x00\x00binary",
		"dir/x.txt":      "x\n",
		"private/key.go": "secret\n",
	})
	t.Run("reads the open buffer with its unsaved edits", func(t *testing.T) {
		e.ed.OpenBuffer(filepath.Join(e.ws.Root(), "main.go"), "package main // unsaved\n")
		defer e.ed.CloseBuffer(filepath.Join(e.ws.Root(), "main.go"))
		p, text, err := e.ws.UserFile(ctx, "main.go", 0)
		if err != nil || p.Rel != "main.go" || text != "package main // unsaved\n" {
			t.Fatalf("UserFile = %+v, %q, %v", p, text, err)
		}
	})
	t.Run("takes a file URI", func(t *testing.T) {
		p, _, err := e.ws.UserFile(ctx, fileuri.FromPath(filepath.Join(e.ws.Root(), "dir", "x.txt")), 0)
		if err != nil || p.Rel != "dir/x.txt" {
			t.Fatalf("UserFile = %+v, %v", p, err)
		}
	})
	for _, c := range []struct {
		name, path string
		want       error
	}{
		{"refuses a file that is not there", "gone.go", ErrNotFound},
		{"refuses a directory", "dir", ErrIsDir},
		{"refuses a file that is not text", "bin.dat", ErrBinary},
		{"refuses a file in a denied zone", "private/key.go", ErrBlocked},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := e.ws.UserFile(ctx, c.path, 0); !errors.Is(err, c.want) {
				t.Errorf("UserFile(%q) = %v, want %v", c.path, err, c.want)
			}
		})
	}
}

func TestUserImage(t *testing.T) {
	e := newEnv(t, headlessCaps(), "apply", zonesDeny("private/**"), map[string]string{
		"shot.png":         "\x89PNG\r\n\x1a\n0123456789",
		"private/shot.png": "\x89PNG\r\n\x1a\n",
	})
	t.Run("reads the bytes from the disk", func(t *testing.T) {
		p, data, err := e.ws.UserImage("shot.png", 100)
		if err != nil || p.Rel != "shot.png" || string(data) != "\x89PNG\r\n\x1a\n0123456789" {
			t.Fatalf("UserImage = %+v, %q, %v", p, data, err)
		}
	})
	t.Run("refuses a file larger than the bound before reading it", func(t *testing.T) {
		if _, data, err := e.ws.UserImage("shot.png", 10); !errors.Is(err, ErrTooLarge) || data != nil || !strings.Contains(err.Error(), "18 bytes, more than 10") {
			t.Errorf("UserImage = %q, %v", data, err)
		}
	})
	t.Run("refuses one in a denied zone", func(t *testing.T) {
		if _, _, err := e.ws.UserImage("private/shot.png", 100); !errors.Is(err, ErrBlocked) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestUserPaths(t *testing.T) {
	e := newEnv(t, headlessCaps(), "apply", zonesDeny("private/**"), map[string]string{
		"main.go":        "package main\n",
		"cmd/run/run.go": "package run\n",
		"docs/A B.md":    "x\n",
		"private/key.go": "secret\n",
		"README":         "r\n",
	})
	if err := os.Symlink("/etc/passwd", filepath.Join(e.ws.Root(), "out.txt")); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(e.ws.Root(), "main.go")
	cases := []struct {
		name, text string
		want       []string
	}{
		{"finds a path named in a sentence", "Fix the bug in main.go, please.", []string{"main.go"}},
		{"strips backquotes, brackets and a line number", "See (`cmd/run/run.go:12:4`) and [main.go]", []string{"cmd/run/run.go", "main.go"}},
		{"takes an absolute path and a file URI", abs + " " + fileuri.FromPath(abs), []string{"main.go"}},
		{"names each file once, in the order named", "main.go then ./main.go again", []string{"main.go"}},
		{"leaves out files that do not exist", "Create greet.go next to main.go", []string{"main.go"}},
		{"leaves out a denied zone", "Look at private/key.go", nil},
		{"leaves out a symlink out of the workspace", "Read out.txt", nil},
		{"leaves out directories", "Everything under cmd/run is old", nil},
		{"leaves out URLs", "As https://example.com/main.go says", nil},
		{"leaves out words without a dot or a slash", "Update the README", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := e.ws.UserPaths(c.text, 10); !slices.Equal(got, c.want) {
				t.Errorf("UserPaths(%q) = %q, want %q", c.text, got, c.want)
			}
		})
	}
	t.Run("stops at the bound", func(t *testing.T) {
		if got := e.ws.UserPaths("main.go cmd/run/run.go", 1); !slices.Equal(got, []string{"main.go"}) {
			t.Errorf("got %q", got)
		}
	})
}

func headlessCaps() api.Caps { return headlesstest.AllCaps() }

func zonesDeny(globs ...string) api.Zones {
	return api.Zones{Allow: []string{"**"}, Deny: append([]string{"**/.git/**"}, globs...)}
}
