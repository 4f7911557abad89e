// Package contain is agentls's one containment check: every path that is
// read or written on behalf of a workspace (an agent's, an engine's, the
// editor's, agentls's own files kept in it) is held inside its directory
// here, after its symlinks are resolved. Comparing the text of two paths is
// never enough: a repository can ship a symlink, and a workspace can be
// opened through one (macOS's temporary directory, a symlinked home).
//
// A Dir is a directory as it was named and as it really is (symlinks
// resolved). Resolve turns a path into a Path inside the Dir, resolving the
// symlinks of its longest existing prefix and refusing one that leads
// outside or dangles. Within is the lexical test, for paths already
// resolved.
//
// Files agentls keeps in a workspace (the trace, the intent map) are opened
// through NoSymlinks, which refuses a symlink at any component below the
// Dir: a repository that ships `.orchestration -> ~` is refused, not
// followed. ReadRegular reads a file without ever blocking on a FIFO or a
// device and without reading more than it was asked for.
//
// The threat model (docs/SECURITY.md): the repository is hostile content,
// not a process racing agentls; checks are made on the path as it is when
// the access is made.
package contain

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

var (
	// ErrOutside: the path is not inside the directory, as written or
	// where its symlinks lead.
	ErrOutside = errors.New("outside the directory")
	// ErrSymlink: a component of a path that must not be a symlink is one.
	ErrSymlink = errors.New("is a symlink")
	// ErrNotRegular: the path is a directory, a FIFO, a device or a socket,
	// where a regular file was expected.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the bound it was read with.
	ErrTooLarge = errors.New("too large")
)

// Dir is a directory paths are held inside.
type Dir struct {
	real  string // absolute, symlinks resolved
	given string // absolute, as named
}

// New returns the Dir of dir, which must exist and be a directory.
func New(dir string) (*Dir, error) {
	given, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%q is not a directory", dir)
	}
	return &Dir{real: real, given: given}, nil
}

// Path is the directory, absolute, symlinks resolved.
func (d *Dir) Path() string { return d.real }

// Given is the directory as it was named, made absolute.
func (d *Dir) Given() string { return d.given }

// Path is a path resolved inside a Dir.
type Path struct {
	Abs string // absolute, symlinks resolved
	Rel string // relative to the Dir with "/" separators; "." is the Dir
}

// Resolve resolves p, absolute or relative to d, inside d: it is cleaned,
// must be inside d as written (under the real path or the given one), and
// its symlinks (those of its longest existing prefix) must lead inside d
// too. A dangling symlink on the way is refused: its target could be
// anywhere. Errors wrap ErrOutside when p is, or leads, outside.
func (d *Dir) Resolve(p string) (Path, error) {
	if strings.ContainsRune(p, 0) {
		return Path{}, fmt.Errorf("%q contains a NUL byte", p)
	}
	abs := filepath.Clean(p)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(d.real, abs)
	}
	if _, ok := d.Within(abs); !ok {
		return Path{}, &OutsideError{Path: p, Dir: d.given}
	}
	real, err := Real(abs)
	if err != nil {
		return Path{}, err
	}
	rel, ok := Within(d.real, real)
	if !ok {
		return Path{}, &OutsideError{Path: p, Via: real, Dir: d.given}
	}
	return Path{Abs: real, Rel: rel}, nil
}

// OutsideError is Resolve's refusal of a path outside its Dir. It wraps
// ErrOutside.
type OutsideError struct {
	Path string // as given
	Via  string // where its symlinks lead; "" when it is outside as written
	Dir  string // the Dir, as named
}

func (e *OutsideError) Error() string {
	if e.Via != "" {
		return fmt.Sprintf("%s leads through a symlink to %s, outside %s", e.Path, e.Via, e.Dir)
	}
	return fmt.Sprintf("%s is not under %s", e.Path, e.Dir)
}

func (e *OutsideError) Unwrap() error { return ErrOutside }

// Within returns abs relative to d with "/" separators when abs, a clean
// absolute path whose symlinks are resolved, is d or under it: the lexical
// test, for paths that are already real. Under the given path counts too,
// and is answered relative to it.
func (d *Dir) Within(abs string) (string, bool) {
	if rel, ok := Within(d.real, abs); ok {
		return rel, true
	}
	return Within(d.given, abs)
}

// Within returns abs relative to root with "/" separators, or false when
// abs is not root or under it. Both are clean absolute paths; nothing is
// resolved: this is the lexical half of the check, and Dir.Resolve the
// whole of it.
func Within(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Real resolves the symlinks of the longest existing prefix of abs, a clean
// absolute path, and appends the rest. A dangling symlink on the way is an
// error.
func Real(abs string) (string, error) {
	var rest []string
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symlink to a missing target", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// Same reports whether a and b name the same directory once their symlinks
// are resolved (a session's cwd and a workspace's root, say).
func Same(a, b string) bool {
	ra, err := Real(filepath.Clean(a))
	if err != nil {
		return false
	}
	rb, err := Real(filepath.Clean(b))
	if err != nil {
		return false
	}
	return ra == rb
}

// NoSymlinks returns the absolute path of rel (relative to d, "/"
// separators, no "..") after checking that no component of it below d is a
// symlink: for the files agentls keeps in a workspace, where a repository
// could plant a symlink to send a write elsewhere. Components that do not
// exist yet are fine. Errors wrap ErrSymlink or ErrOutside.
func (d *Dir) NoSymlinks(rel string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(rel))
	if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", &OutsideError{Path: rel, Dir: d.given}
	}
	cur := d.real
	if clean == "." {
		return cur, nil
	}
	for _, part := range strings.Split(clean, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			shown, _ := Within(d.real, cur)
			return "", fmt.Errorf("%s %w (in %s); agentls does not follow it", shown, ErrSymlink, d.given)
		}
	}
	return filepath.Join(d.real, clean), nil
}

// MkdirNoSymlinks creates rel (relative to d) and its missing parents with
// perm, refusing a symlink at any component (NoSymlinks). It returns the
// directory's absolute path.
func (d *Dir) MkdirNoSymlinks(rel string, perm fs.FileMode) (string, error) {
	abs, err := d.NoSymlinks(rel)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, perm); err != nil {
		return "", err
	}
	// A component made meanwhile by someone else must not be a symlink
	// either.
	return d.NoSymlinks(rel)
}

// ReadRegular reads the regular file at path, at most max bytes (max <= 0:
// no bound), and returns what it read with the file's size. Anything that
// is not a regular file is refused (ErrNotRegular) without being opened
// for reading, so a FIFO or a device never blocks the reader; a file larger
// than max gives its first max bytes and ErrTooLarge, so a caller that
// needs it whole can refuse it and one that shows a part can show it.
// Symlinks are followed: callers hold the path inside its Dir first
// (Resolve).
func ReadRegular(path string, max int64) ([]byte, int64, error) {
	return readRegular(path, os.Stat, openNoBlock, max)
}

// readRegular is ReadRegular with the stat and the open given: the disk's,
// or an os.Root's.
func readRegular(name string, stat func(string) (fs.FileInfo, error), open func(string) (*os.File, error), max int64) ([]byte, int64, error) {
	fi, err := stat(name)
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, kind(fi.Mode()))
	}
	f, err := open(name)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	// What was stat-ed may have been replaced before the open: judge what
	// was opened.
	if fi, err = f.Stat(); err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, kind(fi.Mode()))
	}
	size := fi.Size()
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	buf, err := io.ReadAll(r)
	if err != nil {
		return nil, size, err
	}
	if max > 0 && int64(len(buf)) > max {
		return buf[:max], size, fmt.Errorf("%s is %d bytes: %w (the bound is %d)", name, size, ErrTooLarge, max)
	}
	return buf, size, nil
}

// ReadFile reads rel (relative to d, or absolute inside it) as
// ReadRegular does, once Resolve has held it inside d, and through an
// os.Root of d, so that not even a symlink made after the check takes the
// read outside.
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	p, err := d.Resolve(rel)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(d.real)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, _, err := readRegular(filepath.FromSlash(p.Rel), r.Stat, func(n string) (*os.File, error) {
		return r.OpenFile(n, os.O_RDONLY|nonBlock, 0)
	}, max)
	return b, err
}

// WriteFile replaces or creates rel (relative to d, or absolute inside it)
// with data, making its missing parents (mode 0755), once Resolve has held
// it inside d, and through an os.Root of d. It is not atomic: it is for
// scratch copies such as an engine's worktree, never for the user's files
// (internal/fsutil writes those).
func (d *Dir) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	p, err := d.Resolve(rel)
	if err != nil {
		return err
	}
	r, err := os.OpenRoot(d.real)
	if err != nil {
		return err
	}
	defer r.Close()
	name := filepath.FromSlash(p.Rel)
	if dir := filepath.Dir(name); dir != "." {
		if err := r.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return r.WriteFile(name, data, perm)
}

// CheckRegular refuses path unless it is a regular file (following its
// symlinks), without opening it.
func CheckRegular(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return fi, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return fi, nil
}

// kind names what a mode that is not a regular file is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	default:
		return "not a regular file"
	}
}
