// Package docs is agentls's documentation, in Markdown beside this file:
// the wire contract (PROTOCOL.md), the package map (ARCHITECTURE.md), one
// page per area and the figures. It has no code.
//
// Its test holds the code to the map: a package that imports what its row
// of ARCHITECTURE.md's import table does not allow, a package without a
// row, or a row without a package fails `go test ./docs`.
package docs
