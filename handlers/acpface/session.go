package acpface

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/core"
	"github.com/agentls/agentls/engines"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/rpc"
	"github.com/agentls/agentls/tracking"
	"github.com/agentls/agentls/workforce"
)

// session is one ACP session: a root with its own task engine, MCP
// servers, edit mode, model and intent. Its id is the id of its session in
// the root's store, made at its first prompt (sessions.Store.Ensure).
type session struct {
	srv  *Server
	id   string
	root string       // its cwd, as the client named it
	dir  *contain.Dir // its cwd held: every path the client sends is resolved in it
	ws   *workspace
	log  *zap.Logger

	tasks   *core.Tasks       // its task engine, MCP servers and engines on the root's workspace
	engine  *workforce.Engine // tasks.Engine
	engines *engines.Manager  // the external agents its subtasks may run on (tasks.Engines)
	out     *sender
	book    *book // its tool calls, plan and streams (updates.go)

	mu       sync.Mutex
	settings api.Settings // the connection's, with the session's own mode and model
	intent   string       // the intent of its prompts (/intent), "" for none
	forced   string       // the engine of its prompts' subtasks (the engine option), "" as planned
	stored   bool         // its session exists in the store
	turn     *turn        // the prompt turn in progress, nil when none
	closed   bool
}

// turn is a prompt in progress.
type turn struct {
	cancel context.CancelCauseFunc
	taskID string
	done   chan struct{} // closed when the prompt has answered
}

// errCancelled is the cause of a turn ended by session/cancel.
var errCancelled = errors.New("cancelled by the client (session/cancel)")

func newSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// openSession makes the session id on root with the servers given, and
// registers it. settingsMeta is the request's _meta.agentls (may be nil).
func (s *Server) openSession(id, cwdField, cwd string, servers []acp.McpServer, settingsMeta json.RawMessage) (*session, error) {
	dir, err := rootOf(cwdField, cwd)
	if err != nil {
		return nil, err
	}
	root := dir.Given()
	st := s.Settings()
	if len(settingsMeta) > 0 {
		next, unknown, err := api.ApplySettings(st, settingsMeta)
		if err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: _meta.agentls.%v", err)
		}
		if len(unknown) > 0 {
			s.log.Warn("_meta.agentls: unknown keys ignored", zap.Strings("keys", unknown))
		}
		st = next
	}
	mcpServers := maps.Clone(st.MCPServers)
	if len(servers) > 0 {
		raw, err := json.Marshal(servers)
		if err != nil {
			return nil, err
		}
		own, err := api.MCPServersFromACP(raw)
		if err != nil {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: %v", err)
		}
		if mcpServers == nil {
			mcpServers = map[string]api.MCPServer{}
		}
		maps.Copy(mcpServers, own) // the session's own win over the settings'
	}
	st.MCPServers = mcpServers
	ws, err := s.workspace(dir)
	if err != nil {
		return nil, err
	}
	log := s.log.With(zap.String("session", id))
	se := &session{srv: s, id: id, root: root, dir: dir, ws: ws, log: log, settings: st}
	se.out = newSender(s.client, id, log)
	se.book = newBook(se)
	se.tasks, err = ws.core.NewTasks(core.TasksConfig{Editor: &editor{s: se}, Events: events{se}, Own: &st, Log: log})
	if err != nil {
		return nil, err
	}
	se.engine, se.engines = se.tasks.Engine, se.tasks.Engines
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		se.tasks.Close()
		return nil, fmt.Errorf("session: %w", rpc.ErrClosed)
	}
	old := s.sessions[id]
	s.sessions[id] = se
	s.mu.Unlock()
	if old != nil {
		old.close() // loaded again: the new one replaces it
	}
	return se, nil
}

// session returns the open session id, or -32002.
func (s *Server) session(id string) (*session, error) {
	if id == "" {
		return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "sessionId" is required`)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if se := s.sessions[id]; se != nil {
		return se, nil
	}
	return nil, api.Errorf(acp.CodeResourceNotFound, "session %q is not open: session/new, session/load or session/resume it first", id)
}

// NewSession answers session/new: a new session on cwd, its MCP servers
// configured (they start on their first need), its modes, model option and
// commands.
func (s *Server) NewSession(_ context.Context, p *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	se, err := s.openSession(newSessionID(), "cwd", p.Cwd, p.McpServers, p.Meta[acp.MetaKey])
	if err != nil {
		return nil, err
	}
	// The model is checked as the prompt will check it, with the session's
	// own settings: a session no prompt could use is not opened.
	if err := s.checkModel(se.model(), se.root); err != nil {
		s.forget(se)
		return nil, err
	}
	se.announceCommands()
	s.listModels(se.root)
	se.log.Info("session/new", zap.String("root", se.root), zap.Int("mcpServers", len(p.McpServers)))
	return &acp.NewSessionResponse{SessionID: se.id, Modes: se.modes(), ConfigOptions: se.configOptions(), Models: se.models()}, nil
}

// storedSession checks that the root's store has the session id.
func (s *Server) storedSession(cwd, id string) (api.SessionResult, error) {
	dir, err := rootOf("cwd", cwd)
	if err != nil {
		return api.SessionResult{}, err
	}
	ws, err := s.workspace(dir)
	if err != nil {
		return api.SessionResult{}, err
	}
	res, err := ws.track.Session(api.SessionParams{SessionID: id})
	if errors.Is(err, tracking.ErrUnknownSession) {
		return res, api.Errorf(acp.CodeResourceNotFound, "no session %q in %s (session/list lists them)", id, dir.Given())
	}
	return res, err
}

// LoadSession answers session/load: the session is opened again on its
// root and its history replayed as session/update notifications (user
// messages, the workers' words as thoughts, tool calls, each task's
// summary as the agent's message) before the answer.
func (s *Server) LoadSession(ctx context.Context, p *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	hist, err := s.storedSession(p.Cwd, p.SessionID)
	if err != nil {
		return nil, err
	}
	se, err := s.openSession(p.SessionID, "cwd", p.Cwd, p.McpServers, p.Meta[acp.MetaKey])
	if err != nil {
		return nil, err
	}
	se.mu.Lock()
	se.stored = true
	se.mu.Unlock()
	se.replay(hist)
	se.announceCommands()
	s.listModels(se.root)
	if err := se.out.flush(ctx); err != nil {
		return nil, err
	}
	se.log.Info("session/load", zap.String("root", se.root), zap.Int("messages", len(hist.Messages)))
	return &acp.LoadSessionResponse{Modes: se.modes(), ConfigOptions: se.configOptions(), Models: se.models()}, nil
}

// ResumeSession answers session/resume: session/load without the replay.
func (s *Server) ResumeSession(_ context.Context, p *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	if _, err := s.storedSession(p.Cwd, p.SessionID); err != nil {
		return nil, err
	}
	se, err := s.openSession(p.SessionID, "cwd", p.Cwd, p.McpServers, p.Meta[acp.MetaKey])
	if err != nil {
		return nil, err
	}
	se.mu.Lock()
	se.stored = true
	se.mu.Unlock()
	se.announceCommands()
	s.listModels(se.root)
	se.log.Info("session/resume", zap.String("root", se.root))
	return &acp.ResumeSessionResponse{Modes: se.modes(), ConfigOptions: se.configOptions(), Models: se.models()}, nil
}

// listPage is how many sessions one session/list answer holds.
const listPage = 50

// ListSessions answers session/list: the sessions of cwd's store (of every
// root open in this connection without cwd), newest first, those with at
// least one prompt; the cursor is the offset of the next page.
func (s *Server) ListSessions(_ context.Context, p *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	var open []*workspace
	cwd := map[*workspace]string{} // as the client named it
	if p.Cwd != "" {
		dir, err := rootOf("cwd", p.Cwd)
		if err != nil {
			return nil, err
		}
		ws, err := s.workspace(dir)
		if err != nil {
			return nil, err
		}
		open, cwd[ws] = []*workspace{ws}, dir.Given()
	} else {
		s.mu.Lock()
		for _, root := range slices.Sorted(maps.Keys(s.workspaces)) {
			open = append(open, s.workspaces[root])
		}
		s.mu.Unlock()
	}
	var all []acp.SessionInfo
	for _, ws := range open {
		root := cmp.Or(cwd[ws], ws.root)
		list, err := ws.track.ListSessions()
		if err != nil {
			return nil, err
		}
		for _, si := range list.Sessions {
			if len(si.Tasks) == 0 {
				continue // named by a session/new, never prompted
			}
			all = append(all, acp.SessionInfo{SessionID: si.SessionID, Cwd: root, Title: si.Title, UpdatedAt: si.UpdatedAt})
		}
	}
	slices.SortStableFunc(all, func(a, b acp.SessionInfo) int {
		switch {
		case a.UpdatedAt > b.UpdatedAt:
			return -1
		case a.UpdatedAt < b.UpdatedAt:
			return 1
		}
		return 0
	})
	from := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 || n > len(all) {
			return nil, api.Errorf(api.CodeInvalidParams, "invalid params: cursor %q is not one session/list gave", p.Cursor)
		}
		from = n
	}
	res := &acp.ListSessionsResponse{Sessions: all[from:min(from+listPage, len(all))]}
	if res.Sessions == nil {
		res.Sessions = []acp.SessionInfo{}
	}
	if from+listPage < len(all) {
		res.NextCursor = strconv.Itoa(from + listPage)
	}
	return res, nil
}

// model is the model setting of the session's next prompts.
func (se *session) model() string {
	se.mu.Lock()
	defer se.mu.Unlock()
	return se.settings.Model
}

// forget closes a session and takes it out of the server's.
func (s *Server) forget(se *session) {
	s.mu.Lock()
	if s.sessions[se.id] == se {
		delete(s.sessions, se.id)
	}
	s.mu.Unlock()
	se.close()
}

// CloseSession answers session/close: its prompt is stopped and waited
// for, its MCP servers stopped; its history stays in the store.
func (s *Server) CloseSession(_ context.Context, p *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	se, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	s.forget(se)
	se.log.Info("session/close")
	return &acp.CloseSessionResponse{}, nil
}

// close stops the session's prompt, waits for its task to end and its
// updates to leave, and stops its MCP servers.
func (se *session) close() {
	se.mu.Lock()
	if se.closed {
		se.mu.Unlock()
		return
	}
	se.closed = true
	t := se.turn
	se.mu.Unlock()
	if t != nil {
		t.cancel(errSessionClosed)
	}
	se.tasks.Close() // every task stopped, its session written; its MCP servers stopped
	if t != nil {
		<-t.done
	}
	flush, cancel := context.WithTimeout(context.Background(), rpc.DrainTimeout)
	_ = se.out.flush(flush)
	cancel()
	se.out.close()
}

var errSessionClosed = errors.New("the session was closed")

// ---- modes and configuration options ----

// modeNames name and describe the edit modes (docs/EDITING.md) as a
// session's modes; api.EditModes says which there are, in their order.
var modeNames = map[string][2]string{
	api.EditPropose: {"Propose", "Each change is shown as a diff and waits for your approval"},
	api.EditApply:   {"Apply", "Changes are applied as the workers make them; each shows as a diff"},
	api.EditBranch:  {"Branch", "Changes go to a new git branch, agent/<task>; your branch stays as it was"},
	api.EditReview:  {"Review", "Changes are held until the prompt's end, then proposed together, file by file"},
}

// editModes are the modes of a session: the edit modes.
var editModes = func() []acp.SessionMode {
	out := make([]acp.SessionMode, len(api.EditModes))
	for i, m := range api.EditModes {
		n, ok := modeNames[m]
		if !ok {
			n = [2]string{m, ""}
		}
		out[i] = acp.SessionMode{ID: m, Name: n[0], Description: n[1]}
	}
	return out
}()

func (se *session) modes() *acp.SessionModeState {
	se.mu.Lock()
	defer se.mu.Unlock()
	return &acp.SessionModeState{CurrentModeID: se.settings.EditMode, AvailableModes: editModes}
}

// SetSessionMode answers session/set_mode: the edit mode of the session's
// next prompts.
func (s *Server) SetSessionMode(_ context.Context, p *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	se, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := se.setMode(p.ModeID); err != nil {
		return nil, err
	}
	// The mode option shows it too.
	se.book.push(acp.ConfigOptionUpdate{ConfigOptions: se.configOptions()})
	return &acp.SetSessionModeResponse{}, nil
}

// setMode sets the edit mode of the session's next prompts.
func (se *session) setMode(mode string) error {
	if !api.ValidEditMode(mode) {
		return api.Errorf(api.CodeInvalidParams, "invalid params: mode %q is not one of %v", mode, api.EditModes)
	}
	se.mu.Lock()
	se.settings.EditMode = mode
	se.mu.Unlock()
	se.log.Info("edit mode set", zap.String("mode", mode))
	return nil
}

// The ids of the configuration options (the engine's is engineOption).
const (
	modelOption = "model"
	modeOption  = "mode"
)

// configOptions are the session's options: its model, its edit mode (the
// modes again, for the clients that show options rather than modes) and
// its engine, each with the category the schema gives it.
func (se *session) configOptions() []acp.SessionConfigOption {
	se.mu.Lock()
	current, mode := se.settings.Model, se.settings.EditMode
	se.mu.Unlock()
	choices, current := se.srv.modelChoices(current)
	modes := make([]acp.SessionConfigSelect, len(editModes))
	for i, m := range editModes {
		modes[i] = acp.SessionConfigSelect{Value: m.ID, Name: m.Name, Description: m.Description}
	}
	return []acp.SessionConfigOption{{
		ID: modelOption, Name: "Model", Category: acp.CategoryModel, Type: acp.ConfigSelect,
		Description:  "The model the session's prompts think with (provider:model)",
		CurrentValue: current, Options: choices,
	}, {
		ID: modeOption, Name: "Mode", Category: acp.CategoryMode, Type: acp.ConfigSelect,
		Description:  "What a change of the session's prompts does: wait for your approval, apply, go to a branch, or wait for a review at the end",
		CurrentValue: mode, Options: modes,
	}, se.engineConfigOption()}
}

// models is the model option in the older model selection (the models of
// session/new, session/set_model): the same values, the same current one.
func (se *session) models() *acp.SessionModelState {
	choices, current := se.srv.modelChoices(se.model())
	st := &acp.SessionModelState{CurrentModelID: current, AvailableModels: make([]acp.ModelInfo, len(choices))}
	for i, c := range choices {
		st.AvailableModels[i] = acp.ModelInfo{ModelID: c.Value, Name: c.Name, Description: c.Description}
	}
	return st
}

// SetSessionConfigOption answers session/set_config_option: the model, the
// mode or the engine of the session's next prompts, one of the option's
// values.
func (s *Server) SetSessionConfigOption(_ context.Context, p *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	se, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	switch p.ConfigID {
	case modelOption, modeOption:
		value, ok := p.Value.(string)
		if !ok {
			return nil, api.Errorf(api.CodeInvalidParams, `invalid params: "value" of %q must be a string`, p.ConfigID)
		}
		if p.ConfigID == modeOption {
			if err = se.setMode(value); err == nil {
				// The modes show it too.
				se.book.push(acp.CurrentModeUpdate{CurrentModeID: value})
			}
		} else {
			err = se.setModel(value)
		}
	case engineOption:
		err = se.setEngine(p.Value)
	default:
		return nil, api.Errorf(api.CodeInvalidParams, "invalid params: configId %q is not an option of agentls's sessions (they have %q, %q and %q)", p.ConfigID, modelOption, modeOption, engineOption)
	}
	if err != nil {
		return nil, err
	}
	return &acp.SetSessionConfigOptionResponse{ConfigOptions: se.configOptions()}, nil
}

// SetSessionModel answers session/set_model, the older model selection:
// the model option's value, set as session/set_config_option sets it.
func (s *Server) SetSessionModel(_ context.Context, p *acp.SetSessionModelRequest) (*acp.SetSessionModelResponse, error) {
	se, err := s.session(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := se.setModel(p.ModelID); err != nil {
		return nil, err
	}
	return &acp.SetSessionModelResponse{}, nil
}

// setModel sets the model of the session's next prompts: one of the
// values offered, and one a prompt can use.
func (se *session) setModel(value string) error {
	choices, _ := se.srv.modelChoices("")
	if !slices.ContainsFunc(choices, func(c acp.SessionConfigSelect) bool { return c.Value == value }) {
		return api.Errorf(api.CodeInvalidParams, "invalid params: %q is not one of the models offered", value)
	}
	if err := se.srv.checkModel(value, se.root); err != nil {
		return err
	}
	se.mu.Lock()
	se.settings.Model = value
	se.mu.Unlock()
	se.log.Info("model set", zap.String("model", value))
	return nil
}

// announceTimeout bounds the wait of a flush that precedes a question.
const announceTimeout = 30 * time.Second
