package editing

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/bmatcuk/doublestar/v4"
)

// walk calls fn with every regular file matching pattern that the agent may
// see, by the name the walk reached it (workspace-relative, before symlinks)
// and where it really is. Every entry the walk touches is judged as
// read_file judges a path (walkFS): the walk never enters, reads or returns
// anything outside the workspace, in .git, in a denied zone, or ignored.
func (w *Workspace) walk(ctx context.Context, pattern string, fn func(rel string, real Path) error) error {
	fsys := newWalkFS(w)
	err := doublestar.GlobWalk(fsys, pattern, func(rel string, _ fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		// The entry GlobWalk hands over may come from a Stat of a name it
		// built itself: judge the name, whatever its origin.
		e := fsys.lookup(rel)
		if !e.visible || !e.regular {
			return nil
		}
		return fn(rel, e.real)
	}, doublestar.WithFilesOnly())
	if errors.Is(err, errStopWalk) {
		return nil
	}
	return err
}

// walkFS is the workspace as a walk may see it: an fs.FS whose every
// operation judges the name it is given, so GlobWalk (which follows
// symlinks) only ever reaches what the agent could read_file.
//
// Each entry is judged once per walk, by its workspace-relative name:
//   - its parent must be visible (so nothing below a hidden directory is
//     ever looked at);
//   - a symlink is resolved by Workspace.resolveAbs, the resolver of every
//     file tool (Resolve parses an agent's path and calls it); an entry that is not a symlink is where its resolved parent
//     directory is, plus its name;
//   - the resolved path must be in the workspace, and neither it nor the name
//     in .git; then Workspace.refusal, which read_file's Access also applies,
//     judges both against the zones;
//   - a symlinked directory is entered only when it does not lead to a
//     directory the walk is inside (a loop), and only the first time the walk
//     meets its target through a symlink, which bounds a walk by the size of
//     the tree times the number of link targets;
//   - the .gitignore rules (read only from files inside the workspace) hide
//     it by its name.
//
// Directories are read, and files stated, at their resolved path, never by
// their name. A walkFS serves one walk and is not safe for concurrent use.
type walkFS struct {
	w      *Workspace
	ig     *ignorer
	seen   map[string]*walkEntry // by workspace-relative name
	linked map[string]bool       // resolved directories entered through a symlink
}

// walkEntry is the verdict on one name.
type walkEntry struct {
	parent  *walkEntry
	real    Path // resolved; zero when refused before resolving
	visible bool
	dir     bool
	regular bool
	linked  bool        // reached through a symlink: real is not the parent's plus the name
	info    fs.FileInfo // of real, when already known
}

func newWalkFS(w *Workspace) *walkFS {
	f := &walkFS{w: w, seen: map[string]*walkEntry{}, linked: map[string]bool{}}
	f.seen["."] = &walkEntry{real: Path{Rel: ".", Abs: w.root, URI: fileuri.FromPath(w.root)}, visible: true, dir: true}
	f.ig = newIgnorer(f.source, f.configured)
	return f
}

// hiddenEntry is the verdict on a name the walk may not look at.
var hiddenEntry = &walkEntry{}

// lookup returns the verdict on a workspace-relative slash name, judging
// its parents first.
func (f *walkFS) lookup(name string) *walkEntry {
	if e := f.seen[name]; e != nil {
		return e
	}
	if !fs.ValidPath(name) {
		return hiddenEntry
	}
	parent := f.lookup(path.Dir(name))
	e := f.judge(parent, name, nil)
	f.seen[name] = e
	return e
}

// judge decides on name, an entry of the directory parent. d is its entry
// as the directory listed it, nil when unknown.
func (f *walkFS) judge(parent *walkEntry, name string, d fs.DirEntry) *walkEntry {
	e := f.resolve(parent, name, d)
	if !e.visible {
		return e
	}
	if f.ig.ignored(name, e.dir) || (e.dir && e.linked && f.loops(parent, e.real)) {
		e.visible = false
	}
	return e
}

// resolve judges name by containment, .git and the zones, not by ignore
// files (which it serves to read). info is set when name was a symlink or d
// was nil (resolved and stated here).
func (f *walkFS) resolve(parent *walkEntry, name string, d fs.DirEntry) *walkEntry {
	if !parent.visible || !parent.dir || inGit(name) {
		return hiddenEntry
	}
	e := &walkEntry{parent: parent}
	base := path.Base(name)
	abs := filepath.Join(parent.real.Abs, base)
	if d != nil && d.Type()&fs.ModeSymlink == 0 {
		e.real = Path{Rel: joinRel(parent.real.Rel, base), Abs: abs} // no URI: walks need none
		e.dir, e.regular = d.IsDir(), d.Type().IsRegular()
	} else {
		// The name as the directory holds it: Resolve would read blanks
		// and backslashes in it as an agent's spelling.
		rp, err := f.w.resolveAbs(abs, name)
		if err != nil {
			return hiddenEntry
		}
		fi, err := os.Stat(rp.Abs)
		if err != nil {
			return hiddenEntry
		}
		e.real, e.info, e.linked = rp, fi, rp.Abs != abs
		e.dir, e.regular = fi.IsDir(), fi.Mode().IsRegular()
	}
	if inGit(e.real.Rel) || f.w.refusal(e.real, name, false, nil) != "" {
		return hiddenEntry
	}
	e.visible = true
	return e
}

// loops reports whether walking into the directory real, reached from
// parent through a symlink, would repeat a walk: real is a directory the walk
// is inside, or one already entered through a symlink. It records real.
func (f *walkFS) loops(parent *walkEntry, real Path) bool {
	for p := parent; p != nil; p = p.parent {
		if p.real.Abs == real.Abs {
			return true
		}
	}
	if f.linked[real.Abs] {
		return true
	}
	f.linked[real.Abs] = true
	return false
}

// source reads an ignore file of the walk (rel: workspace-relative, in a
// visible directory): only from inside the workspace, where the zones allow
// it, a regular file of at most 1 MiB. Anything else reads as empty.
func (f *walkFS) source(rel string) []byte {
	dir := f.lookup(path.Dir(rel))
	if !dir.visible || !dir.dir {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(dir.real.Abs, path.Base(rel)))
	if err != nil {
		return nil
	}
	e := f.resolve(dir, rel, fs.FileInfoToDirEntry(fi))
	return readSmall(e)
}

// configured reads a file git's configuration names for the walk's
// ignore rules (".git/config", ".git/info/exclude", core.excludesFile's
// value: relative to the workspace root, or absolute): only when it
// resolves inside the workspace. The zones do not apply: the walk reads it
// to hide files, it never shows it.
func (f *walkFS) configured(p string) []byte {
	abs := filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(f.w.root, p)
	}
	if _, err := os.Lstat(abs); err != nil {
		return nil // most repositories have no .git/info/exclude: say so at one call
	}
	rp, err := f.w.resolveAbs(abs, p)
	if err != nil {
		return nil
	}
	fi, err := os.Stat(rp.Abs)
	if err != nil {
		return nil
	}
	return readSmall(&walkEntry{real: rp, visible: true, regular: fi.Mode().IsRegular(), info: fi})
}

// readSmall reads a visible regular file of at most 1 MiB; anything else
// reads as empty.
func readSmall(e *walkEntry) []byte {
	if !e.visible || !e.regular {
		return nil
	}
	if e.info == nil {
		fi, err := os.Stat(e.real.Abs)
		if err != nil {
			return nil
		}
		e.info = fi
	}
	if e.info.Size() > 1<<20 {
		return nil
	}
	b, _, err := contain.ReadRegular(e.real.Abs, 1<<20)
	if err != nil {
		return nil
	}
	return b
}

// inGit reports whether a workspace-relative slash path is .git or in it,
// at any depth.
func inGit(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git/") || strings.Contains(rel, "/.git/") || strings.HasSuffix(rel, "/.git")
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

func (f *walkFS) Open(name string) (fs.File, error) {
	e := f.lookup(name)
	if !e.visible {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return os.Open(e.real.Abs)
}

func (f *walkFS) Stat(name string) (fs.FileInfo, error) {
	e := f.lookup(name)
	if !e.visible {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	if e.info == nil {
		fi, err := os.Stat(e.real.Abs)
		if err != nil {
			return nil, err
		}
		e.info = fi
	}
	return namedInfo{e.info, path.Base(name)}, nil
}

// ReadDir lists the visible entries of a visible directory, read at its
// resolved path, sorted by name.
func (f *walkFS) ReadDir(name string) ([]fs.DirEntry, error) {
	e := f.lookup(name)
	if !e.visible || !e.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	ents, err := os.ReadDir(e.real.Abs)
	if err != nil {
		return nil, err
	}
	out := ents[:0]
	for _, d := range ents {
		rel := joinRel(name, d.Name())
		c := f.seen[rel]
		if c == nil {
			c = f.judge(e, rel, d)
			f.seen[rel] = c
		}
		if c.visible {
			out = append(out, d)
		}
	}
	return out, nil
}

// namedInfo is a FileInfo under the name the walk reached it by.
type namedInfo struct {
	fs.FileInfo
	name string
}

func (n namedInfo) Name() string { return n.name }

var _ interface {
	fs.ReadDirFS
	fs.StatFS
} = (*walkFS)(nil)
