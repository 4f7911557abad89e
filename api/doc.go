// Package api is agentls's protocol as types: every method name, every params
// and result type of docs/PROTOCOL.md, the base LSP types agentls speaks
// (positions, ranges, edits, messages, progress tokens), the settings of
// initializationOptions with their defaults and validation, and the error
// codes with the one error type that carries them.
//
// It imports nothing but the standard library. It knows no transport: the
// wire (framing, ids, cancellation, reverse calls) is package rpc, and every
// package that only needs a Subtask, a Usage or a Range (the model clients,
// tracking, editing) depends on this package alone.
//
// Guarantees:
//   - Every type marshals to the JSON shape docs/PROTOCOL.md shows, and a
//     field it does not know is ignored when decoding, never an error: a
//     client newer than this server still initializes.
//   - ApplySettings never half-applies: on any error the base is returned
//     unchanged with a *SettingsError naming the key.
//   - An *Error's code survives wrapping: rpc.AsError finds it anywhere in
//     an error chain.
//
// Its values are plain data with no hidden state, safe to share between
// goroutines as long as none writes.
package api
