package engines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/rpc"
)

// defaultCallTimeout bounds each call to an agent but session/prompt.
const defaultCallTimeout = 2 * time.Minute

// session is one agent process and its ACP connection, for one subtask.
type session struct {
	m       *Manager
	r       Resolved
	proc    *process
	conn    *rpc.Conn
	agent   *acp.AgentConn
	served  chan struct{} // closed when the connection's Serve has returned
	id      string        // the ACP session id
	name    string        // the agent's, from initialize (agentInfo)
	version string        // the agent's, from initialize
	log     *zap.Logger
}

// open starts the agent in dir and initializes it. Every error leaves
// nothing running.
func (m *Manager) open(ctx context.Context, r Resolved, dir string, unset []string, callTimeout time.Duration, c acp.Client) (*session, error) {
	if len(r.Command) == 0 {
		return nil, fmt.Errorf("engine %q has no command", r.Name)
	}
	if callTimeout <= 0 {
		callTimeout = defaultCallTimeout
	}
	env := environ(m.opts.Environ(), unset, r.Keys, r.Env)
	proc, err := startProcess(r.Command, dir, env)
	if err != nil {
		return nil, fmt.Errorf("engine %q: %w", r.Name, err)
	}
	log := m.log.With(zap.String("engine", r.Name), zap.Int("pid", proc.Pid()))
	stream := acp.NewStream(proc.Stdout(), proc.Stdin(), log)
	conn := acp.NewConn(stream, log)
	s := &session{m: m, r: r, proc: proc, conn: conn, served: make(chan struct{}), log: log,
		agent: acp.NewAgentConn(conn, acp.Timeouts{Call: callTimeout, CancelGrace: m.opts.CancelGrace})}
	go func() {
		defer close(s.served)
		if err := conn.Serve(context.Background(), acp.ServeClient(c, log)); err != nil && !errors.Is(err, rpc.ErrClosed) {
			log.Debug("engine connection ended", zap.Error(err))
		}
	}()
	init, err := s.agent.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion: acp.ProtocolVersion,
		ClientCapabilities: acp.ClientCapabilities{
			FS:       acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
			Terminal: true,
		},
		ClientInfo: &acp.Implementation{Name: "agentls", Title: "agentls", Version: m.opts.Version},
	})
	if err != nil {
		s.close()
		return nil, s.explain("initialize", err)
	}
	if init.ProtocolVersion != acp.ProtocolVersion {
		s.close()
		return nil, fmt.Errorf("engine %q speaks ACP version %d; agentls speaks %d", r.Name, init.ProtocolVersion, acp.ProtocolVersion)
	}
	if init.AgentInfo != nil {
		s.name, s.version = init.AgentInfo.Name, init.AgentInfo.Version
	}
	return s, nil
}

// explain turns a failed call into an error that says what the agent did:
// an agent that exited says how, with the end of its stderr.
func (s *session) explain(what string, err error) error {
	if errors.Is(err, rpc.ErrClosed) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, api.ErrTimeout) {
		select {
		case <-s.proc.Exited():
		case <-time.After(200 * time.Millisecond):
		}
		if perr := exitError(s.proc); perr != nil {
			return fmt.Errorf("engine %q: %s failed: %w", s.r.Name, what, perr)
		}
	}
	if t := s.proc.StderrTail(); t != "" && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("engine %q: %s: %w (its last output: %s)", s.r.Name, what, err, t)
	}
	return fmt.Errorf("engine %q: %s: %w", s.r.Name, what, err)
}

// close ends the agent (SIGTERM, then SIGKILL after the grace) and waits
// for its connection to end.
func (s *session) close() {
	s.proc.Stop(s.m.opts.TermGrace)
	_ = s.conn.Close()
	<-s.served
}

// probe starts an engine, initializes it and ends it: the name and the
// version it gives.
func (m *Manager) probe(ctx context.Context, r Resolved) (name, version string, err error) {
	dir, err := os.MkdirTemp("", "agentls-probe-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(dir)
	s, err := m.open(ctx, r, dir, nil, 30*time.Second, acp.UnimplementedClient{})
	if err != nil {
		return "", "", err
	}
	defer s.close()
	return s.name, s.version, nil
}

// Run runs job on the engine name: it starts the agent (in a worktree of
// its own when it is isolated), held to the job's commands setting (docs/
// ENGINES.md), opens a session with the job's MCP servers, sends the
// prompt and relays everything the agent does through host until the
// prompt ends. When ctx ends (a stop, a skip, a timeout), it sends
// session/cancel, waits CancelGrace for the agent's answer, then SIGTERM
// and, after TermGrace, SIGKILL: Run returns with ctx's cause and nothing
// of the agent running.
//
// An agent whose version the command does not tell (IsolateAtStart) is
// started in an empty directory of its own, and whether it is isolated is
// decided from the name and version it gives at initialize, before its
// session opens where it works.
func (m *Manager) Run(ctx context.Context, name string, job Job, host Host) (Outcome, error) {
	r, err := m.Resolve(name)
	if err != nil {
		return Outcome{}, err
	}
	if r.Err != nil {
		return Outcome{}, fmt.Errorf("engine %q cannot be used: %w", name, r.Err)
	}
	isolated, atStart := r.Isolated, r.IsolateAtStart
	if job.Isolate != nil {
		isolated, atStart = *job.Isolate, false
	}
	log := m.log.With(zap.String("engine", name))
	var h hold
	if r.Agent != "" {
		dir, err := policyDir(job.WorkDir)
		if err != nil {
			return Outcome{}, fmt.Errorf("engine %q: %w", name, err)
		}
		if h, err = holdFor(r.Agent, job.Commands, dir); err != nil {
			return Outcome{}, fmt.Errorf("engine %q cannot be held to the commands setting: %w", name, err)
		}
		defer h.release()
		r.Command = withArgs(r.Command, h.args)
	}
	started := time.Now()
	c := newClient(ctx, host, job.Root, nil, log)
	for n := range job.MCPServers {
		c.bridged = append(c.bridged, n)
	}
	defer c.closeTerminals()
	var wt *worktree
	defer func() {
		if wt != nil {
			wt.remove()
		}
	}()
	// The agent's process starts in an empty directory of its own, never
	// the workspace: a launcher (npx, bunx) would run a copy of the agent
	// the repository planted in its node_modules, and a program would read
	// the repository's own configuration from its working directory. It
	// works where its session's cwd says (session/new).
	dir, release, err := startDir(job.WorkDir)
	if err != nil {
		return Outcome{}, fmt.Errorf("engine %q: %w", name, err)
	}
	defer release()
	if isolated && !atStart {
		if wt, err = newWorktree(ctx, job.Root, job.WorkDir, job.Closed); err != nil {
			return Outcome{}, fmt.Errorf("engine %q runs isolated, and its worktree could not be made: %w", name, err)
		}
		c.wt.Store(wt)
	}
	s, err := m.open(ctx, r, dir, job.Unset, job.CallTimeout, c)
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, context.Cause(ctx)
		}
		return Outcome{}, err
	}
	defer s.close()
	said := agentNamed(s.name)
	if said != "" && said != h.agent && (job.Commands == api.CommandsAsk || job.Commands == api.CommandsDeny) {
		if argsHeld(said) {
			return Outcome{Version: s.version}, cannotHold(name, said, strings.TrimSpace(s.name+" "+s.version), job.Commands)
		}
		// claude-agent-acp is held through its session's _meta, which
		// is still to be sent.
		if h, err = holdFor(said, job.Commands, ""); err != nil {
			return Outcome{}, fmt.Errorf("engine %q cannot be held to the commands setting: %w", name, err)
		}
		defer h.release()
	}
	if atStart {
		if a, ok := builtins[said]; ok {
			isolated, _ = a.isolate(s.name, s.version)
		}
		log.Info("isolation decided from the agent's initialize answer",
			zap.String("agent", s.name), zap.String("version", s.version), zap.Bool("isolated", isolated))
		if isolated {
			if wt, err = newWorktree(ctx, job.Root, job.WorkDir, job.Closed); err != nil {
				return Outcome{}, fmt.Errorf("engine %q runs isolated (%s %s), and its worktree could not be made: %w", name, s.name, s.version, err)
			}
			c.wt.Store(wt)
		}
	}
	cwd := job.Root
	if wt != nil {
		cwd = wt.cwd
	}
	ns, err := s.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: cwd, McpServers: mcpServers(job.MCPServers), Meta: h.meta})
	if err != nil {
		if ctx.Err() != nil {
			return Outcome{}, context.Cause(ctx)
		}
		return Outcome{}, s.explain("session/new", err)
	}
	s.id = ns.SessionID
	if err := s.holdMode(ctx, h, ns.Modes); err != nil {
		if ctx.Err() != nil {
			return Outcome{}, context.Cause(ctx)
		}
		return Outcome{}, err
	}
	if job.OnStart != nil {
		job.OnStart(s.proc.Pid(), time.Since(started))
	}
	resp, err := s.prompt(ctx, job.Prompt)
	out := Outcome{Version: s.version, Text: c.lastMessage()}
	if resp != nil {
		out.StopReason, out.Usage = resp.StopReason, resp.usage()
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, context.Cause(ctx)
		}
		return out, s.explain("session/prompt", err)
	}
	switch out.StopReason {
	case acp.StopEndTurn:
	case acp.StopCancelled:
		if ctx.Err() != nil {
			return out, context.Cause(ctx)
		}
		// Codex ends its turn when a command it asked for is refused: it
		// waits for the person to tell it what to do instead.
		if out.Refused = c.refusals(); len(out.Refused) == 0 {
			return out, fmt.Errorf("engine %q cancelled its turn", name)
		}
	case acp.StopRefusal:
		return out, fmt.Errorf("engine %q refused the subtask: %s", name, oneLine(out.Text, 300))
	default:
		return out, fmt.Errorf("engine %q stopped before it finished (%s)", name, out.StopReason)
	}
	if wt != nil {
		out.Changes, err = wt.changes(ctx)
		if err != nil {
			return out, fmt.Errorf("engine %q: its changes could not be read from its worktree: %w", name, err)
		}
	}
	return out, nil
}

// holdMode puts a session in a mode that asks (session/set_mode
// "default") when it opened in one that runs tools without asking, as the
// user's or the repository's settings may set it.
func (s *session) holdMode(ctx context.Context, h hold, modes *acp.SessionModeState) error {
	if !h.modes || modes == nil || !unasked[modes.CurrentModeID] {
		return nil
	}
	offered := false
	for _, m := range modes.AvailableModes {
		offered = offered || m.ID == "default"
	}
	if !offered {
		return fmt.Errorf("engine %q opened its session in mode %q, which runs tools without asking, and offers no mode \"default\" to hold it to the commands setting", s.r.Name, modes.CurrentModeID)
	}
	if _, err := s.agent.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: s.id, ModeID: "default"}); err != nil {
		return s.explain(fmt.Sprintf("session/set_mode from %q to \"default\" (the commands setting)", modes.CurrentModeID), err)
	}
	s.log.Info("session mode held to the commands setting", zap.String("from", modes.CurrentModeID), zap.String("to", "default"))
	return nil
}

// startDir is an empty directory of its own for an agent to start in
// (the system's temporary directory's when workDir is ""), locked while
// the run lasts: release unlocks and removes it.
func startDir(parent string) (dir string, release func(), err error) {
	dir, lock, err := workDir(parent, "start-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() {
		_ = os.RemoveAll(dir)
		_ = lock.Unlock()
	}, nil
}

// promptResponse is session/prompt's result with the token usage some
// agents add (claude-agent-acp's usage; gemini-cli's _meta.quota).
type promptResponse struct {
	StopReason string `json:"stopReason"`
	Usage      *struct {
		InputTokens  int64 `json:"inputTokens"`
		OutputTokens int64 `json:"outputTokens"`
	} `json:"usage,omitempty"`
	Meta struct {
		Quota struct {
			TokenCount struct {
				InputTokens  int64 `json:"input_tokens"`
				OutputTokens int64 `json:"output_tokens"`
			} `json:"token_count"`
		} `json:"quota"`
	} `json:"_meta"`
}

func (r *promptResponse) usage() api.Usage {
	if r.Usage != nil {
		return api.Usage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens}
	}
	q := r.Meta.Quota.TokenCount
	return api.Usage{InputTokens: q.InputTokens, OutputTokens: q.OutputTokens}
}

// prompt runs the prompt turn as acp.AgentConn.Prompt does (session/cancel
// when ctx ends, then CancelGrace for the answer; every update sent before
// the answer handled before it returns), reading the usage the agents add
// to the answer.
func (s *session) prompt(ctx context.Context, text string) (*promptResponse, error) {
	callCtx, giveUp := context.WithCancelCause(context.WithoutCancel(ctx))
	defer giveUp(nil)
	var r promptResponse
	done := make(chan error, 1)
	go func() {
		done <- s.conn.Call(callCtx, acp.MethodSessionPrompt, &acp.PromptRequest{SessionID: s.id, Prompt: []acp.ContentBlock{acp.Text(text)}}, &r)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		grace := time.NewTimer(s.m.opts.CancelGrace)
		defer grace.Stop()
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.m.opts.CancelGrace)
		_ = s.conn.Notify(nctx, acp.MethodSessionCancel, &acp.CancelNotification{SessionID: s.id})
		cancel()
		select {
		case err = <-done:
		case <-grace.C:
			giveUp(context.Cause(ctx))
			<-done
			return nil, context.Cause(ctx)
		}
	}
	if err != nil {
		return nil, err
	}
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.conn.Settle(settle); err != nil {
		return &r, fmt.Errorf("the updates before the answer: %w", err)
	}
	return &r, nil
}

// mcpServers turns the job's servers into session/new's list, by name.
func mcpServers(servers map[string]api.MCPServer) []acp.McpServer {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]acp.McpServer, 0, len(servers))
	for _, n := range names {
		s := servers[n]
		if s.URL != "" {
			var headers []acp.HTTPHeader
			for k, v := range s.Headers {
				headers = append(headers, acp.HTTPHeader{Name: k, Value: v})
			}
			sort.Slice(headers, func(a, b int) bool { return headers[a].Name < headers[b].Name })
			out = append(out, acp.McpServer{Type: "http", Name: n, URL: s.URL, Headers: headers})
			continue
		}
		env := []acp.EnvVariable{}
		for k, v := range s.Env {
			env = append(env, acp.EnvVariable{Name: k, Value: v})
		}
		sort.Slice(env, func(a, b int) bool { return env[a].Name < env[b].Name })
		args := s.Args
		if args == nil {
			args = []string{}
		}
		out = append(out, acp.McpServer{Name: n, Command: s.Command, Args: args, Env: env})
	}
	return out
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// inside reports whether path is root or under it, lexically
// (contain.Within).
func inside(root, path string) bool {
	_, ok := contain.Within(root, path)
	return ok
}

// rawString reads a string member of a tool's raw input.
func rawString(raw json.RawMessage, keys ...string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil && s != "" {
			return s
		}
		var list []string
		if json.Unmarshal(m[k], &list) == nil && len(list) > 0 {
			return strings.Join(list, " ")
		}
	}
	return ""
}
