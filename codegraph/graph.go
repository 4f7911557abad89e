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
	// StateFile (0: 2 seconds); it is written at the end of Run too.
	SaveDelay time.Duration
	Logger    *zap.Logger
	// Server is the editor's language server, asked first for references
	// and definitions (lsp.go); nil: the graph answers alone.
	Server LanguageServer
}

// Graph is the code graph of one workspace. It is safe for concurrent use:
// queries read under a read lock and see whole files (a File is never
// changed, only replaced), updates are applied one batch at a time.
type Graph struct {
	cfg    Config
	log    *zap.Logger
	walker *editing.Walker

	mu      sync.RWMutex
	files   map[string]*File
	defs    map[string][]defRef // definitions by name
	dirs    map[string][]*File  // files by directory ("." for the root)
	bases   map[string][]string // paths by file name
	modules map[string]string   // Go modules: directory -> module path
	version uint64              // rises with every change
	dirty   bool                // changed since last stored
	loaded  bool                // the first build (or load) has been installed
	built   bool                // the first walk has been made
	err     error               // why the first build failed
	ranks   *rankCache
	parses  atomic.Int64 // files parsed since New
	rankMu  sync.Mutex   // guards ranks (made under the read lock)

	ready    chan struct{} // closed once loaded
	current  chan struct{} // closed once built
	pending  chan struct{} // wakes Run: paths queued
	qmu      sync.Mutex
	queue    map[string]bool // paths to refresh
	queueGen uint64          // batches queued
	doneGen  uint64          // batches refreshed
	qcond    *sync.Cond
}

// defRef names one definition: a file and the index of its symbol.
type defRef struct {
	f *File
	i int32
}

func (d defRef) sym() *Symbol { return &d.f.Symbols[d.i] }

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
		files: map[string]*File{}, defs: map[string][]defRef{}, dirs: map[string][]*File{},
		bases: map[string][]string{}, modules: map[string]string{},
		ready: make(chan struct{}), current: make(chan struct{}), pending: make(chan struct{}, 1),
		queue: map[string]bool{},
	}
	g.qcond = sync.NewCond(&g.qmu)
	return g, nil
}

// Root is the workspace root (absolute, symlinks resolved).
func (g *Graph) Root() string { return g.walker.Root() }

// Run loads the stored graph (answering queries from it at once), walks
// the workspace to bring it up to date (parsing only the files whose size,
// time or content changed), then refreshes the files it is told of
// (Changed) until ctx ends, storing the graph after changes. It returns
// when ctx ends, after a last store; the first build's error, if the walk
// failed, is returned at once.
func (g *Graph) Run(ctx context.Context) error {
	defer g.qcond.Broadcast()
	if g.cfg.StateFile != "" {
		start := time.Now()
		files, modules, err := loadStore(g.cfg.StateFile)
		switch {
		case err != nil:
			g.log.Warn("code graph: stored graph not used, building afresh", zap.Error(err))
		case files != nil:
			g.mu.Lock()
			g.install(files, modules)
			g.mu.Unlock()
			g.log.Info("code graph loaded", zap.Int("files", len(files)), zap.Duration("took", time.Since(start)))
		}
	}
	g.markLoaded()
	err := g.build(ctx)
	g.mu.Lock()
	g.built, g.err = true, err
	g.mu.Unlock()
	close(g.current)
	if err != nil {
		g.store()
		g.drainQueue()
		return err
	}
	g.store()
	var save <-chan time.Time
	var timer *time.Timer
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			g.store()
			g.drainQueue()
			return nil
		case <-g.pending:
			g.processQueue(ctx)
			if timer == nil {
				timer = time.NewTimer(g.cfg.SaveDelay)
				save = timer.C
			}
		case <-save:
			timer, save = nil, nil
			g.store()
		}
	}
}

func (g *Graph) markLoaded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.loaded {
		g.loaded = true
		close(g.ready)
	}
}

// Ready waits until the graph can answer: loaded from the state directory,
// or built. It fails when ctx ends first.
func (g *Graph) Ready(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Current waits until the first walk has brought the graph up to date and
// every change told so far has been refreshed. It fails when ctx ends
// first, or with the first build's error.
func (g *Graph) Current(ctx context.Context) error {
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

// Changed tells the graph that these workspace-relative files (or
// directories) changed, appeared or went away; Run refreshes them soon.
func (g *Graph) Changed(paths ...string) {
	if len(paths) == 0 {
		return
	}
	g.qmu.Lock()
	for _, p := range paths {
		g.queue[path.Clean(p)] = true
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
	g.queue = map[string]bool{}
	g.qmu.Unlock()
	if len(paths) > 0 {
		if err := g.Refresh(ctx, paths...); err != nil && !errors.Is(err, context.Canceled) {
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

// store writes the graph to the state file when it changed.
func (g *Graph) store() {
	if g.cfg.StateFile == "" {
		return
	}
	g.mu.Lock()
	if !g.dirty {
		g.mu.Unlock()
		return
	}
	g.dirty = false
	files := make(map[string]*File, len(g.files))
	for p, f := range g.files {
		files[p] = f
	}
	modules := make(map[string]string, len(g.modules))
	for d, m := range g.modules {
		modules[d] = m
	}
	g.mu.Unlock()
	if err := saveStore(g.cfg.StateFile, files, modules); err != nil {
		g.log.Warn("code graph not stored", zap.Error(err))
		g.mu.Lock()
		g.dirty = true
		g.mu.Unlock()
	}
}

// errTooMany ends a walk that found MaxFiles source files.
var errTooMany = errors.New("too many source files")

// candidate is a file the walk found, with what a parse needs.
type candidate struct {
	rel, abs string
	lang     Lang
}

// build walks the workspace and brings every file up to date. The walk
// and the parse run at once: each file the walk finds goes to the
// parsing goroutines as it is found.
func (g *Graph) build(ctx context.Context) error {
	start := time.Now()
	g.mu.RLock()
	old := g.files
	g.mu.RUnlock()
	endBoost := boostGC()
	defer endBoost()
	cands := make(chan candidate, 64*g.cfg.Workers) // the walk is far quicker than a parse
	results := make([][]*File, g.cfg.Workers)
	var seen atomic.Int64
	p := pool.New()
	for w := range results {
		p.Go(func() { results[w] = g.parseFrom(ctx, cands, old, &seen) })
	}
	modules := map[string]string{}
	found := 0
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
	endBoost()
	if errors.Is(err, errTooMany) {
		g.log.Warn("code graph: the workspace has more source files than the graph holds; the rest are left out",
			zap.Int("held", g.cfg.MaxFiles))
		err = nil
	}
	if err != nil {
		return fmt.Errorf("code graph: walk the workspace: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	files := make(map[string]*File, found)
	parsed := 0
	for _, list := range results {
		for _, f := range list {
			files[f.Path] = f
			if old[f.Path] != f {
				parsed++
			}
		}
	}
	g.mu.Lock()
	changed := parsed > 0 || len(files) != len(g.files) || !sameModules(modules, g.modules)
	if changed {
		g.install(files, modules)
		g.dirty = true
	}
	g.mu.Unlock()
	g.log.Info("code graph built", zap.Int("files", len(files)), zap.Int("parsed", parsed),
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

// parseFrom brings each candidate it receives up to date (a file whose
// size and time are those of its old record keeps it) until cands is
// closed or ctx ends, and returns the records. seen counts the candidates
// of every goroutine, to size the collector's pace to the heap as the
// build goes (gc.go).
func (g *Graph) parseFrom(ctx context.Context, cands <-chan candidate, old map[string]*File, seen *atomic.Int64) []*File {
	var out []*File
	for c := range cands {
		if ctx.Err() != nil {
			continue // the walk stops too; drain what it sent
		}
		if seen.Add(1)%256 == 0 {
			adjustGC()
		}
		f, err := g.load(c, old[c.rel])
		if err != nil {
			g.log.Debug("code graph: file not read", zap.String("path", c.rel), zap.Error(err))
			continue
		}
		out = append(out, f)
	}
	return out
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
		return &File{Path: c.rel, Lang: c.lang, Size: size, ModTime: mtime, Err: fmt.Sprintf("not parsed: larger than %d bytes", g.cfg.MaxFileSize)}, nil
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

// parseSource parses src as the file rel, or keeps old when its content is
// the same.
func (g *Graph) parseSource(rel string, lang Lang, src []byte, size, mtime int64, old *File) *File {
	h := hashContent(src)
	if old != nil && old.Hash == h && old.Lang == lang {
		f := *old
		f.Size, f.ModTime = size, mtime
		return &f
	}
	f := parseSafely(lang, rel, src)
	g.parses.Add(1)
	f.Path, f.Size, f.ModTime, f.Hash = rel, size, mtime, h
	return f
}

// parseSafely parses, turning a parser's panic (a bug) into a file with an
// error, so one strange file never stops the graph.
func parseSafely(lang Lang, rel string, src []byte) (f *File) {
	defer func() {
		if r := recover(); r != nil {
			f = &File{Lang: lang, Err: fmt.Sprintf("bug: the %s parser failed: %v", lang, r)}
		}
	}()
	if bytes.IndexByte(src[:min(len(src), 8000)], 0) >= 0 {
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
// times the speed of FNV-1a (the hash of older stored graphs: a file whose
// time moved is then parsed again once).
func hashContent(b []byte) uint64 {
	return uint64(crc32.Checksum(b, castagnoli))<<32 | uint64(crc32.ChecksumIEEE(b))
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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

// install replaces every file and rebuilds the indexes. g.mu is held.
func (g *Graph) install(files map[string]*File, modules map[string]string) {
	g.files = files
	g.modules = modules
	// sized once: growing maps of this size is most of the cost
	nsyms := 0
	for _, f := range files {
		nsyms += len(f.Symbols)
	}
	g.defs = make(map[string][]defRef, nsyms/2+16)
	g.dirs = make(map[string][]*File, len(files)/8+1)
	g.bases = make(map[string][]string, len(files))
	for _, f := range files {
		g.index(f)
	}
	g.version++
}

// index adds f to the indexes. g.mu is held.
func (g *Graph) index(f *File) {
	for i := range f.Symbols {
		name := f.Symbols[i].Name
		g.defs[name] = append(g.defs[name], defRef{f: f, i: int32(i)})
	}
	dir := path.Dir(f.Path)
	f.dir = dir
	g.dirs[dir] = append(g.dirs[dir], f)
	base := path.Base(f.Path)
	g.bases[base] = append(g.bases[base], f.Path)
}

// unindex removes f from the indexes. g.mu is held.
func (g *Graph) unindex(f *File) {
	for i := range f.Symbols {
		name := f.Symbols[i].Name
		list := g.defs[name]
		out := list[:0]
		for _, d := range list {
			if d.f != f {
				out = append(out, d)
			}
		}
		if len(out) == 0 {
			delete(g.defs, name)
		} else {
			g.defs[name] = out
		}
	}
	dir := path.Dir(f.Path)
	g.dirs[dir] = removeFile(g.dirs[dir], f)
	if len(g.dirs[dir]) == 0 {
		delete(g.dirs, dir)
	}
	base := path.Base(f.Path)
	paths := g.bases[base]
	out := paths[:0]
	for _, p := range paths {
		if p != f.Path {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		delete(g.bases, base)
	} else {
		g.bases[base] = out
	}
}

func removeFile(list []*File, f *File) []*File {
	out := list[:0]
	for _, x := range list {
		if x != f {
			out = append(out, x)
		}
	}
	return out
}

// put replaces (or, with f nil, removes) the record of rel. g.mu is held.
func (g *Graph) put(rel string, f *File) {
	old := g.files[rel]
	if old == f {
		return
	}
	if old != nil {
		g.unindex(old)
		delete(g.files, rel)
	}
	if f != nil {
		g.files[rel] = f
		g.index(f)
	}
	g.version++
	g.dirty = true
}

// Refresh brings these workspace-relative paths up to date now: a file
// that the walk would reach is parsed again (unless its content is
// unchanged), one it would not (deleted, ignored, denied) is dropped, and a
// directory that went away drops every file under it. go.mod files update
// the Go modules.
func (g *Graph) Refresh(ctx context.Context, paths ...string) error {
	for _, rel := range paths {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		rel = path.Clean(strings.TrimPrefix(rel, "./"))
		if rel == "." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			continue
		}
		if path.Base(rel) == "go.mod" {
			g.refreshModule(rel)
			continue
		}
		abs, visible := g.walker.Visible(rel)
		lang := LangOf(rel)
		g.mu.RLock()
		old := g.files[rel]
		g.mu.RUnlock()
		switch {
		case visible && lang != LangNone:
			f, err := g.load(candidate{rel: rel, abs: abs, lang: lang}, old)
			if err != nil {
				g.mu.Lock()
				g.put(rel, nil)
				g.mu.Unlock()
				continue
			}
			g.mu.Lock()
			g.put(rel, f)
			g.mu.Unlock()
		case old != nil:
			g.mu.Lock()
			g.put(rel, nil)
			g.mu.Unlock()
		default:
			g.refreshDir(ctx, rel)
		}
	}
	return nil
}

// refreshDir handles a path that is not a file the graph knows: a
// directory that went away (its files are dropped) or appeared (its files
// are walked).
func (g *Graph) refreshDir(ctx context.Context, rel string) {
	prefix := rel + "/"
	g.mu.Lock()
	var gone []string
	for p := range g.files {
		if strings.HasPrefix(p, prefix) {
			gone = append(gone, p)
		}
	}
	g.mu.Unlock()
	if fi, err := os.Stat(g.abs(rel)); err == nil && fi.IsDir() {
		var found []string
		err := g.walker.Walk(ctx, rel+"/**", func(r, _ string) error {
			if LangOf(r) != LangNone || path.Base(r) == "go.mod" {
				found = append(found, r)
			}
			return nil
		})
		if err == nil {
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
	if m == "" {
		delete(g.modules, dir)
	} else {
		g.modules[dir] = m
	}
	g.version++
	g.dirty = true
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
	g.mu.RLock()
	old := g.files[rel]
	g.mu.RUnlock()
	if size != int64(len(content)) {
		// the disk holds other text: the next start reads it again
		mtime = 0
	}
	f := g.parseSource(rel, lang, []byte(content), int64(len(content)), mtime, old)
	g.mu.Lock()
	g.put(rel, f)
	g.mu.Unlock()
}

// Stats is what the graph holds.
type Stats struct {
	Files, Symbols, Names, RefBytes int
	Ready, Current                  bool
	// Parsed counts the files parsed since New (a file whose record was
	// loaded, or whose content was unchanged, is not parsed).
	Parsed int64
}

// Stats counts what the graph holds.
func (g *Graph) Stats() Stats {
	g.mu.RLock()
	defer g.mu.RUnlock()
	s := Stats{Files: len(g.files), Ready: g.loaded, Current: g.built && g.err == nil, Parsed: g.parses.Load()}
	for _, f := range g.files {
		s.Symbols += len(f.Symbols)
		s.Names += len(f.Names)
		s.RefBytes += len(f.refs)
	}
	return s
}

// File returns the record of a workspace-relative path, or nil.
func (g *Graph) File(rel string) *File {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.files[path.Clean(rel)]
}
