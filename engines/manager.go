package engines

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
)

// Options configure a Manager.
type Options struct {
	// Lookup is where built-in engines are looked for.
	Lookup Lookup
	// Environ is the sidecar's environment the agents start from (nil:
	// os.Environ).
	Environ func() []string
	// Log receives the engines' logs (nil: none).
	Log *zap.Logger
	// Version is agentls's, told to the agents (clientInfo).
	Version string
	// CancelGrace is how long a stopped prompt waits for the agent to
	// answer session/cancel (0: 250 ms); TermGrace how long the agent then
	// has to exit on SIGTERM before its process group is killed (0: 250
	// ms). Together they bound a stop.
	CancelGrace, TermGrace time.Duration
}

// Manager runs the engines of one sidecar: it resolves them from the
// engines setting and runs one agent process per subtask. It is safe for
// concurrent use; every process it starts has ended when Run returns.
type Manager struct {
	opts Options
	log  *zap.Logger

	mu      sync.Mutex
	configs map[string]api.EngineConfig
}

// NewManager returns a Manager without settings (Configure gives them).
func NewManager(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	if opts.Environ == nil {
		opts.Environ = osEnviron
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = 250 * time.Millisecond
	}
	if opts.TermGrace <= 0 {
		opts.TermGrace = 250 * time.Millisecond
	}
	return &Manager{opts: opts, log: opts.Log, configs: map[string]api.EngineConfig{}}
}

// Configure takes the engines setting; runs that started go on as they
// were.
func (m *Manager) Configure(configs map[string]api.EngineConfig) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.configs = configs
}

func (m *Manager) config(name string) (api.EngineConfig, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.configs[name]
	return c, ok
}

// ErrUnknownEngine: no engine has that name.
var ErrUnknownEngine = errors.New("unknown engine")

// Resolve finds how to start the engine name; its Err says why it cannot
// be used. An unknown name is an error wrapping ErrUnknownEngine.
func (m *Manager) Resolve(name string) (Resolved, error) {
	c, configured := m.config(name)
	if _, ok := builtins[name]; !ok && !configured {
		return Resolved{}, fmt.Errorf("%w %q: the engines are %v", ErrUnknownEngine, name, m.names())
	}
	return m.opts.Lookup.Resolve(name, c), nil
}

// SharesMCP says whether the engine name is handed the user's MCP servers
// (through the bridge): unless its entry says mcpServers: false.
func (m *Manager) SharesMCP(name string) bool {
	c, _ := m.config(name)
	return c.MCPServers == nil || *c.MCPServers
}

// Usable says why the engine name cannot take a subtask (nil: it can).
func (m *Manager) Usable(name string) error {
	r, err := m.Resolve(name)
	if err != nil {
		return err
	}
	if r.Err != nil {
		return fmt.Errorf("engine %q cannot be used: %w", name, r.Err)
	}
	return nil
}

func (m *Manager) names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Names(m.configs)
}

// Available lists the engines that can take a subtask now, sorted.
func (m *Manager) Available() []string {
	var out []string
	for _, n := range m.names() {
		if m.Usable(n) == nil {
			out = append(out, n)
		}
	}
	return out
}

// List is agent/engines: every engine, sorted, with whether it can be
// used and why not. With probe, each usable one is started and
// initialized (in parallel, each bounded by 30 s), its version taken from
// its answer (and, when its command did not tell it, whether it runs
// isolated), and one that does not answer is not usable.
func (m *Manager) List(ctx context.Context, probe bool) []api.EngineInfo {
	names := m.names()
	out := make([]api.EngineInfo, len(names))
	var wg sync.WaitGroup
	for i, n := range names {
		r, err := m.Resolve(n)
		if err != nil {
			out[i] = api.EngineInfo{Name: n, Command: []string{}, Reason: err.Error()}
			continue
		}
		out[i] = r.Info()
		if !probe || r.Err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			name, version, err := m.probe(pctx, r)
			if err != nil {
				out[i].Usable, out[i].Reason = false, "it did not start: "+err.Error()
				return
			}
			if version != "" {
				out[i].Version, out[i].Note = version, ""
			}
			if a, ok := builtins[agentNamed(name)]; ok && r.IsolateAtStart {
				out[i].Isolated, _ = a.isolate(name, version)
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}
