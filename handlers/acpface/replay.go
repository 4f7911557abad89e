package acpface

import (
	"strconv"
	"strings"

	"github.com/agentls/agentls/acp"
	"github.com/agentls/agentls/api"
)

// replay sends a session's history as session/update notifications, as
// session/load asks: each prompt as the user's message; the plan and the
// workers' words as thoughts; each tool call, completed; each task's
// summary (its last message of agentls's own) as the agent's message.
// Every update is marked _meta.agentls.replayed.
func (se *session) replay(hist api.SessionResult) {
	// The summary of a task is its last assistant message without a
	// subtask: the task's end writes it last.
	summary := map[string]int{}
	for i, m := range hist.Messages {
		if m.Role == "assistant" && m.SubtaskID == "" {
			summary[m.TaskID] = i
		}
	}
	calls := 0
	for i, m := range hist.Messages {
		meta := agentlsMeta{TaskID: m.TaskID, SubtaskID: m.SubtaskID, Replayed: true}.meta()
		switch m.Role {
		case "user":
			se.book.push(acp.UserMessageChunk{Content: acp.Text(m.Text), Meta: meta})
		case "assistant":
			if m.SubtaskID == "" && summary[m.TaskID] == i {
				se.book.push(acp.AgentMessageChunk{Content: acp.Text(m.Text), Meta: meta})
				continue
			}
			se.book.push(acp.AgentThoughtChunk{Content: acp.Text(m.Text + "\n\n"), Meta: meta})
		case "tool":
			calls++
			tool, _, _ := strings.Cut(m.Text, " ")
			_, kind, _ := describe(se.root, tool, nil)
			se.book.push(acp.ToolCall{
				ToolCallID: m.TaskID + "/replayed-" + strconv.Itoa(calls), Title: m.Text, Kind: kind,
				Status: acp.StatusCompleted, Meta: meta,
			})
		}
	}
}
