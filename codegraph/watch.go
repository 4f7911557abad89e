package codegraph

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"
)

// Watching the disk (Watch): for a workspace whose editor does not report
// its files' changes (an editor that cannot register a file watcher, the
// ACP face, agentls run), the graph watches the workspace's directories
// itself with fsnotify (inotify on Linux, ReadDirectoryChangesW on
// Windows, kqueue on the BSDs and macOS), so that an edit made outside
// the editor (a git checkout, a formatter) reaches it. It watches the
// directories the walks enter (not .git, the zones, .gitignore), each
// once, up to a bound: kqueue spends a descriptor on every file of a
// watched directory, so its bound is far lower.

// defaultMaxWatches bounds the directories watched.
func defaultMaxWatches() int {
	switch runtime.GOOS {
	case "linux", "windows":
		return 16384
	}
	return 256
}

// Watch watches the workspace on disk and tells the graph of every change
// (Changed) until ctx ends. It starts once Run's first walk is done, so
// that the first answer and that walk never share the machine with the
// watcher's own walk; what changed meanwhile is caught by a refresh of
// every file (by size and time, as a restart's walk) once the watches are
// in place. Past Config.MaxWatches directories the
// rest is not watched (said once in the log); a directory made later is
// watched as it appears. It returns ctx's cause, or why no watcher could
// be made.
func (g *Graph) Watch(ctx context.Context) error {
	select {
	case <-g.current:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("code graph: watch the workspace: %w", err)
	}
	defer w.Close()
	ws := &watchSet{g: g, w: w, dirs: map[string]string{}}
	ws.add(ctx, ".")
	g.log.Info("code graph: watching the workspace", zap.Int("directories", ws.count()))
	g.Changed(".") // what changed between the first walk and the watches
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// events were lost: every file is looked at again
				g.log.Warn("code graph: the watcher lost events; checking the workspace", zap.Error(err))
				g.Changed(".")
				continue
			}
			g.log.Debug("code graph: watcher", zap.Error(err))
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			ws.event(ctx, ev)
		}
	}
}

// watchSet is the directories one watcher watches. It belongs to the
// goroutine of Watch.
type watchSet struct {
	g      *Graph
	w      *fsnotify.Watcher
	dirs   map[string]string // absolute -> workspace-relative
	full   bool              // the bound was met
	warned bool
}

func (ws *watchSet) count() int {
	ws.g.watched.Store(int64(len(ws.dirs)))
	return len(ws.dirs)
}

// add watches rel and every directory under it that the walks enter.
func (ws *watchSet) add(ctx context.Context, rel string) {
	limit := ws.g.cfg.MaxWatches
	err := ws.g.walker.WalkDirs(ctx, rel, func(r, abs string) error {
		if _, ok := ws.dirs[abs]; ok {
			return nil
		}
		if len(ws.dirs) >= limit {
			ws.full = true
			return errStopWatch
		}
		if err := ws.w.Add(abs); err != nil {
			// a directory gone meanwhile, or the system's own bound
			ws.g.log.Debug("code graph: not watched", zap.String("dir", r), zap.Error(err))
			return nil
		}
		ws.dirs[abs] = r
		return nil
	})
	if ws.full && !ws.warned {
		ws.warned = true
		ws.g.log.Warn("code graph: the workspace has more directories than are watched; changes in the rest reach the graph as the editor reports them",
			zap.Int("watched", len(ws.dirs)))
	}
	if err != nil && !errors.Is(err, errStopWatch) && ctx.Err() == nil {
		ws.g.log.Debug("code graph: watch walk", zap.Error(err))
	}
	ws.count()
}

var errStopWatch = errors.New("watch bound met")

// event tells the graph of one change: the path changed, appeared or went
// away; a directory that appears is watched, and a changed .gitignore
// makes its directory looked at again (what it hides or shows changed).
func (ws *watchSet) event(ctx context.Context, ev fsnotify.Event) {
	if ev.Op == fsnotify.Chmod {
		return
	}
	rel, ok := ws.rel(ev.Name)
	if !ok {
		return
	}
	if _, watched := ws.dirs[ev.Name]; watched && ev.Op&(fsnotify.Remove|fsnotify.Rename) != 0 {
		// the system drops the watch of a directory gone
		_ = ws.w.Remove(ev.Name)
		for abs, r := range ws.dirs {
			if r == rel || strings.HasPrefix(r, rel+"/") {
				delete(ws.dirs, abs)
			}
		}
		ws.count()
	}
	if ev.Op&fsnotify.Create != 0 {
		ws.add(ctx, rel) // nothing when it is not a directory the walks enter
	}
	if path.Base(rel) == ".gitignore" {
		dir := path.Dir(rel)
		ws.add(ctx, dir)
		ws.g.Changed(dir)
		return
	}
	ws.g.Changed(rel)
}

// rel is the workspace-relative name of an event's path, which is under a
// watched directory.
func (ws *watchSet) rel(name string) (string, bool) {
	dir, base := filepath.Split(name)
	parent, ok := ws.dirs[filepath.Clean(dir)]
	if !ok {
		if r, ok := ws.dirs[name]; ok {
			return r, r != "."
		}
		return "", false
	}
	if parent == "." {
		return base, true
	}
	return parent + "/" + base, true
}
