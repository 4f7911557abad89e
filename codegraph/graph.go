package codegraph

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/pool"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editing"
)

// Config builds a Graph.
type Config struct {
	Root  string    // the workspace root
	Zones api.Zones // the zones the walks follow (empty: every file, .git denied)
	// StateFile is where the graph is kept between runs ("": not kept).
	StateFile string
	// Workers parse files in parallel (0: one per core, GOMAXPROCS).
	Workers int
	// MaxFileSize: larger files are not parsed (0: 4 MiB), as search_files
	// does not search them.
	MaxFileSize int64
	// MaxFiles bounds the source files the graph holds (0: 200 000): a
	// workspace opened on a home directory is read up to there, and the
	// rest left out with a warning in the log.
	MaxFiles int
	// SaveDelay is how long after a change the graph is written to
	// StateFile (0: 2 seconds), at least ten times as long as the last
	// store took, up to five minutes (saveDelay); it is written at the end
	// of Run too.
	SaveDelay time.Duration
	// InMemory is the size up to which the stored graph is read whole into
	// memory when opened (0: 16 MiB); a larger one keeps the files' detail
	// on disk, read in place when a query needs it. Negative: always on
	// disk.
	InMemory int64
	// MaxWatches bounds the directories Watch watches (0: 16384 on Linux
	// and Windows, 256 where each file of a watched directory costs a
	// descriptor).
	MaxWatches int
	Logger     *zap.Logger
	// Server is the editor's language server, asked first for references
	// and definitions (lsp.go); nil: the graph answers alone.
	Server LanguageServer
}

// Graph is the code graph of one workspace. It is safe for concurrent use:
// queries read under a read lock and see whole files (a File is never
// changed, only replaced), updates are applied one batch at a time.
//
// What it holds in memory is each file's header and the indexes by name
// of the files parsed since it was last stored; the stored graph (image.go)
// gives the indexes of the others and every file's detail, read in place.
type Graph struct {
	cfg    Config
	log    *zap.Logger
	walker *editing.Walker

	mu      sync.RWMutex
	files   map[string]*File
	images  []*image            // the stored graph, read in place
	defs    map[string][]defRef // definitions of the files in memory, by name
	naming  map[string][]*File  // the files in memory that refer to each name
	dirs    map[string][]string // paths by directory ("." for the root)
	bases   map[string][]string // paths by file name, made when first needed (byBase), or nil
	basesMu sync.Mutex          // guards the making of bases by a query, which holds g.mu for reading
	modules map[string]string   // Go modules: directory -> module path
	modDirs []string            // their directories, sorted
	version uint64              // rises with every change of what the graph holds
	changes uint64              // rises with every change to store
	stored  uint64              // changes as of the stored graph
	since   map[string]bool     // paths changed while a store is written, or nil
	built   bool                // the first walk has been made
	err     error               // why the first build failed
	ranks   *rankCache
	parses  atomic.Int64 // files parsed since New
	rankMu  sync.Mutex   // guards ranks (made under the read lock)
	pkgDirs pkgDirCache  // the directories of Go import paths (resolve.go)
	storeMu sync.Mutex   // one store at a time

	readyOnce sync.Once
	walkOnce  sync.Once
	walkNow   chan struct{} // closed once the walk may start (startWalk)
	ready     chan struct{} // closed once a stored graph is read, or built
	current   chan struct{} // closed once built
	pending   chan struct{} // wakes Run: paths queued
	qmu       sync.Mutex
	queue     map[string]bool // paths to refresh
	force     map[string]bool // of those, the ones to parse even when unchanged
	queueGen  uint64          // batches queued
	doneGen   uint64          // batches refreshed
	qcond     *sync.Cond
	warned    atomic.Bool // a broken stored detail was logged

	storing   atomic.Bool  // a store is being written
	stores    atomic.Int64 // stores written
	lastStore atomic.Int64 // how long the last one took, in nanoseconds
	watched   atomic.Int64 // directories Watch watches
}

// defRef names one definition: a file and the index of its symbol, with
// what resolving a reference needs of it (its kind and container), so
// that a lookup by name reads no file's detail.
type defRef struct {
	f         *File
	i         int32
	kind      Kind
	container string
}

// defKey is what names a definition: its file and index.
type defKey struct {
	f *File
	i int32
}

func (d defRef) key() defKey { return defKey{d.f, d.i} }

// defAt is the definition i of f.
func defAt(f *File, i int) defRef {
	d := defRef{f: f, i: int32(i)}
	if syms := f.detail().syms; i < len(syms) {
		d.kind, d.container = syms[i].Kind, syms[i].Container
	}
	return d
}

// sym is the definition itself, read from its file's detail.
func (d defRef) sym() *Symbol {
	syms := d.f.detail().syms
	if int(d.i) < len(syms) {
		return &syms[d.i]
	}
	return &Symbol{Kind: d.kind, Container: d.container, Parent: -1}
}

// New returns the Graph of cfg, empty: Run builds it.
func New(cfg Config) (*Graph, error) {
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.MaxFileSize <= 0 {
		cfg.MaxFileSize = 4 << 20
	}
	if cfg.MaxFiles <= 0 {
		cfg.MaxFiles = 200_000
	}
	if cfg.SaveDelay <= 0 {
		cfg.SaveDelay = 2 * time.Second
	}
	if cfg.MaxWatches <= 0 {
		cfg.MaxWatches = defaultMaxWatches()
	}
	if cfg.InMemory == 0 {
		cfg.InMemory = imageInMemory
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if len(cfg.Zones.Allow) == 0 && len(cfg.Zones.Deny) == 0 {
		cfg.Zones = api.DefaultSettings().Zones
	}
	w, err := editing.NewWalker(cfg.Root, cfg.Zones)
	if err != nil {
		return nil, fmt.Errorf("code graph: %w", err)
	}
	g := &Graph{
		cfg: cfg, log: cfg.Logger, walker: w,
		files: map[string]*File{}, defs: map[string][]defRef{}, naming: map[string][]*File{}, dirs: map[string][]string{},
		bases: map[string][]string{}, modules: map[string]string{},
		ready: make(chan struct{}), current: make(chan struct{}), pending: make(chan struct{}, 1), walkNow: make(chan struct{}),
		queue: map[string]bool{}, force: map[string]bool{},
	}
	g.qcond = sync.NewCond(&g.qmu)
	return g, nil
}

// Root is the workspace root (absolute, symlinks resolved).
func (g *Graph) Root() string { return g.walker.Root() }

// Run reads the stored graph (answering queries from it at once), walks
// the workspace to bring it up to date (parsing only the files whose size,
// time or content changed), then refreshes the files it is told of
// (Changed) until ctx ends. The graph is stored after changes, on a
// goroutine of its own, so that updates never wait for a store. Run
// returns when ctx ends, after a last store; the first build's error, if
// the walk failed, is returned at once.
func (g *Graph) Run(ctx context.Context) error {
	defer g.qcond.Broadcast()
	if g.cfg.StateFile != "" && g.loadStored() {
		// The stored graph answers at once; the walk that checks it waits
		// for the first answer (it would take the cores that answer needs),
		// for someone waiting on it (Current), or for walkGrace.
		t := time.NewTimer(walkGrace)
		select {
		case <-g.walkNow:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	err := g.build(ctx)
	// A build's garbage (the parsers' syntax trees, six to seven times
	// what the graph keeps) goes back to the system now, not over minutes.
	debug.FreeOSMemory()
	g.mu.Lock()
	g.built, g.err = true, err
	g.mu.Unlock()
	g.markReady()
	close(g.current)
	if err != nil {
		g.storeLogged()
		g.drainQueue()
		return err
	}
	// The saver: the stores after changes, off this goroutine.
	kick := make(chan struct{}, 1)
	stop := make(chan struct{})
	var saver sync.WaitGroup
	saver.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-kick:
				g.storeLogged()
			}
		}
	})
	stopSaver := sync.OnceFunc(func() {
		close(stop)
		saver.Wait()
	})
	defer stopSaver()
	save := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	if g.unstored() {
		save()
	}
	var timer *time.Timer
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			stopSaver()
			g.storeLogged()
			g.drainQueue()
			return nil
		case <-g.pending:
			g.processQueue(ctx)
			if timer == nil && g.unstored() {
				timer = time.NewTimer(g.saveDelay())
				due = timer.C
			}
		case <-due:
			timer, due = nil, nil
			save()
		}
	}
}

// saveDelay is how long after a change the graph is stored: SaveDelay,
// or ten times as long as the last store took, so that stores take at
// most a tenth of the machine however large the graph (a change not yet
// stored costs a restart that file's parse, nothing more), up to five
// minutes.
func (g *Graph) saveDelay() time.Duration {
	d := g.cfg.SaveDelay
	if l := 10 * time.Duration(g.lastStore.Load()); l > d {
		d = min(l, 5*time.Minute)
	}
	return d
}

func (g *Graph) markReady() { g.readyOnce.Do(func() { close(g.ready) }) }

// Ready waits until the graph can answer: read from the state directory,
// or built. It fails when ctx ends first.
func (g *Graph) Ready(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Walked waits until the first walk has brought the graph up to date (or
// failed), without starting that walk sooner as Current does: for work
// that should not compete with a start's first answer, as the sweep of a
// crash's leftovers, a walk of the workspace too. It fails when ctx ends
// first.
func (g *Graph) Walked(ctx context.Context) error {
	select {
	case <-g.current:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Current waits until the first walk has brought the graph up to date and
// every change told so far has been refreshed. It fails when ctx ends
// first, or with the first build's error.
func (g *Graph) Current(ctx context.Context) error {
	g.startWalk()
	select {
	case <-g.current:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	g.mu.RLock()
	err := g.err
	g.mu.RUnlock()
	if err != nil {
		return err
	}
	return g.waitQueue(ctx)
}

// answerable waits until the graph can answer a query: once the first
// walk is done, until every change told so far is refreshed (Current);
// before, as soon as the stored graph is read, which answers while the
// walk checks it.
func (g *Graph) answerable(ctx context.Context) error {
	select {
	case <-g.current:
		return g.Current(ctx)
	default:
	}
	select {
	case <-g.current:
		return g.Current(ctx)
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Changed tells the graph that these workspace-relative files (or
// directories) changed, appeared or went away; Run refreshes them soon.
func (g *Graph) Changed(paths ...string) {
	g.enqueue(paths, false)
}

func (g *Graph) enqueue(paths []string, force bool) {
	if len(paths) == 0 {
		return
	}
	g.qmu.Lock()
	for _, p := range paths {
		p = path.Clean(p)
		g.queue[p] = true
		if force {
			g.force[p] = true
		}
	}
	g.queueGen++
	g.qmu.Unlock()
	select {
	case g.pending <- struct{}{}:
	default:
	}
}

// waitQueue waits until every batch queued before the call is refreshed.
func (g *Graph) waitQueue(ctx context.Context) error {
	g.qmu.Lock()
	want := g.queueGen
	g.qmu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		g.qmu.Lock()
		g.qcond.Broadcast()
		g.qmu.Unlock()
	})
	defer stop()
	g.qmu.Lock()
	defer g.qmu.Unlock()
	for g.doneGen < want {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		g.qcond.Wait()
	}
	return nil
}

func (g *Graph) processQueue(ctx context.Context) {
	g.qmu.Lock()
	gen := g.queueGen
	paths := make([]string, 0, len(g.queue))
	for p := range g.queue {
		paths = append(paths, p)
	}
	force := g.force
	g.queue, g.force = map[string]bool{}, map[string]bool{}
	g.qmu.Unlock()
	if len(paths) > 0 {
		if err := g.refresh(ctx, paths, force); err != nil && !errors.Is(err, context.Canceled) {
			g.log.Warn("code graph: refresh incomplete", zap.Error(err))
		}
	}
	g.qmu.Lock()
	if gen > g.doneGen {
		g.doneGen = gen
	}
	g.qcond.Broadcast()
	g.qmu.Unlock()
}

// drainQueue releases the waiters of a queue that will not be processed.
func (g *Graph) drainQueue() {
	g.qmu.Lock()
	g.doneGen = g.queueGen
	g.qcond.Broadcast()
	g.qmu.Unlock()
}

// broken is told of a file whose stored detail could not be read: it is
// parsed again (its detail is empty until then).
func (g *Graph) broken(f *File, err error) {
	if !g.warned.Swap(true) {
		g.log.Warn("code graph: the stored graph is damaged; the files it cannot give are parsed again",
			zap.String("path", f.Path), zap.Error(err))
	}
	g.enqueue([]string{f.Path}, true)
}

// walkGrace is how long the walk that checks a stored graph waits for a
// first query to be answered (a variable for the tests).
var walkGrace = time.Second

// startWalk lets the walk that checks the stored graph start.
func (g *Graph) startWalk() { g.walkOnce.Do(func() { close(g.walkNow) }) }

// loadStored reads the stored graph and installs it: queries answer from
// it from then on. It reports whether there was one.
func (g *Graph) loadStored() bool {
	start := time.Now()
	im, err := openImage(g.cfg.StateFile, g.cfg.InMemory)
	switch {
	case err != nil:
		g.log.Warn("code graph: stored graph not used, building afresh", zap.Error(err))
	case im != nil:
		g.mu.Lock()
		g.install(im)
		g.mu.Unlock()
		g.markReady()
		g.log.Info("code graph loaded", zap.Int("files", len(im.files)), zap.Duration("took", time.Since(start)))
		return true
	}
	return false
}

// install makes the image the graph: its files and modules. The files in
// memory that were put meanwhile (text agentls wrote, while a first build
// wrote the image) stay, over the image's. g.mu is held.
func (g *Graph) install(im *image) {
	im.mu.Lock()
	im.onBroken = g.broken
	im.mu.Unlock()
	kept := g.files
	g.files = make(map[string]*File, len(im.files)+len(kept))
	g.defs, g.naming = map[string][]defRef{}, map[string][]*File{}
	g.images = []*image{im}
	g.setModules(im.modules)
	paths := make([]string, len(im.files))
	for i, f := range im.files {
		g.files[f.Path] = f
		paths[i] = f.Path
	}
	g.dirs = groupPaths(paths, func(p string) string { return p[:max(strings.LastIndexByte(p, '/'), 0)] })
	g.bases = nil // made when first needed: a start need not pay for it
	g.version++
	g.stored = g.changes
	for p, f := range kept {
		g.put(p, f)
	}
}

// setModules sets the Go modules. g.mu is held.
func (g *Graph) setModules(m map[string]string) {
	g.modules = m
	g.modDirs = g.modDirs[:0]
	for d := range m {
		g.modDirs = append(g.modDirs, d)
	}
	sort.Strings(g.modDirs)
}

// unstored reports whether the graph changed since it was last stored
// (and has somewhere to be stored).
func (g *Graph) unstored() bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.cfg.StateFile != "" && g.changes != g.stored
}

func (g *Graph) storeLogged() {
	if err := g.store(); err != nil {
		g.log.Warn("code graph not stored", zap.Error(err))
	}
}

// store writes the graph to the state file when it changed since it was
// last stored, in a stream, and reads it in place from then on. Updates go
// on while it writes: a file changed meanwhile keeps its new record.
func (g *Graph) store() error {
	if g.cfg.StateFile == "" {
		return nil
	}
	g.storeMu.Lock()
	defer g.storeMu.Unlock()
	g.mu.Lock()
	if g.changes == g.stored {
		g.mu.Unlock()
		return nil
	}
	gen := g.changes
	snap := make([]*File, 0, len(g.files))
	for _, f := range g.files {
		snap = append(snap, f)
	}
	modules := make(map[string]string, len(g.modules))
	for d, m := range g.modules {
		modules[d] = m
	}
	g.since = map[string]bool{}
	g.mu.Unlock()

	start := time.Now()
	g.storing.Store(true)
	defer g.storing.Store(false)
	storeHook()
	im, skipped, err := writeImage(g.cfg.StateFile, snap, modules, g.cfg.InMemory)
	if err != nil {
		g.mu.Lock()
		g.since = nil
		g.mu.Unlock()
		return err
	}
	// The graph as stored becomes the graph's files, but where they changed
	// since the snapshot: made outside the lock, which is held for the
	// changes alone.
	next := make(map[string]*File, len(im.files)+len(skipped))
	for _, f := range im.files {
		next[f.Path] = f
	}
	for _, f := range skipped {
		next[f.Path] = f
	}
	before := make(map[string]*File, len(snap))
	for _, f := range snap {
		before[f.Path] = f
	}
	im.mu.Lock()
	im.onBroken = g.broken
	im.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	for p := range g.since {
		cur := g.files[p]
		if cur == before[p] {
			continue // changed and changed back
		}
		if nf := next[p]; nf != nil && nf.img == im {
			im.dead[nf.idx] = true
		}
		if cur == nil {
			delete(next, p)
			continue
		}
		next[p] = cur
		if cur.img == im {
			im.dead[cur.idx] = false
		}
	}
	g.files, g.images = next, []*image{im}
	g.defs, g.naming = map[string][]defRef{}, map[string][]*File{}
	for p := range g.since {
		if f := next[p]; f != nil && f.img == nil {
			g.indexMem(f)
		}
	}
	for _, f := range skipped {
		if f.img == nil && next[f.Path] == f {
			g.indexMem(f)
		}
	}
	g.since = nil
	g.stored = gen
	g.stores.Add(1)
	g.lastStore.Store(int64(time.Since(start)))
	return nil
}

// writeImage writes the files and modules as an image at path, and
// returns it opened, with the files whose stored detail could not be read
// and were left out (they keep their records, and are parsed again).
func writeImage(path string, files []*File, modules map[string]string, inMemory int64) (*image, []*File, error) {
	w, err := newImageWriter(path)
	if err != nil {
		return nil, nil, err
	}
	var skipped []*File
	// In path order: the details are stored in it, so that the next store
	// reads those it copies in long runs.
	slices.SortFunc(files, func(a, b *File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range files {
		if f.img != nil {
			// a file unchanged since a store: its stored bytes and index
			// entries are copied, not decoded
			if err := w.copy(f); err != nil {
				if errors.Is(err, errBadDetail) || w.err == nil { // not read: parsed again
					f.img.broken(f, err)
					skipped = append(skipped, f)
					continue
				}
				w.abort()
				return nil, nil, fmt.Errorf("store the code graph: %w", err)
			}
			continue
		}
		if err := w.add(f, f.blob); err != nil {
			if errors.Is(err, errBadDetail) {
				skipped = append(skipped, f)
				continue
			}
			w.abort()
			return nil, nil, fmt.Errorf("store the code graph: %w", err)
		}
	}
	im, err := w.finish(modules, inMemory)
	if err != nil {
		return nil, nil, err
	}
	return im, skipped, nil
}

// storeHook runs as a store starts writing, and walkHook as a build
// starts walking: tests hold them there.
var storeHook, walkHook = func() {}, func() {}

// errTooMany ends a walk that found MaxFiles source files.
var errTooMany = errors.New("too many source files")

// candidate is a file the walk found, with what a parse needs.
type candidate struct {
	rel, abs string
	lang     Lang
}

// build walks the workspace and brings every file up to date. The walk
// and the parse run at once: each file the walk finds goes to the
// parsing goroutines as it is found. A first build (no stored graph was
// read) that has a state file writes the graph there as it parses, so
// that the files' details are never all in memory at once.
func (g *Graph) build(ctx context.Context) error {
	g.mu.RLock()
	stream := g.cfg.StateFile != "" && len(g.images) == 0
	g.mu.RUnlock()
	if stream {
		err := g.buildInto(ctx)
		if err == nil || ctx.Err() != nil || errors.Is(err, errWalk) {
			return err
		}
		g.log.Warn("code graph: could not be stored while built; building it in memory", zap.Error(err))
	}
	return g.buildInMemory(ctx)
}

// errWalk wraps a walk's failure.
var errWalk = errors.New("code graph: walk the workspace")

// walk walks the workspace, handing every source file to the parsing
// goroutines (fn, one per worker, which return when cands is closed), and
// returns the Go modules it found.
func (g *Graph) walk(ctx context.Context, parse func(cands <-chan candidate)) (map[string]string, int, error) {
	cands := make(chan candidate, 64*g.cfg.Workers) // the walk is far quicker than a parse
	p := pool.New()
	for range g.cfg.Workers {
		p.Go(func() { parse(cands) })
	}
	modules := map[string]string{}
	found := 0
	walkHook()
	err := g.walker.Walk(ctx, "**", func(rel, abs string) error {
		if path.Base(rel) == "go.mod" {
			if m := goModulePath(abs); m != "" {
				modules[path.Dir(rel)] = m
			}
			return nil
		}
		lang := LangOf(rel)
		if lang == LangNone {
			return nil
		}
		if found == g.cfg.MaxFiles {
			return errTooMany
		}
		found++
		select {
		case cands <- candidate{rel: rel, abs: abs, lang: lang}:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	close(cands)
	p.Wait()
	if errors.Is(err, errTooMany) {
		g.log.Warn("code graph: the workspace has more source files than the graph holds; the rest are left out",
			zap.Int("held", g.cfg.MaxFiles))
		err = nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", errWalk, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, context.Cause(ctx)
	}
	return modules, found, nil
}

// buildInto builds the graph from nothing into a new image at the state
// file, and installs it.
func (g *Graph) buildInto(ctx context.Context) error {
	start := time.Now()
	w, err := newImageWriter(g.cfg.StateFile)
	if err != nil {
		return err
	}
	var wmu sync.Mutex
	var werr error
	parsed := 0
	modules, _, err := g.walk(ctx, func(cands <-chan candidate) {
		for c := range cands {
			if ctx.Err() != nil {
				continue // the walk stops too; drain what it sent
			}
			f, err := g.load(c, nil)
			if err != nil {
				g.log.Debug("code graph: file not read", zap.String("path", c.rel), zap.Error(err))
				continue
			}
			wmu.Lock()
			if werr == nil {
				werr = w.add(f, f.blob)
				parsed++
			}
			wmu.Unlock()
		}
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		w.abort()
		return err
	}
	im, err := w.finish(modules, g.cfg.InMemory)
	if err != nil {
		return err
	}
	g.mu.Lock()
	g.install(im)
	g.mu.Unlock()
	g.stores.Add(1)
	g.log.Info("code graph built and stored", zap.Int("files", len(im.files)), zap.Int("parsed", parsed),
		zap.Int("workers", g.cfg.Workers), zap.Duration("took", time.Since(start)))
	return nil
}

// buildInMemory brings the graph up to date with the workspace, parsing
// what changed, and puts each change.
func (g *Graph) buildInMemory(ctx context.Context) error {
	start := time.Now()
	g.mu.RLock()
	old := make(map[string]*File, len(g.files))
	for p, f := range g.files {
		old[p] = f
	}
	g.mu.RUnlock()
	results := make([][]*File, g.cfg.Workers)
	var next atomic.Int32
	modules, found, err := g.walk(ctx, func(cands <-chan candidate) {
		w := next.Add(1) - 1
		var out []*File
		for c := range cands {
			if ctx.Err() != nil {
				continue // the walk stops too; drain what it sent
			}
			f, err := g.load(c, old[c.rel])
			if err != nil {
				g.log.Debug("code graph: file not read", zap.String("path", c.rel), zap.Error(err))
				continue
			}
			out = append(out, f)
		}
		results[w] = out
	})
	if err != nil {
		return err
	}
	seen := make(map[string]bool, found)
	parsed := 0
	g.mu.Lock()
	// each result, unless the file changed while the walk ran (text agentls
	// wrote): the later record wins
	for _, list := range results {
		for _, f := range list {
			seen[f.Path] = true
			if f == old[f.Path] {
				continue
			}
			parsed++
			if g.files[f.Path] == old[f.Path] {
				g.put(f.Path, f)
			}
		}
	}
	for p, f := range old {
		if !seen[p] && g.files[p] == f {
			g.put(p, nil)
		}
	}
	if !sameModules(modules, g.modules) {
		g.setModules(modules)
		g.version++
		g.changes++
	}
	n := len(g.files)
	g.mu.Unlock()
	g.log.Info("code graph built", zap.Int("files", n), zap.Int("parsed", parsed),
		zap.Int("workers", g.cfg.Workers), zap.Duration("took", time.Since(start)))
	return nil
}

func sameModules(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// load returns the record of a file: the old one when the file's size and
// modification time (or, failing that, its content) are unchanged, else a
// fresh parse. Size and time decide first because reading and hashing
// every file at start would cost most of a parse; the content hash then
// spares the parse when only the time moved (a checkout, a touch).
func (g *Graph) load(c candidate, old *File) (*File, error) {
	fi, err := os.Stat(c.abs)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", c.rel)
	}
	size, mtime := fi.Size(), fi.ModTime().UnixNano()
	if old != nil && old.Size == size && old.ModTime == mtime && old.Lang == c.lang {
		return old, nil
	}
	if size > g.cfg.MaxFileSize {
		f := &File{Lang: c.lang, Size: size, ModTime: mtime, Err: fmt.Sprintf("not parsed: larger than %d bytes", g.cfg.MaxFileSize)}
		f.setPath(c.rel)
		return f, nil
	}
	buf := readBufs.Get().(*[]byte)
	defer readBufs.Put(buf)
	src, err := readFile(c.abs, size, *buf)
	*buf = src
	if err != nil {
		return nil, err
	}
	// the parsers copy what they keep: src goes back to the pool
	return g.parseSource(c.rel, c.lang, src, size, mtime, old), nil
}

// readBufs hold the text of the files being parsed, reused from file to
// file rather than one allocation each.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// readFile reads the file at abs, of about size bytes (it may have changed
// since), into buf and returns it, grown as needed.
func readFile(abs string, size int64, buf []byte) ([]byte, error) {
	f, err := os.Open(abs)
	if err != nil {
		return buf[:0], err
	}
	defer f.Close()
	if int64(cap(buf)) <= size {
		buf = make([]byte, 0, size+512)
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf[:0], err
		}
	}
}

// parseSource parses src as the file rel, or keeps old's detail when its
// content is the same.
func (g *Graph) parseSource(rel string, lang Lang, src []byte, size, mtime int64, old *File) *File {
	h := hashContent(src)
	if old != nil && old.Hash == h && old.Lang == lang {
		return old.withStat(size, mtime)
	}
	f := parseSafely(lang, rel, src)
	g.parses.Add(1)
	f.Size, f.ModTime, f.Hash = size, mtime, h
	f.setPath(rel)
	return f
}

func (f *File) setPath(rel string) {
	f.Path, f.dir = rel, path.Dir(rel)
}

// parseSafely parses, turning a parser's panic (a bug) into a file with an
// error, so one strange file never stops the graph.
func parseSafely(lang Lang, rel string, src []byte) (f *File) {
	defer func() {
		if r := recover(); r != nil {
			f = &File{Lang: lang, Err: fmt.Sprintf("bug: the %s parser failed: %v", lang, r)}
		}
	}()
	if lang != LangGo && bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
		return &File{Lang: lang, Err: "not parsed: binary content"}
	}
	f, err := parse(lang, rel, src)
	if err != nil {
		return &File{Lang: lang, Err: err.Error()}
	}
	return f
}

// hashContent is a file's content hash: two CRC-32s, Castagnoli's and
// IEEE's, side by side, which the processors compute in hardware at four
// times the speed of FNV-1a.
func hashContent(b []byte) uint64 {
	return uint64(crc32.Checksum(b, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(b))
}

// goModulePath reads the module path of a go.mod.
func goModulePath(abs string) string {
	f, err := os.Open(abs)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// indexPath adds rel to the indexes by directory and by name. g.mu is
// held.
func (g *Graph) indexPath(rel string) {
	dir := path.Dir(rel)
	g.dirs[dir] = append(g.dirs[dir], rel)
	if g.bases != nil {
		base := path.Base(rel)
		g.bases[base] = append(g.bases[base], rel)
	}
}

// byBase is the index of the paths by file name, made from the files when
// first needed (each name's paths in path order). g.mu is held, for
// reading at least: a writer, which holds it alone, keeps a made index
// current and leaves one not made alone.
func (g *Graph) byBase() map[string][]string {
	g.basesMu.Lock()
	defer g.basesMu.Unlock()
	if g.bases == nil {
		paths := make([]string, 0, len(g.files))
		for p := range g.files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		g.bases = groupPaths(paths, path.Base)
	}
	return g.bases
}

// groupPaths is the paths grouped by key, as indexPath makes them for
// each in turn ("" is the root's directory, "."), with one allocation for
// all the groups: a start indexes every file at once. Paths in path order
// come in runs of one key (a directory's files, but where a subdirectory's
// sort among them), and the map is consulted once a run, not once a path.
func groupPaths(paths []string, key func(string) string) map[string][]string {
	type run struct {
		key        string
		start, end int
	}
	var runs []run
	for i, p := range paths {
		k := key(p)
		if k == "" {
			k = "."
		}
		if n := len(runs); n > 0 && runs[n-1].key == k {
			runs[n-1].end = i + 1
			continue
		}
		runs = append(runs, run{key: k, start: i, end: i + 1})
	}
	counts := map[string]int{}
	for _, r := range runs {
		counts[r.key] += r.end - r.start
	}
	all := make([]string, len(paths))
	out := make(map[string][]string, len(counts))
	at := 0
	for _, r := range runs {
		l, ok := out[r.key]
		if !ok {
			n := counts[r.key]
			l = all[at : at : at+n] // full: an append copies it
			at += n
		}
		out[r.key] = append(l, paths[r.start:r.end]...)
	}
	return out
}

// unindexPath removes rel from the indexes by directory and by name.
// g.mu is held.
func (g *Graph) unindexPath(rel string) {
	dir := path.Dir(rel)
	if l := removeString(g.dirs[dir], rel); len(l) == 0 {
		delete(g.dirs, dir)
	} else {
		g.dirs[dir] = l
	}
	if g.bases == nil {
		return
	}
	base := path.Base(rel)
	if l := removeString(g.bases[base], rel); len(l) == 0 {
		delete(g.bases, base)
	} else {
		g.bases[base] = l
	}
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// indexMem adds a file held in memory to the indexes by name. g.mu is
// held.
func (g *Graph) indexMem(f *File) {
	d := f.detail()
	for i := range d.syms {
		s := &d.syms[i]
		g.defs[s.Name] = append(g.defs[s.Name], defRef{f: f, i: int32(i), kind: s.Kind, container: s.Container})
	}
	for k, n := range d.names {
		if !firstName(d.names, k) {
			continue
		}
		g.naming[n] = append(g.naming[n], f)
	}
}

// firstName reports whether names[k] is the first of its name (a name
// appears once per qualifier it is referred to with).
func firstName(names []string, k int) bool {
	for _, n := range names[:k] {
		if n == names[k] {
			return false
		}
	}
	return true
}

// unindexMem removes a file held in memory from the indexes by name.
// g.mu is held.
func (g *Graph) unindexMem(f *File) {
	d := f.detail()
	for i := range d.syms {
		name := d.syms[i].Name
		list := g.defs[name]
		out := list[:0]
		for _, x := range list {
			if x.f != f {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			delete(g.defs, name)
		} else {
			g.defs[name] = out
		}
	}
	for _, n := range d.names {
		list := g.naming[n]
		out := list[:0]
		for _, x := range list {
			if x != f {
				out = append(out, x)
			}
		}
		if len(out) == 0 {
			delete(g.naming, n)
		} else {
			g.naming[n] = out
		}
	}
}

// put replaces (or, with f nil, removes) the record of rel. g.mu is held.
func (g *Graph) put(rel string, f *File) {
	old := g.files[rel]
	if old == f {
		return
	}
	if f != nil && f.img != nil && !g.holds(f.img) {
		// a record of a stored graph the graph no longer reads (a bug):
		// its detail goes to memory
		g.log.Warn("code graph: bug: a record of an older stored graph", zap.String("path", rel))
		f = f.withStat(f.Size, f.ModTime)
	}
	if old != nil {
		if old.img != nil {
			old.img.dead[old.idx] = true
		} else {
			g.unindexMem(old)
		}
		delete(g.files, rel)
		g.unindexPath(rel)
	}
	if f != nil {
		g.files[rel] = f
		if f.img != nil {
			f.img.dead[f.idx] = false
		} else {
			g.indexMem(f)
		}
		g.indexPath(rel)
	}
	g.version++
	g.changes++
	if g.since != nil {
		g.since[rel] = true
	}
}

// holds reports whether im is an image the graph reads. g.mu is held.
func (g *Graph) holds(im *image) bool {
	for _, x := range g.images {
		if x == im {
			return true
		}
	}
	return false
}

// putIf replaces the record of rel with f when it is still was, and
// reports whether it did. g.mu is held.
func (g *Graph) putIf(rel string, was, f *File) bool {
	if g.files[rel] != was {
		return false
	}
	g.put(rel, f)
	return true
}

// fileAt is the record of rel, or nil.
func (g *Graph) fileAt(rel string) *File {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.files[rel]
}

// Refresh brings these workspace-relative paths up to date now: a file
// that the walk would reach is parsed again (unless its content is
// unchanged), one it would not (deleted, ignored, denied) is dropped, and a
// directory that went away drops every file under it; "." is every file
// of the workspace. go.mod files update the Go modules.
func (g *Graph) Refresh(ctx context.Context, paths ...string) error {
	return g.refresh(ctx, paths, nil)
}

// refresh is Refresh, parsing the paths of force even when unchanged.
func (g *Graph) refresh(ctx context.Context, paths []string, force map[string]bool) error {
	for _, rel := range paths {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		rel = path.Clean(strings.TrimPrefix(rel, "./"))
		if strings.HasPrefix(rel, "../") || rel == ".." || path.IsAbs(rel) {
			continue
		}
		if rel == "." {
			g.refreshDir(ctx, rel) // every file: the watcher lost events, or the root's .gitignore changed
			continue
		}
		if path.Base(rel) == "go.mod" {
			g.refreshModule(rel)
			continue
		}
		// A record put meanwhile (by SetContent, or a store that reads the
		// graph from its new image) is read again.
		for tries := 0; ; tries++ {
			if g.refreshOne(ctx, rel, force[rel] && tries == 0) || tries == 3 {
				break
			}
		}
	}
	return nil
}

// refreshOne refreshes one path, and reports whether its record was still
// the one it read when it put the new one.
func (g *Graph) refreshOne(ctx context.Context, rel string, force bool) bool {
	abs, visible := g.walker.Visible(rel)
	lang := LangOf(rel)
	old := g.fileAt(rel)
	switch {
	case visible && lang != LangNone:
		base := old
		if force {
			base = nil
		}
		f, err := g.load(candidate{rel: rel, abs: abs, lang: lang}, base)
		g.mu.Lock()
		defer g.mu.Unlock()
		if err != nil {
			return g.putIf(rel, old, nil)
		}
		return g.putIf(rel, old, f)
	case old != nil:
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.putIf(rel, old, nil)
	default:
		g.refreshDir(ctx, rel)
		return true
	}
}

// refreshDir handles a path that is not a file the graph knows: a
// directory that went away (its files are dropped) or appeared (its files
// are walked).
func (g *Graph) refreshDir(ctx context.Context, rel string) {
	prefix, pattern := rel+"/", rel+"/**"
	if rel == "." {
		prefix, pattern = "", "**" // the whole workspace
	}
	g.mu.RLock()
	var gone []string
	for p := range g.files {
		if strings.HasPrefix(p, prefix) {
			gone = append(gone, p)
		}
	}
	g.mu.RUnlock()
	if fi, err := os.Stat(g.abs(rel)); err == nil && fi.IsDir() {
		var found []string
		err := g.walker.Walk(ctx, pattern, func(r, _ string) error {
			if LangOf(r) != LangNone || path.Base(r) == "go.mod" {
				found = append(found, r)
			}
			return nil
		})
		if err != nil {
			// A walk cut short (the graph stopping, a directory that cannot
			// be read) says nothing of what went away: its files stay.
			if ctx.Err() == nil {
				g.log.Warn("code graph: a directory not walked again", zap.String("path", rel), zap.Error(err))
			}
			return
		}
		seen := map[string]bool{}
		for _, r := range found {
			seen[r] = true
		}
		for _, p := range gone {
			if !seen[p] {
				found = append(found, p)
			}
		}
		_ = g.Refresh(ctx, found...)
		return
	}
	g.mu.Lock()
	for _, p := range gone {
		g.put(p, nil)
	}
	g.mu.Unlock()
}

func (g *Graph) abs(rel string) string {
	return g.walker.Root() + string(os.PathSeparator) + strings.ReplaceAll(rel, "/", string(os.PathSeparator))
}

func (g *Graph) refreshModule(rel string) {
	dir := path.Dir(rel)
	m := ""
	if abs, ok := g.walker.Visible(rel); ok {
		m = goModulePath(abs)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.modules[dir] == m {
		return
	}
	modules := make(map[string]string, len(g.modules)+1)
	for d, x := range g.modules {
		modules[d] = x
	}
	if m == "" {
		delete(modules, dir)
	} else {
		modules[dir] = m
	}
	g.setModules(modules) // an image's map is never changed
	g.version++
	g.changes++
}

// SetContent records the text a file now has as agentls wrote it (the
// editor may hold it unsaved): it is parsed as that file's content. A
// file the walk would not reach is dropped instead.
func (g *Graph) SetContent(rel, content string) {
	rel = path.Clean(rel)
	abs, visible := g.walker.Visible(rel)
	lang := LangOf(rel)
	if !visible || lang == LangNone {
		g.Changed(rel)
		return
	}
	var mtime, size int64
	if fi, err := os.Stat(abs); err == nil {
		mtime, size = fi.ModTime().UnixNano(), fi.Size()
	}
	if size != int64(len(content)) {
		// the disk holds other text: the next start reads it again
		mtime = 0
	}
	for range 4 {
		old := g.fileAt(rel)
		f := g.parseSource(rel, lang, []byte(content), int64(len(content)), mtime, old)
		g.mu.Lock()
		ok := g.putIf(rel, old, f)
		g.mu.Unlock()
		if ok {
			return
		}
	}
}

// Stats is what the graph holds.
type Stats struct {
	Files, Symbols, Names, RefBytes int
	Ready, Current                  bool
	// Parsed counts the files parsed since New (a file whose record was
	// loaded, or whose content was unchanged, is not parsed).
	Parsed int64
	// InMemory counts the files whose detail is in memory (parsed since
	// the graph was last stored); the others' is read in place from the
	// stored graph.
	InMemory int
	// Stores counts the stores written since New (a first build that
	// writes the graph as it parses is one); Storing says one is being
	// written now, LastStore how long the last one took.
	Stores    int64
	Storing   bool
	LastStore time.Duration
	// Watched counts the directories Watch watches.
	Watched int
}

// Stats counts what the graph holds.
func (g *Graph) Stats() Stats {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := Stats{Files: len(g.files), Current: g.built && g.err == nil, Parsed: g.parses.Load(),
		Stores: g.stores.Load(), Storing: g.storing.Load(), LastStore: time.Duration(g.lastStore.Load()),
		Watched: int(g.watched.Load())}
	select {
	case <-g.ready:
		s.Ready = true
	default:
	}
	for _, f := range g.files {
		s.Symbols += int(f.nsyms)
		s.Names += int(f.nnames)
		s.RefBytes += int(f.nrefs)
		if f.img == nil {
			s.InMemory++
		}
	}
	return s
}

// File returns the record of a workspace-relative path, or nil.
func (g *Graph) File(rel string) *File {
	return g.fileAt(path.Clean(rel))
}
