// Package acp is the Agent Client Protocol (ACP, protocol version 1) as Go
// types and typed calls, for both of its sides: agentls as an ACP agent
// (the editor is its client) and agentls running ACP agents (it is their
// client). The wire is package rpc's: JSON-RPC 2.0 framed as
// newline-delimited JSON (rpc.Lines), cancelled with $/cancel_request
// {requestId}; NewStream and NewConn set them up.
//
//   - The types (types.go, content.go, update.go, client.go) follow the
//     protocol's schema (schema/v1/schema.json of @agentclientprotocol/sdk).
//     Every type keeps its _meta (Meta); unions are Go types with custom
//     JSON: a SessionUpdate is one Go type per sessionUpdate kind, a
//     ContentBlock, ToolCallContent or McpServer one struct whose kind field
//     picks the members written. An unknown session update is kept whole
//     (UnknownUpdate), never an error.
//   - Agent is what an agent serves and Client what a client serves.
//     ServeAgent and ServeClient turn them into an rpc.Handler: params are
//     decoded once (-32602 naming the field), a method not served is
//     -32601, and a panic in a method is an internal error (rpc.Conn).
//   - AgentConn (a client calling its agent) and ClientConn (an agent
//     calling its client) make the calls, each bounded by its Timeouts and
//     by its context. ClientConn refuses a call the client did not
//     advertise with an error wrapping api.ErrUnsupported. AgentConn.Prompt
//     turns the end of its context into session/cancel, waits a grace for
//     the stop reason, and returns only once every session/update sent
//     before the answer has been handled.
//
// Nothing here knows agentls's tasks: the agent face is package
// handlers/acpface, the engines that run ACP agents live with the
// workforce.
package acp
