package editing

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/agentls/agentls/internal/contain"
)

// The user's files: what a person gives or names when asking for a change
// (agent/run's attachments, the paths its prompt names). They are judged as
// an agent's reads are, by the workspace root, the symlinks on the way and
// the zones; but a refusal is the person's mistake, not an agent's: it is
// returned, and not reported to the observer as a blocked access.

// userCheck resolves p and checks it as an agent's read is checked.
func (w *Workspace) userCheck(p string) (Path, error) {
	rp, err := w.Resolve(p)
	if err != nil {
		return Path{}, err
	}
	lex, _ := lexicalRel(w.root, p)
	if reason := w.refusal(rp, lex, false, nil); reason != "" {
		return Path{}, &BlockedError{Path: rp.Rel, Reason: reason}
	}
	return rp, nil
}

// UserFile reads a text file the user attached as the editor has it (the
// open buffer with its unsaved edits, else the disk), with the checks of an
// agent's read: outside the workspace, in a denied zone, missing, a
// directory, not a regular file or not text, it is refused with an error
// wrapping ErrOutside, ErrBadPath, ErrBlocked, ErrNotFound, ErrIsDir or
// ErrBinary. A file of more than maxBytes on the disk (0: the workspace's
// FileBytes) is refused (ErrTooLarge) before it is read.
func (w *Workspace) UserFile(ctx context.Context, p string, maxBytes int64) (Path, string, error) {
	rp, err := w.userCheck(p)
	if err != nil {
		return Path{}, "", err
	}
	if maxBytes > 0 {
		fi, err := os.Stat(rp.Abs)
		if err == nil && fi.Mode().IsRegular() && fi.Size() > maxBytes {
			return Path{}, "", &SizeError{Path: rp.Rel, Size: fi.Size(), Max: maxBytes}
		}
	}
	text, exists, err := w.current(ctx, rp)
	if err != nil {
		return Path{}, "", err
	}
	if !exists {
		return Path{}, "", fmt.Errorf("%w: %s", ErrNotFound, rp.Rel)
	}
	return rp, text, nil
}

// UserImage reads an image file the user attached, from the disk (the
// editor's agent/readFile carries text), with the checks of UserFile; a
// file of more than maxBytes is refused (ErrTooLarge) without being read.
func (w *Workspace) UserImage(p string, maxBytes int64) (Path, []byte, error) {
	rp, err := w.userCheck(p)
	if err != nil {
		return Path{}, nil, err
	}
	// Judged before it is opened (a FIFO would block the open), and no
	// more than the bound read, were it to grow meanwhile.
	data, size, err := contain.ReadRegular(rp.Abs, maxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Path{}, nil, fmt.Errorf("%w: %s", ErrNotFound, rp.Rel)
	case errors.Is(err, contain.ErrTooLarge):
		return Path{}, nil, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrTooLarge, rp.Rel, size, maxBytes)
	case errors.Is(err, contain.ErrNotRegular):
		if fi, serr := os.Stat(rp.Abs); serr == nil && fi.IsDir() {
			return Path{}, nil, fmt.Errorf("%w: %s is a directory", ErrIsDir, rp.Rel)
		}
		return Path{}, nil, fmt.Errorf("%w: %s is not a regular file", ErrBadPath, rp.Rel)
	case err != nil:
		return Path{}, nil, fmt.Errorf("%s: %w", rp.Rel, err)
	}
	return rp, data, nil
}

// pathWord is a word that may name a file: it holds a "/" or a "." that
// is neither its first nor its last character (main.go, cmd/x, ./a).
var pathWord = regexp.MustCompile(`^(\./)?[^\s]*[^.\s][./][^\s]*[^.\s]$`)

// lineSuffix is the ":12" or ":12:5" people put after a path.
var lineSuffix = regexp.MustCompile(`(:\d+){1,2}$`)

// UserPaths returns the workspace files text names: the words that,
// stripped of quotes, brackets, backquotes, trailing punctuation and a
// :line suffix, are the path (workspace-relative or absolute, or a file://
// URI) of a regular file in the workspace that the zones allow. At most
// max, each once, in the order named.
func (w *Workspace) UserPaths(text string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, word := range strings.Fields(text) {
		if len(out) >= max {
			break
		}
		word = strings.Trim(word, "\"'`()[]{}<>,;!?*")
		word = strings.TrimRight(word, ".:")
		word = lineSuffix.ReplaceAllString(word, "")
		if len(word) > 4096 || !pathWord.MatchString(word) && !strings.HasPrefix(word, "file://") {
			continue
		}
		if strings.Contains(word, "://") && !strings.HasPrefix(word, "file://") {
			continue // a URL
		}
		rp, err := w.userCheck(word)
		if err != nil || rp.Rel == "." || seen[rp.Rel] {
			continue
		}
		if fi, err := os.Stat(rp.Abs); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		seen[rp.Rel] = true
		out = append(out, rp.Rel)
	}
	return out
}
