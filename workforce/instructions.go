package workforce

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"go.uber.org/zap"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
	"github.com/agentls/agentls/editing"
)

// The project's instructions (docs/WORKFORCE.md, Project instructions):
// the files in which a repository tells coding agents how to work in it,
// read through the editor into the system prompts.
//
//   - AGENTS.md (the open convention), in any directory: one applies to
//     the files under its directory, and the nearest one wins;
//   - CLAUDE.md in a directory that has no AGENTS.md;
//   - .github/copilot-instructions.md where the root has neither;
//   - the files the instructions setting adds (for the whole workspace),
//     without those it removes.
//
// They are found once per task (the files it creates count from the next
// one) and read again, through the editor, whenever a prompt is made: at
// the planner's, and at each of a worker's turns, so an unsaved edit
// counts and a changed file reaches the next turn.

// Bounds of the instructions.
const (
	// maxInstructionFiles bounds the files read, those nearest the root
	// first.
	maxInstructionFiles = 32
	// instructionFileBytes bounds one file read: past it, the file is
	// left out (a budget cuts long before).
	instructionFileBytes = 1 << 20
)

// instrSource is an instruction file found in the workspace.
type instrSource struct {
	path string // workspace-relative
	// dir is the directory it applies to ("": the whole workspace).
	dir string
	// convention: found by its name (AGENTS.md, CLAUDE.md, Copilot's),
	// not added by the setting.
	convention bool
}

// instrRead is an instruction file as read.
type instrRead struct {
	instrSource
	text string
	// missing: it could not be read (gone, refused, not text, too large);
	// why says why.
	missing bool
	why     string
}

// instructions are a task's instruction files.
type instructions struct {
	t *task

	findOnce sync.Once
	sources  []instrSource

	mu       sync.Mutex
	sent     string          // the key of the last instructions read
	everSent bool            // an instructions event was sent
	warned   map[string]bool // files whose cut the person was told of
}

func newInstructions(t *task) *instructions {
	return &instructions{t: t, warned: map[string]bool{}}
}

// find lists the task's instruction files, once.
func (in *instructions) find(ctx context.Context) []instrSource {
	in.findOnce.Do(func() { in.sources = in.discover(ctx) })
	return in.sources
}

// discover walks the workspace for the instruction files, as list_files
// sees it (zones, .gitignore, .git and symlinks out of it left out).
func (in *instructions) discover(ctx context.Context) []instrSource {
	t := in.t
	set := t.settings.Instructions
	if set.MaxTokens <= 0 || t.settings.Untrusted() {
		// In a workspace the person does not trust, the repository does
		// not get to steer the model.
		return nil
	}
	a := t.editTask.Agent(clients.AgentCoordinator)
	list := func(pattern string) []string {
		res, err := a.List(ctx, pattern)
		if err != nil {
			t.log.Info("instruction files not listed", zap.String("pattern", pattern), zap.Error(err))
			return nil
		}
		return res.Paths
	}
	removed := func(p string) bool {
		for _, g := range set.Remove {
			if ok, _ := doublestar.Match(g, p); ok {
				return true
			}
		}
		return false
	}
	byDir := map[string]map[string]bool{} // directory → the convention's names in it
	for _, p := range list("**/{AGENTS.md,CLAUDE.md}") {
		dir, name := path.Split(p)
		if byDir[dir] == nil {
			byDir[dir] = map[string]bool{}
		}
		byDir[dir][name] = true
	}
	var found []instrSource
	for dir, names := range byDir {
		name := "AGENTS.md"
		if !names[name] {
			name = "CLAUDE.md"
		}
		found = append(found, instrSource{path: dir + name, dir: strings.TrimSuffix(dir, "/"), convention: true})
	}
	if byDir[""] == nil {
		for _, p := range list(".github/copilot-instructions.md") {
			found = append(found, instrSource{path: p, convention: true})
		}
	}
	for _, g := range set.Add {
		for _, p := range list(g) {
			if !slices.ContainsFunc(found, func(s instrSource) bool { return s.path == p }) {
				found = append(found, instrSource{path: p})
			}
		}
	}
	found = slices.DeleteFunc(found, func(s instrSource) bool { return removed(s.path) })
	// The whole workspace's first, then by depth: a nearer file comes
	// after the ones it wins over.
	slices.SortStableFunc(found, func(a, b instrSource) int {
		if da, db := depth(a.dir), depth(b.dir); da != db {
			return da - db
		}
		return strings.Compare(a.path, b.path)
	})
	if len(found) > maxInstructionFiles {
		t.warn(fmt.Sprintf("The workspace has %d instruction files; the prompts carry the %d nearest the root.", len(found), maxInstructionFiles))
		found = found[:maxInstructionFiles]
	}
	return found
}

// depth is the number of directories in dir ("" : 0).
func depth(dir string) int {
	if dir == "" {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// read reads the task's instruction files through the editor (unsaved
// edits count), with the checks of a read (zones, the workspace root);
// nothing goes on the heat map.
func (in *instructions) read(ctx context.Context) []instrRead {
	srcs := in.find(ctx)
	out := make([]instrRead, 0, len(srcs))
	for _, s := range srcs {
		r := instrRead{instrSource: s}
		_, text, err := in.t.edit.UserFile(ctx, s.path, instructionFileBytes)
		switch {
		case err == nil:
			// As every file a model is given: no secret agentls knows.
			r.text = in.t.e.cfg.Redactor.String(text)
		case errors.Is(err, editing.ErrNotFound):
			continue // gone since the task began
		default:
			r.missing, r.why = true, err.Error()
		}
		out = append(out, r)
	}
	return out
}

// instrBlock is the instructions as a prompt carries them.
type instrBlock struct {
	text  string
	files []api.InstructionFile
	key   string // what tells two blocks apart
}

// render makes the prompt's block of the files read, leaving out those
// skip says (an engine reads them itself), within instructions.maxTokens
// (four characters a token): the file that crosses the budget is cut at a
// line's end with a note to the model, the files after it are named and
// left out.
func (in *instructions) render(reads []instrRead, skip func(instrSource) bool) instrBlock {
	budget := in.t.settings.Instructions.MaxTokens * 4
	var b strings.Builder
	var files []api.InstructionFile
	left := budget
	for _, r := range reads {
		if skip != nil && skip(r.instrSource) {
			continue
		}
		applies := "the whole workspace"
		if r.dir != "" {
			applies = r.dir + "/"
		}
		f := api.InstructionFile{Path: r.path}
		body := strings.TrimSpace(r.text)
		switch {
		case r.missing:
			f.Cut = true
			body = "(left out: " + oneLine(r.why, 200) + ")"
		case left <= 0:
			f.Cut = true
			body = fmt.Sprintf("(left out: the instructions' budget of %d tokens is spent)", in.t.settings.Instructions.MaxTokens)
		case len(body) > left:
			f.Cut = true
			cut := left
			if nl := strings.LastIndexByte(body[:cut], '\n'); nl > cut/2 {
				cut = nl
			}
			for cut > 0 && !utf8.RuneStart(body[cut]) {
				cut--
			}
			f.Tokens = (cut + 3) / 4
			body = body[:cut] + fmt.Sprintf("\n[… the rest of this file, %d more characters, is cut: the instructions' budget is %d tokens (instructions.maxTokens). Read the file for the rest.]",
				len(body)-cut, in.t.settings.Instructions.MaxTokens)
			left = 0
		default:
			f.Tokens = (len(body) + 3) / 4
			left -= len(body)
		}
		files = append(files, f)
		fmt.Fprintf(&b, "\n<instructions path=%q applies-to=%q>\n%s\n</instructions>\n", r.path, applies, body)
	}
	if len(files) == 0 {
		return instrBlock{}
	}
	text := "\nThe project's instructions, from its instruction files (AGENTS.md and the like). Follow them. Each applies to the files under its directory; where two disagree, the one nearer the file wins:\n" + b.String()
	return instrBlock{text: text, files: files, key: text}
}

// current reads the instructions and renders them for the built-in
// agents, telling the person of a file cut for the first time, and the
// task's events of instructions it has not sent yet (sub: the agent that
// read them, "" the coordinator).
func (in *instructions) current(ctx context.Context, sub string) instrBlock {
	blk := in.render(in.read(ctx), nil)
	in.tell(blk, sub)
	return blk
}

// tell sends an instructions event when blk differs from the last sent,
// and warns the person of each file cut.
func (in *instructions) tell(blk instrBlock, sub string) {
	in.mu.Lock()
	// A set that became empty is told too; one that always was is not.
	send := blk.key != in.sent && (len(blk.files) > 0 || in.everSent)
	in.sent = blk.key
	in.everSent = in.everSent || send
	var cut []api.InstructionFile
	for _, f := range blk.files {
		if f.Cut && !in.warned[f.Path] {
			in.warned[f.Path] = true
			cut = append(cut, f)
		}
	}
	in.mu.Unlock()
	t := in.t
	for _, f := range cut {
		if f.Tokens > 0 {
			t.warn(fmt.Sprintf("%s is longer than the instructions' budget of %d tokens (instructions.maxTokens): the model gets its first %d tokens.",
				f.Path, t.settings.Instructions.MaxTokens, f.Tokens))
		} else {
			t.warn(fmt.Sprintf("%s is left out of the model's instructions: the budget of %d tokens (instructions.maxTokens) is spent, or it cannot be read.",
				f.Path, t.settings.Instructions.MaxTokens))
		}
	}
	if send {
		t.emit(api.TaskEvent{Kind: api.EventInstructions, SubtaskID: sub, Instructions: blk.files})
	}
}
