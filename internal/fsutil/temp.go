package fsutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// Temporary files. Every temporary file of agentls — Write's, and the
// editor plugins' that write beside a file — is named
//
//	.<name>.agentls-<random>.tmp
//
// beside the file <name> it becomes, so that a leftover of a crash is
// recognised by its name alone and nothing else is ever taken for one.
// Older releases used ".<name>.agentls-<digits>" (the sidecar's edits) and,
// for agentls's own files, ".tmp-<name>-<digits>"; the first is recognised
// everywhere, the second only where the caller names <name> (RemoveTemps,
// SweepTemps' legacy files): it is too plain a name to take on sight. (The
// Emacs plugin's older ".<name>.agentls<6 letters>" is not recognised: six
// random letters cannot be told from a word.)

// TempMarker and TempSuffix surround the random part of every temporary
// file's name; editor plugins use them too, so that SweepTemps recognises
// their leftovers.
const (
	TempMarker = ".agentls-"
	TempSuffix = ".tmp"
)

var (
	tempName    = regexp.MustCompile(`^\.(.+)\.agentls-[0-9A-Za-z]+\.tmp$`)
	oldEditName = regexp.MustCompile(`^\.(.+)\.agentls-[0-9]+$`)
	oldOwnName  = regexp.MustCompile(`^\.tmp-(.+)-[0-9]+$`)
)

// tempPattern is the os.CreateTemp pattern of a temporary file for base.
func tempPattern(base string) string { return "." + base + TempMarker + "*" + TempSuffix }

// TempTarget reports whether name (a base name) is a temporary file of
// agentls, and the base name of the file it was to become.
func TempTarget(name string) (string, bool) {
	for _, re := range []*regexp.Regexp{tempName, oldEditName} {
		if m := re.FindStringSubmatch(name); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// started is when this process began: a temporary file changed since may
// belong to a write in progress (of this process or of another one started
// before it) and is never removed as a leftover.
var started = time.Now()

// ChangedSinceStart reports whether a file or directory last changed after
// this process began: it may be one being made now (by this process or by
// another one started before it), never a crash's leftover.
func ChangedSinceStart(fi fs.FileInfo) bool { return !fi.ModTime().Before(started) }

// removeLeftover removes the temporary file path if it is a crash's
// leftover, and reports whether it did. A file that changed since the process started, or
// that a writer holds locked, is left alone.
func removeLeftover(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || ChangedSinceStart(fi) {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if held, err := tryLock(f); err != nil || held {
		return false, nil
	}
	defer unlock(f)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove %s: %w", path, err)
	}
	return true, nil
}

// RemoveTemps removes the temporary files an interrupted write left in dir
// for the file named base, in the present scheme and the older ones; base
// "" stands for every file of dir, which must then be agentls's own. It
// returns the paths removed.
func RemoveTemps(dir, base string) []string {
	entries, _ := os.ReadDir(dir)
	var removed []string
	for _, e := range entries {
		target, ok := TempTarget(e.Name())
		if !ok {
			m := oldOwnName.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			target = m[1]
		}
		if base != "" && target != base {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if ok, _ := removeLeftover(p); ok {
			removed = append(removed, p)
		}
	}
	return removed
}

// SweepOptions tune SweepTemps.
type SweepOptions struct {
	// Legacy are root-relative slash paths of files agentls writes whose
	// ".tmp-<name>-<digits>" leftovers of older releases are removed too.
	Legacy []string
	// MaxEntries bounds the entries visited (0: 200000), so that a root
	// such as a home directory costs a bounded walk.
	MaxEntries int
}

// ErrSweepBound is returned by SweepTemps when it stopped at MaxEntries.
var ErrSweepBound = errors.New("sweep stopped at its bound of entries")

// SweepTemps walks root and removes every temporary file of agentls that a
// crash left (files changed since this process started, or held by a
// writer, stay). It does not follow symbolic links, skips .git
// directories, and stops when ctx ends. It returns the paths removed, and
// an error when the walk was cut short (ctx, ErrSweepBound) or a leftover
// could not be removed.
func SweepTemps(ctx context.Context, root string, o SweepOptions) ([]string, error) {
	var removed []string
	var errs []error
	for _, rel := range o.Legacy {
		p := filepath.Join(root, filepath.FromSlash(rel))
		dir, base := filepath.Split(p)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if m := oldOwnName.FindStringSubmatch(e.Name()); m != nil && m[1] == base {
				q := filepath.Join(dir, e.Name())
				ok, err := removeLeftover(q)
				if ok {
					removed = append(removed, q)
				}
				if err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	limit := o.MaxEntries
	if limit <= 0 {
		limit = 200000
	}
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if seen++; seen > limit {
			return ErrSweepBound
		}
		if err != nil {
			return nil // an unreadable directory is skipped
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != root {
				return filepath.SkipDir
			}
			return nil
		}
		if _, ok := TempTarget(d.Name()); !ok || !d.Type().IsRegular() {
			return nil
		}
		ok, err := removeLeftover(p)
		if ok {
			removed = append(removed, p)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("sweep %s: %w", root, err))
	}
	return removed, errors.Join(errs...)
}
