package workforce

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editors/headless/headlesstest"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/internal/testkit"
	"github.com/agentls/agentls/tracking"
)

// instructionsWorkspace has an instruction file of each kind: AGENTS.md at
// the root and in pkg/api (beside a CLAUDE.md it wins over), a CLAUDE.md
// alone in web/, and Copilot's, which the root's AGENTS.md outranks.
var instructionsWorkspace = map[string]string{
	"AGENTS.md":                       "Run go test ./... before you finish.\n",
	"main.go":                         "package main\n",
	"pkg/api/AGENTS.md":               "Handlers in pkg/api return typed errors.\n",
	"pkg/api/CLAUDE.md":               "CLAUDE-IN-API: not read, AGENTS.md is there.\n",
	"pkg/api/api.go":                  "package api\n",
	"web/CLAUDE.md":                   "Use tabs in web/.\n",
	".github/copilot-instructions.md": "COPILOT: not read, the root has AGENTS.md.\n",
	"docs/STYLE.md":                   "Write in short sentences.\n",
}

// instrEngine runs a task over files with an editor of every capability,
// and returns the model's requests, the events and the editor.
type instrRun struct {
	m   *funcModel
	ev  *fakeEvents
	ed  *headlesstest.Editor
	res *api.RunResult
}

func runInstructions(t *testing.T, files map[string]string, s api.Settings, fn func(context.Context, *clients.Request) (*clients.Response, error), setup ...func(root string, ed *headlesstest.Editor)) instrRun {
	t.Helper()
	root := t.TempDir()
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	testkit.WriteFiles(t, root, files)
	ed := headlesstest.New(root, headlesstest.AllCaps())
	for _, f := range setup {
		f(root, ed)
	}
	ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if fn == nil {
		fn = func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			if req.Agent == clients.AgentCoordinator {
				return planOf(map[string]any{"id": "1", "content": "change main.go"}, map[string]any{"id": "2", "content": "change pkg/api/api.go"}), nil
			}
			return finish("done"), nil
		}
	}
	r := instrRun{m: &funcModel{fn: fn}, ev: &fakeEvents{}, ed: ed}
	e, err := New(Config{Root: root, Editor: ed, Events: r.ev, Tracking: ws, Models: r.m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r.res, err = e.Run(testkit.Context(t), api.RunParams{Prompt: "change the code"}, s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// instructionEvents are the instructions events of a run.
func (r instrRun) instructionEvents() []api.TaskEvent {
	r.ev.mu.Lock()
	defer r.ev.mu.Unlock()
	var out []api.TaskEvent
	for _, u := range r.ev.updates {
		if u.Event.Kind == api.EventInstructions {
			out = append(out, u.Event)
		}
	}
	return out
}

func (r instrRun) warnings() []string {
	r.ev.mu.Lock()
	defer r.ev.mu.Unlock()
	var out []string
	for _, e := range r.ev.events {
		if e.Warning != "" {
			out = append(out, e.Warning)
		}
	}
	return out
}

func paths(files []api.InstructionFile) []string {
	var out []string
	for _, f := range files {
		out = append(out, f.Path)
	}
	return out
}

func TestInstructions(t *testing.T) {
	t.Run("the coordinator and every worker get AGENTS.md, nested ones for their subtree, and CLAUDE.md where there is no AGENTS.md", func(t *testing.T) {
		r := runInstructions(t, instructionsWorkspace, settings(), nil)
		var systems []string
		for _, agent := range []string{clients.AgentCoordinator, "1", "2"} {
			reqs := r.m.requests(agent)
			if len(reqs) == 0 {
				t.Fatalf("%s made no request", agent)
			}
			systems = append(systems, reqs[0].System)
		}
		for i, sys := range systems {
			for _, want := range []string{
				`<instructions path="AGENTS.md" applies-to="the whole workspace">` + "\nRun go test ./... before you finish.\n</instructions>",
				`<instructions path="pkg/api/AGENTS.md" applies-to="pkg/api/">` + "\nHandlers in pkg/api return typed errors.\n</instructions>",
				`<instructions path="web/CLAUDE.md" applies-to="web/">`,
			} {
				if !strings.Contains(sys, want) {
					t.Errorf("system prompt %d lacks %s:\n%s", i, want, sys)
				}
			}
			for _, not := range []string{"CLAUDE-IN-API", "COPILOT", "short sentences"} {
				if strings.Contains(sys, not) {
					t.Errorf("system prompt %d holds %s", i, not)
				}
			}
			if strings.Index(sys, `path="AGENTS.md"`) > strings.Index(sys, `path="pkg/api/AGENTS.md"`) {
				t.Errorf("a nested file comes before the root's, which it wins over")
			}
		}
		if systems[1] != systems[2] {
			t.Errorf("two workers of a task have different system prompts:\n%s\n---\n%s", systems[1], systems[2])
		}
		evs := r.instructionEvents()
		if len(evs) != 1 || evs[0].SubtaskID != "" {
			t.Fatalf("instructions events %+v, want one of the task", evs)
		}
		// The whole workspace's first, then by depth.
		if got := paths(evs[0].Instructions); !slices.Equal(got, []string{"AGENTS.md", "web/CLAUDE.md", "pkg/api/AGENTS.md"}) {
			t.Errorf("the event names %q", got)
		}
		if f := evs[0].Instructions[0]; f.Tokens != 9 || f.Cut {
			t.Errorf("AGENTS.md in the event: %+v (35 characters, 9 tokens)", f)
		}
	})
	t.Run("the event comes before the plan", func(t *testing.T) {
		r := runInstructions(t, instructionsWorkspace, settings(), nil)
		r.ev.mu.Lock()
		defer r.ev.mu.Unlock()
		var kinds []string
		for _, u := range r.ev.updates {
			kinds = append(kinds, u.Event.Kind)
		}
		if i, j := slices.Index(kinds, api.EventInstructions), slices.Index(kinds, api.EventPlanned); i < 0 || i > j {
			t.Errorf("events %q", kinds)
		}
	})
	t.Run("Copilot's file is read where the root has no AGENTS.md or CLAUDE.md", func(t *testing.T) {
		files := map[string]string{"main.go": "package main\n", ".github/copilot-instructions.md": "Prefer table tests.\n", "web/AGENTS.md": "web rules\n"}
		r := runInstructions(t, files, settings(), nil)
		evs := r.instructionEvents()
		if len(evs) != 1 || !slices.Equal(paths(evs[0].Instructions), []string{".github/copilot-instructions.md", "web/AGENTS.md"}) {
			t.Fatalf("events %+v", evs)
		}
		if sys := r.m.requests("1")[0].System; !strings.Contains(sys, "Prefer table tests.") {
			t.Errorf("the worker's prompt lacks Copilot's instructions:\n%s", sys)
		}
	})
	t.Run("the setting adds files for the whole workspace and removes others", func(t *testing.T) {
		s := settings()
		s.Instructions.Add = []string{"docs/*.md"}
		s.Instructions.Remove = []string{"web/**"}
		r := runInstructions(t, instructionsWorkspace, s, nil)
		evs := r.instructionEvents()
		if len(evs) != 1 || !slices.Equal(paths(evs[0].Instructions), []string{"AGENTS.md", "docs/STYLE.md", "pkg/api/AGENTS.md"}) {
			t.Fatalf("events %+v", evs)
		}
		if sys := r.m.requests("1")[0].System; !strings.Contains(sys, `<instructions path="docs/STYLE.md" applies-to="the whole workspace">`) {
			t.Errorf("the added file is not in the prompt:\n%s", sys)
		}
	})
	t.Run("the editor's unsaved text counts", func(t *testing.T) {
		r := runInstructions(t, instructionsWorkspace, settings(), nil, func(_ string, ed *headlesstest.Editor) {
			ed.OpenBuffer("AGENTS.md", "UNSAVED: use the new logger.\n")
		})
		if sys := r.m.requests("1")[0].System; !strings.Contains(sys, "UNSAVED: use the new logger.") || strings.Contains(sys, "Run go test") {
			t.Errorf("the prompt does not hold the buffer's text:\n%s", sys)
		}
	})
	t.Run("a file past the budget is cut, with a note to the model and a warning to the person", func(t *testing.T) {
		s := settings()
		s.Instructions.MaxTokens = 12 // 48 characters
		files := map[string]string{"main.go": "package main\n",
			"AGENTS.md":     strings.Repeat("Keep functions short.\n", 4), // 88 characters
			"pkg/AGENTS.md": "Never reached.\n"}
		r := runInstructions(t, files, s, nil)
		sys := r.m.requests("1")[0].System
		for _, want := range []string{"Keep functions short.\nKeep functions short.\n[… the rest of this file,", "the instructions' budget is 12 tokens (instructions.maxTokens)",
			`<instructions path="pkg/AGENTS.md" applies-to="pkg/">` + "\n(left out: the instructions' budget of 12 tokens is spent)"} {
			if !strings.Contains(sys, want) {
				t.Errorf("the prompt lacks %q:\n%s", want, sys)
			}
		}
		if strings.Contains(sys, "Never reached.") {
			t.Error("a file past the budget is in the prompt")
		}
		evs := r.instructionEvents()
		if len(evs) != 1 {
			t.Fatalf("events %+v", evs)
		}
		if f := evs[0].Instructions; !f[0].Cut || f[0].Tokens != 11 || !f[1].Cut || f[1].Tokens != 0 {
			t.Errorf("files %+v", f)
		}
		w := r.warnings()
		if len(w) != 2 || !strings.Contains(w[0], "AGENTS.md is longer than the instructions' budget of 12 tokens (instructions.maxTokens): the model gets its first 11 tokens.") {
			t.Errorf("warnings %q: want one per file, once per task", w)
		}
	})
	t.Run("a worker reads them again at each turn: a change reaches its next turn, and the task's events", func(t *testing.T) {
		var root string
		fn := func(_ context.Context, req *clients.Request) (*clients.Response, error) {
			switch {
			case req.Agent == clients.AgentCoordinator:
				return planOf(map[string]any{"id": "1", "content": "change main.go"}), nil
			case len(req.Messages) == 1:
				// The person edits AGENTS.md while the worker works.
				if err := os.WriteFile(filepath.Join(root, "AGENTS.md"), []byte("CHANGED: also run go vet.\n"), 0o644); err != nil {
					return nil, err
				}
				return &clients.Response{ToolCalls: []clients.ToolCall{call("read_file", map[string]any{"path": "main.go"})}}, nil
			}
			return finish("done"), nil
		}
		r := runInstructions(t, instructionsWorkspace, settings(), fn, func(r string, _ *headlesstest.Editor) { root = r })
		reqs := r.m.requests("1")
		if len(reqs) != 2 || strings.Contains(reqs[0].System, "CHANGED") || !strings.Contains(reqs[1].System, "CHANGED: also run go vet.") {
			t.Fatalf("the second turn's prompt does not hold the change")
		}
		evs := r.instructionEvents()
		if len(evs) != 2 || evs[1].SubtaskID != "1" || evs[1].Instructions[0].Tokens != 7 {
			t.Errorf("events %+v: want the task's, then the worker's after the change", evs)
		}
	})
	t.Run("a workspace without instruction files sends no event and no block", func(t *testing.T) {
		r := runInstructions(t, map[string]string{"main.go": "package main\n"}, settings(), nil)
		if evs := r.instructionEvents(); len(evs) != 0 {
			t.Errorf("events %+v", evs)
		}
		if sys := r.m.requests("1")[0].System; strings.Contains(sys, "instructions") {
			t.Errorf("a prompt speaks of instructions:\n%s", sys)
		}
	})
	t.Run("maxTokens 0, a denied zone and an untrusted workspace read none", func(t *testing.T) {
		for name, change := range map[string]func(*api.Settings){
			"maxTokens 0": func(s *api.Settings) { s.Instructions.MaxTokens = 0 },
			"denied zones": func(s *api.Settings) {
				s.Zones.Deny = append(s.Zones.Deny, "**/AGENTS.md", "**/CLAUDE.md", ".github/**")
			},
			"untrusted": func(s *api.Settings) { s.WorkspaceTrust = api.TrustUntrusted },
		} {
			s := settings()
			change(&s)
			r := runInstructions(t, instructionsWorkspace, s, nil)
			if evs := r.instructionEvents(); len(evs) != 0 {
				t.Errorf("%s: events %+v", name, evs)
			}
		}
	})
}

// instrRunner is an engine that keeps the prompt it is given.
type instrRunner struct {
	agent string
	mu    sync.Mutex
	job   engines.Job
}

func (r *instrRunner) Usable(string) error   { return nil }
func (r *instrRunner) Available() []string   { return []string{"eng"} }
func (r *instrRunner) SharesMCP(string) bool { return false }
func (r *instrRunner) Resolve(name string) (engines.Resolved, error) {
	return engines.Resolved{Name: name, Agent: r.agent}, nil
}
func (r *instrRunner) Run(_ context.Context, _ string, job engines.Job, _ engines.Host) (engines.Outcome, error) {
	r.mu.Lock()
	r.job = job
	r.mu.Unlock()
	return engines.Outcome{StopReason: "end_turn", Text: "done"}, nil
}

func TestEnginesGetTheInstructionsTheyDoNotReadThemselves(t *testing.T) {
	cases := []struct {
		agent, commands string
		want, not       []string
	}{
		{api.EngineCodex, api.CommandsAsk, []string{"Use tabs in web/."}, []string{"Run go test", "Handlers in pkg/api"}},
		{api.EngineClaude, api.CommandsAllow, []string{"Run go test", "Handlers in pkg/api"}, []string{"Use tabs in web/."}},
		{api.EngineClaude, api.CommandsAsk, []string{"Run go test", "Handlers in pkg/api", "Use tabs in web/."}, nil},
		{api.EngineGemini, api.CommandsAsk, []string{"Run go test", "Handlers in pkg/api", "Use tabs in web/."}, nil},
	}
	for _, c := range cases {
		t.Run(c.agent+" under "+c.commands, func(t *testing.T) {
			root := t.TempDir()
			testkit.WriteFiles(t, root, instructionsWorkspace)
			ws, err := tracking.Open(tracking.Config{Root: root, StateDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			m := &funcModel{fn: func(context.Context, *clients.Request) (*clients.Response, error) {
				return planOf(map[string]any{"id": "1", "content": "change it"}), nil
			}}
			r := &instrRunner{agent: c.agent}
			ev := &fakeEvents{}
			e, err := New(Config{Root: root, Editor: headlesstest.New(root, headlesstest.AllCaps()), Events: ev, Tracking: ws, Models: m,
				Engines: r, EngineWorkDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			s := settings()
			s.Commands = c.commands
			if c.commands == api.CommandsAsk {
				s.AllowCommands = []string{}
			}
			res, err := e.Run(testkit.Context(t), api.RunParams{Prompt: "go", Engine: "eng"}, s)
			if err != nil || res.State != api.TaskDone {
				t.Fatalf("run: %v %+v", err, res)
			}
			for _, w := range c.want {
				if !strings.Contains(r.job.Prompt, w) {
					t.Errorf("the prompt lacks %q:\n%s", w, r.job.Prompt)
				}
			}
			for _, n := range c.not {
				if strings.Contains(r.job.Prompt, n) {
					t.Errorf("the prompt holds %q, which the agent reads itself", n)
				}
			}
		})
	}
}
