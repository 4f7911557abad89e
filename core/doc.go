// Package core is the workspace as both faces need it: the room between the
// faces (package handlers for LSP, handlers/acpface for ACP) and the
// packages they wire. A face hands it a root, its settings, its redactor,
// its logger and where to tell what the workspace has to say (Notices);
// the Workspace opens once and owns the rest:
//
//   - the tracking (heat map with its ticker, intents, trace, sessions,
//     usage, checkpoints), opened on first use;
//   - the model clients (and the recording of `--record`), made on first
//     use;
//   - the code graph, built in the background from Open on and stored in
//     the state directory;
//   - the MCP bridge for the external agents it runs, made on first use;
//   - the MCP client and the engines: the workspace's own (the LSP face's,
//     configured from the settings, made on first use), and those a task
//     engine has of its own (an ACP session's, with the servers the
//     session names);
//   - the task engines (NewTasks), to which the bridge hands the calls of
//     their subtasks' agents;
//   - the sweep, at Open, of the temporary files a crash left in the
//     workspace and in its state directory;
//   - every path of the state directory (Layout).
//
// Close closes all of it once, in order: the sweep, the tasks (each has
// ended and written its session), the bridge, the MCP servers, the
// recording, the code graph's last store, the heat ticker and the
// tracking. Every error of a close is logged; those the person must know
// of (the recording not written) are told through Notices.Warn too.
//
// Nothing is heavier at Open than the sweep and the graph: what is not
// needed yet is made by its getter on first use. A Workspace is safe for
// concurrent use; every goroutine it starts has ended when Close returns.
package core
