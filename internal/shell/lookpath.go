package shell

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath resolves the program a child process runs, never through a
// directory a repository may have written: a name with a separator must be
// an absolute path (a relative one would be resolved against the child's
// working directory), and a bare name is looked up in the absolute entries
// of this process's PATH, in order. Its relative entries (".", "",
// "node_modules/.bin") are skipped: they name whatever directory this
// process runs in, often the workspace. On Windows the current directory,
// which Windows searches before PATH, is not searched either.
func LookPath(name string) (string, error) {
	return lookPath(name, os.Getenv("PATH"))
}

func lookPath(name, path string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		if !filepath.IsAbs(name) {
			return "", fmt.Errorf("%q is a relative path: name the program by its absolute path, or by a name found in PATH", name)
		}
		return name, nil
	}
	skipped := false
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			skipped = true
			continue
		}
		// exec.LookPath of a path tries it as it is (and with PATHEXT's
		// extensions on Windows), searching no directory.
		p, err := exec.LookPath(filepath.Join(dir, name))
		if err == nil {
			return p, nil
		}
	}
	if skipped {
		return "", fmt.Errorf("%q is not found in the absolute entries of PATH (its relative entries are not searched): %w", name, exec.ErrNotFound)
	}
	return "", fmt.Errorf("%q is not found in PATH: %w", name, exec.ErrNotFound)
}
