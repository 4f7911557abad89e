package shell

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath resolves the program a child process runs, never through a
// directory a repository may have written: a name with a separator must be
// an absolute path (a relative one would be resolved against the child's
// working directory), and a bare name is looked up in this process's PATH,
// whose relative entries (".", "node_modules/.bin") are refused, as Go's
// exec.ErrDot refuses them.
func LookPath(name string) (string, error) {
	if strings.ContainsAny(name, `/\`) {
		if !filepath.IsAbs(name) {
			return "", fmt.Errorf("%q is a relative path: name the program by its absolute path, or by a name found in PATH", name)
		}
		return name, nil
	}
	p, err := exec.LookPath(name)
	if errors.Is(err, exec.ErrDot) {
		return "", fmt.Errorf("%q is found only through a relative entry of PATH, which agentls does not follow: %w", name, err)
	}
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q resolves to the relative path %s, which agentls does not follow", name, p)
	}
	return p, nil
}
