// Package sessions keeps the conversations of one workspace on disk
// (docs/PROTOCOL.md §6) so that they survive a restart or a crash:
//
//	<state>/workspaces/<first 16 hex of sha256(root)>/sessions.json
//	<state>/workspaces/<…>/sessions/<sessionId>.jsonl
//	<state>/workspaces/<…>/sessions.lock, owners/<owner>.lock
//
// sessions.json (sessions, their tasks and states) is replaced atomically at
// every task event; each session's messages are appended, one fsynced JSON
// line each, as the task goes, so a crash loses at most the message in
// flight. A corrupt or truncated file is never emptied: it is kept aside
// under a timestamped name, what can be read of it is kept, and the loss is
// reported (log and OnReport).
//
// Several processes may share one workspace's store (two editors on one
// project each run a sidecar). Every change of sessions.json is a
// read-merge-write under the exclusive lock of sessions.lock: the file is
// read again, the one change applied to what it holds, and the result
// written, so no process undoes another's. Appending a message takes only
// its history's own lock. Each Store holds the lock of its own file under
// owners/ for its life, and a task that is going records the owner that
// runs it. A task is listed as interrupted only when its owner's lock can
// be taken, that is when the process that ran it is gone (the system
// releases the lock of a process however it ends); Close marks the tasks
// still going as interrupted and releases the lock. Only the calls that
// answer with task states (Open, Sessions, Session, Delete) try other
// owners' locks. A Store is safe for concurrent use.
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
	lockName   = "sessions.lock"
	ownersDir  = "owners"
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
	// Subtasks are the task's subtasks as it ended (their todos and
	// usage): agent/session gives them back.
	Subtasks []api.Subtask `json:"subtasks,omitempty"`
	// Owner names the Store (owners/<Owner>.lock) that runs the task while
	// it is planning, running or waiting; "" once it ended.
	Owner string `json:"owner,omitempty"`
}

// Store is the session registry of one workspace.
type Store struct {
	dir      string
	now      func() time.Time
	newID    func() string
	onReport func(string)
	log      *zap.Logger
	red      *redact.Redactor

	owner     string           // this Store's name under owners/
	ownerLock *fsutil.FileLock // held until Close

	mu       sync.Mutex
	sessions map[string]*session    // as last read from disk
	checked  map[string]bool        // message logs checked for damage in this process
	history  map[string]*sync.Mutex // serialises one session's appends, never held with mu
	appended map[string]string      // time of the last message this process appended, by session
	touches  uint64                 // last session.touched given out
	closed   bool
}

// Open opens (creating it when needed) the registry of the workspace at
// root under stateDir, and takes this process's owner lock. Tasks whose
// owner is gone are listed as interrupted from now on; damaged files are
// set aside and reported. Open fails only when the directory cannot be
// used at all. Close the Store when the process stops serving.
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
		sessions: map[string]*session{}, checked: map[string]bool{}, appended: map[string]string{},
		history: map[string]*sync.Mutex{},
	}
	for _, d := range []string{msgDir, ownersDir} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o700); err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
	}
	fsutil.RemoveTemps(s.dir, indexName)
	fsutil.RemoveTemps(filepath.Join(s.dir, msgDir), "")
	s.removeDeadOwners()
	if err := s.takeOwnerLock(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.update(func(m map[string]*session) (bool, error) { return s.interruptOrphans(m), nil }); err != nil {
		s.releaseOwnerLock()
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

func (s *Store) ownerPath(id string) string {
	return filepath.Join(s.dir, ownersDir, id+".lock")
}

// takeOwnerLock creates this Store's file under owners/ and locks it. A
// process that found the file unlocked in the instant between its creation
// and its lock may have removed it as a dead owner's: the lock is kept only
// on a file still in place, so no one can take it for dead afterwards.
func (s *Store) takeOwnerLock() error {
	for range 10 {
		id := randomID() // not opts.NewID, which tests make predictable
		path := s.ownerPath(id)
		l, err := fsutil.LockFile(path)
		if err != nil {
			return fmt.Errorf("sessions: owner lock: %w", err)
		}
		if l.Same(path) {
			s.owner, s.ownerLock = id, l
			return nil
		}
		l.Unlock()
	}
	return fmt.Errorf("sessions: owner lock: %s keeps losing its files", filepath.Join(s.dir, ownersDir))
}

// releaseOwnerLock removes this Store's owner file and releases its lock.
// The file goes first, while still locked, so no one finds it unlocked;
// where an open file cannot be removed, it goes after.
func (s *Store) releaseOwnerLock() error {
	path := s.ownerPath(s.owner)
	rerr := os.Remove(path)
	err := s.ownerLock.Unlock()
	if rerr != nil {
		os.Remove(path)
	}
	return err
}

// removeDeadOwners removes the owner files whose lock no one holds: their
// processes are gone.
func (s *Store) removeDeadOwners() {
	entries, _ := os.ReadDir(filepath.Join(s.dir, ownersDir))
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok || !validID(id) {
			continue
		}
		if l, err := fsutil.TryLockFile(s.ownerPath(id)); err == nil {
			os.Remove(l.Name())
			l.Unlock()
		}
	}
}

// ownerAlive reports whether the Store named id is still running: it holds
// its owner lock. A task without an owner (written before owners were
// recorded, or rebuilt from a history) has none alive.
func (s *Store) ownerAlive(id string) bool {
	if id == s.owner {
		return !s.closed
	}
	if id == "" || !validID(id) {
		return false
	}
	l, err := fsutil.TryLockFile(s.ownerPath(id))
	switch {
	case err == nil:
		l.Unlock()
		return false
	case errors.Is(err, fsutil.ErrLocked):
		return true
	case errors.Is(err, fs.ErrNotExist):
		return false
	}
	// Unsure: a task wrongly left going can still be stopped; one wrongly
	// marked interrupted could not be taken back.
	s.log.Warn("sessions: cannot tell whether a task's process is alive", zap.String("owner", id), zap.Error(err))
	return true
}

// deadOwners returns the owners of the tasks of m still going that are
// gone, trying each owner's lock once.
func (s *Store) deadOwners(m map[string]*session) map[string]bool {
	seen := map[string]bool{}
	dead := map[string]bool{}
	for _, se := range m {
		for _, t := range se.Tasks {
			if !going(t.State) || seen[t.Owner] {
				continue
			}
			seen[t.Owner] = true
			if !s.ownerAlive(t.Owner) {
				dead[t.Owner] = true
			}
		}
	}
	return dead
}

// interruptOrphans marks the tasks still going whose owner is gone as
// interrupted, and removes those owners' files. It reports whether it
// changed m.
func (s *Store) interruptOrphans(m map[string]*session) bool {
	dead := s.deadOwners(m)
	if len(dead) == 0 {
		return false
	}
	for _, se := range m {
		for _, t := range se.Tasks {
			if going(t.State) && dead[t.Owner] {
				t.State, t.Owner = api.TaskInterrupted, ""
			}
		}
	}
	for id := range dead {
		if id != "" && validID(id) {
			os.Remove(s.ownerPath(id))
		}
	}
	return true
}

// damagedError is a sessions.json that cannot be read as a session list.
type damagedError struct{ err error }

func (e *damagedError) Error() string { return e.err.Error() }

// readIndex reads sessions.json as it is now. Every write replaces it
// whole, so it needs no lock to be read.
func readIndex(path string) (map[string]*session, error) {
	m := map[string]*session{}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	var idx index
	if err := json.Unmarshal(data, &idx); err != nil {
		return nil, &damagedError{err}
	}
	if !validIndex(&idx) {
		return nil, &damagedError{errors.New("entries without ids")}
	}
	for _, se := range idx.Sessions {
		m[se.ID] = se
	}
	return m, nil
}

// adopt makes m the sessions this Store knows, keeping what only this
// process knows: the order of its changes and the time of its last
// appended messages. The caller holds mu.
func (s *Store) adopt(m map[string]*session) {
	for id, se := range m {
		if old := s.sessions[id]; old != nil {
			se.touched = old.touched
		}
		if at := s.appended[id]; at > se.UpdatedAt {
			se.UpdatedAt = at
		}
	}
	for id := range s.appended {
		if m[id] == nil {
			delete(s.appended, id)
		}
	}
	s.sessions = m
}

// refresh reads the sessions as they are on disk now. The caller holds mu.
func (s *Store) refresh() error {
	m, err := readIndex(filepath.Join(s.dir, indexName))
	var damaged *damagedError
	if errors.As(err, &damaged) {
		// Set aside and rebuilt under the lock, unless another process
		// did it meanwhile.
		return s.update(func(map[string]*session) (bool, error) { return false, nil })
	}
	if err != nil {
		return err
	}
	s.adopt(m)
	return nil
}

// current is refresh, with the tasks of owners that are gone marked
// interrupted: what the calls that answer with task states use. The caller
// holds mu.
func (s *Store) current() error {
	if err := s.refresh(); err != nil {
		return err
	}
	if len(s.deadOwners(s.sessions)) == 0 {
		return nil
	}
	return s.update(func(m map[string]*session) (bool, error) { return s.interruptOrphans(m), nil })
}

// update is one read-merge-write of sessions.json under the lock that all
// processes of the workspace take for it: the file is read again, f changes
// what it holds, and the result is written when f reports a change (even
// when f fails after changing it). A damaged file is set aside and rebuilt
// from the message logs first. The caller holds mu.
func (s *Store) update(f func(m map[string]*session) (bool, error)) error {
	l, err := fsutil.LockFile(filepath.Join(s.dir, lockName))
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	defer l.Unlock()
	path := filepath.Join(s.dir, indexName)
	m, err := readIndex(path)
	rebuilt := false
	var damaged *damagedError
	if errors.As(err, &damaged) {
		aside, aerr := s.setAside(path)
		if aerr != nil {
			return fmt.Errorf("sessions: %s is damaged (%v) and could not be set aside: %w", path, damaged, aerr)
		}
		m, rebuilt = s.rebuild(), true
		s.report(fmt.Sprintf("agentls: the session list was damaged (%v); it was kept as %s and rebuilt from the message logs", damaged, aside))
	} else if err != nil {
		return err
	}
	s.adopt(m)
	changed, ferr := f(s.sessions)
	if changed || rebuilt {
		if err := s.persist(); err != nil {
			return err
		}
	}
	return ferr
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
func (s *Store) rebuild() map[string]*session {
	out := map[string]*session{}
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
		out[id] = se
	}
	return out
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

// persist replaces sessions.json with s.sessions; the caller holds mu and
// the lock of update.
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

// touch records a change of se by this process at now.
func (s *Store) touch(se *session, now string) {
	se.UpdatedAt = now
	s.touches++
	se.touched = s.touches
}

// StartTask records a new task, run by this process. With sessionID "" it
// opens a new session (titled after the prompt) and returns its id;
// otherwise the session must exist (ErrUnknownSession), possibly made by
// another process, and the task continues it.
func (s *Store) StartTask(sessionID, taskID, prompt string) (string, error) {
	if taskID == "" {
		return "", fmt.Errorf("%w: empty task id", ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	var sid string
	err := s.update(func(m map[string]*session) (bool, error) {
		now := s.now().UTC().Format(timeLayout)
		se := m[sessionID]
		switch {
		case sessionID == "":
			id := s.newID()
			for m[id] != nil {
				id = s.newID()
			}
			se = &session{ID: id, Title: title(prompt), CreatedAt: now, Tasks: []*task{}}
		case se == nil:
			return false, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
		}
		if slices.ContainsFunc(se.Tasks, func(t *task) bool { return t.TaskID == taskID }) {
			return false, fmt.Errorf("%w: task %q already exists in session %q", ErrInvalid, taskID, se.ID)
		}
		if se.Title == "" {
			se.Title = title(prompt) // a session made by Ensure
		}
		m[se.ID] = se
		se.Tasks = append(se.Tasks, &task{TaskID: taskID, Prompt: prompt, State: api.TaskPlanning, Owner: s.owner})
		s.touch(se, now)
		sid = se.ID
		return true, nil
	})
	if err != nil {
		return "", err
	}
	return sid, nil
}

// Ensure makes the session sessionID, empty and untitled, unless it
// exists: a client that named the session before its first task (an ACP
// client's session/new) continues it with StartTask. Its title is the
// prompt of its first task.
func (s *Store) Ensure(sessionID string) error {
	if !validID(sessionID) {
		return fmt.Errorf("%w: session id %q (letters, digits, '-', '_' and '.', at most 128)", ErrInvalid, sessionID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.sessions[sessionID] != nil {
		return nil
	}
	return s.update(func(m map[string]*session) (bool, error) {
		if m[sessionID] != nil {
			return false, nil // another process made it meanwhile
		}
		now := s.now().UTC().Format(timeLayout)
		se := &session{ID: sessionID, CreatedAt: now, Tasks: []*task{}}
		m[sessionID] = se
		s.touch(se, now)
		return true, nil
	})
}

// SetTaskState records a task's state. A task set to a state that is still
// going is run by this process; one that ended has no owner any more.
func (s *Store) SetTaskState(sessionID, taskID, state string) error {
	return s.updateTask(sessionID, taskID, func(t *task) {
		t.State, t.Owner = state, ""
		if going(state) {
			t.Owner = s.owner
		}
	})
}

// SetTaskUsage records a task's token usage so far.
func (s *Store) SetTaskUsage(sessionID, taskID string, u api.Usage) error {
	return s.updateTask(sessionID, taskID, func(t *task) { t.Usage = u })
}

// SetTaskResult records what a task used and its subtasks as it ended
// (with their todos and usage). Like everything written, they are written
// with the known secrets redacted.
func (s *Store) SetTaskResult(sessionID, taskID string, u api.Usage, subtasks []api.Subtask) error {
	subtasks = slices.Clone(subtasks)
	return s.updateTask(sessionID, taskID, func(t *task) { t.Usage, t.Subtasks = u.Total(), subtasks })
}

func (s *Store) updateTask(sessionID, taskID string, f func(*task)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.update(func(m map[string]*session) (bool, error) {
		se := m[sessionID]
		if se == nil {
			return false, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
		}
		i := slices.IndexFunc(se.Tasks, func(t *task) bool { return t.TaskID == taskID })
		if i < 0 {
			return false, fmt.Errorf("%w %q in session %q", ErrUnknownTask, taskID, sessionID)
		}
		f(se.Tasks[i])
		s.touch(se, s.now().UTC().Format(timeLayout))
		return true, nil
	})
}

// InterruptRunning marks every task this process runs that is still
// planning, running or waiting as interrupted, and returns how many it
// marked: for a process that stops running its tasks without ending them
// (the editor went away). Close calls it.
func (s *Store) InterruptRunning() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	return s.interruptRunning()
}

func (s *Store) interruptRunning() (int, error) {
	n := 0
	err := s.update(func(m map[string]*session) (bool, error) {
		for _, se := range m {
			for _, t := range se.Tasks {
				if going(t.State) && t.Owner == s.owner {
					t.State, t.Owner = api.TaskInterrupted, ""
					n++
				}
			}
		}
		return n > 0, nil
	})
	return n, err
}

// Close marks the tasks this process still runs as interrupted and
// releases its owner lock. The Store answers reads afterwards; changes fail
// with ErrClosed. Close may be called more than once.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	_, err := s.interruptRunning()
	s.closed = true
	return errors.Join(err, s.releaseOwnerLock())
}

// known returns the session, read again from disk when this process does
// not know it (another process made it). The caller holds mu.
func (s *Store) known(sessionID string) (*session, error) {
	if se := s.sessions[sessionID]; se != nil {
		return se, nil
	}
	if err := s.refresh(); err != nil {
		return nil, err
	}
	if se := s.sessions[sessionID]; se != nil {
		return se, nil
	}
	return nil, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
}

// Usage returns the tokens of the session's tasks, summed.
func (s *Store) Usage(sessionID string) (api.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.refresh(); err != nil {
		return api.Usage{}, err
	}
	se := s.sessions[sessionID]
	if se == nil {
		return api.Usage{}, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	return se.usage(), nil
}

// usage sums the session's tasks: a task of unknown price leaves the
// session's cost unknown.
func (se *session) usage() api.Usage {
	var u api.Usage
	for _, t := range se.Tasks {
		u = u.Plus(t.Usage.Total())
	}
	return u
}

// Append adds one message to the session's history, on disk (fsynced)
// before it returns. An empty Time is filled with now. It takes the
// history's own lock across the write and its fsync, and the store's lock
// only around its bookkeeping: appends to other sessions, and every read
// of the store, go on meanwhile. sessions.json is neither read nor written
// (the session's updatedAt follows at its next task event).
func (s *Store) Append(sessionID string, m api.SessionMessage) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	if _, err := s.known(sessionID); err != nil {
		s.mu.Unlock()
		return err
	}
	if m.Time == "" {
		m.Time = s.now().UTC().Format(timeLayout)
	}
	path := s.msgPath(sessionID)
	hist := s.history[sessionID]
	if hist == nil {
		hist = &sync.Mutex{}
		s.history[sessionID] = hist
	}
	s.mu.Unlock()
	line, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	line = s.red.JSON(line)

	hist.Lock()
	defer hist.Unlock()
	// The log is checked (and a damaged one set aside) once per process;
	// after that this process only appends whole lines, so re-reading the
	// whole log before every append would only make appends quadratic.
	// (Only a damaged log's repair writes under the store's lock.)
	s.mu.Lock()
	if !s.checked[sessionID] {
		if _, err := s.checkLog(sessionID, path); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()
	if err := fsutil.AppendLine(path, append(line, '\n'), 0o600); err != nil {
		return fmt.Errorf("sessions: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Time > s.appended[sessionID] {
		s.appended[sessionID] = m.Time
	}
	if se := s.sessions[sessionID]; se != nil && m.Time > se.UpdatedAt {
		se.UpdatedAt = m.Time
	}
	return nil
}

// Messages returns the session's history, oldest first.
func (s *Store) Messages(sessionID string) ([]api.SessionMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.known(sessionID); err != nil {
		return nil, err
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
	return s.repairLog(id, path)
}

// repairLog sets a damaged log aside and replaces it with its whole
// messages, under the lock its appenders take (fsutil.AppendLine), so that
// no process appends to it meanwhile: an appender that waited follows the
// file to its replacement. The caller holds mu.
func (s *Store) repairLog(id, path string) ([]api.SessionMessage, error) {
	var l *fsutil.FileLock
	for {
		var err error
		if l, err = fsutil.LockFile(path); err != nil {
			return nil, fmt.Errorf("sessions: %w", err)
		}
		if l.Same(path) {
			break
		}
		l.Unlock() // replaced while this waited: lock the file now in place
	}
	defer l.Unlock()
	msgs, bad, err := readMessages(path) // again: another process may have repaired it
	if err != nil {
		return nil, fmt.Errorf("sessions: %w", err)
	}
	if bad == 0 {
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

// wireTasks lists the session's tasks, with their subtasks when subtasks
// is set (agent/session).
func (se *session) wireTasks(subtasks bool) []api.SessionTask {
	out := make([]api.SessionTask, len(se.Tasks))
	for i, t := range se.Tasks {
		out[i] = api.SessionTask{TaskID: t.TaskID, Prompt: t.Prompt, State: t.State, Usage: t.Usage.Total()}
		if subtasks {
			out[i].Subtasks = t.Subtasks
		}
	}
	return out
}

// Sessions is the result of agent/sessions: every session of every process
// on the workspace, newest first.
func (s *Store) Sessions() (api.SessionsResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.current(); err != nil {
		return api.SessionsResult{}, err
	}
	list := make([]*session, 0, len(s.sessions))
	for _, se := range s.sessions {
		list = append(list, se)
	}
	sortNewestFirst(list)
	out := api.SessionsResult{Sessions: make([]api.SessionInfo, len(list))}
	for i, se := range list {
		out.Sessions[i] = api.SessionInfo{SessionID: se.ID, Title: se.Title, CreatedAt: se.CreatedAt, UpdatedAt: se.UpdatedAt,
			Usage: se.usage(), Tasks: se.wireTasks(false)}
	}
	return out, nil
}

// Session is the result of agent/session.
func (s *Store) Session(sessionID string) (api.SessionResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.current(); err != nil {
		return api.SessionResult{}, err
	}
	se := s.sessions[sessionID]
	if se == nil {
		return api.SessionResult{}, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
	}
	msgs, err := s.checkLog(sessionID, s.msgPath(sessionID))
	if err != nil {
		return api.SessionResult{}, err
	}
	return api.SessionResult{SessionID: se.ID, Title: se.Title, Messages: msgs, Tasks: se.wireTasks(true)}, nil
}

// Delete is agent/deleteSession: the session and its history are removed. A
// session with a task still going in a live process is refused with
// ErrSessionBusy.
func (s *Store) Delete(sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	err := s.update(func(m map[string]*session) (bool, error) {
		changed := s.interruptOrphans(m)
		se := m[sessionID]
		if se == nil {
			return changed, fmt.Errorf("%w %q", ErrUnknownSession, sessionID)
		}
		if slices.ContainsFunc(se.Tasks, func(t *task) bool { return going(t.State) }) {
			return changed, fmt.Errorf("%w: stop it first (session %q)", ErrSessionBusy, sessionID)
		}
		delete(m, sessionID)
		return true, nil
	})
	if err != nil {
		return err
	}
	delete(s.checked, sessionID)
	delete(s.appended, sessionID)
	if err := os.Remove(s.msgPath(sessionID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("sessions: history not removed", zap.String("sessionId", sessionID), zap.Error(err))
	}
	return nil
}
