// Package editing is the workspace as an agent may touch it: it resolves the
// paths an agent names, decides whether the agent may read or change them
// (the workspace root, zones and the intent's owned_scope), reads, lists and
// searches files, and turns an agent's intended change into a WorkspaceEdit
// the editor applies, in the task's edit mode, with a unified diff of it.
//
// Guarantees:
//   - No path outside the workspace root is read or written: paths are
//     cleaned and their symlinks resolved before the check. Walks
//     (list_files, search_files) judge every directory they enter and every
//     file they return the same way, by its resolved path.
//   - A change is applied whole or not at all, and is reported as applied
//     only when the editor said so (or the sidecar's own atomic write
//     succeeded). A change to a file that changed since the agent last read
//     it is refused as a conflict.
//   - The edits sent to the editor reproduce the new text exactly; their
//     ranges are in UTF-16 code units.
//
// A Workspace and its Tasks and Agents are safe for concurrent use. Changes
// to one file are serialised; changes to different files run in parallel.
package editing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/internal/contain"
	"github.com/agentls/agentls/internal/fileuri"
	"github.com/bmatcuk/doublestar/v4"
	"go.uber.org/zap"
)

// Editor is the part of the editor connection editing uses. *rpc.Editor
// satisfies it. Each call fails with an error wrapping api.ErrUnsupported
// when the client lacks the capability; editing then takes the fallback of
// docs/PROTOCOL.md §4 (read the disk, write the file itself).
type Editor interface {
	Caps() api.Caps
	ReadFile(ctx context.Context, path, uri string) (string, error)
	ApplyEdit(ctx context.Context, p api.ApplyWorkspaceEditParams, w api.Wait) (api.ApplyWorkspaceEditResult, error)
	ShowMessageRequest(ctx context.Context, p api.ShowMessageRequestParams) (*api.MessageActionItem, error)
}

// Actor names who made an access: the task and the agent (a subtask id, or
// "coordinator") within it.
type Actor struct {
	TaskID  string
	AgentID string
}

// Observer hears of every access an agent makes and every access refused.
// The tracking package implements it (heat map, blocked notifications).
// Calls are made synchronously from the agent's goroutine, so they must be
// quick and safe for concurrent use.
type Observer interface {
	// Access reports a read, write or search (api.ActionRead, ActionWrite,
	// ActionSearch) of a workspace-relative path.
	Access(who Actor, path, action string)
	// Blocked reports a refused access: the workspace-relative path (or the
	// path as given when it is outside the workspace) and the reason.
	Blocked(who Actor, path, reason string)
}

// Limits bound what the file tools return. Zero fields take the defaults.
type Limits struct {
	ReadLines       int   // lines read_file returns at most (2000)
	ReadBytes       int   // bytes read_file returns at most (256 KiB)
	LineChars       int   // characters of one line shown by read_file and search_files (2000)
	ListEntries     int   // paths list_files returns at most (500)
	SearchMatches   int   // matches search_files returns at most (100)
	SearchFileBytes int64 // larger files are not searched (4 MiB)
	// FileBytes bounds the files agentls reads whole (read_file, edits,
	// attachments): a larger one is refused before it is read (16 MiB).
	FileBytes int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.ReadLines, 2000)
	def(&l.ReadBytes, 256<<10)
	def(&l.LineChars, 2000)
	def(&l.ListEntries, 500)
	def(&l.SearchMatches, 100)
	if l.SearchFileBytes <= 0 {
		l.SearchFileBytes = 4 << 20
	}
	if l.FileBytes <= 0 {
		l.FileBytes = 16 << 20
	}
	return l
}

// Config builds a Workspace.
type Config struct {
	Root     string    // the workspace root; must exist
	Zones    api.Zones // from api.Settings; empty Allow means "**"
	EditMode string    // default mode of tasks: one of api.EditModes
	Editor   Editor
	Observer Observer    // nil: none
	Logger   *zap.Logger // nil: none
	// Warn shows the person a warning (window/logMessage), e.g. that branch
	// mode fell back to propose. nil: logged only.
	Warn   func(ctx context.Context, msg string)
	Limits Limits
	// UnsetEnv names the variables git (branch mode) must not inherit: the
	// secrets, as for commands (docs/PROTOCOL.md §4). A repository's hooks
	// run in git's environment.
	UnsetEnv []string
	// Changed hears of every change applied: the workspace-relative path
	// and the text that landed (deleted: the file is gone). It is called
	// on the agent's goroutine, once the editor (or the sidecar's own
	// write) has applied the change; in review mode, once the person has
	// reviewed the held change and it landed; after an undo, for each file
	// restored. nil: none.
	Changed func(rel, content string, deleted bool)
}

// Workspace is the root an agent works in, with its zones.
type Workspace struct {
	root     string // absolute, symlinks resolved
	dir      *contain.Dir
	allow    []string
	deny     []string
	mode     string
	ed       Editor
	obs      Observer
	log      *zap.Logger
	warn     func(ctx context.Context, msg string)
	limits   Limits
	unsetEnv []string
	changed  func(rel, content string, deleted bool)
	locks    *pathLocks
	renameFn func(oldpath, newpath string) error // os.Rename; tests interrupt writes here
}

// New returns the Workspace of cfg.
func New(cfg Config) (*Workspace, error) {
	if cfg.Editor == nil {
		return nil, fmt.Errorf("editing: Config.Editor is nil")
	}
	dir, err := contain.New(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	w := &Workspace{
		root: dir.Path(), dir: dir,
		allow: cfg.Zones.Allow, deny: cfg.Zones.Deny,
		mode: cfg.EditMode, ed: cfg.Editor, obs: cfg.Observer, log: cfg.Logger,
		warn: cfg.Warn, limits: cfg.Limits.withDefaults(), unsetEnv: cfg.UnsetEnv, changed: cfg.Changed,
		locks: newPathLocks(), renameFn: os.Rename,
	}
	if len(w.allow) == 0 {
		w.allow = []string{"**"}
	}
	for _, p := range append(append([]string(nil), w.allow...), w.deny...) {
		if err := api.ValidateGlob(p); err != nil {
			return nil, fmt.Errorf("zones: %w: %w", ErrBadPattern, err)
		}
	}
	switch w.mode {
	case "":
		w.mode = api.EditPropose
	default:
		if !api.ValidEditMode(w.mode) {
			return nil, fmt.Errorf("editMode %q is not one of %s", w.mode, strings.Join(api.EditModes, ", "))
		}
	}
	if w.log == nil {
		w.log = zap.NewNop()
	}
	return w, nil
}

// Root returns the workspace root (absolute, symlinks resolved).
func (w *Workspace) Root() string { return w.root }

// Path is a resolved path inside the workspace.
type Path struct {
	Rel string // workspace-relative with "/" separators; "." is the root
	Abs string // absolute, symlinks resolved
	URI string // file:// URI of Abs
}

// Resolve turns a path as an agent or editor names it (workspace-relative,
// absolute, with "./", "..", backslashes, or a file:// URI) into a Path in
// the workspace, resolving symlinks. It does not check zones.
func (w *Workspace) Resolve(p string) (Path, error) {
	raw := p
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return Path{}, fmt.Errorf("%w: the path is empty", ErrBadPath)
	case strings.ContainsRune(p, 0):
		return Path{}, fmt.Errorf("%w: %q contains a NUL byte", ErrBadPath, raw)
	}
	if strings.HasPrefix(strings.ToLower(p), "file:") {
		local, err := fileuri.ToPath(p)
		if err != nil {
			return Path{}, fmt.Errorf("%w: %w", ErrBadPath, err)
		}
		p = local
	} else if strings.Contains(p, "://") {
		return Path{}, fmt.Errorf("%w: %q is a URL; give a workspace-relative path", ErrBadPath, raw)
	}
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]) {
		return Path{}, fmt.Errorf("%w: %q is a drive path; give a workspace-relative path", ErrOutside, raw)
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		return Path{}, fmt.Errorf("%w: %q is in the home directory; give a workspace-relative path", ErrOutside, raw)
	}
	var abs string
	if path.IsAbs(p) {
		abs = filepath.Clean(filepath.FromSlash(p))
	} else {
		abs = filepath.Join(w.root, filepath.FromSlash(p))
	}
	return w.resolveAbs(abs, raw)
}

// resolveAbs is the second half of Resolve, for a clean absolute path:
// it must be under the root, and so must be where its symlinks lead
// (contain.Dir.Resolve). raw names the path in errors. Walks, which know
// their paths as absolute already, call it directly.
func (w *Workspace) resolveAbs(abs, raw string) (Path, error) {
	p, err := w.dir.Resolve(abs)
	var out *contain.OutsideError
	switch {
	case errors.As(err, &out) && out.Via != "":
		return Path{}, fmt.Errorf("%w: %q leads through a symlink to %s, outside the workspace", ErrOutside, raw, out.Via)
	case errors.As(err, &out):
		return Path{}, fmt.Errorf("%w: %q is not under the workspace root", ErrOutside, raw)
	case err != nil:
		return Path{}, fmt.Errorf("%w: %q: %w", ErrBadPath, raw, err)
	}
	return Path{Rel: p.Rel, Abs: p.Abs, URI: fileuri.FromPath(p.Abs)}, nil
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// zoneReason returns why the zones refuse rel, or "".
func (w *Workspace) zoneReason(rel string) string {
	if rel == "." {
		return ""
	}
	for _, p := range w.deny {
		if ok, _ := doublestar.Match(p, rel); ok {
			return fmt.Sprintf("denied by zones.deny %q", p)
		}
	}
	for _, p := range w.allow {
		if ok, _ := doublestar.Match(p, rel); ok {
			return ""
		}
	}
	return fmt.Sprintf("not in zones.allow %q", w.allow)
}

// Closed reports why the zones close the workspace-relative path rel to
// every agent ("" : they do not), without reporting it anywhere: for what
// must be kept from an agent's sight, such as the copy an isolated engine
// works in.
func (w *Workspace) Closed(rel string) string { return w.zoneReason(rel) }

// Access resolves p for an agent's access and checks it: the workspace
// root, the zones, and for writes the owned scope (nil: no scope). A refusal
// is reported to the observer and returned as an error wrapping ErrOutside,
// ErrBadPath or a *BlockedError.
func (w *Workspace) Access(who Actor, p string, write bool, scope *Scope) (Path, error) {
	rp, err := w.Resolve(p)
	if err != nil {
		w.blocked(who, p, err.Error())
		return Path{}, err
	}
	lex, _ := lexicalRel(w.root, p)
	if reason := w.refusal(rp, lex, write, scope); reason != "" {
		w.blocked(who, rp.Rel, reason)
		return Path{}, &BlockedError{Path: rp.Rel, Reason: reason}
	}
	return rp, nil
}

// refusal returns why the zones (and for a write the owned scope, nil: none)
// refuse an access to rp, a path Resolve returned, or "" when they allow it.
// lex is the path as written, workspace-relative before its symlinks ("":
// unknown): it may name a denied place the symlinks lead away from. Every
// access is judged here: the file tools by Access, walks entry by entry.
func (w *Workspace) refusal(rp Path, lex string, write bool, scope *Scope) string {
	reason := w.zoneReason(rp.Rel)
	if reason == "" && lex != "" && lex != rp.Rel {
		reason = w.zoneReason(lex)
	}
	if reason == "" && write && scope != nil {
		if ok, rule := scope.Match(rp.Rel); !ok {
			if rule != "" {
				reason = fmt.Sprintf("outside the intent's owned_scope: excluded by %q", rule)
			} else {
				reason = fmt.Sprintf("outside the intent's owned_scope %q", scope.Patterns())
			}
		}
	}
	return reason
}

// lexicalRel is the workspace-relative form of p before symlinks.
func lexicalRel(root, p string) (string, bool) {
	p = strings.ReplaceAll(strings.TrimSpace(p), `\`, "/")
	if strings.Contains(p, "://") || strings.HasPrefix(p, "file:") {
		return "", false
	}
	abs := filepath.Join(root, filepath.FromSlash(p))
	if path.IsAbs(p) {
		abs = filepath.Clean(p)
	}
	return contain.Within(root, abs)
}

func (w *Workspace) blocked(who Actor, p, reason string) {
	w.log.Debug("access blocked", zap.String("task", who.TaskID), zap.String("agent", who.AgentID),
		zap.String("path", p), zap.String("reason", reason))
	if w.obs != nil {
		w.obs.Blocked(who, p, reason)
	}
}

func (w *Workspace) accessed(who Actor, rel, action string) {
	if w.obs != nil {
		w.obs.Access(who, rel, action)
	}
}

// pathLocks serialises changes per file. A lock is a one-slot channel so
// waiting on it can be cancelled.
type pathLocks struct {
	mu sync.Mutex
	m  map[string]*pathLock
}

type pathLock struct {
	ch   chan struct{}
	refs int
}

func newPathLocks() *pathLocks { return &pathLocks{m: map[string]*pathLock{}} }

// lock takes the lock of rel, or fails when ctx ends first.
func (l *pathLocks) lock(ctx context.Context, rel string) (unlock func(), err error) {
	l.mu.Lock()
	pl := l.m[rel]
	if pl == nil {
		pl = &pathLock{ch: make(chan struct{}, 1)}
		l.m[rel] = pl
	}
	pl.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.m, rel)
		}
		l.mu.Unlock()
	}
	select {
	case pl.ch <- struct{}{}:
		return func() { <-pl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, context.Cause(ctx)
	}
}
