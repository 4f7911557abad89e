package api

// CodeGraphParams are the params of agent/codeGraph: a file (path), a
// definition (symbol: a name, Container.Name, or for Go package.Name), or
// both (the symbol as defined in that file).
type CodeGraphParams struct {
	Path   string `json:"path,omitempty"`
	Symbol string `json:"symbol,omitempty"`
	// Depth is how far neighbours (of a file) or callers and callees (of a
	// symbol) are followed: 1 by default, at most 3.
	Depth *int `json:"depth,omitempty"`
}

// CodeGraphResult is the answer of agent/codeGraph.
type CodeGraphResult struct {
	Nodes []CodeGraphNode `json:"nodes"`
	Edges []CodeGraphEdge `json:"edges"`
	// Truncated is set when the limits (500 nodes, 2000 edges) cut the
	// answer.
	Truncated bool `json:"truncated,omitempty"`
	// Omitted is how many references and calls found were left out of
	// the edges by the limits.
	Omitted int `json:"omitted,omitempty"`
	// Unread is how many files a cut answer did not read: files that refer
	// to the symbol's name by the graph's index of names, whose references
	// (some of which may be to other definitions of that name) are in no
	// count. Omitted counts the references found in the files read.
	Unread int `json:"unread,omitempty"`
}

// Provenance is how a reference, or an edge of references, was found:
// "lsp" (the editor's language server said so), "resolved" (the graph
// resolved it by the language's rules) or "name" (a guess: a definition
// of the same name). An edge that stands for several references has the
// least sure of theirs.
type Provenance string

// The provenances, surest first.
const (
	ProvenanceLSP      Provenance = "lsp"
	ProvenanceResolved Provenance = "resolved"
	ProvenanceName     Provenance = "name"
)

// CodeGraphNode is a file, a definition, or a module outside the
// workspace that a file imports.
type CodeGraphNode struct {
	// ID is the path for a file, "path#Container.Name" for a definition
	// (with "@line" when a file defines the same name twice), "module:" and
	// the import for a module.
	ID string `json:"id"`
	// Kind is "file", "module", or the definition's kind: function, method,
	// class, struct, interface, trait, type, enum, enumMember, field,
	// variable, constant, module, namespace, macro.
	Kind      string `json:"kind"`
	Path      string `json:"path,omitempty"`
	Name      string `json:"name,omitempty"`
	Container string `json:"container,omitempty"`
	Language  string `json:"language,omitempty"`
	// Range spans a definition; SelectionRange is its name.
	Range          *Range `json:"range,omitempty"`
	SelectionRange *Range `json:"selectionRange,omitempty"`
}

// CodeGraphEdge is a relation between two nodes: "defines" (a file or a
// definition to a definition inside it), "imports" (a file to a file or a
// module), "references" and "calls" (a file or a definition to a
// definition, or file to file).
type CodeGraphEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
	// Count is the number of references or calls a "references" or
	// "calls" edge stands for.
	Count int `json:"count,omitempty"`
	// Ranges are where the references or calls are, in From's file: the
	// first 20 of the Count.
	Ranges []Range `json:"ranges,omitempty"`
	// Provenance is how the references or calls were found.
	Provenance Provenance `json:"provenance,omitempty"`
}

// TextDocumentSyncOptions are the text synchronisation agentls asks for:
// no open, close or change notifications (Change 0: none), a save
// notification without the text.
type TextDocumentSyncOptions struct {
	OpenClose bool        `json:"openClose"`
	Change    int         `json:"change"`
	Save      SaveOptions `json:"save"`
}

// SaveOptions are the options of textDocument/didSave.
type SaveOptions struct {
	IncludeText bool `json:"includeText"`
}

// TextDocumentIdentifier names a document.
type TextDocumentIdentifier struct {
	URI string `json:"uri"`
}

// TextDocumentParams are the params of textDocument/didOpen, didChange,
// didSave and didClose, as far as agentls reads them: the document.
type TextDocumentParams struct {
	TextDocument TextDocumentIdentifier `json:"textDocument"`
}

// FileEvent is one change of workspace/didChangeWatchedFiles: Type 1
// created, 2 changed, 3 deleted.
type FileEvent struct {
	URI  string `json:"uri"`
	Type int    `json:"type"`
}

// DidChangeWatchedFilesParams are the params of
// workspace/didChangeWatchedFiles.
type DidChangeWatchedFilesParams struct {
	Changes []FileEvent `json:"changes"`
}

// RegistrationParams are the params of client/registerCapability.
type RegistrationParams struct {
	Registrations []Registration `json:"registrations"`
}

// Registration registers one capability.
type Registration struct {
	ID              string `json:"id"`
	Method          string `json:"method"`
	RegisterOptions any    `json:"registerOptions,omitempty"`
}

// FileSystemWatcher is a glob the client watches (Kind 7: create, change
// and delete).
type FileSystemWatcher struct {
	GlobPattern string `json:"globPattern"`
	Kind        int    `json:"kind,omitempty"`
}

// DidChangeWatchedFilesRegistrationOptions are the options of a
// workspace/didChangeWatchedFiles registration.
type DidChangeWatchedFilesRegistrationOptions struct {
	Watchers []FileSystemWatcher `json:"watchers"`
}
