package codegraph

import (
	"sync/atomic"
	"weak"
)

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
	// specifier, a Rust path, a Java qualified name, a C include, a C#
	// namespace, a PHP qualified name (or the literal path of a require,
	// "./" before one relative to the file's directory), a Ruby required
	// path ("./" before a require_relative's), a path a shell script
	// sources, a Kotlin qualified name, a Swift module, a Lua module.
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

// File is what the graph knows of one file. Its content never changes once
// made: an update replaces it whole, so a *File may be read without a lock.
//
// The header (the fields) is in memory. The detail (the definitions and
// the references) is an encoded blob (detail.go), decoded when asked for:
// in memory for a file parsed since the graph was last stored, else read
// in place from the stored graph (image.go), so the graph's memory is its
// headers and indexes, not its detail.
type File struct {
	Path    string // workspace-relative, "/" separators
	Lang    Lang
	Size    int64
	ModTime int64  // Unix nanoseconds
	Hash    uint64 // of the content
	Imports []Import
	// Package is a Go file's package clause, a Kotlin file's package, the
	// full name of the namespace of a C# or PHP file's first definition;
	// "" for the other languages.
	Package string
	// Err is why the file could not be parsed whole (its definitions up to
	// the error are kept), or "".
	Err string

	nsyms, nnames, nrefs uint32 // sizes of the detail: definitions, names, encoded references
	blob                 string // the encoded detail, when in memory
	img                  *image // else the stored graph it is in
	idx                  uint32 // and its index there
	cache                atomic.Pointer[weak.Pointer[detail]]

	dir string // path.Dir(Path), set when the file is made
}

// detail is a file's definitions and references, decoded from its blob.
type detail struct {
	syms []Symbol
	// names are the distinct names the file refers to, each with its
	// qualifier (quals, parallel to names; nil when every one is a bare
	// name): a name appears once per qualifier it is referred to with.
	// counts says how often each, and refs holds the references, encoded
	// (build.go).
	names  []string
	quals  []string
	counts []uint32
	refs   string
}

// qual is the qualifier of the i-th distinct name.
func (d *detail) qual(i int) string {
	if i < len(d.quals) {
		return d.quals[i]
	}
	return ""
}

// eachRef calls fn with each reference, in the order of the file, and the
// index of its distinct name.
func (d *detail) eachRef(fn func(k int, r Ref)) { eachRef(d.names, d.quals, d.refs, fn) }

// count is how often the file refers to its i-th distinct name.
func (d *detail) count(i int) int {
	if i < len(d.counts) && d.counts[i] > 0 {
		return int(d.counts[i])
	}
	return 1
}

// enclosing returns the index of the innermost definition whose span
// holds p, or -1.
func (d *detail) enclosing(p Pos) int {
	best := -1
	for i := range d.syms {
		s := &d.syms[i]
		if !before(p, s.Start) && before(p, s.End) {
			if best < 0 || !before(s.Start, d.syms[best].Start) {
				best = i
			}
		}
	}
	return best
}

// Symbols returns the file's definitions, in the order of the file.
func (f *File) Symbols() []Symbol { return f.detail().syms }

// Refs decodes the file's references, in the order of the file.
func (f *File) Refs() []Ref {
	d := f.detail()
	return decodeRefs(d.names, d.quals, d.refs)
}

func before(a, b Pos) bool { return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col) }
