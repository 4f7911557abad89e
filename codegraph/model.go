package codegraph

// Kind is what a definition is. The names are those of the agent/codeGraph
// nodes (docs/PROTOCOL.md §3).
type Kind uint8

// The kinds of definitions. Each language uses the ones it has.
const (
	KindFunction Kind = iota + 1
	KindMethod
	KindClass
	KindStruct
	KindInterface
	KindTrait
	KindType
	KindEnum
	KindEnumMember
	KindField
	KindVariable
	KindConstant
	KindModule
	KindNamespace
	KindMacro
)

var kindNames = [...]string{
	KindFunction:   "function",
	KindMethod:     "method",
	KindClass:      "class",
	KindStruct:     "struct",
	KindInterface:  "interface",
	KindTrait:      "trait",
	KindType:       "type",
	KindEnum:       "enum",
	KindEnumMember: "enumMember",
	KindField:      "field",
	KindVariable:   "variable",
	KindConstant:   "constant",
	KindModule:     "module",
	KindNamespace:  "namespace",
	KindMacro:      "macro",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "unknown"
}

// isType reports whether a definition of this kind is a type that others
// hang methods and fields on.
func (k Kind) isType() bool {
	switch k {
	case KindClass, KindStruct, KindInterface, KindTrait, KindType, KindEnum:
		return true
	}
	return false
}

// Pos is a position in a file: a 0-based line and a 0-based column in
// UTF-16 code units, as LSP positions are.
type Pos struct {
	Line, Col uint32
}

// Symbol is one definition in a file.
type Symbol struct {
	Name string
	Kind Kind
	// Parent is the index, in the file's Symbols, of the definition this
	// one is inside (a method's class, a field's struct), or -1. For a Go
	// method or a Rust impl's function it is the receiver's type when that
	// type is defined in the same file, else -1 with Container set.
	Parent int32
	// Container names the type or namespace the definition belongs to
	// ("" at the top level): the receiver of a Go method, the class of a
	// method, the impl's type in Rust, the class of a C++ out-of-class
	// definition.
	Container string
	// Start and End span the whole definition (End exclusive); Sel is
	// where its name starts.
	Start, End, Sel Pos
}

// Qualified is the name with its container: "Type.Method".
func (s *Symbol) Qualified() string {
	if s.Container == "" {
		return s.Name
	}
	return s.Container + "." + s.Name
}

// Import is one import, include or use of a file.
type Import struct {
	// Path is the import as written: a Go import path, a Python dotted
	// module (with its leading dots for a relative import), a JavaScript
	// specifier, a Rust path, a Java qualified name, a C include.
	Path string
	// Name is the name a Go import is given in the file when it is given
	// one (an alias, "." or "_"), else "".
	Name string
	Line uint32
}

// Ref is one reference to a name: an identifier that is not a definition's
// name, a call when it is the callee.
type Ref struct {
	Name string
	// Qual is what the parser saw of the name's left side (qual.go): ""
	// for a bare name, or a selector's qualifier.
	Qual string
	Pos  Pos
	Call bool
}

// File is what the graph knows of one file. It is never changed once
// made: an update replaces it whole, so a *File may be read without a lock.
type File struct {
	Path    string // workspace-relative, "/" separators
	Lang    Lang
	Size    int64
	ModTime int64  // Unix nanoseconds
	Hash    uint64 // of the content
	Symbols []Symbol
	Imports []Import
	// Package is a Go file's package clause ("" for other languages).
	Package string
	// Names are the distinct names the file refers to, each with its
	// qualifier (Quals, parallel to Names; nil when every one is a bare
	// name): a name appears once per qualifier it is referred to with.
	// Counts says how often each, and refs holds the references, encoded
	// (build.go): decoded only when asked for.
	Names  []string
	Quals  []string
	Counts []uint32
	refs   string
	// Err is why the file could not be parsed whole (its definitions up to
	// the error are kept), or "".
	Err string

	dir string // path.Dir(Path), set when the graph indexes the file
}

// Refs decodes the file's references, in the order of the file.
func (f *File) Refs() []Ref { return decodeRefs(f.Names, f.Quals, f.refs) }

// eachRef calls fn with each of the file's references, in the order of
// the file, and the index of its distinct name (in Names).
func (f *File) eachRef(fn func(k int, r Ref)) { eachRef(f.Names, f.Quals, f.refs, fn) }

// qual is the qualifier of the file's i-th distinct name.
func (f *File) qual(i int) string {
	if i < len(f.Quals) {
		return f.Quals[i]
	}
	return ""
}

// enclosing returns the index of the innermost definition of f whose span
// holds p, or -1.
func (f *File) enclosing(p Pos) int {
	best := -1
	for i := range f.Symbols {
		s := &f.Symbols[i]
		if !before(p, s.Start) && before(p, s.End) {
			if best < 0 || !before(s.Start, f.Symbols[best].Start) {
				best = i
			}
		}
	}
	return best
}

func before(a, b Pos) bool { return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col) }
