// Package workforce runs agentls's tasks: one agent/run each. A coordinator
// plans the user's request into subtasks (the plan tool); a scheduler runs
// every subtask whose dependencies are done, at most maxWorkers at once;
// each worker is a loop of model calls and tool calls (docs/WORKFORCE.md, tools) whose
// every read, command, edit and question goes through the editor.
//
// Guarantees:
//   - Events of a task (agent/taskUpdate) leave in the order of their seq,
//     which rises by one per event, and each carries the task's state and
//     subtasks as they were after the change it reports.
//   - A tool that fails is told to the model as an error result; a panic in
//     a worker fails its subtask (the stack goes to the log); neither stops
//     the task or the process.
//   - Stop cancels everything a task runs: model calls (HTTP included),
//     reverse calls ($/cancelRequest), commands (the whole process group).
//     Run returns once every goroutine of the task has ended and its session
//     is on disk.
//   - A change is listed in the run's changes whether or not it was applied;
//     only applied changes reach the trace.
//   - The session (messages, task state, usage) is written as the task goes,
//     on the task's own goroutine, so a worker never waits on an fsync.
//   - An agent's system prompt and tools hold nothing of the agent or the
//     turn: they are the same bytes for every turn, every worker of a task
//     and every task of a session with the same settings, the project's
//     instructions included (they change it only when they change), so a
//     provider's prompt cache reads them (docs/MODELS.md, Prompt caching).
//   - A conversation that nears the model's context window, or that the
//     provider says is too long, is compacted (compact.go) and never fails
//     its subtask while something can still be compacted; compaction
//     changes what the model is sent, never the session or the trace.
//
// An Engine is safe for concurrent use.
package workforce
