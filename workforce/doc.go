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
//
// An Engine is safe for concurrent use.
package workforce
