package handlers

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// realAgent is one of the real agents the engine tests run from npm, with
// the tool calls its fake model makes it do.
type realAgent struct {
	name   string // the subtest
	engine string // its name in the engines setting
	bin    string // the program npx runs
	args   []string
	// prefix is the npm project npx runs it from, made from the installed
	// agents (npm: scripts/engines-npm.sh's directory).
	prefix func(t *testing.T, npm string) string
	model  func(testing.TB, ...enginestest.Turn) *enginestest.Server
	env    func(testing.TB, string, string) map[string]string
	read   func(rel string) enginestest.Turn
	write  func(rel, content string) enginestest.Turn
	exec   func(command string) enginestest.Turn
	// version is what agent/engines must say of it, started through npx.
	version string
	// isolated: it runs in a worktree of its own.
	isolated bool
	// routesReads: its reads come through fs/read_text_file, so they see
	// the editor's buffers.
	routesReads bool
	// readsShow: its reads are tool calls with locations (heat).
	readsShow bool
	// rejectEnds: a refused permission or change ends its turn (Claude
	// Code 0.17 takes a refusal as the person interrupting it), so it does
	// nothing after.
	rejectEnds bool
	// writesAreCommands: it writes files with shell commands (Codex's
	// exec), which ask under the commands setting like any command.
	writesAreCommands bool
	// trust, when set, records that the user trusts the workspace in the
	// agent's own configuration: Gemini CLI starts no MCP server (the
	// bridge, and so the user's servers) in a folder the user has not
	// trusted (docs/ENGINES.md).
	trust func(t *testing.T, env map[string]string, root string)
}

// geminiTrust writes the user's trust of root into Gemini CLI's home, as
// `gemini trust` or its first-run question does.
func geminiTrust(t *testing.T, env map[string]string, root string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{root: "TRUST_FOLDER"})
	if err := os.WriteFile(filepath.Join(env["HOME"], ".gemini", "trustedFolders.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// npmPrefix is the directory scripts/engines-npm.sh installed the agents
// in: npx --prefix there runs the version its node_modules/.bin links.
func npmPrefix(_ *testing.T, npm string) string { return npm }

// claude017Prefix is an npm project holding claude-agent-acp 0.17.1 as
// @zed-industries/claude-agent-acp with its bin, as Zed's own install of
// an older version is (the suite installs it under an alias beside
// 0.23.1).
func claude017Prefix(t *testing.T, npm string) string {
	t.Helper()
	dir := t.TempDir()
	pkg := filepath.Join(npm, "node_modules", "claude-agent-acp-0.17")
	if fi, err := os.Stat(filepath.Join(pkg, "dist", "index.js")); err != nil || fi.Mode()&0o111 == 0 {
		t.Fatalf("claude-agent-acp 0.17.1's bin is not executable (%v): run scripts/engines-npm.sh again", err)
	}
	links := map[string]string{
		filepath.Join(dir, "node_modules", "@zed-industries", "claude-agent-acp"): pkg,
		filepath.Join(dir, "node_modules", ".bin", "claude-agent-acp"):            filepath.Join(pkg, "dist", "index.js"),
	}
	for link, target := range links {
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var realAgents = []realAgent{
	{name: "claude-agent-acp 0.17.1", engine: "claude", bin: "claude-agent-acp", prefix: claude017Prefix, model: enginestest.Anthropic, env: enginestest.ClaudeEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("mcp__acp__Read", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("mcp__acp__Write", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		exec: func(c string) enginestest.Turn {
			return enginestest.Call("mcp__acp__Bash", map[string]any{"command": c, "description": "Run it", "timeout": 60000})
		},
		version: enginestest.ClaudeOld, routesReads: true, readsShow: true, rejectEnds: true},
	{name: "claude-agent-acp 0.23.1", engine: "claude", bin: "claude-agent-acp", prefix: npmPrefix, model: enginestest.Anthropic, env: enginestest.ClaudeEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("Read", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("Write", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		exec: func(c string) enginestest.Turn {
			return enginestest.Call("Bash", map[string]any{"command": c, "description": "Run it"})
		},
		version: enginestest.ClaudeCurrent, isolated: true, readsShow: true},
	{name: "codex-acp 0.16.0", engine: "codex", bin: "codex-acp", prefix: npmPrefix, model: enginestest.OpenAIResponses, env: enginestest.CodexEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("exec_command", map[string]any{"cmd": "cat " + rel, "workdir": "{cwd}"})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("exec_command", map[string]any{"cmd": "mkdir -p " + filepath.Dir(rel) + " && printf '%s' '" + c + "' > " + rel, "workdir": "{cwd}"})
		},
		exec: func(c string) enginestest.Turn {
			return enginestest.Call("exec_command", map[string]any{"cmd": c, "workdir": "{cwd}"})
		},
		version: enginestest.Codex, isolated: true, writesAreCommands: true},
	{name: "gemini-cli 0.61.0", engine: "gemini", bin: "gemini", args: []string{"--experimental-acp"}, prefix: npmPrefix, model: enginestest.Gemini, env: enginestest.GeminiEnv,
		read: func(rel string) enginestest.Turn {
			return enginestest.Call("read_file", map[string]any{"file_path": "{cwd}/" + rel})
		},
		write: func(rel, c string) enginestest.Turn {
			return enginestest.Call("write_file", map[string]any{"file_path": "{cwd}/" + rel, "content": c})
		},
		exec: func(c string) enginestest.Turn {
			return enginestest.Call("run_shell_command", map[string]any{"command": c})
		},
		version: enginestest.GeminiCLI, readsShow: true, trust: geminiTrust},
}

// The command the agents run: its output says it really ran (printf
// makes 42 of its format), and no agent takes it for one that is safe to
// run without asking.
const (
	realCommand = `printf 'command-ran-%d\n' 42`
	ranMark     = "command-ran-42"
	echoText    = "hello from inside the engine"
)

// realRunTimeout bounds a whole task on a real agent: each engine is a node
// process started through npx, which alone takes seconds on a loaded
// machine, and a task starts one per subtask.
const realRunTimeout = 3 * time.Minute

// realEnv is a sidecar, with default settings, whose subtask 1 runs on a
// real agent (started through npx, as Zed starts it) talking to a fake
// model, and subtask 2 on the built-in worker.
type realEnv struct {
	ed    *headless.Editor
	root  string
	model *enginestest.Server
	mark  string // in the agent's environment, to find its processes

	mu    sync.Mutex
	asked []string // the questions the person was asked
}

const twoSubtasksScript = `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [
    {"id": "1", "content": "Read main.txt and write out.txt", "engine": "%s"},
    {"id": "2", "content": "Write the notes"}]}}]}],
  "2": [{"toolCalls": [{"name": "write_file", "arguments": {"path": "notes.txt", "content": "notes\n"}}]},
        {"toolCalls": [{"name": "finish", "arguments": {"summary": "notes written"}}]}]}}`

// realOptions are what a test changes of the defaults.
type realOptions struct {
	// sub makes the workspace a subdirectory of the repository.
	sub bool
	// settings are initialization options beyond the defaults (only the
	// deny test sets commands).
	settings map[string]any
}

// gitRepo makes dir a git repository with files committed, whatever the
// user's git configuration says.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	testkit.WriteFiles(t, dir, files)
	env := append(os.Environ(), "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

func startReal(t *testing.T, npm, mcpNPM, agentls string, a realAgent, o realOptions, turns ...enginestest.Turn) *realEnv {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	repo := t.TempDir()
	if real, err := filepath.EvalSymlinks(repo); err == nil {
		repo = real
	}
	root := repo
	// .orchestration turns the trace on (docs/TRACKING.md).
	files := map[string]string{"main.txt": "on disk\n", "README.md": "the repository\n", ".orchestration/.keep": ""}
	if o.sub {
		root = filepath.Join(repo, "pkg", "app")
		files = map[string]string{"README.md": "the repository\n", "pkg/app/main.txt": "on disk\n", "pkg/other.txt": "outside the workspace\n"}
	}
	gitRepo(t, repo, files)
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, []byte(strings.Replace(twoSubtasksScript, "%s", a.engine, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	model := a.model(t, turns...)
	env := a.env(t, t.TempDir(), model.URL)
	var b [8]byte
	_, _ = rand.Read(b[:])
	mark := hex.EncodeToString(b[:])
	env["AGENTLS_ENGINE_TEST_MARK"] = mark
	if a.trust != nil {
		a.trust(t, env, root)
	}
	// As Zed starts an npm agent offline.
	command := append([]string{"npx", "--offline", "--prefix", a.prefix(t, npm), a.bin}, a.args...)
	init := map[string]any{
		"model":      "script:" + script,
		"engines":    map[string]any{a.engine: map[string]any{"command": command, "env": env}},
		"mcpServers": map[string]any{"everything": map[string]any{"command": "node", "args": []string{filepath.Join(mcpNPM, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio"}}},
	}
	for k, v := range o.settings {
		init[k] = v
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	ed, err := headless.Start(ctx, headless.Options{
		Root: root,
		Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
			return Serve(ctx, in, out, Options{Version: "test", Cwd: root, Getenv: func(string) string { return "" }, bridgeExecutable: agentls})
		},
		Caps:                  headless.FullCapabilities(),
		InitializationOptions: init,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ed.Close)
	r := &realEnv{ed: ed, root: root, model: model, mark: mark}
	// The person runs what is asked (commands, MCP tools).
	run := headless.ChooseAction("Run")
	ed.Handle(api.MethodShowMessageRequest, func(ctx context.Context, raw json.RawMessage) (any, error) {
		var p api.ShowMessageRequestParams
		_ = json.Unmarshal(raw, &p)
		r.mu.Lock()
		r.asked = append(r.asked, p.Message)
		r.mu.Unlock()
		return run(ctx, raw)
	})
	return r
}

// questions are the questions the person was asked that contain s.
func (r *realEnv) questions(s string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.asked {
		if strings.Contains(q, s) {
			out = append(out, q)
		}
	}
	return out
}

// modelSaw reports whether any request to the fake model carried s (a
// tool's result the agent passed on).
func (r *realEnv) modelSaw(s string) bool {
	for _, q := range r.model.Requests() {
		if strings.Contains(string(q.Body), s) {
			return true
		}
	}
	return false
}

func (r *realEnv) events(t *testing.T, kind, sub string) []api.TaskEvent {
	t.Helper()
	var out []api.TaskEvent
	for _, n := range r.ed.Notifications() {
		if n.Method != api.MethodTaskUpdate {
			continue
		}
		var p api.TaskUpdateParams
		if err := n.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if (kind == "" || p.Event.Kind == kind) && (sub == "" || p.Event.SubtaskID == sub) {
			out = append(out, p.Event)
		}
	}
	return out
}

// agentProcesses lists the processes whose environment holds mark.
func agentProcesses(mark string) []string {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var out []string
	for _, e := range envs {
		data, err := os.ReadFile(e)
		if err != nil || !strings.Contains(string(data), "AGENTLS_ENGINE_TEST_MARK="+mark) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(e), "stat"))
		if end := strings.LastIndexByte(string(stat), ')'); end > 0 {
			if f := strings.Fields(string(stat[end+1:])); len(f) > 0 && f[0] == "Z" {
				continue
			}
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(e), "cmdline"))
		out = append(out, filepath.Base(filepath.Dir(e))+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

// awaitNoAgent polls the process table until no process of the agent is
// left.
func (r *realEnv) awaitNoAgent(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := agentProcesses(r.mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the agent left running: %q", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *realEnv) file(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// realDirs are the installed agents and MCP servers, or the test is
// skipped (failed under CI) saying how to get them.
func realDirs(t *testing.T) (npm, mcpNPM string) {
	t.Helper()
	npm = enginestest.NPM(t)
	mcpNPM = os.Getenv("AGENTLS_MCP_NPM")
	why := ""
	switch {
	case mcpNPM == "":
		why = "AGENTLS_MCP_NPM is not set: the engines call server-everything (AGENTLS_MCP_NPM=$(bash scripts/mcp-npm.sh))"
	case !exists(filepath.Join(mcpNPM, "node_modules", "@modelcontextprotocol", "server-everything")):
		why = "AGENTLS_MCP_NPM=" + mcpNPM + " holds no server-everything: run scripts/mcp-npm.sh"
	}
	for _, prog := range []string{"node", "npx", "git"} {
		if _, err := exec.LookPath(prog); err != nil && why == "" {
			why = prog + " is not installed"
		}
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and " + why)
		}
		t.Skip(why)
	}
	return npm, mcpNPM
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestRealEngines runs the real agents from npm (scripts/engines-npm.sh),
// started through npx as Zed starts them, offline against their fake model
// servers, with default settings in a git repository: as the engine of
// subtask 1 beside a built-in worker on subtask 2.
func TestRealEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("the real agents take seconds each to start")
	}
	npm, mcpNPM := realDirs(t)
	agentls := buildAgentls(t)
	for _, a := range realAgents {
		t.Run(a.name, func(t *testing.T) {
			t.Run("is listed with its own version and isolation, started through npx", func(t *testing.T) {
				r := startReal(t, npm, mcpNPM, agentls, a, realOptions{})
				var res api.EnginesResult
				if err := r.ed.Call(testkit.Context(t), api.MethodEngines, api.EnginesParams{}, &res); err != nil {
					t.Fatal(err)
				}
				for _, e := range res.Engines {
					if e.Name != a.engine {
						continue
					}
					if !e.Usable || e.Version != a.version || e.Isolated != a.isolated || e.Note != "" {
						t.Fatalf("listed as %+v; want version %s, isolated %v", e, a.version, a.isolated)
					}
					return
				}
				t.Fatalf("%s is not listed: %+v", a.engine, res.Engines)
			})
			t.Run("in the repository's root, default settings: an approved and a rejected change, an approved command, the user's MCP server", func(t *testing.T) {
				r := startReal(t, npm, mcpNPM, agentls, a, realOptions{},
					a.read("main.txt"), a.write("out.txt", "from the engine\n"), a.exec(realCommand),
					enginestest.Call("~mcp__everything__echo", map[string]any{"message": echoText}),
					a.write("rejected.txt", "refused\n"),
					enginestest.Say("The engine is done."))
				r.ed.OpenBuffer("main.txt", "unsaved in the editor\n")
				// The person approves out.txt and rejects rejected.txt when
				// each is proposed; nothing is on disk before.
				var confirmMu sync.Mutex
				var proposed []string
				r.ed.ConfirmEdits(func(ctx context.Context, p api.ApplyWorkspaceEditParams) (bool, error) {
					b, _ := json.Marshal(p)
					confirmMu.Lock()
					defer confirmMu.Unlock()
					for _, f := range []string{"out.txt", "rejected.txt", "notes.txt"} {
						if strings.Contains(string(b), f) {
							proposed = append(proposed, f)
							if exists(filepath.Join(r.root, f)) {
								t.Errorf("%s is on disk while its approval is asked", f)
							}
						}
					}
					return !strings.Contains(string(b), "rejected.txt"), nil
				})
				var res api.RunResult
				if err := r.ed.Call(testkit.ContextWithin(t, realRunTimeout), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res); err != nil {
					t.Fatal(err)
				}
				if res.State != api.TaskDone {
					t.Fatalf("state %s: %s\n%s", res.State, res.Summary, r.ed.Stderr())
				}
				var order []string
				for _, e := range r.events(t, "", "") {
					if e.Kind == api.EventSubtaskStarted || e.Kind == api.EventSubtaskFinished {
						order = append(order, e.Kind+":"+e.SubtaskID)
					}
				}
				if len(order) < 2 || order[0] != "subtaskStarted:1" || order[1] != "subtaskStarted:2" {
					t.Errorf("order %v: both subtasks start before either ends", order)
				}
				if res.Subtasks[0].Engine != a.engine {
					t.Errorf("subtask 1: %+v", res.Subtasks[0])
				}
				if got := r.file(t, "out.txt"); got != "from the engine\n" {
					t.Errorf("out.txt = %q", got)
				}
				if exists(filepath.Join(r.root, "rejected.txt")) && !a.rejectEnds {
					t.Errorf("rejected.txt is on disk: the person rejected it")
				}
				if a.routesReads && !r.modelSaw("unsaved in the editor") {
					t.Errorf("the model never saw the editor's unsaved buffer")
				}
				// The command asked the person, ran, and its output reached
				// the model.
				if len(r.questions("command-ran-")) == 0 || !r.modelSaw(ranMark) {
					t.Errorf("the command under ask: asked %q; the model saw its output: %v", r.questions(""), r.modelSaw(ranMark))
				}
				// server-everything's echo, called from inside the engine
				// through the bridge, with the person's approval.
				if len(r.questions("`echo` of the server `everything`")) != 1 || !r.modelSaw("Echo: "+echoText) {
					t.Errorf("the MCP call: asked %q; the model saw the echo: %v", r.questions(""), r.modelSaw("Echo: "+echoText))
				}
				if twice := r.questions("wants to run mcp__"); len(twice) > 0 {
					t.Errorf("the engine's own permission for the bridge's tool was asked too: %q", twice)
				}
				for _, doubled := range []string{"Not applied: not applied", "Error: Error:", "Not applied: Not applied"} {
					if r.modelSaw(doubled) {
						t.Errorf("the agent was told %q", doubled)
					}
				}
				if !a.rejectEnds {
					var applied, rejected []string
					for _, c := range res.Changes {
						if c.Applied {
							applied = append(applied, c.Path)
						} else {
							rejected = append(rejected, c.Path)
						}
					}
					if !strings.Contains(strings.Join(applied, " "), "out.txt") || !strings.Contains(strings.Join(rejected, " "), "rejected.txt") {
						t.Errorf("changes: applied %v, rejected %v (proposed %v)", applied, rejected, proposed)
					}
				}
				var snap api.HeatSnapshot
				if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{TaskID: "t1"}, &snap); err != nil {
					t.Fatal(err)
				}
				heat := map[string]string{}
				for _, n := range snap.Nodes {
					heat[n.Path] = n.LastAction
				}
				if heat["out.txt"] != api.ActionWrite || (a.readsShow && heat["main.txt"] == "") {
					t.Errorf("heat: %v", heat)
				}
				var tr api.TraceResult
				if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "out.txt"}, &tr); err != nil {
					t.Fatal(err)
				}
				if len(tr.Entries) != 1 || tr.Entries[0].SubtaskID != "1" {
					t.Errorf("trace of out.txt: %+v", tr.Entries)
				}
				r.awaitNoAgent(t)
			})
			t.Run("in a subdirectory of the repository, commands deny: the change lands there, the command and the MCP tool are refused", func(t *testing.T) {
				r := startReal(t, npm, mcpNPM, agentls, a, realOptions{sub: true, settings: map[string]any{"commands": api.CommandsDeny}},
					a.read("main.txt"), a.write("out.txt", "from the engine\n"), a.exec(realCommand),
					enginestest.Call("~mcp__everything__echo", map[string]any{"message": echoText}),
					enginestest.Say("The engine is done."))
				r.ed.ConfirmEdits(func(context.Context, api.ApplyWorkspaceEditParams) (bool, error) { return true, nil })
				var res api.RunResult
				if err := r.ed.Call(testkit.ContextWithin(t, realRunTimeout), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res); err != nil {
					t.Fatal(err)
				}
				if res.State != api.TaskDone {
					t.Fatalf("state %s: %s\n%s", res.State, res.Summary, r.ed.Stderr())
				}
				if a.writesAreCommands {
					// Its writes are commands: refused with the rest.
					if exists(filepath.Join(r.root, "out.txt")) {
						t.Errorf("out.txt was written by a command under deny")
					}
				} else if got := r.file(t, "out.txt"); got != "from the engine\n" {
					t.Errorf("out.txt = %q in the workspace %s", got, r.root)
				}
				if exists(filepath.Join(filepath.Dir(filepath.Dir(r.root)), "out.txt")) {
					t.Errorf("the change landed in the repository's root, not in the workspace")
				}
				if r.modelSaw(ranMark) {
					t.Errorf("the command ran under deny")
				}
				if q := r.questions(""); len(q) != 0 {
					t.Errorf("the person was asked under deny: %q", q)
				}
				if r.modelSaw("Echo: " + echoText) {
					t.Errorf("the MCP tool was called under deny")
				}
				r.awaitNoAgent(t)
			})
			t.Run("start-up figures, with the model answering at once", func(t *testing.T) {
				r := startReal(t, npm, mcpNPM, agentls, a, realOptions{}, enginestest.Say("Hello."))
				start := time.Now()
				done := make(chan error, 1)
				var res api.RunResult
				go func() {
					done <- r.ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res)
				}()
				var started api.TaskEvent
				first := time.Duration(0)
				_, err := r.ed.Await(testkit.ContextWithin(t, realRunTimeout), func(n headless.Notification) bool {
					var p api.TaskUpdateParams
					if n.Method != api.MethodTaskUpdate || n.Decode(&p) != nil || p.Event.SubtaskID != "1" {
						return false
					}
					if p.Event.Kind == api.EventEngineStarted {
						started = p.Event
					}
					if p.Event.Kind == api.EventMessageDelta {
						first = time.Since(start)
						return true
					}
					return false
				})
				if err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil || res.State != api.TaskDone {
					t.Fatalf("run: %v %s", err, res.Summary)
				}
				t.Logf("figures: agent/run to the engine's first update %d ms; the agent's own start (spawn, initialize, session/new) %s",
					first.Milliseconds(), started.Summary)
				r.awaitNoAgent(t)
			})
			t.Run("stop ends it and leaves no process", func(t *testing.T) {
				r := startReal(t, npm, mcpNPM, agentls, a, realOptions{}, enginestest.Turn{Hold: true})
				done := make(chan error, 1)
				var res api.RunResult
				go func() {
					done <- r.ed.Call(context.Background(), api.MethodRun, api.RunParams{Prompt: "work", TaskID: "t1"}, &res)
				}()
				select {
				case <-r.model.Held():
				case err := <-done:
					t.Fatalf("the run ended (%v) before the agent called its model: %s\n%s", err, res.Summary, r.ed.Stderr())
				case <-time.After(2 * time.Minute):
					t.Fatal("the agent never called its model")
				}
				if len(agentProcesses(r.mark)) == 0 {
					t.Fatal("no process of the agent was found while it runs: the test cannot see it")
				}
				start := time.Now()
				if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t1"}, nil); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil || res.State != api.TaskStopped {
					t.Fatalf("run: %v %s", err, res.Summary)
				}
				answered := time.Since(start)
				if left := agentProcesses(r.mark); len(left) > 0 {
					t.Fatalf("agent/run answered stopped with processes of the agent left: %q", left)
				}
				t.Logf("stopped: agent/run answered, no process left, %v after agent/stop", answered)
			})
		})
	}
}
