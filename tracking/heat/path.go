package heat

import (
	"path"
	"strings"
)

// DefaultIgnore are the folder names whose contents are never tracked:
// dependencies, version control and build output.
var DefaultIgnore = []string{
	"node_modules", ".git", ".hg", ".svn", "dist", "build", "out", "target",
	"__pycache__", ".next", ".venv",
}

// normalize turns a workspace-relative path into the canonical form of the
// contract (slash-separated, cleaned, no leading "./") and reports whether it
// may be tracked: absolute paths, paths that leave the workspace and paths
// under an ignored folder may not.
func normalize(p string, ignore map[string]bool) (string, bool) {
	p = strings.ReplaceAll(p, `\`, "/")
	if p == "" || strings.HasPrefix(p, "/") || (len(p) >= 2 && p[1] == ':') {
		return "", false
	}
	c := path.Clean(p)
	if c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	for seg := range strings.SplitSeq(c, "/") {
		if ignore[seg] {
			return "", false
		}
	}
	return c, true
}
