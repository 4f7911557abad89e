package editing

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
)

// Task is one agent/run as far as editing is concerned: its edit mode and,
// in branch mode, the branch its changes go to (created before its first
// change).
type Task struct {
	ws   *Workspace
	id   string
	slug string

	mu        sync.Mutex
	mode      string // the mode in force; branch may fall back to propose
	branch    string // the branch created, once it is
	seq       int    // change annotations numbered per task
	held      map[string]*held
	heldOrder []string // the paths of held, in the order first changed
}

// Task returns the editing state of a task. mode "" takes the workspace's
// edit mode; slug names the branch of branch mode (see Slug).
func (w *Workspace) Task(id, slug, mode string) *Task {
	if mode == "" {
		mode = w.mode
	}
	if slug == "" {
		slug = Slug(id)
	}
	return &Task{ws: w, id: id, slug: slug, mode: mode}
}

// Mode returns the edit mode in force (branch mode that fell back reports
// propose).
func (t *Task) Mode() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mode
}

// Branch returns the branch branch mode created, or "".
func (t *Task) Branch() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.branch
}

// Agent is one agent of a task (a worker, or the coordinator). It remembers
// what it last read of each file, for the conflict check.
type Agent struct {
	task *Task
	who  Actor

	mu    sync.Mutex
	scope *Scope
	seen  map[string]string // rel -> hash of the text the agent last read or wrote
}

// Agent returns a new agent of the task with no file read yet.
func (t *Task) Agent(id string) *Agent {
	return &Agent{task: t, who: Actor{TaskID: t.id, AgentID: id}, seen: map[string]string{}}
}

// SetScope sets the owned_scope the agent's writes must stay in (the
// selected intent's); nil lifts it.
func (a *Agent) SetScope(s *Scope) {
	a.mu.Lock()
	a.scope = s
	a.mu.Unlock()
}

// Scope returns the agent's owned_scope, or nil.
func (a *Agent) Scope() *Scope {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.scope
}

func (a *Agent) remember(rel, content string) {
	a.mu.Lock()
	a.seen[rel] = HashContent(content)
	a.mu.Unlock()
}

func (a *Agent) forget(rel string) {
	a.mu.Lock()
	delete(a.seen, rel)
	a.mu.Unlock()
}

func (a *Agent) lastSeen(rel string) (string, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	h, ok := a.seen[rel]
	return h, ok
}

// HashContent returns "sha256:<hex>" of s, the form of docs/PROTOCOL.md §6.
func HashContent(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Slug makes a branch-name-safe slug of s: lower-case letters, digits and
// single dashes, at most 40 characters; "task" when nothing is left.
func Slug(s string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if sb.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			dash = false
			sb.WriteRune(r)
		default:
			dash = true
		}
	}
	out := strings.TrimRight(sb.String(), "-")
	if len(out) > 40 {
		out = strings.TrimRight(out[:40], "-")
	}
	if out == "" {
		return "task"
	}
	return out
}
