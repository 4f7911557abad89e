// Package checkpoint keeps what it takes to undo a task: for every change a
// task applied, the file's text before and after it, in the workspace's
// state directory (docs/TRACKING.md, Checkpoints):
//
//	<state>/workspaces/<…>/checkpoints/<sessionId>/<taskId>.jsonl
//	<state>/workspaces/<…>/checkpoints/<sessionId>/blobs/<sha256 hex>
//
// One JSON line per applied change names the file, the operation, the
// subtask and the sha256 of the text before and after ("" for a file that
// did not exist); the texts are blobs named by their hash, written once and
// shared by every change and task of the session that has them. A blob is
// written (atomically, fsynced) before the line that names it is appended
// (one write under an exclusive lock, fsynced), so a line never names a
// blob that is not there.
//
// It is bounded: a text over MaxText bytes, or holding a secret agentls
// knows of (package redact), is not kept, nor are a task's texts past
// MaxTaskBytes; the line then says so, and that file cannot be undone. Only
// the checkpoints of the KeepTasks most recent tasks of the workspace are
// kept: a task's first change removes older ones, and the blobs no kept
// task names. A session's checkpoints go with it (DeleteSession).
//
// A task id may come back (a client choosing "t1" in every session, or
// again after a restart): each run of a task records under its own run id,
// and Task returns the changes of its latest run. A Store is safe for
// concurrent use; several processes may share one state directory.
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/fsutil"
	"github.com/agentls/agentls/internal/redact"
)

// Bounds of what is kept.
const (
	MaxText      = 4 << 20  // a file's text larger than this is not kept
	MaxTaskBytes = 32 << 20 // new texts one task keeps at most
	KeepTasks    = 20       // the most recent tasks whose checkpoints are kept
)

const (
	dirName    = "checkpoints"
	blobDir    = "blobs"
	lockName   = "checkpoints.lock"
	hashPrefix = "sha256:"
	timeLayout = "2006-01-02T15:04:05.000Z07:00"
)

// ErrNoCheckpoint: no change of that task (or subtask) was recorded.
var ErrNoCheckpoint = errors.New("no checkpoint")

// Change is one applied change as the caller knows it.
type Change struct {
	SessionID, TaskID, SubtaskID string
	Path                         string // workspace-relative, "/" separators
	Operation                    string // api.OpCreate, OpUpdate or OpDelete
	Before                       string // the text before ("" when the file did not exist)
	Existed                      bool
	After                        string // the text after ("" after a delete)
	TraceID                      string // the trace entry of the change, "" when the trace is off
}

// Record is one line of a task's checkpoint log.
type Record struct {
	Run       string `json:"run"`
	Time      string `json:"time"`
	TaskID    string `json:"taskId"`
	SubtaskID string `json:"subtaskId"`
	Path      string `json:"path"`
	Operation string `json:"operation"`
	// Before and After are "sha256:<hex>" of the texts, "" for a file that
	// does not exist.
	Before  string `json:"before"`
	After   string `json:"after"`
	TraceID string `json:"traceId,omitempty"`
	// Missing says why the texts were not kept ("" when they were).
	Missing string `json:"missing,omitempty"`
}

// Options configure a Store. Zero fields take defaults.
type Options struct {
	Redactor *redact.Redactor // knows the secrets whose texts are not kept
	Logger   *zap.Logger
	Now      func() time.Time
	NewID    func() string
}

// Store is the checkpoints of one workspace.
type Store struct {
	dir   string
	red   *redact.Redactor
	log   *zap.Logger
	now   func() time.Time
	newID func() string

	mu   sync.Mutex
	runs map[string]*run // by session/task: this process's run of a task
}

// run is what this process recorded of one run of a task.
type run struct {
	id    string
	bytes int64 // texts kept
}

// Open returns the Store under the workspace's state directory wsDir
// (sessions.Store.Dir). Nothing is read or written until it is used.
func Open(wsDir string, opts Options) *Store {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewID == nil {
		opts.NewID = func() string {
			var b [8]byte
			_, _ = rand.Read(b[:])
			return hex.EncodeToString(b[:])
		}
	}
	return &Store{dir: filepath.Join(wsDir, dirName), red: opts.Redactor, log: opts.Logger, now: opts.Now, newID: opts.NewID, runs: map[string]*run{}}
}

// Dir is the directory the checkpoints are kept in.
func (s *Store) Dir() string { return s.dir }

// HashText returns "sha256:<hex>" of text, the form of the trace's hashes.
func HashText(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hashPrefix + hex.EncodeToString(sum[:])
}

// validID: an id used in a file name.
func validID(id string) bool {
	if id == "" || len(id) > 128 || id == "." || id == ".." {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func (s *Store) sessionDir(sessionID string) string { return filepath.Join(s.dir, sessionID) }

func (s *Store) logPath(sessionID, taskID string) string {
	return filepath.Join(s.dir, sessionID, taskID+".jsonl")
}

func (s *Store) blobPath(sessionID, hash string) string {
	return filepath.Join(s.dir, sessionID, blobDir, strings.TrimPrefix(hash, hashPrefix))
}

// lock takes the store's lock, which orders pruning against recording
// across processes.
func (s *Store) lock() (*fsutil.FileLock, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, err
	}
	return fsutil.LockFile(filepath.Join(s.dir, lockName))
}

// Record keeps c: its texts as blobs (those not kept yet, within the
// bounds) and one line in its task's log. The first change of a run of a
// task prunes the checkpoints of older tasks.
func (s *Store) Record(c Change) error {
	if !validID(c.SessionID) || !validID(c.TaskID) {
		return fmt.Errorf("checkpoint: session %q or task %q cannot name a file", c.SessionID, c.TaskID)
	}
	key := c.SessionID + "/" + c.TaskID
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.lock()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer l.Unlock()
	r := s.runs[key]
	if r == nil {
		r = &run{id: s.newID()}
		s.runs[key] = r
		s.prune(c.SessionID, c.TaskID)
	}
	rec := Record{
		Run: r.id, Time: s.now().UTC().Format(timeLayout),
		TaskID: c.TaskID, SubtaskID: c.SubtaskID, Path: c.Path, Operation: c.Operation, TraceID: c.TraceID,
	}
	if c.Existed {
		rec.Before = HashText(c.Before)
	}
	if c.Operation != api.OpDelete {
		rec.After = HashText(c.After)
	}
	rec.Missing = s.keep(c, rec, r)
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.MkdirAll(s.sessionDir(c.SessionID), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := fsutil.AppendLine(s.logPath(c.SessionID, c.TaskID), append(line, '\n'), 0o600); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// keep writes the blobs of c that the session lacks, and returns why they
// could not all be kept ("" when they were).
func (s *Store) keep(c Change, rec Record, r *run) string {
	type blob struct{ hash, text string }
	var blobs []blob
	if rec.Before != "" {
		blobs = append(blobs, blob{rec.Before, c.Before})
	}
	if rec.After != "" {
		blobs = append(blobs, blob{rec.After, c.After})
	}
	var todo []blob
	var size int64
	for _, b := range blobs {
		switch {
		case len(b.text) > MaxText:
			return fmt.Sprintf("the file is larger than %d MiB", MaxText>>20)
		case s.red.String(b.text) != b.text:
			return "the file holds a secret agentls knows of, which is never written to its state"
		}
		if _, err := os.Stat(s.blobPath(c.SessionID, b.hash)); err == nil {
			continue
		}
		todo = append(todo, b)
		size += int64(len(b.text))
	}
	if r.bytes+size > MaxTaskBytes {
		return fmt.Sprintf("the task's checkpoints reached their bound of %d MiB", MaxTaskBytes>>20)
	}
	if len(todo) > 0 {
		if err := os.MkdirAll(filepath.Join(s.sessionDir(c.SessionID), blobDir), 0o700); err != nil {
			return "it could not be written: " + err.Error()
		}
	}
	for _, b := range todo {
		if err := fsutil.WriteAtomic(s.blobPath(c.SessionID, b.hash), []byte(b.text), 0o600); err != nil {
			s.log.Warn("checkpoint: a text could not be kept", zap.String("path", c.Path), zap.Error(err))
			return "it could not be written: " + err.Error()
		}
	}
	r.bytes += size
	return ""
}

// prune removes the logs of all but the KeepTasks most recent tasks of the
// workspace (the one starting, sessionID/taskID, counts as the most recent),
// then the blobs no log left names. The caller holds the store's lock.
func (s *Store) prune(sessionID, taskID string) {
	type logFile struct {
		session, path string
		mod           time.Time
	}
	var logs []logFile
	sessions, _ := os.ReadDir(s.dir)
	for _, se := range sessions {
		if !se.IsDir() {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(s.dir, se.Name()))
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			if se.Name() == sessionID && e.Name() == taskID+".jsonl" {
				continue
			}
			if fi, err := e.Info(); err == nil {
				logs = append(logs, logFile{se.Name(), filepath.Join(s.dir, se.Name(), e.Name()), fi.ModTime()})
			}
		}
	}
	if len(logs) < KeepTasks {
		return
	}
	slices.SortFunc(logs, func(a, b logFile) int { return b.mod.Compare(a.mod) })
	touched := map[string]bool{}
	for _, lf := range logs[KeepTasks-1:] {
		if err := os.Remove(lf.path); err == nil {
			touched[lf.session] = true
		}
	}
	for se := range touched {
		s.collect(se)
	}
}

// collect removes the blobs of a session that none of its logs names, and
// the session's directory when nothing is left in it.
func (s *Store) collect(sessionID string) {
	dir := s.sessionDir(sessionID)
	named := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		recs, _ := readLog(filepath.Join(dir, e.Name()))
		for _, r := range recs {
			named[strings.TrimPrefix(r.Before, hashPrefix)] = true
			named[strings.TrimPrefix(r.After, hashPrefix)] = true
		}
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, blobDir))
	for _, b := range blobs {
		if !named[b.Name()] {
			os.Remove(filepath.Join(dir, blobDir, b.Name()))
		}
	}
	os.Remove(filepath.Join(dir, blobDir)) // only when empty
	os.Remove(dir)
}

// readLog reads a task's log; a line a crash tore is skipped.
func readLog(path string) ([]Record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Record
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r Record
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Path != "" {
			out = append(out, r)
		}
	}
	return out, nil
}

// Task returns the changes of the latest run of a task, oldest first, and
// the session they were recorded in. sessionID "" looks in every session
// and takes the most recent log of that task id. It fails with an error
// wrapping ErrNoCheckpoint when none was recorded.
func (s *Store) Task(sessionID, taskID string) ([]Record, string, error) {
	if !validID(taskID) || (sessionID != "" && !validID(sessionID)) {
		return nil, "", fmt.Errorf("%w: no task %q", ErrNoCheckpoint, taskID)
	}
	var path string
	if sessionID != "" {
		path = s.logPath(sessionID, taskID)
	} else {
		var newest time.Time
		sessions, _ := os.ReadDir(s.dir)
		for _, se := range sessions {
			p := s.logPath(se.Name(), taskID)
			if fi, err := os.Stat(p); err == nil && se.IsDir() && (path == "" || fi.ModTime().After(newest)) {
				path, newest, sessionID = p, fi.ModTime(), se.Name()
			}
		}
	}
	recs, err := readLog(path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(recs) == 0) || path == "" {
		return nil, "", fmt.Errorf("%w: no change of task %q was recorded in this workspace (or its checkpoints were pruned: the %d most recent tasks keep theirs)", ErrNoCheckpoint, taskID, KeepTasks)
	}
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint: %w", err)
	}
	last := recs[len(recs)-1].Run
	out := recs[:0]
	for _, r := range recs {
		if r.Run == last {
			out = append(out, r)
		}
	}
	return out, sessionID, nil
}

// Text returns a text a record names by its hash: "" with false for ""
// (a file that does not exist).
func (s *Store) Text(sessionID, hash string) (string, bool, error) {
	if hash == "" {
		return "", false, nil
	}
	if !strings.HasPrefix(hash, hashPrefix) || strings.ContainsAny(hash, `/\`) {
		return "", false, fmt.Errorf("checkpoint: %q is not a text's hash", hash)
	}
	b, err := os.ReadFile(s.blobPath(sessionID, hash))
	if err != nil {
		return "", false, fmt.Errorf("checkpoint: the text %s is not kept: %w", hash, err)
	}
	if HashText(string(b)) != hash {
		return "", false, fmt.Errorf("checkpoint: the text kept as %s is damaged", hash)
	}
	return string(b), true, nil
}

// DeleteSession removes the checkpoints of a session.
func (s *Store) DeleteSession(sessionID string) error {
	if !validID(sessionID) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := s.lock()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer l.Unlock()
	if err := os.RemoveAll(s.sessionDir(sessionID)); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}
