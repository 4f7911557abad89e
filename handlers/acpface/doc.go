// Package acpface is agentls's ACP face: agentls as an Agent Client
// Protocol agent, for the editors that run coding agents over ACP (Zed,
// the JetBrains IDEs, Neovim's CodeCompanion, avante.nvim and agentic.nvim,
// Emacs's agent-shell). It is the LSP face's sibling (package handlers):
// the same workforce, editing, tracking, model clients and MCP client
// behind another protocol, from the same binary (`agentls acp`, or
// `agentls serve` when the first byte on stdin is "{"). docs/ACP.md is its
// contract.
//
// The face is thin, as the LSP one is: each ACP method decodes its params
// (package acp), checks them, and hands over to the package that owns the
// work. What is its own is the translation, in both directions:
//
//   - A session is a workspace root (its cwd) with its own task engine,
//     MCP servers, edit mode, model and intent; sessions of one root share
//     the root's tracking (heat, intents, trace, the session store) and
//     model clients. A prompt turn is one workforce task (agent/run); its
//     events become session/update notifications (updates.go): the plan,
//     the workers' words as thought chunks, every tool call with its
//     locations, diff and terminal, the usage, and the task's summary as
//     the agent's message.
//   - The workforce's editor is the ACP client (editor.go): reads go
//     through fs/read_text_file, edits through fs/write_text_file with
//     their diff shown on the tool call, approvals and propose mode through
//     session/request_permission, commands through terminal/*. What the
//     client does not advertise agentls does itself under the same rules
//     (zones, intents, edit modes, trace, heat): it reads and writes the
//     disk and runs commands in its own process group.
//
// Ordering: the updates of a session leave in the order they were made, by
// one sender per session; an update that refers to a tool call is never
// sent before the call's announcement, and a question about a call is
// never asked before it (the sender is flushed first); a prompt's answer
// leaves after every update of its turn. Every goroutine the face starts
// belongs to the Server and has ended when Serve returns.
package acpface
