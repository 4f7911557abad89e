package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/codegraph"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/mcp"
	"github.com/agentls/agentls/mcp/bridge"
	"github.com/agentls/agentls/tracking"
	"github.com/agentls/agentls/workforce"
)

// Notices is where a workspace tells its face what it has to say outside
// any task. A face translates them into its wire.
type Notices interface {
	// HeatUpdate is a change of the heat map, from its ticker (the LSP
	// face's agent/heatUpdate). It satisfies heat.Emitter.
	HeatUpdate(ctx context.Context, p *api.HeatUpdateParams) error
	// Warn is a warning for the person, its secrets already redacted: a
	// model's retry, a damaged state file set aside, a broken intents
	// file, a recording not written. It must not block for long.
	Warn(msg string)
}

// Config opens a Workspace.
type Config struct {
	// Dir is the workspace root, as the client named it and as it really
	// is (contain.New). Everything agentls keeps of the workspace is keyed
	// by its real path, so every name of one directory is one workspace.
	Dir *contain.Dir
	// Settings returns the settings in force: the zones the code graph
	// leaves out (at Open), the trace setting (at every change), the heat
	// tuning (when the tracking opens), the MCP servers and engines of the
	// workspace's own clients (when they are made). It must be cheap.
	Settings func() api.Settings
	// Getenv reads the environment of the model clients and the engines
	// (nil: os.Getenv).
	Getenv func(string) string
	// Redactor and Log are the face's, from Secure.
	Redactor *redact.Redactor
	Log      *zap.Logger
	// Version is agentls's, told to MCP servers, engines and the bridge's
	// clients.
	Version string
	// Record, when set, is the file every model answer is recorded into
	// (docs/MODELS.md).
	Record string
	// Notices receives the heat map's updates and the warnings.
	Notices Notices
	// BridgeExecutable is the agentls binary the bridge's entries start
	// (tests; "": this process's executable).
	BridgeExecutable string
	// LanguageServer is the editor's language servers, which the code
	// graph asks first for references and definitions (agent/references,
	// agent/definition); nil: the graph answers alone.
	LanguageServer codegraph.LanguageServer
	// EditorWatches says the editor reports the workspace's file changes
	// (the LSP face registers workspace/didChangeWatchedFiles): the code
	// graph then does not watch the disk itself. Without it (the ACP face,
	// agentls run, an editor that cannot register a watcher) the graph
	// watches the workspace's directories (codegraph.Graph.Watch), so an
	// edit made outside the editor reaches it.
	EditorWatches bool
}

// Workspace is one workspace root and everything agentls runs on it.
type Workspace struct {
	cfg    Config
	log    *zap.Logger
	layout Layout
	// noState says why there is no state directory (nil when there is
	// one): the tracking then fails to open, and the graph is not kept.
	noState error

	// graph is the code graph (nil when graphErr says why there is none),
	// set by Open.
	graph    *codegraph.Graph
	graphErr error

	sweep, graphRun, ticker background
	// watch is the graph's watcher of the disk, started once (WatchDisk).
	watch     background
	watchOnce sync.Once

	mu       sync.Mutex
	closed   bool
	stopped  bool // StopTasks: no task engine is made any more
	track    *tracking.Workspace
	trackErr error
	models   *workforce.Models
	bridge   *bridge.Listener
	mcp      *mcp.Manager     // the workspace's own (MCP)
	engines  *engines.Manager // the workspace's own (Engines)
	tasks    map[*Tasks]bool  // every task engine open on it
}

// background is one goroutine of the Workspace with the means to end it.
type background struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (b *background) start(f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	b.done.Go(func() { f(ctx) })
}

// stop ends the goroutine and waits for it; it may be called when none
// was started.
func (b *background) stop() {
	if b.cancel != nil {
		b.cancel()
	}
	b.done.Wait()
}

// Open opens the workspace of cfg.Dir: it starts the code graph and the
// sweep of a crash's leftovers (once the graph's first walk is done), both
// in the background. The rest is made
// on first use.
func Open(cfg Config) *Workspace {
	if cfg.Getenv == nil {
		cfg.Getenv = os.Getenv
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	if cfg.Settings == nil {
		cfg.Settings = api.DefaultSettings
	}
	w := &Workspace{cfg: cfg, log: cfg.Log, tasks: map[*Tasks]bool{}}
	root := cfg.Dir.Path()
	w.layout, w.noState = LayoutOf(root)
	if w.noState == nil {
		if err := w.layout.Ensure(); err != nil {
			w.noState = err
		}
	}
	if w.noState != nil {
		w.log.Warn("no state directory: sessions, checkpoints and the code graph are not kept", zap.Error(w.noState))
	}
	w.startGraph(cfg.Settings().Zones)
	w.sweep.start(w.sweepLeftovers)
	if !cfg.EditorWatches {
		w.WatchDisk()
	}
	return w
}

// WatchDisk starts the code graph's watcher of the disk, once, when there
// is a graph: for a face whose editor does not report file changes, or
// whose registration of a watcher the editor refused. It runs until Close.
func (w *Workspace) WatchDisk() {
	if w.graph == nil {
		return
	}
	w.watchOnce.Do(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.closed {
			return
		}
		g := w.graph
		w.watch.start(func(ctx context.Context) {
			if err := g.Watch(ctx); err != nil && !errors.Is(err, context.Canceled) {
				w.log.Warn("the workspace is not watched: the code graph follows the editor's saves and agentls's own writes", zap.Error(err))
			}
		})
	})
}

// Dir is the workspace root.
func (w *Workspace) Dir() *contain.Dir { return w.cfg.Dir }

// Layout is where the workspace's state is kept; its error says why there
// is no state directory.
func (w *Workspace) Layout() (Layout, error) { return w.layout, w.noState }

// sweepLeftovers removes the temporary files a crash left in the
// workspace and in its state directory (fsutil.SweepTemps: only files
// named as agentls's own, older than this process, that no writer holds).
// It starts once the code graph's first walk is done: a walk of the
// workspace of its own, it took the CPU from a restart's first answer
// (on ten copies of the standard library, a third of it).
func (w *Workspace) sweepLeftovers(ctx context.Context) {
	if w.graph != nil {
		if err := w.graph.Walked(ctx); err != nil {
			w.log.Debug("leftover sweep cancelled", zap.Error(err))
			return
		}
	}
	dirs := []fsutil.SweepOptions{{Legacy: tracking.RewrittenFiles()}}
	roots := []string{w.cfg.Dir.Path()}
	if w.noState == nil {
		roots = append(roots, w.layout.Workspace)
		dirs = append(dirs, fsutil.SweepOptions{})
	}
	for i, root := range roots {
		removed, err := fsutil.SweepTemps(ctx, root, dirs[i])
		if len(removed) > 0 {
			w.log.Info("removed temporary files left by a crash", zap.Strings("files", removed))
		}
		switch {
		case errors.Is(err, context.Canceled):
			w.log.Debug("leftover sweep cancelled", zap.Error(err))
			return
		case err != nil:
			w.log.Warn("leftover sweep incomplete", zap.String("dir", root), zap.Error(err))
		}
	}
	if w.noState == nil {
		// The worktrees and start directories of engine runs a crash
		// ended, and their registration in their repositories.
		removed, err := engines.Sweep(ctx, w.layout.Engines())
		if len(removed) > 0 {
			w.log.Info("removed engine worktrees left by a crash", zap.Strings("dirs", removed))
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			w.log.Warn("engine worktree sweep incomplete", zap.Error(err))
		}
	}
}

// startGraph makes the code graph and builds it in the background. When it
// cannot be made, Graph says why: the workers go without the repo map and
// the graph's tools say so.
func (w *Workspace) startGraph(zones api.Zones) {
	state := ""
	if w.noState == nil {
		state = w.layout.Graph()
	} else {
		w.log.Warn("code graph not kept between runs", zap.Error(w.noState))
	}
	root := w.cfg.Dir.Path()
	g, err := codegraph.New(codegraph.Config{Root: root, Zones: zones, StateFile: state, Logger: w.log, Server: w.cfg.LanguageServer})
	if err != nil {
		w.graphErr = err
		w.log.Warn("code graph unavailable", zap.String("root", root), zap.Error(err))
		return
	}
	w.graph = g
	w.graphRun.start(func(ctx context.Context) {
		if err := g.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			w.log.Warn("code graph incomplete", zap.String("root", root), zap.Error(err))
		}
	})
}

// Graph is the workspace's code graph, or why there is none.
func (w *Workspace) Graph() (*codegraph.Graph, error) {
	if w.graph == nil {
		return nil, fmt.Errorf("the code graph is unavailable: %w", w.graphErr)
	}
	return w.graph, nil
}

// ErrClosed is returned by the getters and NewTasks after Close.
var ErrClosed = errors.New("the workspace is closed")

// Tracking is the workspace's tracking (heat map, intents, trace,
// sessions, usage, checkpoints), opened on first use with its heat ticker,
// which sends the heat map's changes to Notices until Close. An error to
// open it is kept: every later call returns it.
func (w *Workspace) Tracking() (*tracking.Workspace, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.trackingLocked()
}

func (w *Workspace) trackingLocked() (*tracking.Workspace, error) {
	if w.track != nil || w.trackErr != nil {
		return w.track, w.trackErr
	}
	if w.closed {
		return nil, fmt.Errorf("tracking: %w", ErrClosed)
	}
	if w.noState != nil {
		w.trackErr = fmt.Errorf("tracking: %w", w.noState)
		return nil, w.trackErr
	}
	root := w.cfg.Dir.Path()
	ws, err := tracking.Open(tracking.Config{
		Root:     root,
		StateDir: w.layout.State,
		Trace:    func() *bool { return w.cfg.Settings().Trace },
		Heat:     w.cfg.Notices,
		Report:   w.warn,
		Logger:   w.log,
		Redactor: w.cfg.Redactor,
	})
	if err != nil {
		w.trackErr = err
		w.log.Error("tracking unavailable", zap.String("root", root), zap.Error(err))
		return nil, err
	}
	ws.Heat.SetTuning(w.cfg.Settings().Heat)
	w.track = ws
	w.ticker.start(func(ctx context.Context) { _ = ws.Run(ctx) })
	return ws, nil
}

// warn tells the person a warning, redacted.
func (w *Workspace) warn(msg string) {
	w.cfg.Notices.Warn(w.cfg.Redactor.String(msg))
}

// Models are the workspace's model clients, made on first use: each
// resolved model kept for later tasks, every answer recorded into
// Config.Record when it is set. A provider's retry is a warning.
func (w *Workspace) Models() *workforce.Models {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.modelsLocked()
}

func (w *Workspace) modelsLocked() *workforce.Models {
	if w.models == nil {
		onRetry := func(ev clients.RetryEvent) { w.warn("agentls: " + ev.Message()) }
		w.models = workforce.NewModels(w.cfg.Getenv, w.cfg.Dir.Path(), w.cfg.Record, onRetry, w.log, w.cfg.Redactor)
	}
	return w.models
}

// Bridge is the MCP bridge of the workspace's task engines (docs/MCP.md):
// made on first use, it listens from the first subtask an engine runs and
// hands each call to the task engine that runs the call's task.
func (w *Workspace) Bridge() *bridge.Listener {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.bridgeLocked()
}

func (w *Workspace) bridgeLocked() *bridge.Listener {
	if w.bridge == nil {
		w.bridge = bridge.New(bridge.Options{
			Dir: w.layout.Bridge(), Executable: w.cfg.BridgeExecutable,
			Version: w.cfg.Version, Log: w.log, Redactor: w.cfg.Redactor,
		}, bridgeHost{w})
	}
	return w.bridge
}

// MCP is the workspace's own MCP client, made on first use with the
// servers of the settings (Tune gives it new ones). Its servers start on
// their first need (docs/MCP.md).
func (w *Workspace) MCP() (*mcp.Manager, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, fmt.Errorf("mcp: %w", ErrClosed)
	}
	if w.mcp == nil {
		w.mcp = w.newMCP(w.cfg.Settings(), w.log)
	}
	return w.mcp, nil
}

// newMCP makes an MCP client: its stdio servers run in the state
// directory's mcp/ (a private temporary directory without one), never in
// the workspace, which they are told as their MCP root.
func (w *Workspace) newMCP(st api.Settings, log *zap.Logger) *mcp.Manager {
	dir := ""
	if w.noState == nil {
		dir = w.layout.MCP()
	}
	m := mcp.New(mcp.Options{Dir: dir, Root: w.cfg.Dir.Given(), Redactor: w.cfg.Redactor, Log: log, Version: w.cfg.Version})
	m.Configure(st.MCPServers, st.Timeouts.MCPStart())
	return m
}

// Engines are the workspace's own engines (docs/ENGINES.md), made on first
// use with the engines setting (Tune gives them new ones).
func (w *Workspace) Engines() *engines.Manager {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.engines == nil {
		w.engines = w.newEngines(w.cfg.Settings(), w.log)
	}
	return w.engines
}

func (w *Workspace) newEngines(st api.Settings, log *zap.Logger) *engines.Manager {
	m := engines.NewManager(engines.Options{
		Lookup:  engines.Lookup{Getenv: w.cfg.Getenv},
		Log:     log,
		Version: w.cfg.Version,
	})
	m.Configure(st.Engines)
	return m
}

// Tune takes new settings: the heat map's tuning, and the servers and
// engines of the workspace's own MCP client and engines, for those made
// (the others read the settings when they are).
func (w *Workspace) Tune(st api.Settings) {
	w.mu.Lock()
	track, m, e := w.track, w.mcp, w.engines
	w.mu.Unlock()
	if track != nil {
		track.Heat.SetTuning(st.Heat)
	}
	if m != nil {
		m.Configure(st.MCPServers, st.Timeouts.MCPStart())
	}
	if e != nil {
		e.Configure(st.Engines)
	}
}

// openTasks is every task engine open on the workspace.
func (w *Workspace) openTasks() []*Tasks {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*Tasks, 0, len(w.tasks))
	for t := range w.tasks {
		out = append(out, t)
	}
	return out
}

// StopTasks stops every task of every task engine on the workspace and
// waits until each has ended and written its session; no task starts on
// them afterwards, nor is a task engine made (LSP's shutdown).
func (w *Workspace) StopTasks() {
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range w.openTasks() {
		wg.Go(t.Engine.Close)
	}
	wg.Wait()
}

// Interrupt is StopTasks for a client that went away (why says how, for
// the tasks' summaries): the sessions record the tasks still running as
// interrupted. It returns their ids.
func (w *Workspace) Interrupt(why string) []string {
	var ids []string
	for _, t := range w.openTasks() {
		ids = append(ids, t.Engine.Interrupt(why)...)
	}
	return ids
}

// Close closes everything the workspace runs, once, in order: the sweep
// is cancelled; every task is stopped and has written its session; the
// bridge, the MCP servers and the recording are closed; the code graph is
// stopped after its last store; the heat ticker stops and the tracking is
// closed (the tasks still going marked interrupted, the session store's
// lock released). Every close error is logged, and the recording not
// written is told to the person.
func (w *Workspace) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	w.sweep.stop()

	var wg sync.WaitGroup
	for _, t := range w.openTasks() {
		wg.Go(t.Close)
	}
	wg.Wait()

	w.mu.Lock()
	br, m, models, track := w.bridge, w.mcp, w.models, w.track
	w.mu.Unlock()
	if br != nil {
		br.Close()
	}
	if m != nil {
		m.Close()
	}
	if models != nil {
		if err := models.Close(); err != nil {
			w.log.Warn("recording not written", zap.String("file", w.cfg.Record), zap.Error(err))
			w.warn("agentls: the recording could not be written: " + err.Error())
		}
	}
	w.watch.stop()
	w.graphRun.stop()
	w.ticker.stop()
	if track != nil {
		if err := track.Close(); err != nil {
			w.log.Warn("tracking not closed", zap.String("root", w.cfg.Dir.Path()), zap.Error(err))
		}
	}
}
