// Package intents reads .orchestration/active_intents.yaml (docs/PROTOCOL.md §6) and
// keeps the gate that intents put on mutating tools.
//
// Intents are opt-in: with no file (or a file that lists none) every tool is
// allowed. When the file lists intents, mutating tools (write_file,
// edit_file, delete_file, run_command) need a selected intent, and writes
// must fall in that intent's owned_scope (doublestar patterns, "!" excludes,
// the last matching pattern wins). A file that cannot be used closes the
// gate: the model is told why and the person gets one report per broken
// version of the file; the process never stops on it.
//
// The file is re-read on every use and re-parsed when its bytes change, so
// an edit by the person takes effect at the next tool call. A Store is safe
// for concurrent use.
package intents

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"go.uber.org/zap"
	"go.yaml.in/yaml/v4"

	"github.com/agentls/agentls/editing"
	"github.com/agentls/agentls/internal/contain"
)

// RelPath is the file's place in the workspace.
const RelPath = ".orchestration/active_intents.yaml"

// maxFileSize bounds what is read: an intents file is a page of YAML.
const maxFileSize = 1 << 20

// Intent is one entry of active_intents.
type Intent struct {
	ID                 string
	Name               string
	Status             string
	OwnedScope         []string
	Constraints        []string
	AcceptanceCriteria []string
	Scope              *editing.Scope // OwnedScope compiled
}

// StatusCompleted is the status of an intent whose work is done.
const StatusCompleted = "COMPLETED"

// Completed reports whether the intent's work is done (status COMPLETED,
// in any case): it cannot be selected.
func (in Intent) Completed() bool {
	return strings.EqualFold(strings.TrimSpace(in.Status), StatusCompleted)
}

// Mutating reports whether a tool changes the workspace and so needs an
// intent when intents exist.
func Mutating(tool string) bool {
	switch tool {
	case "write_file", "edit_file", "delete_file", "run_command":
		return true
	}
	return false
}

type rawIntent struct {
	ID                 string   `yaml:"id"`
	Name               string   `yaml:"name"`
	Status             string   `yaml:"status"`
	OwnedScope         []string `yaml:"owned_scope"`
	Constraints        []string `yaml:"constraints"`
	AcceptanceCriteria []string `yaml:"acceptance_criteria"`
}

// Parse reads and validates the file's bytes. An empty file, or one without
// active_intents, holds no intents. Errors name the intent and its line.
func Parse(data []byte) ([]Intent, error) {
	var doc struct {
		ActiveIntents yaml.Node `yaml:"active_intents"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	list := &doc.ActiveIntents
	if list.Kind == 0 || (list.Kind == yaml.ScalarNode && list.Tag == "!!null") {
		return nil, nil
	}
	if list.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("line %d: active_intents must be a list of intents", list.Line)
	}
	out := make([]Intent, 0, len(list.Content))
	seen := map[string]int{}
	for i, item := range list.Content {
		where := fmt.Sprintf("intent %d (line %d)", i+1, item.Line)
		if item.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: must be a mapping with id, name, status, owned_scope, constraints, acceptance_criteria", where)
		}
		var r rawIntent
		if err := item.Decode(&r); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		r.ID = strings.TrimSpace(r.ID)
		if r.ID == "" {
			return nil, fmt.Errorf("%s: id is missing", where)
		}
		where = fmt.Sprintf("intent %q (line %d)", r.ID, item.Line)
		if prev, dup := seen[r.ID]; dup {
			return nil, fmt.Errorf("%s: id already used by intent %d", where, prev)
		}
		seen[r.ID] = i + 1
		if strings.TrimSpace(r.Name) == "" {
			return nil, fmt.Errorf("%s: name is missing", where)
		}
		scope, err := editing.CompileScope(r.OwnedScope)
		if err != nil {
			return nil, fmt.Errorf("%s: owned_scope %w", where, err)
		}
		out = append(out, Intent{
			ID: r.ID, Name: r.Name, Status: r.Status,
			OwnedScope: r.OwnedScope, Constraints: r.Constraints, AcceptanceCriteria: r.AcceptanceCriteria,
			Scope: scope,
		})
	}
	return out, nil
}

// Options configure a Store.
type Options struct {
	// OnBroken is told once per broken version of the file (for
	// window/logMessage). It may be nil.
	OnBroken func(err error)
	Logger   *zap.Logger
}

// Store is the intents file of one workspace.
type Store struct {
	root     string
	onBroken func(error)
	log      *zap.Logger

	mu      sync.Mutex
	loaded  bool
	data    []byte
	intents []Intent
	err     error
}

// NewStore returns the Store of the workspace at root. Nothing is read yet.
func NewStore(root string, opts Options) *Store {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	return &Store{root: root, onBroken: opts.OnBroken, log: opts.Logger}
}

// Intents returns the intents as the file holds them now (nil when there is
// no file). A broken file returns an error wrapping ErrBroken.
func (s *Store) Intents() ([]Intent, error) {
	data, err := readBounded(s.root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data, err = nil, nil
	case err != nil:
		err = fmt.Errorf("%w: %s: %w", ErrBroken, RelPath, err)
	}
	s.mu.Lock()
	if err == nil && s.loaded && s.err == nil && bytes.Equal(data, s.data) {
		defer s.mu.Unlock()
		return s.intents, nil
	}
	var list []Intent
	if err == nil && data != nil {
		list, err = Parse(data)
		if err != nil {
			err = fmt.Errorf("%w: %s: %w", ErrBroken, RelPath, err)
		}
	}
	// One report per broken version of the file, not one per tool call.
	report := err != nil && (s.err == nil || !bytes.Equal(data, s.data))
	s.loaded, s.data, s.intents, s.err = true, data, list, err
	s.mu.Unlock()
	if report {
		s.log.Warn("intents: file cannot be used; mutating tools are refused until it is fixed", zap.Error(err))
		if s.onBroken != nil {
			s.onBroken(err)
		}
	}
	return list, err
}

// readBounded reads the intents file of the workspace at root: a regular
// file of at most maxFileSize bytes, reached through no symlink (a
// repository could point it anywhere).
func readBounded(root string) ([]byte, error) {
	dir, err := contain.New(root)
	if err != nil {
		return nil, err
	}
	path, err := dir.NoSymlinks(RelPath)
	if err != nil {
		return nil, err
	}
	data, _, err := contain.ReadRegular(path, maxFileSize)
	if errors.Is(err, contain.ErrTooLarge) {
		return nil, fmt.Errorf("larger than %d bytes", maxFileSize)
	}
	return data, err
}

// Get returns the intent with id.
func (s *Store) Get(id string) (Intent, error) {
	list, err := s.Intents()
	if err != nil {
		return Intent{}, err
	}
	for _, in := range list {
		if in.ID == id {
			return in, nil
		}
	}
	return Intent{}, fmt.Errorf("%w %q; the file lists %s", ErrUnknownIntent, id, names(list))
}

// Select is the select_intent tool (and agent/run's intentId): it returns
// the intent and its <intent_context> block for the model. A COMPLETED
// intent is refused with ErrCompleted, naming those that can be selected.
func (s *Store) Select(id string) (Intent, string, error) {
	in, err := s.Get(id)
	if err != nil {
		return Intent{}, "", err
	}
	if in.Completed() {
		list, _ := s.Intents()
		var open []Intent
		for _, o := range list {
			if !o.Completed() {
				open = append(open, o)
			}
		}
		others := "another intent: every intent of the file is completed"
		if len(open) > 0 {
			others = "one of " + names(open)
		}
		return Intent{}, "", fmt.Errorf("intent %q (%s) is %s: %w; select %s",
			in.ID, in.Name, in.Status, ErrCompleted, others)
	}
	return in, in.Context(), nil
}

// BlockReporter is told of every write the gate refuses; the heat tracker
// satisfies it.
type BlockReporter interface {
	Blocked(path, reason string)
}

// Check is the gatekeeper for one tool call: tool with the selected intent
// id ("" when none) and, for file tools, the workspace-relative path it
// writes. It returns nil when the call may go on, else an error for the
// model that says how to proceed; a refused write is reported to rep (which
// may be nil).
func (s *Store) Check(selected, tool, path string, rep BlockReporter) error {
	if !Mutating(tool) {
		return nil
	}
	err := s.check(selected, path)
	if err != nil && path != "" && rep != nil {
		rep.Blocked(path, err.Error())
	}
	return err
}

func (s *Store) check(selected, path string) error {
	list, err := s.Intents()
	if err != nil {
		return fmt.Errorf("%w; mutating tools are refused until the file is fixed", err)
	}
	if len(list) == 0 {
		return nil
	}
	if selected == "" {
		return fmt.Errorf("%w: this workspace works by intents; call select_intent with one of %s first", ErrNoIntentSelected, names(list))
	}
	var in *Intent
	for i := range list {
		if list[i].ID == selected {
			in = &list[i]
		}
	}
	if in == nil {
		return fmt.Errorf("%w %q (the file changed?); select one of %s", ErrUnknownIntent, selected, names(list))
	}
	if path == "" {
		return nil
	}
	if ok, _ := in.Scope.Match(path); !ok {
		return fmt.Errorf("%w: %s is not in intent %q's owned_scope [%s]", ErrOutsideScope, path, in.ID, strings.Join(in.OwnedScope, ", "))
	}
	return nil
}

func names(list []Intent) string {
	if len(list) == 0 {
		return "no intents"
	}
	parts := make([]string, len(list))
	for i, in := range list {
		parts[i] = fmt.Sprintf("%q (%s)", in.ID, in.Name)
	}
	return strings.Join(parts, ", ")
}
