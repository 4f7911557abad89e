// Package rpc is agentls's wire, owned once: JSON-RPC 2.0 with LSP's
// Content-Length framing, in both directions, over any byte stream.
//
//   - Stream (stream.go) parses frames by hand, answers malformed input with
//     the right error and keeps reading, and writes each message as one frame.
//   - Conn (conn.go) serves the peer's requests with a Handler and makes
//     calls to the peer: it owns dispatch, ordering, $/cancelRequest (numeric
//     and string ids) and the goroutines it starts. Its type comment states
//     the ordering and concurrency every other package may rely on.
//   - Editor and Notifier (editor.go) are the typed reverse calls and
//     notifications of docs/PROTOCOL.md §4 and §5, each call bounded by its
//     timeout and cancelled on the peer when its context ends.
//   - DecodeParams decodes a request's params once; AsError turns any error
//     into the error object of a reply.
//
// The types that travel are package api's; rpc knows nothing of tasks,
// files or models. Nothing else in agentls touches go.lsp.dev/jsonrpc2.
package rpc
