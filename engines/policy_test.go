package engines

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// report is what the fake agent said it was started and opened with
// (enginestest.Step.Report).
type report struct {
	Args      []string
	Meta      map[string]any
	Mode      string
	Cwd, Dir  string
	Settings  map[string]any // claude's --settings, decoded
	Sources   []any          // claude's settingSources
	PolicyArg string         // gemini's --admin-policy
}

var reportRE = regexp.MustCompile(`args: (\[.*?\]) meta: (.*?) mode: (.*?) cwd: (.*?) dir: (.*?)\|`)

func readReport(t *testing.T, h *fakeHost) report {
	t.Helper()
	m := reportRE.FindStringSubmatch(h.messages())
	if m == nil {
		t.Fatalf("no report in %q", h.messages())
	}
	var r report
	if err := json.Unmarshal([]byte(m[1]), &r.Args); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(m[2]), &r.Meta)
	r.Mode, r.Cwd, r.Dir = m[3], m[4], m[5]
	if cc, ok := r.Meta["claudeCode"].(map[string]any); ok {
		opts, _ := cc["options"].(map[string]any)
		r.Sources, _ = opts["settingSources"].([]any)
		extra, _ := opts["extraArgs"].(map[string]any)
		if s, ok := extra["settings"].(string); ok {
			_ = json.Unmarshal([]byte(s), &r.Settings)
		}
	}
	for i, a := range r.Args {
		if a == "--admin-policy" && i+1 < len(r.Args) {
			r.PolicyArg = r.Args[i+1]
		}
	}
	return r
}

// agentManager is a Manager whose engine name is the fake agent, giving
// itself as (name and version) and opening its sessions in mode.
func agentManager(t *testing.T, name, as, mode string, isolate *bool, script ...enginestest.Step) *Manager {
	t.Helper()
	argv, env := enginestest.FakeAgent(t, script...)
	if as != "" {
		env[enginestest.FakeAgentAs] = as
	}
	if mode != "" {
		env[enginestest.FakeAgentMode] = mode
	}
	m := NewManager(Options{Version: "test"})
	m.Configure(map[string]api.EngineConfig{name: {Command: argv, Env: env, Isolate: isolate}})
	return m
}

func TestEnginesAreHeldToTheCommandsSetting(t *testing.T) {
	no := false
	run := func(t *testing.T, m *Manager, name, commands string, h *fakeHost) (Outcome, error) {
		t.Helper()
		return m.Run(testkit.Context(t), name, Job{Prompt: "go", Root: h.root, WorkDir: t.TempDir(), Commands: commands}, h)
	}
	t.Run("claude asks before Bash and fetches whatever its settings allow, reads no repository settings, and leaves bypassPermissions", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "claude", "", "bypassPermissions", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "claude", api.CommandsAsk, h); err != nil {
			t.Fatal(err)
		}
		r := readReport(t, h)
		perms, _ := r.Settings["permissions"].(map[string]any)
		if r.Mode != "default" || len(r.Sources) != 1 || r.Sources[0] != "user" || !strings.Contains(mustString(perms["ask"]), `"Bash"`) ||
			!strings.Contains(mustString(perms["allow"]), `"mcp__agentls"`) || perms["deny"] != nil {
			t.Fatalf("claude was opened with %+v", r)
		}
	})
	t.Run("claude under deny has Bash, WebFetch and WebSearch denied", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "claude", "", "default", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "claude", api.CommandsDeny, h); err != nil {
			t.Fatal(err)
		}
		r := readReport(t, h)
		perms, _ := r.Settings["permissions"].(map[string]any)
		for _, tool := range []string{"Bash", "WebFetch", "WebSearch"} {
			if !strings.Contains(mustString(perms["deny"]), `"`+tool+`"`) {
				t.Fatalf("%s is not denied: %+v", tool, r)
			}
		}
		if r.Mode != "default" {
			t.Fatalf("mode %q", r.Mode)
		}
	})
	t.Run("codex starts with an approval policy that asks", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "codex", "", "", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "codex", api.CommandsAsk, h); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(readReport(t, h).Args, " "); got != `-c approval_policy="untrusted"` {
			t.Fatalf("codex's arguments: %q", got)
		}
	})
	t.Run("codex under deny starts without its shell tools", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "codex", "", "", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "codex", api.CommandsDeny, h); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(readReport(t, h).Args, " ")
		if !strings.Contains(got, "features.shell_tool=false") || !strings.Contains(got, "features.unified_exec=false") {
			t.Fatalf("codex's arguments: %q", got)
		}
	})
	t.Run("gemini starts with an admin policy that denies its shell, removed when it ends", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "gemini", "", "yolo", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "gemini", api.CommandsDeny, h); err != nil {
			t.Fatal(err)
		}
		r := readReport(t, h)
		if r.PolicyArg == "" {
			t.Fatalf("no --admin-policy in %q", r.Args)
		}
		if _, err := os.Stat(r.PolicyArg); !os.IsNotExist(err) {
			t.Fatalf("the policy file %s is left after the run (%v)", r.PolicyArg, err)
		}
		if r.Mode != "default" {
			t.Fatalf("gemini's session stayed in mode %q", r.Mode)
		}
	})
	t.Run("gemini's policy says run_shell_command asks under ask and is denied under deny", func(t *testing.T) {
		for commands, want := range map[string]string{api.CommandsAsk: `decision = "ask_user"`, api.CommandsDeny: `decision = "deny"`} {
			hd, err := holdFor(api.EngineGemini, commands, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(hd.file)
			if err != nil || !strings.Contains(string(data), want) || !strings.Contains(string(data), `toolName = "run_shell_command"`) {
				t.Fatalf("%s: %s (%v)", commands, data, err)
			}
			hd.release()
		}
	})
	t.Run("under allow nothing is held: the agent's own configuration decides", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "claude", "", "bypassPermissions", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "claude", api.CommandsAllow, h); err != nil {
			t.Fatal(err)
		}
		if r := readReport(t, h); r.Mode != "bypassPermissions" || len(r.Meta) != 0 || len(r.Args) != 0 {
			t.Fatalf("opened with %+v", r)
		}
	})
	t.Run("an agent that says at initialize it is one held by its arguments, which its command did not get, is refused with why", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "wrapped", "codex-acp 0.16.0", "", &no, enginestest.Step{Say: "ran"})
		_, err := run(t, m, "wrapped", api.CommandsDeny, h)
		if err == nil || !strings.Contains(err.Error(), "codex-acp 0.16.0") || !strings.Contains(err.Error(), "commands setting (deny)") {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(h.messages(), "ran") {
			t.Fatal("it ran")
		}
		if _, err := run(t, m, "wrapped", api.CommandsAllow, h); err != nil {
			t.Fatalf("under allow: %v", err)
		}
	})
	t.Run("an agent that says at initialize it is claude-agent-acp gets its session's hold", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		m := agentManager(t, "wrapped", "@zed-industries/claude-agent-acp 0.23.1", "bypassPermissions", &no, enginestest.Step{Report: true})
		if _, err := run(t, m, "wrapped", api.CommandsAsk, h); err != nil {
			t.Fatal(err)
		}
		if r := readReport(t, h); r.Mode != "default" || len(r.Sources) != 1 {
			t.Fatalf("opened with %+v", r)
		}
	})
	t.Run("a command refused that ends the agent's turn (Codex) ends the subtask, not fails it", func(t *testing.T) {
		h := newFakeHost(t.TempDir())
		h.decide = func(p Permission) Decision { return Reject }
		m := agentManager(t, "codex", "", "", &no, enginestest.Step{Exec: "rm -rf build", Abort: true})
		out, err := run(t, m, "codex", api.CommandsAsk, h)
		if err != nil || len(out.Refused) != 1 || out.Refused[0] != "rm -rf build" {
			t.Fatalf("outcome %+v, err %v", out, err)
		}
		if len(h.commands) != 0 {
			t.Fatalf("commands ran: %q", h.commands)
		}
	})
}

func TestIsolationFromTheAgentsInitializeAnswer(t *testing.T) {
	cases := []struct {
		name     string
		as       string
		isolate  *bool
		isolated bool
	}{
		{"claude-agent-acp 0.17.1 routes its writes through the client: not isolated", "@zed-industries/claude-agent-acp 0.17.1", nil, false},
		{"claude-agent-acp 0.23.1 writes the disk itself: isolated", "@zed-industries/claude-agent-acp 0.23.1", nil, true},
		{"an agent it does not know stays isolated", "goose 1.0.0", nil, true},
		{"the setting's isolate wins", "@zed-industries/claude-agent-acp 0.23.1", new(bool), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			testkit.WriteFiles(t, root, map[string]string{"main.txt": "hello\n"})
			h := newFakeHost(root)
			m := agentManager(t, "wrapped", c.as, "", c.isolate, enginestest.Step{Report: true}, enginestest.Step{WriteDisk: "made.txt", Content: "x\n"})
			work := t.TempDir()
			out, err := m.Run(testkit.Context(t), "wrapped", Job{Prompt: "go", Root: root, WorkDir: work, Commands: api.CommandsAsk}, h)
			if err != nil {
				t.Fatal(err)
			}
			r := readReport(t, h)
			if (r.Cwd != root) != c.isolated {
				t.Fatalf("session cwd %s (root %s): isolated should be %v", r.Cwd, root, c.isolated)
			}
			if c.isolate == nil && (r.Dir == root || filepath.Dir(r.Dir) != work) {
				t.Fatalf("started in %s: an agent whose version is unknown starts in an empty directory of its own", r.Dir)
			}
			_, statErr := os.Stat(filepath.Join(root, "made.txt"))
			if c.isolated && (statErr == nil || len(out.Changes) != 1) {
				t.Fatalf("isolated: the workspace got made.txt (%v), changes %+v", statErr, out.Changes)
			}
			if !c.isolated && statErr != nil {
				t.Fatalf("not isolated, and made.txt is not in the workspace: %v", statErr)
			}
			if left, _ := os.ReadDir(work); len(left) > 0 && c.isolate == nil {
				for _, e := range left {
					if e.Name() != "policies" {
						t.Fatalf("%s left in the work directory", e.Name())
					}
				}
			}
		})
	}
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTheBridgesToolsAreNotAskedTwice(t *testing.T) {
	no := false
	h := newFakeHost(t.TempDir())
	h.decide = func(Permission) Decision { return Reject }
	m := agentManager(t, "fake", "", "", &no,
		enginestest.Step{Ask: "mcp__everything__echo (agentls MCP Server)"},
		enginestest.Step{Ask: "mcp__agentls__read_file"},
		enginestest.Step{Ask: "mcp__elsewhere__drop_table"})
	job := Job{Prompt: "go", Root: h.root, Commands: api.CommandsAsk, MCPServers: map[string]api.MCPServer{"agentls": {Command: "agentls", Args: []string{"mcp"}}}}
	if _, err := m.Run(testkit.Context(t), "fake", job, h); err != nil {
		t.Fatal(err)
	}
	msgs := h.messages()
	for _, want := range []string{"allowed: mcp__everything__echo (agentls MCP Server)|", "allowed: mcp__agentls__read_file|", "refused: mcp__elsewhere__drop_table|"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("messages %q lack %q", msgs, want)
		}
	}
	if len(h.perms) != 1 || h.perms[0].Title != "mcp__elsewhere__drop_table" {
		t.Errorf("the host was asked %+v: only the tool of another server goes to it", h.perms)
	}
}
