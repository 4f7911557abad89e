// Package codegraph is the code graph of a workspace: its files, the
// definitions in them (with their kind, their span and their name's place),
// the references and calls between them, and the imports, for Go, Python,
// JavaScript, TypeScript, Rust, Java, C, C++, C#, PHP, Ruby, shell scripts,
// Kotlin, Swift and Lua (lang.go). It answers agent/codeGraph
// (docs/PROTOCOL.md §3), finds symbols and references for the workers, and
// makes the repo map the prompts carry (rank.go).
//
// Parsing is pure Go, so every static build has the graph: Go is read by
// go/parser, the other languages by a lexer of our own (lex.go: comments
// dropped, literals opaque, brackets matched; Ruby, shell and Lua have their
// own) and a recogniser per language that reads definitions off the token
// stream by their shape. References are the identifiers that are not
// definitions' names (a Go function's locals left out; a shell script's are
// the commands it runs), a call when a parenthesis follows, each with what the
// parser saw on its left (qual.go: an import, a value of known type, a
// value of unknown type). docs/ARCHITECTURE.md ("Choices made") has the
// measure of these parsers against tree-sitter.
//
// Where references come from: the editor's language server first, when
// the graph has one (lsp.go: agent/references and agent/definition, within
// a query's bounds); then the graph's resolution by each language's rules
// (resolve.go); what neither settles is a guess by name. Every reference
// and edge says which (Provenance), and the repo map weighs guesses less.
//
// Guarantees:
//   - The graph holds exactly the files the walks show (editing.Walker:
//     inside the workspace, symlinks resolved, not in .git, in the zones,
//     not ignored by .gitignore); a refresh of any other path drops it.
//   - Run builds the graph in the background and never blocks its caller's
//     start; queries wait until the graph is current (the first walk done
//     and every change told so far refreshed), bounded by their context.
//   - A *File is never changed once made: an update replaces it whole, so a
//     query reads a file's records without a lock and sees each file whole.
//   - Positions are LSP positions: 0-based lines (ending at \n, \r\n or \r)
//     and UTF-16 columns, as internal/lsppos computes them.
//   - The graph is stored atomically (internal/fsutil) in one file; a
//     stored graph that does not check out is ignored and the graph built
//     afresh, never half loaded.
//   - A parser that fails on a file (a bug) costs that file its
//     definitions, never the graph.
//   - The language server is never asked under the graph's lock, and what
//     it answers is held to the files the graph holds: a place outside the
//     workspace, or in a file the walks do not show, is left out.
//   - Every cut is said: an answer's truncated flag and the references it
//     left out (omitted), each edge's count beside its first ranges, and
//     the worker tools' totals.
//   - While a build parses, the process's garbage collector runs less
//     often (gc.go: its percent raised within a bounded heap headroom),
//     and is put back as it was when the last build of the process ends.
//
// A Graph is safe for concurrent use.
package codegraph
