package core_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/internal/contain"
)

// notices keeps what a workspace tells.
type notices struct {
	mu    sync.Mutex
	warns []string
	heat  int
}

func (n *notices) HeatUpdate(context.Context, *api.HeatUpdateParams) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.heat++
	return nil
}

func (n *notices) Warn(msg string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.warns = append(n.warns, msg)
}

func (n *notices) warnings() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.warns...)
}

// open opens a workspace on a fresh root with a fresh state directory.
func open(t *testing.T, cfg core.Config) (*core.Workspace, *notices) {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	if cfg.Dir == nil {
		dir, err := contain.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dir = dir
	}
	n := &notices{}
	cfg.Notices = n
	w := core.Open(cfg)
	t.Cleanup(w.Close)
	return w, n
}

func TestWorkspaceOpensWhatItIsAskedFor(t *testing.T) {
	w, _ := open(t, core.Config{})
	t.Run("the tracking opens once, keyed by the root's real path", func(t *testing.T) {
		a, err := w.Tracking()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := w.Tracking()
		if a != b || a.Root != w.Dir().Path() {
			t.Errorf("tracking %p %p on %q, want one on %q", a, b, a.Root, w.Dir().Path())
		}
		l, err := w.Layout()
		if err != nil || a.Sessions.Dir() != l.Workspace {
			t.Errorf("sessions in %q, layout %+v (%v)", a.Sessions.Dir(), l, err)
		}
	})
	t.Run("the graph is started at open", func(t *testing.T) {
		if g, err := w.Graph(); g == nil || err != nil {
			t.Errorf("graph %v, %v", g, err)
		}
	})
	t.Run("a task engine that cannot be made leaves nothing open", func(t *testing.T) {
		st := api.DefaultSettings()
		tasks, err := w.NewTasks(core.TasksConfig{Editor: nil, Own: &st})
		if err == nil {
			tasks.Close()
			t.Fatal("a task engine without an editor was made")
		}
	})
}

func TestWorkspaceAfterClose(t *testing.T) {
	w, _ := open(t, core.Config{})
	w.Close()
	w.Close() // once is enough; twice is harmless
	if _, err := w.Tracking(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("Tracking after Close: %v, want ErrClosed", err)
	}
	if _, err := w.MCP(); !errors.Is(err, core.ErrClosed) {
		t.Errorf("MCP after Close: %v, want ErrClosed", err)
	}
	if _, err := w.NewTasks(core.TasksConfig{}); !errors.Is(err, core.ErrClosed) {
		t.Errorf("NewTasks after Close: %v, want ErrClosed", err)
	}
}

// TestCloseReportsTheRecordingNotWritten: a recording that cannot be
// written is logged and told to the person.
func TestCloseReportsTheRecordingNotWritten(t *testing.T) {
	logs, seen := observer.New(zap.InfoLevel)
	script := filepath.Join(t.TempDir(), "script.json")
	writeFile(t, script, `{"agents": {}}`)
	w, n := open(t, core.Config{Record: filepath.Join(t.TempDir(), "missing", "dir", "rec.json"), Log: zap.New(logs)})
	if _, _, err := w.Models().Model("script:"+script, ""); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := seen.FilterMessage("recording not written").Len(); got != 1 {
		t.Errorf("%d log entries say the recording was not written, want 1", got)
	}
	warns := n.warnings()
	if len(warns) != 1 || !strings.Contains(warns[0], "the recording could not be written") {
		t.Errorf("warnings %q, want the recording not written", warns)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestGraphWatchesTheDiskWhenTheEditorDoesNot: without an editor that
// reports file changes, an edit made on disk by another program reaches
// the code graph; with one, the graph leaves the watching to it.
func TestGraphWatchesTheDiskWhenTheEditorDoesNot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, _ := open(t, core.Config{})
	g, err := w.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	for g.Stats().Watched == 0 {
		if ctx.Err() != nil {
			t.Fatal("the workspace is not watched")
		}
		time.Sleep(time.Millisecond)
	}
	writeFile(t, filepath.Join(w.Dir().Path(), "made.go"), "package made\n\nfunc Made() {}\n")
	for g.File("made.go") == nil {
		if ctx.Err() != nil {
			t.Fatal("a file another program wrote never reached the graph")
		}
		time.Sleep(time.Millisecond)
	}

	w2, _ := open(t, core.Config{EditorWatches: true})
	g2, err := w2.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := g2.Current(ctx); err != nil {
		t.Fatal(err)
	}
	if n := g2.Stats().Watched; n != 0 {
		t.Errorf("%d directories watched beside the editor's watcher, want none", n)
	}
}

// TestLeftoverSweepWaitsForTheGraphsWalk: the sweep of a crash's leftovers,
// a walk of the workspace, starts once the code graph's first walk is done,
// so that it leaves a start's first answer the CPU.
func TestLeftoverSweepWaitsForTheGraphsWalk(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	dir, err := contain.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir.Path(), "main.go"), "package main\n\nfunc main() {}\n")
	// a first start stores the graph: the next one loads it, and its walk
	// waits for a first answer (or a while)
	w := core.Open(core.Config{Dir: dir, Notices: &notices{}, EditorWatches: true})
	g, err := w.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Current(ctx); err != nil {
		t.Fatal(err)
	}
	w.Close()
	leftover := filepath.Join(dir.Path(), ".main.go.agentls-2851.tmp")
	writeFile(t, leftover, "half")
	crash := time.Now().Add(-time.Hour)
	if err := os.Chtimes(leftover, crash, crash); err != nil {
		t.Fatal(err)
	}
	w = core.Open(core.Config{Dir: dir, Notices: &notices{}, EditorWatches: true})
	t.Cleanup(w.Close)
	g, err = w.Graph()
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if st := g.Stats(); st.Current {
		t.Fatal("the stored graph was not loaded: its walk is done at once")
	}
	for {
		if _, err := os.Lstat(leftover); os.IsNotExist(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s is still there", leftover)
		}
		time.Sleep(time.Millisecond)
	}
	if !g.Stats().Current {
		t.Error("the leftover was swept before the graph's first walk was done")
	}
}
