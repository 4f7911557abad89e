// Package rpc is agentls's wire, owned once: JSON-RPC 2.0 in both
// directions over any byte stream, with LSP's Content-Length framing or,
// for the Agent Client Protocol, newline-delimited JSON (Lines).
//
//   - Stream (stream.go) parses frames by hand, answers malformed input with
//     the right error and keeps reading, and writes each message as one
//     frame (one line, with Lines).
//   - Conn (conn.go) serves the peer's requests with a Handler and makes
//     calls to the peer: it owns dispatch, ordering, the cancel
//     notification (LSP's $/cancelRequest, or ACP's $/cancel_request with
//     CancelNotification; numeric and string ids) and the goroutines it
//     starts. Its type comment states the ordering and concurrency every
//     other package may rely on.
//   - Editor and Notifier (editor.go) are the typed reverse calls and
//     notifications of docs/PROTOCOL.md §4 and §5, each call bounded by its
//     timeout and cancelled on the peer when its context ends.
//   - DecodeParams decodes a request's params once; AsError turns any error
//     into the error object of a reply.
//
// In short: messages are read in order by one goroutine that never waits;
// calls run concurrently and are answered as they finish; notifications are
// handled one at a time in arrival order; what is sent leaves in the order
// it was made, and sending never waits on a peer that is slow to read (past
// a high-water mark, with the sender's context; a write timeout gives up on
// a peer that reads nothing). A malformed message is answered with an error
// (a header that cannot be parsed is logged and skipped) and the connection
// keeps serving: only the end of the input ends it, and an end inside a
// frame says what was missing.
//
// The types that travel are package api's; rpc knows nothing of tasks,
// files or models. Nothing else in agentls touches go.lsp.dev/jsonrpc2.
package rpc
