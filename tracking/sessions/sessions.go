// Package sessions keeps the conversations of one workspace on disk
// (docs/PROTOCOL.md §6) so that they survive a restart or a crash:
//
//	<state>/workspaces/<first 16 hex of sha256(root)>/sessions.json
//	<state>/workspaces/<…>/sessions/<sessionId>.jsonl
//
// sessions.json (sessions, their tasks and states) is replaced atomically at
// every task event; each session's messages are appended, one fsynced JSON
// line each, as the task goes, so a crash loses at most the message in
// flight. At Open, tasks that were still going are listed as interrupted. A
// corrupt or truncated file is never emptied: it is kept aside under a
// timestamped name, what can be read of it is kept, and the loss is
// reported (log and OnReport). A store assumes one process per workspace,
// as the protocol does. A Store is safe for concurrent use.
package sessions

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
)

const (
	indexName  = "sessions.json"
	msgDir     = "sessions"
	timeLayout = "2006-01-02T15:04:05.000Z07:00"
	asideStamp = "20060102T150405.000Z"
	maxTitle   = 80
)

// StateDir resolves the state directory of docs/PROTOCOL.md §6: $AGENTLS_STATE_DIR,
// else $XDG_STATE_HOME/agentls, else ~/.local/state/agentls. getenv and home
// are os.Getenv and os.UserHomeDir outside tests.
func StateDir(getenv func(string) string, home func() (string, error)) (string, error) {
	if d := getenv("AGENTLS_STATE_DIR"); d != "" {
		return d, nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "agentls"), nil
	}
	h, err := home()
	if err != nil || h == "" {
		return "", ErrNoStateDir
	}
	return filepath.Join(h, ".local", "state", "agentls"), nil
}

// WorkspaceDir is the directory of the workspace at root under stateDir.
func WorkspaceDir(stateDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(stateDir, "workspaces", hex.EncodeToString(sum[:])[:16])
}

// Options configure a Store. Zero fields take defaults.
type Options struct {
	Now   func() time.Time // time.Now
	NewID func() string    // random ids
	// OnReport is told, in words for the person, of every file set aside
	// (for window/showMessage). It may be nil.
	OnReport func(msg string)
	Logger   *zap.Logger
	// Redactor takes the known secrets out of everything written (nil:
	// nothing is redacted).
	Redactor *redact.Redactor
}

type index struct {
	Version  int        `json:"version"`
	Sessions []*session `json:"sessions"`
}

type session struct {
	ID        string  `json:"sessionId"`
	Title     string  `json:"title"`
	CreatedAt string  `json:"createdAt"`
	UpdatedAt string  `json:"updatedAt"`
	Tasks     []*task `json:"tasks"`
	// touched orders sessions changed within one timestamp tick: it rises
	// with every change made by this process (0 for sessions only loaded).
	touched uint64
}

type task struct {
	TaskID string    `json:"taskId"`
	Prompt string    `json:"prompt"`
	State  string    `json:"state"`
	Usage  api.Usage `json:"usage"`
}

// Store is the session registry of one workspace.
type Store struct {
	dir      string
	now      func() time.Time
	newID    func() string
	onReport func(string)
	log      *zap.Logger
	red      *redact.Redactor

	mu       sync.Mutex
	sessions map[string]*session
	checked  map[string]bool // message logs checked for damage in this process
	touches  uint64          // last session.touched given out
}

// Open opens (creating it when needed) the registry of the workspace at
// root under stateDir. Damaged files are set aside and reported; Open fails
// only when the directory cannot be used at all.
func Open(stateDir, root string, opts Options) (*Store, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = randomID
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	s := &Store{
		dir: WorkspaceDir(stateDir, root), now: opts.Now, newID: opts.NewID,
		onReport: opts.OnReport, log: opts.Logger, red: opts.Redactor,
		sessions: map[string]*session{}, checked: map[string]bool{},
	}
	if err := os.MkdirAll(filepath.Join(s.dir, msgDir), 0o700); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	fsutil.RemoveTemps(s.dir, indexName)
	fsutil.RemoveTemps(filepath.Join(s.dir, msgDir), "")
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// Dir returns the workspace's state directory.
func (s *Store) Dir() string { return s.dir }

func randomID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Store) load() error {
	path := filepath.Join(s.dir, indexName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil || !validIndex(&idx) {
		if err == nil {
			err = errors.New("entries without ids")
		}
		aside, aerr := s.setAside(path)
		if aerr != nil {
			return fmt.Errorf("sessions: %s is damaged (%v) and could not be set aside: %w", path, err, aerr)
		}
		s.rebuild()
		s.report(fmt.Sprintf("agentls: the session list was damaged (%v); it was kept as %s and rebuilt from the message logs", err, aside))
		return s.persist()
	}
	changed := false
	for _, se := range idx.Sessions {
		s.sessions[se.ID] = se
		for _, t := range se.Tasks {
			if going(t.State) {
				t.State = api.TaskInterrupted
				changed = true
			}
		}
	}
	if changed {
		return s.persist()
	}
	return nil
}

func validIndex(idx *index) bool {
	for _, se := range idx.Sessions {
		if se == nil || se.ID == "" || !validID(se.ID) {
			return false
		}
		if slices.Contains(se.Tasks, nil) {
			return false
		}
	}
	return true
}

// validID keeps session ids usable as file names.
func validID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return id != "." && id != ".."
}

func going(state string) bool {
	switch state {
	case api.TaskPlanning, api.TaskRunning, api.TaskWaiting:
		return true
	}
	return false
}

// rebuild lists the sessions again from their message logs.
func (s *Store) rebuild() {
	entries, _ := os.ReadDir(filepath.Join(s.dir, msgDir))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !validID(id) {
			continue
		}
		msgs, _, _ := readMessages(filepath.Join(s.dir, msgDir, e.Name()))
		se := &session{ID: id, Tasks: []*task{}}
		for _, m := range msgs {
			if se.CreatedAt == "" {
				se.CreatedAt = m.Time
			}
			se.UpdatedAt = m.Time
			i := slices.IndexFunc(se.Tasks, func(t *task) bool { return t.TaskID == m.TaskID })
			if i < 0 {
				se.Tasks = append(se.Tasks, &task{TaskID: m.TaskID, State: api.TaskInterrupted})
				i = len(se.Tasks) - 1
			}
			if m.Role == "user" && se.Tasks[i].Prompt == "" {
				se.Tasks[i].Prompt = m.Text
				if se.Title == "" {
					se.Title = title(m.Text)
				}
			}
		}
		if se.CreatedAt == "" {
			now := s.now().UTC().Format(timeLayout)
			se.CreatedAt, se.UpdatedAt = now, now
		}
		s.sessions[id] = se
	}
}

func (s *Store) report(msg string) {
	s.log.Warn("sessions: " + msg)
	if s.onReport != nil {
		s.onReport(msg)
	}
}

// setAside keeps a damaged file under a timestamped name next to it and
// returns that name. The file itself is left in place (a hard link, or a
// copy where links are not available) for the caller to replace atomically.
func (s *Store) setAside(path string) (string, error) {
	aside := path + ".corrupt-" + s.now().UTC().Format(asideStamp)
	for i := 1; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, fs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s.corrupt-%s-%d", path, s.now().UTC().Format(asideStamp), i)
	}
	if err := os.Link(path, aside); err == nil {
		return aside, fsutil.SyncDir(filepath.Dir(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if err := fsutil.WriteAtomic(aside, data, 0o600); err != nil {
		return "", err
	}
	return aside, nil
}

// persist replaces sessions.json; the caller holds mu (or is Open).
func (s *Store) persist() error {
	idx := index{Version: 1, Sessions: make([]*session, 0, len(s.sessions))}
	for _, se := range s.sessions {
		idx.Sessions = append(idx.Sessions, se)
	}
	sortNewestFirst(idx.Sessions)
	data, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	data = s.red.JSON(data)
	if err := fsutil.WriteAtomic(filepath.Join(s.dir, indexName), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	return nil
}

func sortNewestFirst(list []*session) {
	slices.SortStableFunc(list, func(a, b *session) int {
		if c := strings.Compare(b.UpdatedAt, a.UpdatedAt); c != 0 {
			return c
		}
		if a.touched != b.touched { // same millisecond: the later change first
			if b.touched > a.touched {
				return 1
			}
			return -1
		}
		return strings.Compare(a.ID, b.ID)
	})
}

func title(prompt string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(prompt), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) <= maxTitle {
		return line
	}
	r := []rune(line)
	return strings.TrimSpace(string(r[:maxTitle-1])) + "…"
}

// StartTask records a new task. With sessionID "" it opens a new session
// (titled after the prompt) and returns its id; otherwise the session must
// exist (ErrUnknownSession) and the task continues it.
func (s *Store) StartTask(sessionID, taskID, prompt string) (string, error) {
	if taskID == "" {
		return "", fmt.Errorf("%w: empty task id", ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC().Format(timeLayout)
	se := s.sessions[sessionID]
	switch {
	case sessionID == "":
		se = &session{ID: s.newID(), Title: title(prompt), CreatedAt: now, Tasks: []*task{}}
		s.sessions[se.ID] = se
	case se == nil:
		return "", fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	if slices.ContainsFunc(se.Tasks, func(t *task) bool { return t.TaskID == taskID }) {
		return "", fmt.Errorf("%w: task %q already exists in session %q", ErrInvalid, taskID, se.ID)
	}
	se.Tasks = append(se.Tasks, &task{TaskID: taskID, Prompt: prompt, State: api.TaskPlanning})
	se.UpdatedAt = now
	s.touches++
	se.touched = s.touches
	return se.ID, s.persist()
}

// SetTaskState records a task's state.
func (s *Store) SetTaskState(sessionID, taskID, state string) error {
	return s.updateTask(sessionID, taskID, func(t *task) { t.State = state })
}

// SetTaskUsage records a task's token usage so far.
func (s *Store) SetTaskUsage(sessionID, taskID string, u api.Usage) error {
	return s.updateTask(sessionID, taskID, func(t *task) { t.Usage = u })
}

func (s *Store) updateTask(sessionID, taskID string, f func(*task)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	i := slices.IndexFunc(se.Tasks, func(t *task) bool { return t.TaskID == taskID })
	if i < 0 {
		return fmt.Errorf("%w %q in session %q", ErrUnknownTask, taskID, sessionID)
	}
	f(se.Tasks[i])
	se.UpdatedAt = s.now().UTC().Format(timeLayout)
	s.touches++
	se.touched = s.touches
	return s.persist()
}

// Usage returns the tokens of the session's tasks, summed.
func (s *Store) Usage(sessionID string) (api.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return api.Usage{}, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	var u api.Usage
	for _, t := range se.Tasks {
		u.InputTokens += t.Usage.InputTokens
		u.OutputTokens += t.Usage.OutputTokens
	}
	return u, nil
}

// Append adds one message to the session's history, on disk (fsynced)
// before it returns. An empty Time is filled with now.
func (s *Store) Append(sessionID string, m api.SessionMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	if m.Time == "" {
		m.Time = s.now().UTC().Format(timeLayout)
	}
	path := s.msgPath(sessionID)
	// The log is checked (and a damaged one set aside) once per process;
	// after that this process only appends whole lines, so re-reading the
	// whole log before every append would only make appends quadratic.
	if !s.checked[sessionID] {
		if _, err := s.checkLog(sessionID, path); err != nil {
			return err
		}
	}
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	line = s.red.JSON(line)
	if err := fsutil.AppendLine(path, append(line, '\n'), 0o600); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	se.UpdatedAt = m.Time
	return nil
}

// Messages returns the session's history, oldest first.
func (s *Store) Messages(sessionID string) ([]api.SessionMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sessionID] == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	return s.checkLog(sessionID, s.msgPath(sessionID))
}

func (s *Store) msgPath(id string) string { return filepath.Join(s.dir, msgDir, id+".jsonl") }

// checkLog reads a message log; the first time in this process a damaged
// one (a torn last line, a line that is not a message) is set aside and
// replaced by what could be read. The caller holds mu.
func (s *Store) checkLog(id, path string) ([]api.SessionMessage, error) {
	msgs, bad, err := readMessages(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.checked[id] = true
		return []api.SessionMessage{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if bad == 0 || s.checked[id] {
		s.checked[id] = true
		return msgs, nil
	}
	aside, err := s.setAside(path)
	if err != nil {
		return nil, fmt.Errorf("sessions: %s is damaged and could not be set aside: %w", path, err)
	}
	var buf bytes.Buffer
	for _, m := range msgs {
		line, _ := json.Marshal(m)
		buf.Write(line)
		buf.WriteByte('\n')
	}
	if err := fsutil.WriteAtomic(path, buf.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	s.checked[id] = true
	s.report(fmt.Sprintf("agentls: the history of session %s had %d damaged line(s) (an interrupted write?); the file was kept as %s and the %d whole message(s) kept", id, bad, aside, len(msgs)))
	return msgs, nil
}

// readMessages parses a JSONL message log and counts the lines that are not
// whole messages (a last line without its newline counts as damaged).
func readMessages(path string) ([]api.SessionMessage, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	msgs := []api.SessionMessage{}
	bad := 0
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var m api.SessionMessage
			whole := line[len(line)-1] == '\n'
			if !whole || json.Unmarshal(line, &m) != nil || m.Role == "" {
				if len(bytes.TrimSpace(line)) > 0 {
					bad++
				}
			} else {
				msgs = append(msgs, m)
			}
		}
		if err == io.EOF {
			return msgs, bad, nil
		}
		if err != nil {
			return nil, 0, err
		}
	}
}

func (se *session) wireTasks() []api.SessionTask {
	out := make([]api.SessionTask, len(se.Tasks))
	for i, t := range se.Tasks {
		out[i] = api.SessionTask{TaskID: t.TaskID, Prompt: t.Prompt, State: t.State}
	}
	return out
}

// Sessions is the result of agent/sessions: every session, newest first.
func (s *Store) Sessions() api.SessionsResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		list = append(list, se)
	}
	sortNewestFirst(list)
	out := api.SessionsResult{Sessions: make([]api.SessionInfo, len(list))}
	for i, se := range list {
		out.Sessions[i] = api.SessionInfo{SessionID: se.ID, Title: se.Title, CreatedAt: se.CreatedAt, UpdatedAt: se.UpdatedAt, Tasks: se.wireTasks()}
	}
	return out
}

// Session is the result of agent/session.
func (s *Store) Session(sessionID string) (api.SessionResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return api.SessionResult{}, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	msgs, err := s.checkLog(sessionID, s.msgPath(sessionID))
	if err != nil {
		return api.SessionResult{}, err
	}
	return api.SessionResult{SessionID: se.ID, Title: se.Title, Messages: msgs, Tasks: se.wireTasks()}, nil
}

// Delete is agent/deleteSession: the session and its history are removed. A
// session with a task still going is refused with ErrSessionBusy.
func (s *Store) Delete(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	se := s.sessions[sessionID]
	if se == nil {
		return fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	if slices.ContainsFunc(se.Tasks, func(t *task) bool { return going(t.State) }) {
		return fmt.Errorf("%w: stop it first (session %q)", ErrSessionBusy, sessionID)
	}
	delete(s.sessions, sessionID)
	if err := s.persist(); err != nil {
		s.sessions[sessionID] = se
		return err
	}
	delete(s.checked, sessionID)
	if err := os.Remove(s.msgPath(sessionID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("sessions: history not removed", zap.String("sessionId", sessionID), zap.Error(err))
	}
	return nil
}
