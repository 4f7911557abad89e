package acpface

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

// commands are the slash commands a prompt may start with: they act on
// the session (or on its running prompt) and answer at once, without a
// task (docs/ACP.md).
var commands = []acp.AvailableCommand{
	{Name: "stop-subtask", Description: "Stop a subtask of the running prompt; the subtasks after it go on without it", Input: &acp.CommandInput{Hint: "subtask id, as the plan shows it"}},
	{Name: "intent", Description: "Work under an intent of .orchestration/active_intents.yaml (none: list them; \"none\": work under none)", Input: &acp.CommandInput{Hint: "intent id"}},
	{Name: "sessions", Description: "List this workspace's sessions, newest first"},
	{Name: "heat", Description: "Show the files agentls's workers touched most, hottest first"},
}

// command splits "/name arg" off a prompt when name is a command.
func command(text string) (name, arg string, ok bool) {
	text = strings.TrimSpace(text)
	rest, found := strings.CutPrefix(text, "/")
	if !found {
		return "", "", false
	}
	name, arg, _ = strings.Cut(rest, " ")
	for _, c := range commands {
		if c.Name == name {
			return name, strings.TrimSpace(arg), true
		}
	}
	return "", "", false
}

// announceCommands sends available_commands_update.
func (se *session) announceCommands() {
	se.book.push(acp.AvailableCommandsUpdate{AvailableCommands: commands})
}

// command runs a slash command and answers with its words as the agent's
// message.
func (se *session) command(ctx context.Context, name, arg string) (*acp.PromptResponse, error) {
	text, err := se.runCommand(name, arg)
	if err != nil {
		return nil, err
	}
	se.book.push(acp.AgentMessageChunk{Content: acp.Text(text)})
	if err := se.out.flush(ctx); err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: acp.StopEndTurn, Meta: acp.MetaOf(acp.MetaKey, promptMeta{Command: name})}, nil
}

func (se *session) runCommand(name, arg string) (string, error) {
	switch name {
	case "stop-subtask":
		if arg == "" {
			return "", api.Errorf(api.CodeInvalidParams, "invalid params: /stop-subtask needs the subtask's id, e.g. /stop-subtask 2")
		}
		se.mu.Lock()
		t := se.turn
		se.mu.Unlock()
		taskID := ""
		if t != nil {
			taskID = t.taskID
		}
		if taskID == "" {
			return "No prompt is running: there is no subtask to stop.", nil
		}
		if err := se.engine.SkipSubtask(api.SubtaskParams{TaskID: taskID, SubtaskID: arg}); err != nil {
			return fmt.Sprintf("Subtask %s was not stopped: %v", arg, err), nil
		}
		return fmt.Sprintf("Subtask %s stopped; the subtasks that depend on it go on without it.", arg), nil
	case "intent":
		return se.intentCommand(arg)
	case "sessions":
		list, err := se.ws.track.ListSessions()
		if err != nil {
			return "", err
		}
		var b strings.Builder
		n := 0
		for _, si := range list.Sessions {
			if len(si.Tasks) == 0 {
				continue
			}
			n++
			mark := ""
			if si.SessionID == se.id {
				mark = " (this one)"
			}
			fmt.Fprintf(&b, "- %s%s — %s, %d prompt(s), updated %s\n", si.Title, mark, si.SessionID, len(si.Tasks), si.UpdatedAt)
		}
		if n == 0 {
			return "This workspace has no sessions yet.", nil
		}
		return fmt.Sprintf("%d session(s) in %s, newest first:\n\n%s", n, se.root, b.String()), nil
	case "heat":
		snap, err := se.ws.track.HeatSnapshot(api.HeatSnapshotParams{})
		if err != nil {
			return "", err
		}
		nodes := snap.Nodes
		if len(nodes) == 0 {
			return "No file is warm: agentls's workers have not touched any lately.", nil
		}
		sort.SliceStable(nodes, func(i, j int) bool { return nodes[i].Heat > nodes[j].Heat })
		var b strings.Builder
		for _, n := range nodes[:min(heatTop, len(nodes))] {
			ctxMark := ""
			if n.InContext {
				ctxMark = ", in a model's context"
			}
			fmt.Fprintf(&b, "- %s: %.2f (last %s%s)\n", n.Path, n.Heat, n.LastAction, ctxMark)
		}
		return "The hottest files:\n\n" + b.String(), nil
	}
	return "", api.Errorf(api.CodeInvalidParams, "invalid params: unknown command /%s", name)
}

// intentCommand lists the intents, or picks the one the session's next
// prompts work under.
func (se *session) intentCommand(arg string) (string, error) {
	store := se.ws.track.Intents
	switch arg {
	case "":
		list, err := store.Intents()
		if err != nil {
			return fmt.Sprintf("The intents cannot be used: %v", err), nil
		}
		if len(list) == 0 {
			return "This workspace has no intents (.orchestration/active_intents.yaml lists none).", nil
		}
		se.mu.Lock()
		current := se.intent
		se.mu.Unlock()
		var b strings.Builder
		for _, in := range list {
			mark := ""
			if in.ID == current {
				mark = " (selected)"
			}
			fmt.Fprintf(&b, "- %s: %s%s\n", in.ID, in.Name, mark)
		}
		return "The intents of this workspace (/intent ID selects one):\n\n" + b.String(), nil
	case "none":
		se.mu.Lock()
		se.intent = ""
		se.mu.Unlock()
		return "The next prompts work under no intent.", nil
	}
	in, err := store.Get(arg)
	if err != nil {
		return fmt.Sprintf("No intent %s: %v", arg, err), nil
	}
	se.mu.Lock()
	se.intent = in.ID
	se.mu.Unlock()
	return fmt.Sprintf("The next prompts work under intent %s (%s).", in.ID, in.Name), nil
}
