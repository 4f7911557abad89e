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
// Memory: the graph keeps each file's header in memory (its path, stat,
// hash, package and imports) and, for the files parsed since it was last
// stored, their detail (definitions and references) as one encoded blob
// each and their definitions and names by name. The rest is the stored
// graph (image.go), read in place: its summary (the headers and the
// indexes by name) is read at start, each file's detail from the disk
// when a query needs it (a stored graph of at most Config.InMemory bytes
// is read whole instead). A first build with a state file writes the graph
// there as it parses, so the details are never all in memory at once.
//
// Guarantees:
//   - The graph holds exactly the files the walks show (editing.Walker:
//     inside the workspace, symlinks resolved, not in .git, in the zones,
//     not ignored by .gitignore); a refresh of any other path drops it.
//   - Run builds the graph in the background and never blocks its caller's
//     start. Queries answer from the stored graph as soon as it is read,
//     while the first walk checks it (that walk starts once a first query
//     is answered, someone waits for it, or a second has passed, so that
//     it does not slow the first answer); once that walk is done, they wait
//     until every change told so far is refreshed. Without a stored graph
//     they wait for the first build. Every wait is bounded by the query's
//     context.
//   - A *File is never changed once made: an update replaces it whole, so a
//     query reads a file's records without a lock and sees each file whole
//     (its detail too: a blob in memory, or in a stored graph that is never
//     written again, read while any record of it is held).
//   - Positions are LSP positions: 0-based lines (ending at \n, \r\n or \r)
//     and UTF-16 columns, as internal/lsppos computes them.
//   - The graph is stored atomically (internal/fsutil) in one file, written
//     in a stream on a goroutine of its own: an update never waits for a
//     store, and one made while a store is written stays in memory until
//     the next. A store copies the stored bytes and index entries of the
//     files that did not change, so its cost follows what changed, and a
//     store cut short leaves the stored graph before it in place. A stored graph whose summary does not check out is ignored
//     and the graph built afresh, never half loaded; a file whose stored
//     detail does not check out is parsed again. The file and the
//     directories the store makes are the user's alone (0600, 0700).
//   - A parser that fails on a file (a bug) costs that file its
//     definitions, never the graph.
//   - The language server is never asked under the graph's lock, and what
//     it answers is held to the files the graph holds: a place outside the
//     workspace, or in a file the walks do not show, is left out.
//   - Every cut is said: an answer's truncated flag, the references it
//     left out (omitted) and, for a symbol's answer that stopped reading
//     once full, the files it did not read (unread), each edge's count
//     beside its first ranges, and the worker tools' totals.
//   - A build's garbage (the parsers' syntax trees) is given back to the
//     system when it ends.
//
// A Graph is safe for concurrent use.
package codegraph
