//go:build unix

package acpface_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/engines/enginestest"
	"github.com/agentls/agentls/internal/testkit"
)

// fakeEngines is the engines setting with the fake agent playing script as
// engine "fake", in the workspace itself.
func fakeEngines(t *testing.T, script ...enginestest.Step) map[string]any {
	t.Helper()
	argv, env := enginestest.FakeAgent(t, script...)
	return map[string]any{"fake": map[string]any{"command": argv, "env": env, "isolate": false}}
}

// engineScript plans subtask 1 on engine (the plan decides: none when "")
// and subtask 2 on the built-in worker, which writes notes.txt; twice, for
// two prompts (the second's agents are 2:coordinator, 2:1, 2:2).
func engineScript(engine string) string {
	one := map[string]any{"id": "1", "content": "Work on main.txt"}
	if engine != "" {
		one["engine"] = engine
	}
	plan := turn{calls: []call{{"plan", map[string]any{"subtasks": []any{one, map[string]any{"id": "2", "content": "Write the notes"}}}}}}
	return script(map[string][]turn{
		"coordinator":   {plan},
		"1":             {{calls: []call{{"write_file", map[string]any{"path": "builtin.txt", "content": "built-in\n"}}}}, finish("the built-in worker did 1")},
		"2":             {{calls: []call{{"write_file", map[string]any{"path": "notes.txt", "content": "notes\n"}}}}, finish("notes written")},
		"2:coordinator": {plan},
		"2:1":           {{calls: []call{{"write_file", map[string]any{"path": "builtin.txt", "content": "built-in\n"}}}}, finish("the built-in worker did 1")},
		"2:2":           {{calls: []call{{"write_file", map[string]any{"path": "notes.txt", "content": "notes\n"}}}}, finish("notes written")},
	})
}

// engineSteps is what the fake engine does: a plan, a read and a write
// through the client, the MCP servers it was given, a last word.
var engineSteps = []enginestest.Step{
	{Plan: []string{"read main.txt", "write out.txt"}},
	{Read: "main.txt"},
	{Write: "out.txt", Content: "from the engine\n"},
	{MCP: true},
	{Say: "The engine is done."},
}

func engineOptionOf(t *testing.T, options []acp.SessionConfigOption) acp.SessionConfigOption {
	t.Helper()
	for _, o := range options {
		if o.ID == "engine" {
			return o
		}
	}
	t.Fatalf("no engine option in %+v", options)
	return acp.SessionConfigOption{}
}

func valuesOf(o acp.SessionConfigOption) []string {
	var out []string
	for _, c := range o.Options {
		out = append(out, c.Value)
	}
	return out
}

// thoughts is what the session's thought chunks said, in order.
func thoughts(updates []acp.SessionNotification) string {
	var b strings.Builder
	for _, u := range of[acp.AgentThoughtChunk](updates) {
		b.WriteString(u.Content.Text)
	}
	return b.String()
}

func TestEngines(t *testing.T) {
	t.Run("a plan puts a subtask on an engine, which works through the client with the bridge as its MCP server", func(t *testing.T) {
		e := start(t, opts{files: map[string]string{"main.txt": "main\n"}, script: engineScript("fake")})
		e.initialize(t, opts{meta: map[string]any{"editMode": "apply", "engines": fakeEngines(t, engineSteps...)}})
		s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		must(t, err)
		opt := engineOptionOf(t, s.ConfigOptions)
		if opt.CurrentValue != "*" || !slices.Contains(valuesOf(opt), "*") || !slices.Contains(valuesOf(opt), "agentls") || !slices.Contains(valuesOf(opt), "fake") {
			t.Fatalf("the engine option: current %v, values %v", opt.CurrentValue, valuesOf(opt))
		}
		res, err := e.prompt(t, s.SessionID, acp.Text("work"))
		must(t, err)
		m := metaOf(t, res.Meta)
		subs, _ := m["subtasks"].([]any)
		if m["state"] != "done" || len(subs) != 2 || subs[0].(map[string]any)["engine"] != "fake" || subs[1].(map[string]any)["engine"] != nil {
			t.Fatalf("_meta.agentls = %v", m)
		}
		if got := e.read(t, "out.txt"); got != "from the engine\n" {
			t.Fatalf("out.txt = %q", got)
		}
		said := thoughts(e.client.seen())
		for _, want := range []string{"Running on fake (started in", "read: main\n", "mcp: agentls", "The engine is done."} {
			if !strings.Contains(said, want) {
				t.Errorf("the thoughts do not say %q:\n%s", want, said)
			}
		}
		if e.client.called(acp.MethodFSReadTextFile) == 0 || e.client.called(acp.MethodFSWriteTextFile) < 2 {
			t.Fatalf("the engine's read and write did not reach the client: %d reads, %d writes",
				e.client.called(acp.MethodFSReadTextFile), e.client.called(acp.MethodFSWriteTextFile))
		}
		var planned bool
		for _, p := range of[acp.Plan](e.client.seen()) {
			em := metaOf(t, p.Entries[0].Meta)
			steps, _ := em["steps"].([]any)
			planned = planned || em["engine"] == "fake" && len(steps) == 2
		}
		if !planned {
			t.Fatal("no plan entry carries the engine and its own steps")
		}
	})

	t.Run("the engine option forces every subtask onto one engine, or onto agentls's own workers", func(t *testing.T) {
		e := start(t, opts{files: map[string]string{"main.txt": "main\n"}, script: engineScript("")})
		e.initialize(t, opts{meta: map[string]any{"editMode": "apply", "engines": fakeEngines(t, engineSteps...)}})
		s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		must(t, err)
		set, err := e.agent.SetSessionConfigOption(testkit.Context(t), &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "engine", Value: "fake"})
		must(t, err)
		if engineOptionOf(t, set.ConfigOptions).CurrentValue != "fake" {
			t.Fatalf("configOptions after the set: %+v", set.ConfigOptions)
		}
		res, err := e.prompt(t, s.SessionID, acp.Text("work"))
		must(t, err)
		for _, sub := range metaOf(t, res.Meta)["subtasks"].([]any) {
			if sub.(map[string]any)["engine"] != "fake" {
				t.Fatalf("subtask %v did not run on the forced engine", sub)
			}
		}

		_, err = e.agent.SetSessionConfigOption(testkit.Context(t), &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "engine", Value: "agentls"})
		must(t, err)
		res, err = e.prompt(t, s.SessionID, acp.Text("work again"))
		must(t, err)
		again, _ := metaOf(t, res.Meta)["subtasks"].([]any)
		if len(again) != 2 {
			var msgs []string
			for _, u := range of[acp.AgentMessageChunk](e.client.seen()) {
				msgs = append(msgs, u.Content.Text)
			}
			t.Fatalf("the second prompt: %v\n%s", metaOf(t, res.Meta), msgs)
		}
		for _, sub := range again {
			if sub.(map[string]any)["engine"] != nil {
				t.Fatalf("subtask %v ran on an engine though agentls's workers were forced", sub)
			}
		}
		if got := e.read(t, "builtin.txt"); got != "built-in\n" {
			t.Fatalf("builtin.txt = %q", got)
		}
	})

	t.Run("refuses an engine option value that is not offered, naming the choices", func(t *testing.T) {
		e := start(t, opts{script: script(nil)})
		e.initialize(t, opts{meta: map[string]any{"engines": map[string]any{
			"fake":   fakeEngines(t)["fake"],
			"broken": map[string]any{"command": []string{"/no/such/agent"}},
		}}})
		s, err := e.agent.NewSession(testkit.Context(t), &acp.NewSessionRequest{Cwd: e.root})
		must(t, err)
		if slices.Contains(valuesOf(engineOptionOf(t, s.ConfigOptions)), "broken") {
			t.Fatal("an engine that cannot be used is offered")
		}
		for _, c := range []struct {
			value any
			says  string
		}{
			{"nope", `"nope" is not one of the engines offered`},
			{"broken", `"broken" is not one of the engines offered`},
			{true, `must be a string`},
		} {
			req := &acp.SetSessionConfigOptionRequest{SessionID: s.SessionID, ConfigID: "engine", Value: c.value}
			if _, ok := c.value.(bool); ok {
				req.Type = "boolean"
			}
			_, err := e.agent.SetSessionConfigOption(testkit.Context(t), req)
			if codeOf(err) != -32602 || !strings.Contains(err.Error(), c.says) {
				t.Errorf("engine = %v: %v", c.value, err)
			}
		}
	})
}
