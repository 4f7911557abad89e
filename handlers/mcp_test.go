package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/editors/headless"
	"github.com/agentls/agentls/handlers"
	"github.com/agentls/agentls/internal/redact"
	"github.com/agentls/agentls/internal/testkit"
)

// npmDir is where scripts/mcp-npm.sh installed the npm MCP servers
// (AGENTLS_MCP_NPM). Without them the test is skipped, saying how to get
// them; under CI it fails instead: CI runs everything.
func npmDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AGENTLS_MCP_NPM")
	why := ""
	switch {
	case dir == "":
		why = "AGENTLS_MCP_NPM is not set: run `bash scripts/test.sh go` (it installs the npm MCP servers), or set AGENTLS_MCP_NPM=$(bash scripts/mcp-npm.sh)"
	case !exists(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything")):
		why = "AGENTLS_MCP_NPM=" + dir + " holds no node_modules/@modelcontextprotocol/server-everything: run scripts/mcp-npm.sh"
	}
	if why == "" {
		if _, err := exec.LookPath("node"); err != nil {
			why = "node is not installed"
		}
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the MCP servers are missing: %s", why)
		}
		t.Skip(why)
	}
	return dir
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func everythingJS(dir string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

func filesystemJS(dir string) string {
	return filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
}

type mcpOpts struct {
	files    map[string]string
	script   string
	options  map[string]any // over editMode apply, commands ask, maxWorkers 1
	redactor *redact.Redactor
	dirs     []string // created in the workspace first
}

// startMCPRun starts an in-process server with a scripted model and the
// options given (commands ask by default: MCP calls are approved).
func startMCPRun(t *testing.T, o mcpOpts) *runEnv {
	t.Helper()
	t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
	root := workspace(t, o.files)
	for _, d := range o.dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sp := filepath.Join(t.TempDir(), "script.json")
	// ROOT in the script stands for the workspace, known only now.
	if err := os.WriteFile(sp, []byte(strings.ReplaceAll(o.script, "ROOT", root)), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := map[string]any{"editMode": "apply", "commands": "ask", "maxWorkers": 1, "model": "script:" + sp}
	for k, v := range o.options {
		opts[k] = v
	}
	red := o.redactor
	if red == nil {
		red = redact.FromEnviron(os.Environ())
	}
	ed := start(t, headless.Options{
		Root: root,
		Serve: func(ctx context.Context, in io.Reader, out io.Writer) int {
			return handlers.Serve(ctx, in, out, handlers.Options{Version: "test", Cwd: root, Base: api.DefaultSettings(),
				Getenv: func(string) string { return "" }, Redactor: red})
		},
		Caps:                  headless.FullCapabilities(),
		InitializationOptions: opts,
	})
	return &runEnv{ed: ed, root: ed.Root()}
}

// script is a plan of one subtask whose worker makes the given turns.
func oneWorker(turns ...string) string {
	return `{"agents": {
  "coordinator": [{"toolCalls": [{"name": "plan", "arguments": {"subtasks": [{"id": "1", "content": "Use the MCP tools"}]}}]}],
  "1": [` + strings.Join(turns, ",\n") + `]}}`
}

func toolTurn(name, args string) string {
	return `{"toolCalls": [{"name": "` + name + `", "arguments": ` + args + `}]}`
}

const finishTurn = `{"toolCalls": [{"name": "finish", "arguments": {"summary": "done"}}]}`

// toolResults are the toolResult events of a tool, in order.
func (r *runEnv) toolResults(t *testing.T, tool string) []api.TaskEvent {
	t.Helper()
	var out []api.TaskEvent
	for _, u := range r.updates(t, "") {
		if u.Event.Kind == api.EventToolResult && u.Event.Tool == tool {
			out = append(out, u.Event)
		}
	}
	return out
}

// approvals records the window/showMessageRequest the editor was sent and
// answers each with the next title of answers (the last one repeats).
type approvals struct {
	mu       sync.Mutex
	messages []string
}

func (a *approvals) handle(ed *headless.Editor, answers ...string) {
	ed.Handle(api.MethodShowMessageRequest, func(_ context.Context, raw json.RawMessage) (any, error) {
		var p api.ShowMessageRequestParams
		_ = json.Unmarshal(raw, &p)
		a.mu.Lock()
		n := len(a.messages)
		a.messages = append(a.messages, p.Message)
		a.mu.Unlock()
		return api.MessageActionItem{Title: answers[min(n, len(answers)-1)]}, nil
	})
}

func (a *approvals) list() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.messages...)
}

func mcpStatus(t *testing.T, r *runEnv, start bool) api.MCPServersResult {
	t.Helper()
	var res api.MCPServersResult
	if err := r.ed.Call(testkit.Context(t), api.MethodMCPServers, api.MCPServersParams{Start: start}, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMCPStdioServerFromNpm(t *testing.T) {
	dir := npmDir(t)
	const secret = "svc-secret-0123456789"
	red := redact.FromEnviron(append(os.Environ(), "SERVICE_TOKEN="+secret))
	r := startMCPRun(t, mcpOpts{
		redactor: red,
		options: map[string]any{"mcpServers": map[string]any{
			"everything": map[string]any{"command": "node", "args": []string{everythingJS(dir), "stdio"}},
		}},
		script: oneWorker(
			toolTurn("mcp__everything__echo", `{"message": "hello from the script"}`),
			toolTurn("mcp__everything__get-sum", `{"a": 2, "b": 3}`),
			toolTurn("mcp__everything__echo", `{"message": "token `+secret+`"}`),
			toolTurn("mcp__everything__get-structured-content", `{"location": "Chicago"}`),
			toolTurn("mcp__everything__get-tiny-image", `{}`),
			finishTurn),
	})
	var asked approvals
	asked.handle(r.ed, "Run", "Deny", "Always allow")

	t.Run("reports the server not started before it is needed", func(t *testing.T) {
		st := mcpStatus(t, r, false)
		if len(st.Servers) != 1 || st.Servers[0].State != api.MCPNotStarted || st.Servers[0].Name != "everything" {
			t.Fatalf("agent/mcpServers = %+v", st)
		}
	})
	res, err := r.run(t, api.RunParams{Prompt: "use the everything server", TaskID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != api.TaskDone {
		t.Fatalf("run = %+v", res)
	}
	echoes := r.toolResults(t, "mcp__everything__echo")
	sums := r.toolResults(t, "mcp__everything__get-sum")
	t.Run("gives the model the tool's result after the person approved the call", func(t *testing.T) {
		if len(echoes) != 2 || echoes[0].OK == nil || !*echoes[0].OK || !strings.Contains(echoes[0].Summary, "Echo: hello from the script") {
			t.Fatalf("echo results = %+v", echoes)
		}
		msgs := asked.list()
		if len(msgs) == 0 || !strings.Contains(msgs[0], "`echo` of the server `everything`") || !strings.Contains(msgs[0], `"message":"hello from the script"`) {
			t.Fatalf("approval = %q", msgs)
		}
	})
	t.Run("does not call a tool the person refused, and tells the model", func(t *testing.T) {
		if len(sums) != 1 || sums[0].OK == nil || *sums[0].OK || !strings.Contains(sums[0].Summary, "refused") {
			t.Fatalf("get-sum results = %+v", sums)
		}
	})
	t.Run("names the arguments without the secrets they hold", func(t *testing.T) {
		msgs := asked.list()
		if len(msgs) < 3 {
			t.Fatalf("approvals = %q", msgs)
		}
		if strings.Contains(msgs[2], secret) || !strings.Contains(msgs[2], "[redacted SERVICE_TOKEN]") {
			t.Fatalf("approval = %q", msgs[2])
		}
		if !*echoes[1].OK || strings.Contains(echoes[1].Summary, secret) {
			t.Fatalf("result = %+v", echoes[1])
		}
	})
	t.Run("asks no more for a tool the person always allowed", func(t *testing.T) {
		// echo (Run), get-sum (Deny), echo (Always allow), then the
		// structured content and the image asked once each more.
		if n := len(asked.list()); n != 5 {
			t.Fatalf("%d approvals asked: %q", n, asked.list())
		}
	})
	t.Run("renders structured content as text and names the images", func(t *testing.T) {
		sc := r.toolResults(t, "mcp__everything__get-structured-content")
		if len(sc) != 1 || !*sc[0].OK || !strings.Contains(sc[0].Summary, `"temperature"`) || strings.Contains(sc[0].Summary, "Structured content") {
			t.Fatalf("structured = %+v", sc)
		}
		img := r.toolResults(t, "mcp__everything__get-tiny-image")
		if len(img) != 1 || !*img[0].OK || !strings.Contains(img[0].Summary, "[image 1: image/png") {
			t.Fatalf("image = %+v", img)
		}
	})
	t.Run("reports the server ready with its tools", func(t *testing.T) {
		st := mcpStatus(t, r, false).Servers[0]
		if st.State != api.MCPReady || st.ToolCount < 10 || st.Transport != api.MCPStdio {
			t.Fatalf("agent/mcpServers = %+v", st)
		}
	})
}

func TestMCPStreamableHTTPServerFromNpm(t *testing.T) {
	dir := npmDir(t)
	url := startEverythingHTTP(t, dir)
	r := startMCPRun(t, mcpOpts{
		options: map[string]any{
			"mcpServers":    map[string]any{"remote": map[string]any{"url": url}},
			"allowMcpTools": []string{"mcp__remote"},
		},
		script: oneWorker(toolTurn("mcp__remote__get-sum", `{"a": 40, "b": 2}`), finishTurn),
	})
	var asked approvals
	asked.handle(r.ed, "Deny")
	res, err := r.run(t, api.RunParams{Prompt: "add", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	t.Run("calls a tool of a server allowed as a whole without asking", func(t *testing.T) {
		sums := r.toolResults(t, "mcp__remote__get-sum")
		if len(sums) != 1 || !*sums[0].OK || !strings.Contains(sums[0].Summary, "42") {
			t.Fatalf("results = %+v", sums)
		}
		if n := len(asked.list()); n != 0 {
			t.Fatalf("asked %q", asked.list())
		}
	})
	t.Run("reports an HTTP server", func(t *testing.T) {
		st := mcpStatus(t, r, false).Servers[0]
		if st.State != api.MCPReady || st.Transport != api.MCPHTTP || st.URL != url {
			t.Fatalf("agent/mcpServers = %+v", st)
		}
	})
}

// startEverythingHTTP runs the everything server's streamable HTTP mode on
// a free loopback port until the test ends, and returns its endpoint.
func startEverythingHTTP(t *testing.T, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command("node", everythingJS(dir), "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(port))
	testkit.Group(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testkit.KillGroup(cmd)
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the everything server did not listen on %d: %v", port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

func TestMCPTimeoutAndStop(t *testing.T) {
	dir := npmDir(t)
	servers := map[string]any{"everything": map[string]any{"command": "node", "args": []string{everythingJS(dir), "stdio"}}}
	t.Run("a tool that hangs costs the call an error when timeouts.mcpMs passes", func(t *testing.T) {
		r := startMCPRun(t, mcpOpts{
			options: map[string]any{"mcpServers": servers, "commands": "allow", "timeouts": map[string]any{"mcpMs": 1500}},
			script: oneWorker(
				toolTurn("mcp__everything__trigger-long-running-operation", `{"duration": 60, "steps": 3}`),
				toolTurn("mcp__everything__echo", `{"message": "still here"}`),
				finishTurn),
		})
		res, err := r.run(t, api.RunParams{Prompt: "wait", TaskID: "t1"})
		if err != nil || res.State != api.TaskDone {
			t.Fatalf("run = %+v, %v", res, err)
		}
		long := r.toolResults(t, "mcp__everything__trigger-long-running-operation")
		if len(long) != 1 || *long[0].OK || !strings.Contains(long[0].Summary, "did not answer within 1.5s") {
			t.Fatalf("results = %+v", long)
		}
		if e := r.toolResults(t, "mcp__everything__echo"); len(e) != 1 || !*e[0].OK {
			t.Fatalf("the server is unusable after the timeout: %+v", e)
		}
	})
	t.Run("agent/stop ends a call in flight", func(t *testing.T) {
		r := startMCPRun(t, mcpOpts{
			options: map[string]any{"mcpServers": servers, "commands": "allow"},
			script: oneWorker(
				toolTurn("mcp__everything__trigger-long-running-operation", `{"duration": 120, "steps": 2}`),
				finishTurn),
		})
		done := r.runAsync(t, api.RunParams{Prompt: "wait", TaskID: "t1"})
		r.awaitEvent(t, func(p api.TaskUpdateParams) bool {
			return p.Event.Kind == api.EventToolCall && p.Event.Tool == "mcp__everything__trigger-long-running-operation"
		})
		var stop api.StopResult
		if err := r.ed.Call(testkit.Context(t), api.MethodStop, api.StopParams{TaskID: "t1"}, &stop); err != nil || !stop.Stopped {
			t.Fatalf("stop = %+v, %v", stop, err)
		}
		out := within(t, 15*time.Second, done)
		if out.err != nil || out.res.State != api.TaskStopped {
			t.Fatalf("run = %+v, %v", out.res, out.err)
		}
	})
}

func TestMCPCrashedServer(t *testing.T) {
	dir := npmDir(t)
	pidFile := filepath.Join(t.TempDir(), "pid")
	// sh writes the pid the server will have, then becomes it.
	sh := fmt.Sprintf("echo $$ > %s; exec node %s stdio", pidFile, everythingJS(dir))
	r := startMCPRun(t, mcpOpts{
		options: map[string]any{"commands": "allow", "mcpServers": map[string]any{
			"everything": map[string]any{"command": "sh", "args": []string{"-c", sh}},
		}},
		script: oneWorker(
			toolTurn("mcp__everything__echo", `{"message": "one"}`),
			toolTurn("mcp__everything__trigger-long-running-operation", `{"duration": 60, "steps": 2}`),
			toolTurn("mcp__everything__echo", `{"message": "two"}`),
			toolTurn("mcp__everything__trigger-long-running-operation", `{"duration": 60, "steps": 2}`),
			toolTurn("mcp__everything__echo", `{"message": "three"}`),
			finishTurn),
	})
	killServer := func() {
		t.Helper()
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	done := r.runAsync(t, api.RunParams{Prompt: "crash it", TaskID: "t1"})
	for n := 1; n <= 2; n++ {
		// The n-th long call is in flight: kill the server under it.
		seen := 0
		r.awaitEvent(t, func(p api.TaskUpdateParams) bool {
			if p.Event.Kind == api.EventToolCall && p.Event.Tool == "mcp__everything__trigger-long-running-operation" {
				seen++
			}
			return seen == n
		})
		killServer()
	}
	out := within(t, 30*time.Second, done)
	if out.err != nil || out.res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", out.res, out.err)
	}
	long := r.toolResults(t, "mcp__everything__trigger-long-running-operation")
	echoes := r.toolResults(t, "mcp__everything__echo")
	t.Run("fails the call in flight with an error that says the server stopped", func(t *testing.T) {
		if len(long) != 2 || *long[0].OK || !strings.Contains(long[0].Summary, "stopped") || !strings.Contains(long[0].Summary, "killed") {
			t.Fatalf("results = %+v", long)
		}
	})
	t.Run("restarts the server once for the next call", func(t *testing.T) {
		if len(echoes) != 3 || !*echoes[0].OK || !*echoes[1].OK || !strings.Contains(echoes[1].Summary, "Echo: two") {
			t.Fatalf("echo results = %+v", echoes)
		}
	})
	t.Run("does not restart it a second time, and the task goes on", func(t *testing.T) {
		if *echoes[2].OK || !strings.Contains(echoes[2].Summary, "not restarted again") {
			t.Fatalf("third echo = %+v", echoes[2])
		}
		st := mcpStatus(t, r, false).Servers[0]
		if st.State != api.MCPFailed || st.Restarts != 1 || !strings.Contains(st.Error, "not restarted again") {
			t.Fatalf("agent/mcpServers = %+v", st)
		}
	})
}

func TestMCPFilesystemServerFromNpm(t *testing.T) {
	dir := npmDir(t)
	// The entry gives the server another directory; the workspace, its
	// root, takes that directory's place (docs/MCP.md, "Roots").
	elsewhere := t.TempDir()
	testkit.WriteFiles(t, elsewhere, map[string]string{"private.txt": "not the workspace's\n"})
	// Its stderr, in a file, says when it has taken the root: it asks for
	// it once initialized, while agentls goes on.
	log := filepath.Join(t.TempDir(), "stderr")
	r := startMCPRun(t, mcpOpts{
		files: map[string]string{"notes.txt": "remember the milk\n"},
		dirs:  []string{".orchestration"},
		options: map[string]any{"commands": "allow", "mcpServers": map[string]any{
			"filesystem": map[string]any{"command": "sh", "args": []string{"-c", `exec node "$0" "$1" 2>>"$2"`, filesystemJS(dir), elsewhere, log}},
		}},
		script: oneWorker(
			toolTurn("mcp__filesystem__list_allowed_directories", `{}`),
			toolTurn("mcp__filesystem__read_text_file", `{"path": "ROOT/notes.txt"}`),
			toolTurn("mcp__filesystem__read_text_file", `{"path": `+strconv.Quote(filepath.Join(elsewhere, "private.txt"))+`}`),
			toolTurn("mcp__filesystem__write_file", `{"path": "ROOT/out.txt", "content": "written by an MCP server\n"}`),
			finishTurn),
	})
	if st := mcpStatus(t, r, true).Servers[0]; st.State != api.MCPReady {
		t.Fatalf("agent/mcpServers = %+v", st)
	}
	awaitFileHolds(t, log, "Updated allowed directories from MCP roots")
	res, err := r.run(t, api.RunParams{Prompt: "read and write", TaskID: "t1"})
	if err != nil || res.State != api.TaskDone {
		t.Fatalf("run = %+v, %v", res, err)
	}
	t.Run("serves the workspace, its root, in place of the directories its entry gives", func(t *testing.T) {
		got := r.toolResults(t, "mcp__filesystem__list_allowed_directories")
		root, err := filepath.EvalSymlinks(r.root)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || !*got[0].OK || !strings.Contains(got[0].Summary, root) || strings.Contains(got[0].Summary, elsewhere) {
			t.Fatalf("results = %+v, want %s alone", got, root)
		}
	})
	t.Run("gives the model the file the server read, and refuses one outside the workspace", func(t *testing.T) {
		got := r.toolResults(t, "mcp__filesystem__read_text_file")
		if len(got) != 2 || !*got[0].OK || !strings.Contains(got[0].Summary, "remember the milk") {
			t.Fatalf("results = %+v", got)
		}
		if *got[1].OK || strings.Contains(got[1].Summary, "not the workspace's") {
			t.Fatalf("the server read outside its root: %+v", got[1])
		}
		if r.file(t, "out.txt") != "written by an MCP server\n" {
			t.Fatal("the server did not write out.txt")
		}
	})
	t.Run("puts the files the calls named on the heat map as mcp accesses", func(t *testing.T) {
		var snap api.HeatSnapshot
		if err := r.ed.Call(testkit.Context(t), api.MethodHeatSnapshot, api.HeatSnapshotParams{}, &snap); err != nil {
			t.Fatal(err)
		}
		found := map[string]string{}
		for _, n := range snap.Nodes {
			found[n.Path] = n.LastAction
		}
		if found["notes.txt"] != api.ActionMCP || found["out.txt"] != api.ActionMCP {
			t.Fatalf("heat = %+v", snap.Nodes)
		}
	})
	t.Run("traces the write of a tool that is not read-only, not the read", func(t *testing.T) {
		var out api.TraceResult
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "out.txt"}, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Entries) != 1 || out.Entries[0].Operation != api.OpMCP || out.Entries[0].Tool != "mcp__filesystem__write_file" ||
			out.Entries[0].TaskID != "t1" || out.Entries[0].SubtaskID != "1" || !strings.HasPrefix(out.Entries[0].FileHash, "sha256:") {
			t.Fatalf("trace of out.txt = %+v", out.Entries)
		}
		if err := r.ed.Call(testkit.Context(t), api.MethodTrace, api.TraceParams{Path: "notes.txt"}, &out); err != nil || len(out.Entries) != 0 {
			t.Fatalf("trace of notes.txt = %+v, %v", out.Entries, err)
		}
	})
}

// awaitFileHolds waits until the file at path holds text.
func awaitFileHolds(t *testing.T, path, text string) {
	t.Helper()
	deadline := time.Now().Add(testkit.Timeout)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never held %q: %q", path, text, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestMCPSettings(t *testing.T) {
	t.Run("refuses a bad mcpServers entry at initialize with -32602 naming it", func(t *testing.T) {
		ed := start(t, headless.Options{NoInitialize: true})
		err := ed.Call(testkit.Context(t), api.MethodInitialize, json.RawMessage(`{"capabilities":{},"initializationOptions":{"mcpServers":{"github":{"args":["x"]}}}}`), nil)
		if code(err) != api.CodeInvalidParams || !strings.Contains(err.Error(), `initializationOptions.mcpServers.github: needs "command"`) {
			t.Fatalf("initialize = %v", err)
		}
	})
	t.Run("follows didChangeConfiguration, and keeps the servers when the change is bad", func(t *testing.T) {
		t.Setenv("AGENTLS_STATE_DIR", filepath.Join(t.TempDir(), "state"))
		ed := start(t, headless.Options{InitializationOptions: map[string]any{
			"mcpServers": map[string]any{"one": map[string]any{"command": "/no/such/one"}}}})
		names := func() []string {
			var res api.MCPServersResult
			if err := ed.Call(testkit.Context(t), api.MethodMCPServers, struct{}{}, &res); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, s := range res.Servers {
				out = append(out, s.Name+":"+s.State)
			}
			return out
		}
		if got := names(); len(got) != 1 || got[0] != "one:notStarted" {
			t.Fatalf("servers = %v", got)
		}
		change := func(settings string) {
			if err := ed.Notify(testkit.Context(t), api.MethodDidChangeConfiguration, json.RawMessage(`{"settings":{"agentls":`+settings+`}}`)); err != nil {
				t.Fatal(err)
			}
		}
		change(`{"mcpServers":{"two":{"url":"http://127.0.0.1:1/mcp"},"three":{"command":"/no/such/three"}}}`)
		eventually := func(want string) {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for strings.Join(names(), " ") != want {
				if time.Now().After(deadline) {
					t.Fatalf("servers = %v, want %s", names(), want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		eventually("three:notStarted two:notStarted")
		change(`{"mcpServers":{"bad":{"command":"x","url":"http://h/mcp"}}}`)
		if _, err := ed.Await(testkit.Context(t), func(n headless.Notification) bool {
			return n.Method == api.MethodShowMessage && strings.Contains(string(n.Params), "mcpServers.bad")
		}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names(), " "); got != "three:notStarted two:notStarted" {
			t.Fatalf("a bad change replaced the servers: %s", got)
		}
	})
}
