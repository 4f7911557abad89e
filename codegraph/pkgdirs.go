package codegraph

import (
	"strings"
	"sync"
)

// pkgDirCache keeps the directories of Go import paths (goPackageDir) for
// one version of the graph: by directory, the module that holds it, and by
// module and import path, the package's directory. A query reads it under
// the graph's read lock, so it has a lock of its own.
type pkgDirCache struct {
	mu      sync.Mutex
	version uint64
	own     map[string]string    // directory -> the directory of its module ("" for none)
	dirs    map[[2]string]string // module directory, import path -> package directory
}

// pkgDirCacheMax bounds the entries kept: past it, the cache starts again.
const pkgDirCacheMax = 1 << 16

// get returns the directory of the Go import path p imported from a file
// of directory dir. g.mu is held (for reading at least).
func (c *pkgDirCache) get(g *Graph, dir, p string) string {
	c.mu.Lock()
	if c.own == nil || c.version != g.version || len(c.own)+len(c.dirs) > pkgDirCacheMax {
		c.version = g.version
		c.own, c.dirs = map[string]string{}, map[[2]string]string{}
	}
	own, ok := c.own[dir]
	if !ok {
		own = g.ownModule(dir)
		c.own[dir] = own
	}
	key := [2]string{own, p}
	found, ok := c.dirs[key]
	c.mu.Unlock()
	if ok {
		return found
	}
	found = g.findPackageDir(&File{dir: dir}, p)
	c.mu.Lock()
	if c.version == g.version {
		c.dirs[key] = found
	}
	c.mu.Unlock()
	return found
}

// ownModule is the directory of the Go module that holds dir (the
// deepest), or "". g.mu is held.
func (g *Graph) ownModule(dir string) string {
	own := ""
	for _, m := range g.modDirs {
		if (m == "." || inDir(dir, m)) && (own == "" || own == "." || len(m) > len(own)) {
			own = m
		}
	}
	return own
}

// inDir reports whether p is dir or below it (both clean and slashed).
func inDir(p, dir string) bool {
	return strings.HasPrefix(p, dir) && (len(p) == len(dir) || p[len(dir)] == '/')
}
