// Package engines runs external coding agents (Claude Code, Codex, Gemini
// CLI, any agent that speaks the Agent Client Protocol) as workers of
// agentls: it finds them (Lookup), and runs one ACP session per subtask on
// them (docs/ENGINES.md).
package engines
