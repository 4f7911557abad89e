package workforce

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentls/agentls/api"
	"github.com/agentls/agentls/clients"
)

// Bounds of what the prompts quote.
const (
	treeEntries    = 80    // files of the workspace tree shown to the coordinator
	readmeLines    = 40    // lines of the README shown to the coordinator
	historyChars   = 24000 // characters of a continued session's history
	depResultChars = 4000  // characters of one dependency's result shown to a worker
)

// The prompts are built for the providers' prompt caches (docs/MODELS.md,
// Prompt caching): a system prompt holds only what is the same for every
// turn of an agent, every worker of a task and every task of a session
// (the rules, the workspace, the settings, the intents, the project's
// instructions), and what is the agent's own (the request, the subtask,
// a repo map tuned to them, a continued session's history) goes in its
// first message, after that shared prefix. Nothing that changes by
// itself, a clock or a counter, is in either.

// coordinatorPrompt is the coordinator's system prompt: its job, the plan
// tool, the workspace's shape, the selected intent, the project's
// instructions and the engines.
func (t *task) coordinatorPrompt(instr string) string {
	var b strings.Builder
	b.WriteString(`You are the coordinator of agentls, a coding agent working inside the user's editor.
Your only job is to plan the user's request: split it into subtasks that workers will carry out, then call the plan tool once.

How to plan:
- Each subtask is done by one worker with its own fresh context. Workers can read, list and search files, write, edit and delete files, run shell commands, ask the user a question, and select an intent. They see the workspace, the subtask's text and the results of the subtasks it depends on, nothing else: write each subtask so it can be done on its own (name the files, functions and the expected outcome).
- Subtasks without dependencies on each other run in parallel. Use dependsOn only where a subtask needs another's result (for example: tests that exercise code another subtask writes, or a check run after the changes). Two subtasks that edit the same file should depend on one another.
- Keep plans small: one subtask for a small change; rarely more than 6. Ids are short strings ("1", "2", ...).
- Do not do the work yourself and do not ask questions here: plan.
- If the request continues an earlier conversation (its history comes with the request), plan only what is still to do.

`)
	fmt.Fprintf(&b, "Workspace root: %s\n", t.e.cfg.Root)
	fmt.Fprintf(&b, "Edit mode: %s (%s)\n", t.settings.EditMode, editModeText(t.settings.EditMode))
	if tree := t.workspaceTree(); tree != "" {
		fmt.Fprintf(&b, "\nFiles (workspace-relative):\n%s\n", tree)
	}
	if readme := readmeHead(t.e.cfg.Root); readme != "" {
		fmt.Fprintf(&b, "\nREADME (first lines):\n%s\n", readme)
	}
	if ctx := t.intentContext(); ctx != "" {
		fmt.Fprintf(&b, "\nThe user selected this intent; every change must stay in its owned_scope and meet its constraints:\n%s\n", ctx)
	} else if list := t.intentsText(); list != "" {
		fmt.Fprintf(&b, "\nThis workspace works by intents (.orchestration/active_intents.yaml): a worker selects the intent its subtask belongs to before it changes files or runs commands, and changes only files in that intent's owned_scope. Name the intent in each subtask that changes files (for example \"… (intent INT-001)\"). The intents:\n%s\n", list)
	}
	b.WriteString(instr)
	b.WriteString(t.enginesText())
	return b.String()
}

// coordinatorRequest is the coordinator's first message: a continued
// session's history, the repo map for the request, then the request.
func (t *task) coordinatorRequest() string {
	var b strings.Builder
	if h := t.history(); h != "" {
		fmt.Fprintf(&b, "Earlier in this conversation (oldest first):\n%s\n\n", h)
	}
	if m := t.repoMap(t.prompt); m != "" {
		fmt.Fprintf(&b, "Repository map (the definitions most relevant to the request, by file, with their line numbers):\n%s\n", m)
	}
	if b.Len() == 0 {
		return t.prompt
	}
	fmt.Fprintf(&b, "The request:\n%s", t.prompt)
	return b.String()
}

// workerPrompt is a worker's system prompt: the same for every worker of
// the task, and every task of the session with the same settings.
func (t *task) workerPrompt(instr string) string {
	var b strings.Builder
	b.WriteString(`You are a worker of agentls, a coding agent working inside the user's editor. You carry out one subtask of a larger request, using the tools, then call finish.

Rules:
- Every path is relative to the workspace root, with / separators. You cannot leave the workspace; some folders may be closed to you (the tool result says so).
- Read a file before you change it. Prefer edit_file (old_string must match the file exactly once, or set replace_all) over rewriting whole files with write_file; use write_file to create files.
- Your changes may need the user's approval. A change the user rejects is not made: do not claim it was; adapt or explain in finish.
- A tool that fails returns an error: read it, fix the call, and go on. Do not repeat a failing call unchanged.
- run_command runs a shell command in the workspace root (it may need the user's approval); use it to build and test. Its output may be cut.
- Ask the user (ask_human) only when you cannot decide by yourself; prefer options.
- Other workers may be changing other files at the same time. If a file changed since you read it, read it again.
- When done, call finish with a short summary of what you did and what you found (files changed, test results). If you cannot do the subtask, call finish and say why.

`)
	fmt.Fprintf(&b, "Workspace root: %s\n", t.e.cfg.Root)
	fmt.Fprintf(&b, "Edit mode: %s (%s)\n", t.settings.EditMode, editModeText(t.settings.EditMode))
	fmt.Fprintf(&b, "Commands: %s\n", commandsText(t.settings))
	if ctx := t.intentContext(); ctx != "" {
		fmt.Fprintf(&b, "\nThe selected intent; your changes must stay in its owned_scope and meet its constraints:\n%s\n", ctx)
	} else if list := t.intentsText(); list != "" {
		fmt.Fprintf(&b, "\nThis workspace works by intents (.orchestration/active_intents.yaml): call select_intent with the id of the intent your subtask belongs to before you change files or run commands; you may then change only files in its owned_scope. The intents:\n%s\n", list)
	}
	b.WriteString(instr)
	return b.String()
}

// workerTask is the worker's first message: the user's request for
// context, a repo map tuned to the subtask, its subtask and what the
// subtasks it depends on found.
func (t *task) workerTask(s *subtask) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user's whole request, for context (do only your subtask):\n%s\n\n", t.prompt)
	if m := t.repoMap(s.Content + "\n" + t.prompt); m != "" {
		fmt.Fprintf(&b, "Repository map (the definitions most relevant to your subtask, by file, with their line numbers):\n%s\n", m)
	}
	b.WriteString(t.subtaskText(s))
	return b.String()
}

// subtaskText is a subtask and what the subtasks it depends on found.
func (t *task) subtaskText(s *subtask) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Your subtask (%s): %s\n", s.ID, s.Content)
	if s.Role != "" {
		fmt.Fprintf(&b, "Your role: %s\n", s.Role)
	}
	t.mu.Lock()
	var deps []string
	for _, d := range s.DependsOn {
		if dep := t.findLocked(d); dep != nil {
			res := dep.Result
			if dep.State == api.SubtaskSkipped {
				res = "(skipped by the user)"
			}
			deps = append(deps, fmt.Sprintf("- %s (%s): %s", dep.ID, oneLine(dep.Content, 120), clip(res, depResultChars)))
		}
	}
	t.mu.Unlock()
	if len(deps) > 0 {
		fmt.Fprintf(&b, "\nResults of the subtasks this one depends on:\n%s\n", strings.Join(deps, "\n"))
	}
	return b.String()
}

func editModeText(mode string) string {
	switch mode {
	case api.EditApply:
		return "changes are applied at once"
	case api.EditBranch:
		return "changes are applied on a new git branch"
	case api.EditReview:
		return "your changes are held and the user reviews all of them together when the task ends; read_file, list_files and search_files see them, but run_command runs on the files as they are on disk, without them"
	}
	return "the user approves each change before it is made"
}

func commandsText(s api.Settings) string {
	switch s.Commands {
	case api.CommandsAllow:
		return "run_command runs without asking"
	case api.CommandsDeny:
		return "run_command is turned off"
	}
	if len(s.AllowCommands) > 0 {
		return fmt.Sprintf("the user approves each command, except those starting with %s", strings.Join(quoteAll(s.AllowCommands), ", "))
	}
	return "the user approves each command"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// workspaceTree lists the first files of the workspace, as list_files would.
func (t *task) workspaceTree() string {
	a := t.editTask.Agent(clients.AgentCoordinator)
	res, err := a.List(t.ctx, "**")
	if err != nil {
		return ""
	}
	paths := res.Paths
	more := len(paths) - treeEntries + res.Omitted
	if len(paths) > treeEntries {
		paths = paths[:treeEntries]
	}
	out := strings.Join(paths, "\n")
	if more > 0 {
		out += fmt.Sprintf("\n… and %d more files", more)
	}
	return out
}

func readmeHead(root string) string {
	for _, name := range []string{"README.md", "README", "README.txt", "readme.md"} {
		f, err := os.Open(filepath.Join(root, name))
		if err != nil {
			continue
		}
		defer f.Close()
		var lines []string
		sc := bufio.NewScanner(f)
		for sc.Scan() && len(lines) < readmeLines {
			lines = append(lines, sc.Text())
		}
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	return ""
}

// intentContext is the <intent_context> of the intent given on agent/run.
func (t *task) intentContext() string {
	if t.params.IntentID == "" {
		return ""
	}
	_, ctx, err := t.e.cfg.Tracking.Intents.Select(t.params.IntentID)
	if err != nil {
		return ""
	}
	return ctx
}

// maxPromptIntents bounds the intents listed in a prompt.
const maxPromptIntents = 50

// intentsText lists the workspace's intents for the model, one a line (id,
// status, name, owned_scope), so it can select one without learning the ids
// from a refusal; completed ones are marked as not selectable. "" when the
// workspace has no intents; a broken file is said.
func (t *task) intentsText() string {
	list, err := t.e.cfg.Tracking.Intents.Intents()
	if err != nil {
		return "(the file cannot be used, so no file can be changed and no command run until the user fixes it: " + oneLine(err.Error(), 300) + ")"
	}
	var b strings.Builder
	for i, in := range list {
		if i == maxPromptIntents {
			fmt.Fprintf(&b, "… and %d more intents\n", len(list)-i)
			break
		}
		status := in.Status
		if status == "" {
			status = "no status"
		}
		if in.Completed() {
			status += ", cannot be selected"
		}
		scope := "none"
		if len(in.OwnedScope) > 0 {
			scope = strings.Join(in.OwnedScope, ", ")
		}
		fmt.Fprintf(&b, "- %s [%s] %s; owned_scope: %s\n", oneLine(in.ID, 80), status, oneLine(in.Name, 120), oneLine(scope, 300))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// history is a continued session's earlier messages (this task's own
// excluded), the newest kept when they are too long.
func (t *task) history() string {
	if t.params.SessionID == "" {
		return ""
	}
	msgs, err := t.e.cfg.Tracking.Sessions.Messages(t.sessionID)
	if err != nil {
		return ""
	}
	var lines []string
	for _, m := range msgs {
		if m.TaskID == t.id {
			continue
		}
		who := m.Role
		if m.SubtaskID != "" {
			who += " (subtask " + m.SubtaskID + ")"
		}
		lines = append(lines, fmt.Sprintf("[%s] %s: %s", m.TaskID, who, strings.TrimSpace(m.Text)))
	}
	h := strings.Join(lines, "\n")
	if len(h) > historyChars {
		cut := len(h) - historyChars
		for cut < len(h) && !utf8.RuneStart(h[cut]) {
			cut++
		}
		h = "…" + h[cut:]
	}
	return h
}

// clip cuts s to n bytes, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… [%d more characters]", len(s)-n)
}
