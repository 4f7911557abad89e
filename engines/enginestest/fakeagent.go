package enginestest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentls/agentls/acp"
)

// A test binary is also the fake ACP agent of its tests: its TestMain
// calls ServeFakeAgent first, which, in the process FakeAgent's command
// starts (AGENTLS_FAKE_AGENT set to a script of Steps), serves ACP on
// stdio and plays the script at each prompt, and never returns.
const fakeAgentEnv = "AGENTLS_FAKE_AGENT"

// The fake agent's other settings: the name and version it gives at
// initialize ("name version"), and the session mode it opens sessions in
// (with default, acceptEdits and bypassPermissions offered).
const (
	FakeAgentAs   = "AGENTLS_FAKE_AGENT_AS"
	FakeAgentMode = "AGENTLS_FAKE_AGENT_MODE"
)

// ServeFakeAgent plays the fake agent when this process was started as
// one; otherwise it returns at once.
func ServeFakeAgent() {
	if script := os.Getenv(fakeAgentEnv); script != "" {
		runFakeAgent(script)
		os.Exit(0)
	}
}

// Step is one thing the fake agent does in its prompt turn.
type Step struct {
	Say       string   `json:"say,omitempty"`       // an agent_message_chunk
	Think     string   `json:"think,omitempty"`     // an agent_thought_chunk
	Read      string   `json:"read,omitempty"`      // fs/read_text_file, the content said back
	Write     string   `json:"write,omitempty"`     // permission, then fs/write_text_file
	Content   string   `json:"content,omitempty"`   // of Write or WriteDisk
	Exec      string   `json:"exec,omitempty"`      // permission, then terminal/*
	Plan      []string `json:"plan,omitempty"`      // a plan, the first entry in progress
	Twice     string   `json:"twice,omitempty"`     // a tool call announced twice (claude's way), this path
	WriteDisk string   `json:"writeDisk,omitempty"` // write the file itself, in its cwd
	Reads     int      `json:"reads,omitempty"`     // that many fs/read_text_file of Read, nothing said
	Hang      bool     `json:"hang,omitempty"`      // wait for session/cancel
	Stubborn  bool     `json:"stubborn,omitempty"`  // ignore session/cancel and SIGTERM, wait for ever
	Child     string   `json:"child,omitempty"`     // start a sleep in a session of its own, its pid written to this file
	Exit      int      `json:"exit,omitempty"`      // exit with this code (after 1 so 0 is "not set")
	PidFile   string   `json:"pidFile,omitempty"`   // write its own pid to this file
	Freeze    bool     `json:"freeze,omitempty"`    // stop itself (SIGSTOP): it reads nothing more
	MCP       bool     `json:"mcp,omitempty"`       // say the MCP servers session/new gave it: "mcp: name, …"
	// Report says what it was started and opened with: "args: […]
	// meta: {…} mode: … cwd: … dir: …" (its arguments, session/new's
	// _meta, its session mode, session/new's cwd, its own directory).
	Report bool `json:"report,omitempty"`
	// Abort, with Exec: a refused command ends the turn as cancelled (as
	// Codex does).
	Abort bool `json:"abort,omitempty"`
	// Ask asks permission for a tool call of this title (kind other),
	// then says "allowed: …" or "refused: …".
	Ask string `json:"ask,omitempty"`
}

type fakeAgent struct {
	acp.UnimplementedAgent
	script []Step
	client *acp.ClientConn
	cwd    string
	mcp    []string // the names of session/new's MCP servers
	meta   acp.Meta // session/new's
	mode   string   // the session's mode

	mu      sync.Mutex
	cancels map[string]chan struct{}
}

func runFakeAgent(raw string) {
	var script []Step
	if err := json.Unmarshal([]byte(raw), &script); err != nil {
		fmt.Fprintln(os.Stderr, "fake agent: bad script:", err)
		os.Exit(2)
	}
	stream := acp.NewStream(os.Stdin, os.Stdout, nil)
	conn := acp.NewConn(stream, nil)
	a := &fakeAgent{script: script, cancels: map[string]chan struct{}{},
		client: acp.NewClientConn(conn, acp.Timeouts{Call: 30 * time.Second})}
	_ = conn.Serve(context.Background(), acp.ServeAgent(a, nil))
}

func (a *fakeAgent) Initialize(_ context.Context, p *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	a.client.SetCapabilities(p.ClientCapabilities)
	name, version := "fake-agent", "9.9.9"
	if as := os.Getenv(FakeAgentAs); as != "" {
		name, version, _ = strings.Cut(as, " ")
	}
	return &acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersion,
		AgentInfo: &acp.Implementation{Name: name, Version: version}}, nil
}

func (a *fakeAgent) NewSession(_ context.Context, p *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	a.cwd = p.Cwd
	a.meta = p.Meta
	a.mcp = nil
	for _, m := range p.McpServers {
		a.mcp = append(a.mcp, m.Name)
	}
	r := &acp.NewSessionResponse{SessionID: "s1"}
	if mode := os.Getenv(FakeAgentMode); mode != "" {
		a.mode = mode
		r.Modes = &acp.SessionModeState{CurrentModeID: mode, AvailableModes: []acp.SessionMode{
			{ID: "default", Name: "Default"}, {ID: "acceptEdits", Name: "Accept Edits"}, {ID: "bypassPermissions", Name: "Bypass Permissions"}}}
	}
	return r, nil
}

func (a *fakeAgent) SetSessionMode(_ context.Context, p *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	a.mode = p.ModeID
	return &acp.SetSessionModeResponse{}, nil
}

func (a *fakeAgent) Cancel(_ context.Context, p *acp.CancelNotification) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ch := a.cancels[p.SessionID]; ch != nil {
		close(ch)
		delete(a.cancels, p.SessionID)
	}
	return nil
}

func (a *fakeAgent) update(ctx context.Context, u acp.SessionUpdate) {
	_ = a.client.SessionUpdate(ctx, &acp.SessionNotification{SessionID: "s1", Update: u})
}

func (a *fakeAgent) say(ctx context.Context, text string) {
	a.update(ctx, acp.AgentMessageChunk{Content: acp.Text(text)})
}

func (a *fakeAgent) allowed(ctx context.Context, tc acp.ToolCallUpdate) bool {
	r, err := a.client.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: "s1", ToolCall: tc, Options: []acp.PermissionOption{
		{OptionID: "yes", Name: "Allow", Kind: acp.AllowOnce},
		{OptionID: "always", Name: "Always", Kind: acp.AllowAlways},
		{OptionID: "no", Name: "Reject", Kind: acp.RejectOnce}}})
	return err == nil && r.Outcome.Outcome == acp.OutcomeSelected && r.Outcome.OptionID != "no"
}

func (a *fakeAgent) Prompt(ctx context.Context, p *acp.PromptRequest) (*acp.PromptResponse, error) {
	cancelled := make(chan struct{})
	a.mu.Lock()
	a.cancels[p.SessionID] = cancelled
	a.mu.Unlock()
	for i, s := range a.script {
		id := "call-" + strconv.Itoa(i)
		switch {
		case s.Say != "":
			a.say(ctx, s.Say)
		case s.Think != "":
			a.update(ctx, acp.AgentThoughtChunk{Content: acp.Text(s.Think)})
		case s.Reads > 0:
			for n := 0; n < s.Reads; n++ {
				if _, err := a.client.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: "s1", Path: s.Read}); err != nil {
					return nil, err
				}
			}
		case s.Read != "":
			a.update(ctx, acp.ToolCall{ToolCallID: id, Title: "Read " + s.Read, Kind: acp.KindRead, Status: acp.StatusPending,
				Locations: []acp.ToolCallLocation{{Path: s.Read}}})
			r, err := a.client.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: "s1", Path: s.Read})
			if err != nil {
				a.say(ctx, "read failed: "+err.Error())
				continue
			}
			a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusCompleted, Content: []acp.ToolCallContent{acp.TextContent(r.Content)}})
			a.say(ctx, "read: "+r.Content)
		case s.Twice != "":
			a.update(ctx, acp.ToolCall{ToolCallID: id, Title: "Read File", Kind: acp.KindRead, Status: acp.StatusPending})
			a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Title: "Read " + s.Twice, RawInput: json.RawMessage(`{"file_path":` + strconv.Quote(s.Twice) + `}`)})
			a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusCompleted})
		case s.Write != "":
			tc := acp.ToolCallUpdate{ToolCallID: id, Title: "Write " + s.Write, Kind: acp.KindEdit, Status: acp.StatusPending,
				Locations: []acp.ToolCallLocation{{Path: s.Write}},
				Content:   []acp.ToolCallContent{acp.DiffContent(s.Write, nil, s.Content)}}
			a.update(ctx, acp.ToolCall(tc))
			if !a.allowed(ctx, tc) {
				a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusFailed})
				a.say(ctx, "write refused")
				continue
			}
			if _, err := a.client.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: "s1", Path: s.Write, Content: s.Content}); err != nil {
				a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusFailed})
				a.say(ctx, "write failed: "+err.Error())
				continue
			}
			a.update(ctx, acp.ToolCallUpdate{ToolCallID: id, Status: acp.StatusCompleted})
		case s.WriteDisk != "":
			path := filepath.Join(a.cwd, s.WriteDisk)
			if err := os.WriteFile(path, []byte(s.Content), 0o644); err != nil {
				return nil, err
			}
			a.update(ctx, acp.ToolCall{ToolCallID: id, Title: "Write " + path, Kind: acp.KindEdit, Status: acp.StatusCompleted,
				Locations: []acp.ToolCallLocation{{Path: path}}})
		case s.Exec != "":
			tc := acp.ToolCallUpdate{ToolCallID: id, Title: s.Exec, Kind: acp.KindExecute, Status: acp.StatusPending,
				RawInput: json.RawMessage(`{"command":` + strconv.Quote(s.Exec) + `}`)}
			a.update(ctx, acp.ToolCall(tc))
			if !a.allowed(ctx, tc) {
				a.say(ctx, "command refused")
				if s.Abort {
					return &acp.PromptResponse{StopReason: acp.StopCancelled}, nil
				}
				continue
			}
			t, err := a.client.CreateTerminal(ctx, &acp.CreateTerminalRequest{SessionID: "s1", Command: s.Exec})
			if err != nil {
				return nil, err
			}
			req := &acp.TerminalRequest{SessionID: "s1", TerminalID: t.TerminalID}
			st, err := a.client.WaitForTerminalExit(ctx, req)
			if err != nil {
				return nil, err
			}
			out, err := a.client.TerminalOutput(ctx, req)
			if err != nil {
				return nil, err
			}
			_, _ = a.client.ReleaseTerminal(ctx, req)
			a.say(ctx, fmt.Sprintf("exit %d: %s", *st.ExitCode, out.Output))
		case len(s.Plan) > 0:
			var entries []acp.PlanEntry
			for j, c := range s.Plan {
				st := acp.PlanPending
				if j == 0 {
					st = acp.PlanInProgress
				}
				entries = append(entries, acp.PlanEntry{Content: c, Priority: acp.PriorityMedium, Status: st})
			}
			a.update(ctx, acp.Plan{Entries: entries})
		case s.Child != "":
			cmd := escapedChild()
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			_ = os.WriteFile(s.Child, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		case s.MCP:
			a.say(ctx, "mcp: "+strings.Join(a.mcp, ", "))
		case s.Ask != "":
			tc := acp.ToolCallUpdate{ToolCallID: id, Title: s.Ask, Kind: acp.KindOther, Status: acp.StatusPending}
			a.update(ctx, acp.ToolCall(tc))
			if a.allowed(ctx, tc) {
				a.say(ctx, "allowed: "+s.Ask)
			} else {
				a.say(ctx, "refused: "+s.Ask)
			}
		case s.Report:
			meta, _ := json.Marshal(a.meta)
			args, _ := json.Marshal(os.Args[1:])
			dir, _ := os.Getwd()
			a.say(ctx, fmt.Sprintf("args: %s meta: %s mode: %s cwd: %s dir: %s", args, meta, a.mode, a.cwd, dir))
		case s.PidFile != "":
			_ = os.WriteFile(s.PidFile, []byte(strconv.Itoa(os.Getpid())), 0o644)
		case s.Hang:
			<-cancelled
			return &acp.PromptResponse{StopReason: acp.StopCancelled}, nil
		case s.Stubborn:
			signal.Ignore(syscall.SIGTERM)
			select {}
		case s.Freeze:
			freeze()
			select {}
		case s.Exit > 0:
			fmt.Fprintln(os.Stderr, "fake agent: giving up")
			os.Exit(s.Exit - 1)
		}
	}
	return &acp.PromptResponse{StopReason: acp.StopEndTurn}, nil
}

// FakeAgent is the command and environment that start this test binary as
// the fake agent playing script.
func FakeAgent(t testing.TB, script ...Step) ([]string, map[string]string) {
	t.Helper()
	b, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	return []string{os.Args[0]}, map[string]string{fakeAgentEnv: string(b)}
}
